//! Caches: a local view of one node ([`NodeCache`]), of a node's children
//! ([`PathChildrenCache`]), or of a subtree ([`TreeCache`], [`CuratorCache`]), kept current by
//! watches, with Curator's semantics; and [`PersistentWatcher`], the persistent watch they
//! build on.
//!
//! What every cache guarantees:
//! - **Convergence**: once faults stop, the view equals a fresh read of the server (paths,
//!   data, Stat). After a reconnect or a new session the cache re-reads every node it holds
//!   and lists every parent it holds, so nothing changed while it was away is missed. One
//!   exception, as in Curator: at a cache's last level (a [`NodeCache`]'s node, a
//!   [`PathChildrenCache`]'s children, a [`TreeCache`]'s `max_depth`) the node's own
//!   children are not watched, so the child-related part of its Stat (`num_children`,
//!   `cversion`, `pzxid`) is as of the node's last data change.
//! - **Identity, not only version**: a node deleted and created again between two reads is
//!   [`CacheEvent::Removed`] then [`CacheEvent::Added`] (`czxid` compared), never an update.
//! - **Order**: answers are handled in the order the server gave them, so no event
//!   describes a state older than one already told.
//! - **Cheap reads**: [`CuratorCache::snapshot`] and friends return an `Arc` of the current
//!   map without waiting on the network or copying it.
//! - **Pipelined builds**: every read of the initial build is in flight at once.
//! - **Lifecycle**: a cache is made and started by its builder's `start` (it returns at
//!   once; `initialized().await` waits for the first read); `close` (or dropping the cache)
//!   removes its watches from the server, ends its event streams and its task.
//! - **Bounded events**: each event stream holds at most
//!   [`DEFAULT_EVENT_CAPACITY`](zkrs_client::DEFAULT_EVENT_CAPACITY) unread events (or the
//!   `event_capacity` set) in its [`EventStream`](zkrs_client::EventStream); past that the oldest
//!   are dropped and the reader gets [`CacheEvent::Lagged`]. A slow or absent reader never makes
//!   the cache wrong or slow; the view is always complete.
//!
//! ```no_run
//! # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
//! use zkrs_recipes::cache::{CacheEvent, PathChildrenCache, StartMode};
//! let members = PathChildrenCache::builder(&client, "/app/members")
//!     .start_mode(StartMode::BuildInitialCache)
//!     .start()?;
//! let mut events = members.events();
//! members.initialized().await?;
//! for member in members.current_data() {
//!     println!("{} = {:?}", member.name(), member.data);
//! }
//! while let Some(event) = events.next().await {
//!     if let CacheEvent::Added(member) = event {
//!         println!("joined: {}", member.name());
//!     }
//! }
//! # Ok(()) }
//! ```

pub(crate) mod core;
mod curator;
mod data;
pub(crate) mod engine;
mod event;
mod fetch;
mod node;
mod options;
mod path_children;
mod persistent_watcher;
mod pipeline;
mod selector;
mod tree;
mod view;
mod watch_book;

pub use curator::{CuratorCache, CuratorCacheBuilder};
pub use data::ChildData;
pub use event::CacheEvent;
pub use node::{NodeCache, NodeCacheBuilder};
pub use path_children::{PathChildrenCache, PathChildrenCacheBuilder, StartMode};
pub use persistent_watcher::{PersistentWatcher, PersistentWatcherBuilder, PersistentWatcherEvent};
pub use selector::{AllNodes, TreeCacheSelector};
pub use tree::{TreeCache, TreeCacheBuilder};
pub use view::Snapshot;

/// The methods every cache handle has, written once.
macro_rules! cache_handle {
    () => {
        /// A stream of the events from now on. Taken right after `start` (before the task
        /// has heard from the server), it sees the initial build's events too. Any number of
        /// streams may be taken; each is bounded.
        pub fn events(&self) -> zkrs_client::EventStream<$crate::cache::CacheEvent> {
            self.core.events()
        }

        /// Waits until the initial build is complete. Fails if the cache is closed first.
        pub async fn initialized(&self) -> zkrs_client::Result<()> {
            self.core.wait_initialized().await
        }

        /// Reads everything again (what a reconnect does) and waits until every read is in.
        pub async fn rebuild(&self) -> zkrs_client::Result<()> {
            self.core.refresh().await
        }

        /// Every cached node by path, in byte order of the paths: an `Arc` of the current
        /// map, taken without copying it or waiting on the network, and consistent while held.
        pub fn snapshot(&self) -> $crate::cache::Snapshot {
            self.core.snapshot()
        }

        /// One cached node, by its full path.
        pub fn get(&self, path: &str) -> Option<std::sync::Arc<$crate::cache::ChildData>> {
            self.core.get(path)
        }

        /// Stops the cache and waits for its task: its watches are removed from the server
        /// and its event streams end. Dropping the cache does the same without waiting.
        pub async fn close(self) {
            self.core.close().await
        }
    };
}
pub(crate) use cache_handle;
