//! What a cache holds ([`ChildData`]) and what it tells ([`CacheEvent`]).

use std::sync::Arc;

use zkrs_client::{Bytes, Lagged, Stat};

/// One cached node: its path, Stat and (if the cache keeps data) its data.
///
/// The data is a copy owned by the cache, not a slice of the reply frame it came in: a
/// long-lived cache of small values would otherwise pin whole read buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildData {
    /// The full path, as the client sees it (chroot removed).
    pub path: String,
    /// The node's Stat when it was last read.
    pub stat: Stat,
    /// The node's data, or `None` when the cache was told not to keep data.
    pub data: Option<Bytes>,
}

impl ChildData {
    /// The last segment of the path.
    pub fn name(&self) -> &str {
        crate::framework::node_name(&self.path)
    }

    /// The data, or an empty slice when the cache does not keep data.
    pub fn bytes(&self) -> &[u8] {
        self.data.as_deref().unwrap_or_default()
    }
}

/// What happened to a cache, in the order the server applied the changes.
///
/// Node events compare identity, not only versions: a node deleted and created again
/// between two reads (a new `czxid`) is reported as [`CacheEvent::Removed`] then
/// [`CacheEvent::Added`], never as an update, and never missed. An update is reported when
/// the data was written (`mzxid` moved), even with the same bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheEvent {
    /// A node entered the cache.
    Added(Arc<ChildData>),
    /// A node's data was written.
    Updated {
        /// What the cache held before.
        old: Arc<ChildData>,
        /// What it holds now.
        new: Arc<ChildData>,
    },
    /// A node left the cache (deleted, or no longer selected).
    Removed(Arc<ChildData>),
    /// The initial build is complete: the cache reflects the server as of some moment after
    /// it started.
    Initialized,
    /// The connection dropped; the cache keeps its view but may fall behind.
    Suspended,
    /// Connected again (to the same session or a new one); the cache re-reads what it may
    /// have missed, and the events for what changed follow.
    Reconnected,
    /// The session was lost; the cache re-reads everything once a new session is up.
    Lost,
    /// The cache cannot watch and has stopped (its stream ends after this): the server
    /// refused its persistent watch (`NoAuth`, say) and no retry will fix it.
    Failed(String),
    /// The reader fell behind and `missed` events were dropped here (see
    /// [`zkrs_client::EventStream`]). Re-read the cache's snapshot.
    Lagged {
        /// How many events were dropped.
        missed: u64,
    },
}

impl From<Lagged> for CacheEvent {
    fn from(lagged: Lagged) -> CacheEvent {
        CacheEvent::Lagged {
            missed: lagged.missed,
        }
    }
}
