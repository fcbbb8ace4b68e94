//! [`CuratorCache`]: a subtree kept by one persistent recursive watch.

use std::sync::Arc;

use zkrs_client::{Client, Result};

use super::core::{CacheCore, WatchWith};
use super::engine::Settings;
use super::options::{cache_builder_setters, CacheOptions};
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
    options: CacheOptions,
    single_node: bool,
}

impl CuratorCacheBuilder {
    /// Caches the root node only (Curator's `SINGLE_NODE_CACHE`).
    pub fn single_node(mut self) -> CuratorCacheBuilder {
        self.single_node = true;
        self
    }

    cache_builder_setters!(
        CuratorCacheBuilder,
        /// Curator: `CuratorCache.Options.COMPRESSED_DATA`.
    );

    /// Starts watching (in a task: needs a tokio runtime) and returns at once; the build
    /// goes on in the background (see [`CuratorCache::initialized`]). `InvalidInput` for a
    /// bad path.
    pub fn start(self) -> Result<CuratorCache> {
        let max_depth = if self.single_node { 0 } else { usize::MAX };
        let (core, path) = self
            .options
            .start(WatchWith::Recursive, |settings| Settings {
                max_depth,
                ..settings
            })?;
        // Closing empties the view, as Curator's default (snapshots taken stay whole).
        core.set_clear_on_close(true);
        Ok(CuratorCache { core, path })
    }
}

impl CuratorCache {
    /// Settings for a cache of the subtree at `path`.
    pub fn builder(client: &Client, path: &str) -> CuratorCacheBuilder {
        CuratorCacheBuilder {
            options: CacheOptions::new(client, path),
            single_node: false,
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
