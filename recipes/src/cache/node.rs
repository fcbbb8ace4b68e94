//! [`NodeCache`]: one node's data, Stat and existence.

use std::sync::Arc;

use zkrs_client::{Client, Result};

use super::core::{CacheCore, WatchWith};
use super::engine::Settings;
use super::options::{cache_builder_setters, CacheOptions};
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
    options: CacheOptions,
    start_mode: StartMode,
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

    cache_builder_setters!(
        NodeCacheBuilder,
        /// Curator: the `dataIsCompressed` argument of `NodeCache`'s constructor.
    );

    /// Starts watching (in a task: needs a tokio runtime) and returns at once; see
    /// [`NodeCache::initialized`]. `InvalidInput` for a bad path.
    pub fn start(self) -> Result<NodeCache> {
        let start_mode = self.start_mode;
        let (core, path) = self.options.start(WatchWith::OneShot, |settings| {
            start_mode.shape(Settings {
                max_depth: 0,
                ..settings
            })
        })?;
        Ok(NodeCache { core, path })
    }
}

impl NodeCache {
    /// Settings for a cache of `path`.
    pub fn builder(client: &Client, path: &str) -> NodeCacheBuilder {
        NodeCacheBuilder {
            options: CacheOptions::new(client, path),
            start_mode: StartMode::Normal,
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
