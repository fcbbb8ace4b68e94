//! [`NodeCache`]: one node's data, Stat and existence.

use std::sync::Arc;

use zkrs_client::{validate_path, Client, Result};

use super::core::{CacheCore, WatchWith};
use super::engine::Settings;
use super::selector::AllNodes;
use super::{cache_handle, ChildData};

/// One node's data, Stat and existence, as Curator's `NodeCache`: the node may not exist
/// yet, and may be deleted and created again. Changes are told as [`Added`], [`Updated`]
/// and [`Removed`](super::CacheEvent::Removed) events.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::cache::NodeCache;
/// let config = NodeCache::new(&client, "/app/config");
/// let mut changes = config.events();
/// config.start_with_initial_build().await?;
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

impl NodeCache {
    /// A cache of `path` (not started).
    pub fn new(client: &Client, path: &str) -> NodeCache {
        NodeCache {
            core: CacheCore::new(client, zkrs_client::DEFAULT_EVENT_CAPACITY),
            path: path.to_string(),
        }
    }

    fn settings(&self, initial_events: bool) -> Result<Settings> {
        validate_path(&self.path, false)?;
        Ok(Settings {
            root: self.path.clone(),
            max_depth: 0,
            include_root: true,
            cache_data: true,
            selector: Arc::new(AllNodes),
            initial_events,
            initialized_event: false,
        })
    }

    /// Starts watching; the first read is told as an event (`Added` if the node exists).
    pub fn start(&self) -> Result<()> {
        self.core.start(self.settings(true)?, WatchWith::OneShot)
    }

    /// Starts watching and returns once the node was read; that first read is not told as
    /// an event (Curator's `start(true)`).
    pub async fn start_with_initial_build(&self) -> Result<()> {
        self.core.start(self.settings(false)?, WatchWith::OneShot)?;
        self.core.wait_initialized().await
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
