//! [`TreeCache`]: a subtree, to a maximum depth, with a selector.

use std::sync::Arc;

use zkrs_client::{Client, Result};

use super::core::{CacheCore, WatchWith};
use super::engine::Settings;
use super::options::{cache_builder_setters, CacheOptions};
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
    options: CacheOptions,
    max_depth: usize,
    cache_data: bool,
    selector: Arc<dyn TreeCacheSelector>,
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

    cache_builder_setters!(
        TreeCacheBuilder,
        /// Curator: `TreeCache.Builder.setDataIsCompressed`.
    );

    /// Starts watching (in a task: needs a tokio runtime) and returns at once; the build
    /// goes on in the background (see [`TreeCache::initialized`]). `InvalidInput` for a bad
    /// path.
    pub fn start(self) -> Result<TreeCache> {
        let max_depth = self.max_depth;
        let (core, path) = self
            .options
            .start(WatchWith::OneShot, |settings| Settings {
                max_depth,
                cache_data: self.cache_data,
                selector: self.selector,
                ..settings
            })?;
        Ok(TreeCache {
            core,
            path,
            max_depth,
        })
    }
}

impl std::fmt::Debug for TreeCacheBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeCacheBuilder")
            .field("path", &self.options.path)
            .field("max_depth", &self.max_depth)
            .field("cache_data", &self.cache_data)
            .field("event_capacity", &self.options.event_capacity)
            .finish_non_exhaustive()
    }
}

impl TreeCache {
    /// Settings for a cache of the subtree at `path` (every depth, with data).
    pub fn builder(client: &Client, path: &str) -> TreeCacheBuilder {
        TreeCacheBuilder {
            options: CacheOptions::new(client, path),
            max_depth: usize::MAX,
            cache_data: true,
            selector: Arc::new(AllNodes),
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
