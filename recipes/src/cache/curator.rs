//! [`CuratorCache`]: a subtree kept by one persistent recursive watch.

use std::sync::Arc;

use zkrs_client::{validate_path, Client, Result};

use crate::data_codec::DataCodec;

use super::core::{CacheCore, WatchWith};
use super::engine::Settings;
use super::selector::AllNodes;
use super::tree::children_of;
use super::{cache_handle, ChildData};

/// A subtree (the root included), as Curator's `CuratorCache`: one persistent recursive
/// watch (`addWatch`, ZooKeeper 3.6+) instead of one watch per node, kept across reconnects
/// and session losses by a [`PersistentWatcher`](super::PersistentWatcher). On a 3.5 server,
/// which does not know `addWatch`, it falls back to one-shot watches on every node, as a
/// [`TreeCache`](super::TreeCache) does. The nodes found first are told as `Added`, then
/// `Initialized`.
///
/// Give it a session of its own when the same session also sets one-shot watches on its
/// root (a [`TreeCache`](super::TreeCache), a [`NodeCache`](super::NodeCache) on the same
/// path, a `get_data_and_watch`): ZooKeeper before 3.9 keeps one watch mode per connection
/// and path, so such a watch silently turns the recursive watch into a one-shot one
/// (ZOOKEEPER-4466), and the cache stops hearing of changes.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::cache::CuratorCache;
/// let mirror = CuratorCache::builder(&client, "/app").start()?;
/// mirror.initialized().await?;
/// let snapshot = mirror.snapshot(); // an Arc: cheap, and consistent while held
/// println!("{} nodes", snapshot.len());
/// # Ok(()) }
/// ```
#[must_use = "dropping a cache stops it"]
pub struct CuratorCache {
    core: CacheCore,
    path: String,
}

/// Settings for a [`CuratorCache`]; [`CuratorCacheBuilder::start`] starts it.
#[derive(Debug)]
#[must_use = "a builder does nothing until started"]
pub struct CuratorCacheBuilder {
    client: Client,
    path: String,
    single_node: bool,
    event_capacity: usize,
    codec: DataCodec,
}

impl CuratorCacheBuilder {
    /// Caches the root node only (Curator's `SINGLE_NODE_CACHE`).
    pub fn single_node(mut self) -> CuratorCacheBuilder {
        self.single_node = true;
        self
    }

    /// The buffer of each event stream (default
    /// [`DEFAULT_EVENT_CAPACITY`](zkrs_client::DEFAULT_EVENT_CAPACITY)).
    pub fn event_capacity(mut self, capacity: usize) -> CuratorCacheBuilder {
        self.event_capacity = capacity;
        self
    }

    /// Whether the data is stored gzipped, as Curator's `compressed()` writes it: each
    /// node's data is decompressed as Curator's `getData().decompressed()` reads it (default:
    /// no). A node whose data is not Curator's gzip, or would decompress past
    /// [`DEFAULT_MAX_DECOMPRESSED_LEN`](zkrs_client::compression::DEFAULT_MAX_DECOMPRESSED_LEN),
    /// is not taken into the view (one there already keeps the data last read; a
    /// `tracing` warning says why) until a later write makes it readable, as in Curator. Curator: `CuratorCache.Options.COMPRESSED_DATA`.
    #[cfg(feature = "compression")]
    #[cfg_attr(docsrs, doc(cfg(feature = "compression")))]
    pub fn compressed(mut self, compressed: bool) -> CuratorCacheBuilder {
        self.codec = DataCodec::compressed(compressed);
        self
    }

    /// Starts watching (in a task: needs a tokio runtime) and returns at once; the build
    /// goes on in the background (see [`CuratorCache::initialized`]). `InvalidInput` for a
    /// bad path.
    pub fn start(self) -> Result<CuratorCache> {
        validate_path(&self.path)?;
        let settings = Settings {
            root: self.path.clone(),
            max_depth: if self.single_node { 0 } else { usize::MAX },
            include_root: true,
            cache_data: true,
            selector: Arc::new(AllNodes),
            initial_events: true,
            initialized_event: true,
            codec: self.codec,
        };
        let core = CacheCore::new(&self.client, self.event_capacity);
        // Closing empties the view, as Curator's default (snapshots taken stay whole).
        core.set_clear_on_close(true);
        core.start(settings, WatchWith::Recursive)?;
        Ok(CuratorCache {
            core,
            path: self.path,
        })
    }
}

impl CuratorCache {
    /// Settings for a cache of the subtree at `path`.
    pub fn builder(client: &Client, path: &str) -> CuratorCacheBuilder {
        CuratorCacheBuilder {
            client: client.clone(),
            path: path.to_string(),
            single_node: false,
            event_capacity: zkrs_client::DEFAULT_EVENT_CAPACITY,
            codec: DataCodec::Plain,
        }
    }

    /// The cached children of `path`, sorted by path.
    pub fn children(&self, path: &str) -> Vec<Arc<ChildData>> {
        children_of(&self.core.snapshot(), path)
    }

    /// How many nodes are cached.
    pub fn len(&self) -> usize {
        self.core.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// [`CuratorCache::close`] for a cache shared in an `Arc` (a typed cache's).
    #[cfg(feature = "typed")]
    pub(crate) async fn shut(&self) {
        self.core.close().await
    }

    /// Whether the initial build is complete, without waiting (a typed cache's, after its
    /// stream of this cache's events lagged).
    #[cfg(feature = "typed")]
    pub(crate) fn is_initialized(&self) -> bool {
        self.core.is_initialized()
    }

    cache_handle!();
}

impl std::fmt::Debug for CuratorCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CuratorCache")
            .field("path", &self.path)
            .field("nodes", &self.core.len())
            .finish()
    }
}
