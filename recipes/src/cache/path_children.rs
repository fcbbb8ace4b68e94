//! [`PathChildrenCache`]: the children of one node, with their Stat and data.

use std::sync::Arc;

use zkrs_client::{validate_path, Client, Result};

use super::core::{CacheCore, WatchWith};
use super::engine::Settings;
use super::selector::AllNodes;
use super::{cache_handle, ChildData};

/// How a [`PathChildrenCache`] starts, as Curator's `StartMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StartMode {
    /// Start returns at once; the children found are told as `Added` events.
    Normal,
    /// Start returns once every child was read; those are not told as events.
    BuildInitialCache,
    /// Start returns at once; the children found are told as `Added` events, then
    /// `Initialized`.
    PostInitializedEvent,
}

/// The children of one node with their Stat and (unless turned off) data, as Curator's
/// `PathChildrenCache`. The parent may not exist yet, and may be deleted and created again.
/// The parent itself is not in the view.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::cache::{PathChildrenCache, StartMode};
/// let workers = PathChildrenCache::new(&client, "/app/workers").cache_data(false);
/// workers.start(StartMode::BuildInitialCache).await?;
/// let names: Vec<String> = workers.current_data().iter().map(|c| c.name().to_string()).collect();
/// # Ok(()) }
/// ```
#[must_use = "dropping a cache stops it"]
pub struct PathChildrenCache {
    core: CacheCore,
    path: String,
    cache_data: bool,
}

impl PathChildrenCache {
    /// A cache of the children of `path`, with their data (not started).
    pub fn new(client: &Client, path: &str) -> PathChildrenCache {
        PathChildrenCache {
            core: CacheCore::new(client, zkrs_client::DEFAULT_EVENT_CAPACITY),
            path: path.to_string(),
            cache_data: true,
        }
    }

    /// Whether to keep the children's data (default), or only their Stat.
    pub fn cache_data(mut self, cache_data: bool) -> PathChildrenCache {
        self.cache_data = cache_data;
        self
    }

    /// Starts watching in `mode`.
    pub async fn start(&self, mode: StartMode) -> Result<()> {
        validate_path(&self.path, false)?;
        let settings = Settings {
            root: self.path.clone(),
            max_depth: 1,
            include_root: false,
            cache_data: self.cache_data,
            selector: Arc::new(AllNodes),
            initial_events: mode != StartMode::BuildInitialCache,
            initialized_event: mode == StartMode::PostInitializedEvent,
        };
        self.core.start(settings, WatchWith::OneShot)?;
        if mode == StartMode::BuildInitialCache {
            self.core.wait_initialized().await?;
        }
        Ok(())
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
