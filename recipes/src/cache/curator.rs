//! [`CuratorCache`]: a subtree kept by one persistent recursive watch.

use std::sync::Arc;

use zkrs_client::{validate_path, Client, Result};

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
/// let mirror = CuratorCache::new(&client, "/app");
/// mirror.start()?;
/// mirror.wait_initialized().await?;
/// let snapshot = mirror.snapshot(); // an Arc: cheap, and consistent while held
/// println!("{} nodes", snapshot.len());
/// # Ok(()) }
/// ```
#[must_use = "dropping a cache stops it"]
pub struct CuratorCache {
    core: CacheCore,
    path: String,
    single_node: bool,
}

impl CuratorCache {
    /// A cache of the subtree at `path` (not started).
    pub fn new(client: &Client, path: &str) -> CuratorCache {
        CuratorCache {
            core: CacheCore::new(client, zkrs_client::DEFAULT_EVENT_CAPACITY),
            path: path.to_string(),
            single_node: false,
        }
        .clearing_on_close()
    }

    fn clearing_on_close(self) -> CuratorCache {
        self.core.set_clear_on_close(true);
        self
    }

    /// Caches the root node only (Curator's `SINGLE_NODE_CACHE`).
    pub fn single_node(mut self) -> CuratorCache {
        self.single_node = true;
        self
    }

    /// Keeps the view after [`CuratorCache::close`] (Curator's `DO_NOT_CLEAR_ON_CLOSE`);
    /// by default closing empties it.
    pub fn keep_data_on_close(self) -> CuratorCache {
        self.core.set_clear_on_close(false);
        self
    }

    /// Starts watching (the build goes on in the background: see
    /// [`CuratorCache::wait_initialized`]). Needs a tokio runtime.
    pub fn start(&self) -> Result<()> {
        validate_path(&self.path, false)?;
        let settings = Settings {
            root: self.path.clone(),
            max_depth: if self.single_node { 0 } else { usize::MAX },
            include_root: true,
            cache_data: true,
            selector: Arc::new(AllNodes),
            initial_events: true,
            initialized_event: true,
        };
        self.core.start(settings, WatchWith::Recursive)
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
