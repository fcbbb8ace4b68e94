//! [`PathChildrenCache`]: the children of one node, with their Stat and data.

use std::sync::Arc;

use zkrs_client::{Client, Result};

use super::core::{CacheCore, WatchWith};
use super::engine::Settings;
use super::options::{cache_builder_setters, CacheOptions};
use super::{cache_handle, ChildData};

/// How a cache tells its first read, as Curator's `PathChildrenCache.StartMode` (a builder
/// option of [`PathChildrenCache`] and [`NodeCache`](super::NodeCache)). Start always returns
/// at once; [`PathChildrenCache::initialized`] waits for the first read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StartMode {
    /// The nodes found first are told as `Added` events (the default).
    #[default]
    Normal,
    /// The nodes found first are not told as events: they are in the view once
    /// `initialized()` returns (Curator's `BUILD_INITIAL_CACHE`).
    BuildInitialCache,
    /// The nodes found first are told as `Added` events, then `Initialized`.
    PostInitializedEvent,
}

impl StartMode {
    /// `settings` telling the first read as this mode says.
    pub(crate) fn shape(self, settings: Settings) -> Settings {
        Settings {
            initial_events: self != StartMode::BuildInitialCache,
            initialized_event: self == StartMode::PostInitializedEvent,
            ..settings
        }
    }
}

/// The children of one node with their Stat and (unless turned off) data, as Curator's
/// `PathChildrenCache`. The parent may not exist yet, and may be deleted and created again.
/// The parent itself is not in the view.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::cache::{PathChildrenCache, StartMode};
/// let workers = PathChildrenCache::builder(&client, "/app/workers")
///     .cache_data(false)
///     .start_mode(StartMode::BuildInitialCache)
///     .start()?;
/// workers.initialized().await?;
/// let names: Vec<String> = workers.current_data().iter().map(|c| c.name().to_string()).collect();
/// # Ok(()) }
/// ```
#[must_use = "dropping a cache stops it"]
pub struct PathChildrenCache {
    core: CacheCore,
    path: String,
}

/// Settings for a [`PathChildrenCache`]; [`PathChildrenCacheBuilder::start`] starts it.
#[derive(Debug)]
#[must_use = "a builder does nothing until started"]
pub struct PathChildrenCacheBuilder {
    options: CacheOptions,
    cache_data: bool,
    start_mode: StartMode,
}

impl PathChildrenCacheBuilder {
    /// Whether to keep the children's data (default), or only their Stat.
    pub fn cache_data(mut self, cache_data: bool) -> PathChildrenCacheBuilder {
        self.cache_data = cache_data;
        self
    }

    /// How the first read is told (default [`StartMode::Normal`]).
    pub fn start_mode(mut self, mode: StartMode) -> PathChildrenCacheBuilder {
        self.start_mode = mode;
        self
    }

    cache_builder_setters!(
        PathChildrenCacheBuilder,
        /// Curator: the `dataIsCompressed` argument of `PathChildrenCache`'s constructor.
    );

    /// Starts watching (in a task: needs a tokio runtime) and returns at once; see
    /// [`PathChildrenCache::initialized`]. `InvalidInput` for a bad path.
    pub fn start(self) -> Result<PathChildrenCache> {
        let (cache_data, start_mode) = (self.cache_data, self.start_mode);
        let (core, path) = self.options.start(WatchWith::OneShot, |settings| {
            start_mode.shape(Settings {
                max_depth: 1,
                include_root: false,
                cache_data,
                ..settings
            })
        })?;
        Ok(PathChildrenCache { core, path })
    }
}

impl PathChildrenCache {
    /// Settings for a cache of the children of `path`.
    pub fn builder(client: &Client, path: &str) -> PathChildrenCacheBuilder {
        PathChildrenCacheBuilder {
            options: CacheOptions::new(client, path),
            cache_data: true,
            start_mode: StartMode::Normal,
        }
    }

    /// The current children, sorted by path.
    pub fn current_data(&self) -> Vec<Arc<ChildData>> {
        self.core.snapshot().values().cloned().collect()
    }

    /// One child, by its full path.
    pub fn current(&self, path: &str) -> Option<Arc<ChildData>> {
        self.core.get(path)
    }

    /// How many children are cached.
    pub fn len(&self) -> usize {
        self.core.len()
    }

    /// Whether no child is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets the cached children, without events and without reading again (Curator's
    /// `clear`). Watches stay: the next change fills the cache again.
    pub fn clear(&self) {
        self.core.clear();
    }

    /// Forgets the cached children and reads them all again; each is told as `Added`.
    pub async fn clear_and_refresh(&self) -> Result<()> {
        self.core.clear();
        self.core.refresh().await
    }

    /// The parent's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// [`PathChildrenCache::close`] for a cache shared in an `Arc` (a service cache's).
    #[cfg(feature = "discovery")]
    pub(crate) async fn shut(&self) {
        self.core.close().await
    }

    cache_handle!();
}

impl std::fmt::Debug for PathChildrenCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PathChildrenCache")
            .field("path", &self.path)
            .field("children", &self.len())
            .finish()
    }
}
