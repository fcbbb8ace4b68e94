//! [`TreeCache`]: a subtree, to a maximum depth, with a selector.

use std::sync::Arc;

use zkrs_client::{validate_path, Client, Result};

use crate::data_codec::DataCodec;

use super::core::{CacheCore, WatchWith};
use super::engine::Settings;
use super::selector::{AllNodes, TreeCacheSelector};
use super::view::{below, Snapshot};
use super::{cache_handle, ChildData};

/// A subtree (the root included) to a maximum depth, as Curator's `TreeCache`, with one-shot
/// watches on every node (works with every server from 3.5). The nodes found first are told
/// as `Added`, then `Initialized`.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::cache::TreeCache;
/// let tree = TreeCache::builder(&client, "/app").max_depth(2).start()?;
/// tree.initialized().await?;
/// for (path, node) in tree.snapshot().iter() {
///     println!("{path} v{}", node.stat.version);
/// }
/// # Ok(()) }
/// ```
#[must_use = "dropping a cache stops it"]
pub struct TreeCache {
    core: CacheCore,
    path: String,
    max_depth: usize,
}

/// Settings for a [`TreeCache`]; [`TreeCacheBuilder::start`] starts it.
#[must_use = "a builder does nothing until started"]
pub struct TreeCacheBuilder {
    client: Client,
    path: String,
    max_depth: usize,
    cache_data: bool,
    selector: Arc<dyn TreeCacheSelector>,
    event_capacity: usize,
    codec: DataCodec,
}

impl TreeCacheBuilder {
    /// How deep to go below the root (0: the root only; default: every depth).
    pub fn max_depth(mut self, max_depth: usize) -> TreeCacheBuilder {
        self.max_depth = max_depth;
        self
    }

    /// Whether to keep data (default), or only each node's Stat.
    pub fn cache_data(mut self, cache_data: bool) -> TreeCacheBuilder {
        self.cache_data = cache_data;
        self
    }

    /// What to descend into and keep (default: [`AllNodes`](super::AllNodes)).
    pub fn selector(mut self, selector: impl TreeCacheSelector) -> TreeCacheBuilder {
        self.selector = Arc::new(selector);
        self
    }

    /// The buffer of each event stream (default
    /// [`DEFAULT_EVENT_CAPACITY`](zkrs_client::DEFAULT_EVENT_CAPACITY)).
    pub fn event_capacity(mut self, capacity: usize) -> TreeCacheBuilder {
        self.event_capacity = capacity;
        self
    }

    /// Whether the data is stored gzipped, as Curator's `compressed()` writes it: each
    /// node's data is decompressed as Curator's `getData().decompressed()` reads it (default:
    /// no). A node whose data is not Curator's gzip, or would decompress past
    /// [`DEFAULT_MAX_DECOMPRESSED_LEN`](zkrs_client::compression::DEFAULT_MAX_DECOMPRESSED_LEN),
    /// is not taken into the view (one there already keeps the data last read; a
    /// `tracing` warning says why) until a later write makes it readable, as in Curator. Curator: `TreeCache.Builder.setDataIsCompressed`.
    #[cfg(feature = "compression")]
    #[cfg_attr(docsrs, doc(cfg(feature = "compression")))]
    pub fn compressed(mut self, compressed: bool) -> TreeCacheBuilder {
        self.codec = DataCodec::compressed(compressed);
        self
    }

    /// Starts watching (in a task: needs a tokio runtime) and returns at once; the build
    /// goes on in the background (see [`TreeCache::initialized`]). `InvalidInput` for a bad
    /// path.
    pub fn start(self) -> Result<TreeCache> {
        validate_path(&self.path)?;
        let settings = Settings {
            root: self.path.clone(),
            max_depth: self.max_depth,
            include_root: true,
            cache_data: self.cache_data,
            selector: self.selector,
            initial_events: true,
            initialized_event: true,
            codec: self.codec,
        };
        let core = CacheCore::new(&self.client, self.event_capacity);
        core.start(settings, WatchWith::OneShot)?;
        Ok(TreeCache {
            core,
            path: self.path,
            max_depth: self.max_depth,
        })
    }
}

impl std::fmt::Debug for TreeCacheBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeCacheBuilder")
            .field("path", &self.path)
            .field("max_depth", &self.max_depth)
            .field("cache_data", &self.cache_data)
            .field("event_capacity", &self.event_capacity)
            .finish_non_exhaustive()
    }
}

impl TreeCache {
    /// Settings for a cache of the subtree at `path` (every depth, with data).
    pub fn builder(client: &Client, path: &str) -> TreeCacheBuilder {
        TreeCacheBuilder {
            client: client.clone(),
            path: path.to_string(),
            max_depth: usize::MAX,
            cache_data: true,
            selector: Arc::new(AllNodes),
            event_capacity: zkrs_client::DEFAULT_EVENT_CAPACITY,
            codec: DataCodec::Plain,
        }
    }

    /// The cached children of `path`, sorted by path.
    pub fn children(&self, path: &str) -> Vec<Arc<ChildData>> {
        children_of(&self.core.snapshot(), path)
    }

    cache_handle!();
}

/// The nodes directly below `path` in a snapshot.
pub(crate) fn children_of(snapshot: &Snapshot, path: &str) -> Vec<Arc<ChildData>> {
    let prefix = below(path);
    snapshot
        .range::<str, _>((
            std::ops::Bound::Included(prefix.as_str()),
            std::ops::Bound::Unbounded,
        ))
        .take_while(|(p, _)| p.starts_with(&prefix))
        .filter(|(p, _)| p.len() > prefix.len() && !p[prefix.len()..].contains('/'))
        .map(|(_, node)| node.clone())
        .collect()
}

impl std::fmt::Debug for TreeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeCache")
            .field("path", &self.path)
            .field("max_depth", &self.max_depth)
            .field("nodes", &self.core.len())
            .finish()
    }
}
