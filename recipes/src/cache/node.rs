//! [`NodeCache`]: one node's data, Stat and existence.

use std::sync::Arc;

use zkrs_client::{validate_path, Client, Result};

use crate::data_codec::DataCodec;

use super::core::{CacheCore, WatchWith};
use super::engine::Settings;
use super::selector::AllNodes;
use super::{cache_handle, ChildData, StartMode};

/// One node's data, Stat and existence, as Curator's `NodeCache`: the node may not exist
/// yet, and may be deleted and created again. Changes are told as [`Added`], [`Updated`]
/// and [`Removed`](super::CacheEvent::Removed) events.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::cache::{NodeCache, StartMode};
/// let config = NodeCache::builder(&client, "/app/config")
///     .start_mode(StartMode::BuildInitialCache)
///     .start()?;
/// let mut changes = config.events();
/// config.initialized().await?;
/// println!("now: {:?}", config.current().map(|c| c.data.clone()));
/// while let Some(change) = changes.next().await {
///     println!("{change:?}");
/// }
/// # Ok(()) }
/// ```
///
/// [`Added`]: super::CacheEvent::Added
/// [`Updated`]: super::CacheEvent::Updated
#[must_use = "dropping a cache stops it"]
pub struct NodeCache {
    core: CacheCore,
    path: String,
}

/// Settings for a [`NodeCache`]; [`NodeCacheBuilder::start`] starts it.
#[derive(Debug)]
#[must_use = "a builder does nothing until started"]
pub struct NodeCacheBuilder {
    client: Client,
    path: String,
    start_mode: StartMode,
    event_capacity: usize,
    codec: DataCodec,
}

impl NodeCacheBuilder {
    /// Whether the first read is told as an event (default [`StartMode::Normal`]: `Added`
    /// if the node exists). With [`StartMode::BuildInitialCache`] it is not (Curator's
    /// `start(true)`: wait for it with [`NodeCache::initialized`]); with
    /// [`StartMode::PostInitializedEvent`] it is, followed by `Initialized`.
    pub fn start_mode(mut self, mode: StartMode) -> NodeCacheBuilder {
        self.start_mode = mode;
        self
    }

    /// The buffer of each event stream (default
    /// [`DEFAULT_EVENT_CAPACITY`](zkrs_client::DEFAULT_EVENT_CAPACITY)).
    pub fn event_capacity(mut self, capacity: usize) -> NodeCacheBuilder {
        self.event_capacity = capacity;
        self
    }

    /// Whether the data is stored gzipped, as Curator's `compressed()` writes it: each
    /// node's data is decompressed as Curator's `getData().decompressed()` reads it (default:
    /// no). A node whose data is not Curator's gzip, or would decompress past
    /// [`DEFAULT_MAX_DECOMPRESSED_LEN`](zkrs_client::compression::DEFAULT_MAX_DECOMPRESSED_LEN),
    /// is not taken into the view (one there already keeps the data last read; a
    /// `tracing` warning says why) until a later write makes it readable, as in Curator. Curator: the `dataIsCompressed` argument of `NodeCache`'s constructor.
    #[cfg(feature = "compression")]
    #[cfg_attr(docsrs, doc(cfg(feature = "compression")))]
    pub fn compressed(mut self, compressed: bool) -> NodeCacheBuilder {
        self.codec = DataCodec::compressed(compressed);
        self
    }

    /// Starts watching (in a task: needs a tokio runtime) and returns at once; see
    /// [`NodeCache::initialized`]. `InvalidInput` for a bad path.
    pub fn start(self) -> Result<NodeCache> {
        validate_path(&self.path)?;
        let settings = Settings {
            root: self.path.clone(),
            max_depth: 0,
            include_root: true,
            cache_data: true,
            selector: Arc::new(AllNodes),
            initial_events: self.start_mode != StartMode::BuildInitialCache,
            initialized_event: self.start_mode == StartMode::PostInitializedEvent,
            codec: self.codec,
        };
        let core = CacheCore::new(&self.client, self.event_capacity);
        core.start(settings, WatchWith::OneShot)?;
        Ok(NodeCache {
            core,
            path: self.path,
        })
    }
}

impl NodeCache {
    /// Settings for a cache of `path`.
    pub fn builder(client: &Client, path: &str) -> NodeCacheBuilder {
        NodeCacheBuilder {
            client: client.clone(),
            path: path.to_string(),
            start_mode: StartMode::Normal,
            event_capacity: zkrs_client::DEFAULT_EVENT_CAPACITY,
            codec: DataCodec::Plain,
        }
    }

    /// The node as last read, or `None` if it does not exist (or was not read yet).
    pub fn current(&self) -> Option<Arc<ChildData>> {
        self.core.get(&self.path)
    }

    /// The cached path.
    pub fn path(&self) -> &str {
        &self.path
    }

    cache_handle!();
}

impl std::fmt::Debug for NodeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeCache")
            .field("path", &self.path)
            .field("current", &self.current())
            .finish()
    }
}
