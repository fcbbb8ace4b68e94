//! [`CacheEvent`]: what a cache tells, one type for every cache over what it holds.

use std::sync::Arc;

use zkrs_client::{Error, Lagged};

use super::ChildData;

/// What happened to a cache, in the order the server applied the changes.
///
/// One type for every cache, over what it holds (`V`): a node ([`ChildData`], the default)
/// for the caches of this module, a decoded value for a typed cache (`TypedCacheEvent`), a
/// service instance for a service cache (`ServiceCacheEvent`). A cache tells only the
/// variants its docs name: [`CacheEvent::Skipped`] comes only from the caches that decode
/// what they hold.
///
/// Node events compare identity, not only versions: a node deleted and created again
/// between two reads (a new `czxid`) is reported as [`CacheEvent::Removed`] then
/// [`CacheEvent::Added`], never as an update, and never missed. An update is reported when
/// the data was written (`mzxid` moved), even with the same bytes.
#[derive(Debug)]
#[non_exhaustive]
pub enum CacheEvent<V = ChildData> {
    /// A node entered the cache.
    Added(Arc<V>),
    /// A node's data was written.
    Updated {
        /// What the cache held before.
        old: Arc<V>,
        /// What it holds now.
        new: Arc<V>,
    },
    /// A node left the cache: deleted, no longer selected, or (in a cache that decodes)
    /// written with data that does not decode (then `Skipped` follows).
    Removed(Arc<V>),
    /// A node holds data that does not decode: it is left out of the cache, and told once
    /// per version of the node. The cache goes on.
    Skipped {
        /// The node's path.
        path: String,
        /// Why it could not be read: kind
        /// [`InvalidData`](zkrs_client::ErrorKind::InvalidData), the format's error as its
        /// source.
        error: Error,
    },
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
    /// refused its persistent watch (`NoAuth`, say) and no retry will fix it. Match on the
    /// error's [`kind`](Error::kind) and [`code`](Error::code).
    Failed(Error),
    /// The reader fell behind and `missed` events were dropped here (see
    /// [`zkrs_client::EventStream`]). Re-read the cache's snapshot.
    Lagged {
        /// How many events were dropped.
        missed: u64,
    },
}

// By hand: the derive would ask `V: Clone`, and the values are shared, not copied.
impl<V> Clone for CacheEvent<V> {
    fn clone(&self) -> Self {
        match self {
            CacheEvent::Added(v) => CacheEvent::Added(v.clone()),
            CacheEvent::Updated { old, new } => CacheEvent::Updated {
                old: old.clone(),
                new: new.clone(),
            },
            CacheEvent::Removed(v) => CacheEvent::Removed(v.clone()),
            CacheEvent::Skipped { path, error } => CacheEvent::Skipped {
                path: path.clone(),
                error: error.clone(),
            },
            CacheEvent::Initialized => CacheEvent::Initialized,
            CacheEvent::Suspended => CacheEvent::Suspended,
            CacheEvent::Reconnected => CacheEvent::Reconnected,
            CacheEvent::Lost => CacheEvent::Lost,
            CacheEvent::Failed(error) => CacheEvent::Failed(error.clone()),
            CacheEvent::Lagged { missed } => CacheEvent::Lagged { missed: *missed },
        }
    }
}

impl<V> From<Lagged> for CacheEvent<V> {
    fn from(lagged: Lagged) -> Self {
        CacheEvent::Lagged {
            missed: lagged.missed,
        }
    }
}
