//! What every cache builder holds ([`CacheOptions`]) and the setters they share
//! ([`cache_builder_setters!`]), written once.

use std::sync::Arc;

use zkrs_client::{validate_path, Client, Result, DEFAULT_EVENT_CAPACITY};

use crate::data_codec::DataCodec;

use super::core::{CacheCore, WatchWith};
use super::engine::Settings;
use super::selector::AllNodes;

/// The settings every cache builder holds: the client, the path, the buffer of each event
/// stream and how the data is stored.
#[derive(Debug)]
pub(crate) struct CacheOptions {
    client: Client,
    pub(crate) path: String,
    pub(crate) event_capacity: usize,
    pub(crate) codec: DataCodec,
}

impl CacheOptions {
    pub(crate) fn new(client: &Client, path: &str) -> CacheOptions {
        CacheOptions {
            client: client.clone(),
            path: path.to_string(),
            event_capacity: DEFAULT_EVENT_CAPACITY,
            codec: DataCodec::Plain,
        }
    }

    /// Starts a cache's core (`InvalidInput` for a bad path, before anything is sent) over
    /// the subtree at the path, every node told, as `shape` narrows it; gives back the core
    /// and the path.
    pub(crate) fn start(
        self,
        with: WatchWith,
        shape: impl FnOnce(Settings) -> Settings,
    ) -> Result<(CacheCore, String)> {
        validate_path(&self.path)?;
        let settings = shape(Settings {
            root: self.path.clone(),
            max_depth: usize::MAX,
            include_root: true,
            cache_data: true,
            selector: Arc::new(AllNodes),
            initial_events: true,
            initialized_event: true,
            codec: self.codec,
        });
        let core = CacheCore::new(&self.client, self.event_capacity);
        core.start(settings, with)?;
        Ok((core, self.path))
    }
}

/// The setters every cache builder has, for `$builder` (whose `options` are a
/// [`CacheOptions`]); the doc lines after the name end `compressed`'s doc with Curator's
/// counterpart.
macro_rules! cache_builder_setters {
    ($builder:ident, $(#[$curator:meta])*) => {
        /// The buffer of each event stream (default
        /// [`DEFAULT_EVENT_CAPACITY`](zkrs_client::DEFAULT_EVENT_CAPACITY)).
        pub fn event_capacity(mut self, capacity: usize) -> $builder {
            self.options.event_capacity = capacity;
            self
        }

        /// Whether the data is stored gzipped, as Curator's `compressed()` writes it: each
        /// node's data is decompressed as Curator's `getData().decompressed()` reads it
        /// (default: no). A node whose data is not Curator's gzip, or would decompress past
        /// [`DEFAULT_MAX_DECOMPRESSED_LEN`], is not taken into the view (one there already
        /// keeps the data last read; a `tracing` warning says why) until a later write makes
        /// it readable, as in Curator.
        $(#[$curator])*
        ///
        /// [`DEFAULT_MAX_DECOMPRESSED_LEN`]: zkrs_client::compression::DEFAULT_MAX_DECOMPRESSED_LEN
        #[cfg(feature = "compression")]
        #[cfg_attr(docsrs, doc(cfg(feature = "compression")))]
        pub fn compressed(mut self, compressed: bool) -> $builder {
            self.options.codec = $crate::data_codec::DataCodec::compressed(compressed);
            self
        }
    };
}
pub(crate) use cache_builder_setters;
