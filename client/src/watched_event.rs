//! [`WatchedEvent`]: what a watch tells.

use zkrs_codec::{EventType, KeeperState};

use crate::event_stream::Lagged;

/// What a [`PersistentWatch`](crate::PersistentWatch) yields: an event, or `Err(Lagged)`
/// where events were dropped because the reader fell behind.
pub type PersistentWatchItem = Result<WatchedEvent, Lagged>;

/// Lets a persistent watch's bounded buffer tell of the events it dropped.
impl From<Lagged> for PersistentWatchItem {
    fn from(lagged: Lagged) -> PersistentWatchItem {
        Err(lagged)
    }
}

/// A watch notification, with the path as the client sees it (chroot removed).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WatchedEvent {
    /// What happened: a node event, or [`EventType::None`] for a session event.
    pub event_type: EventType,
    /// The connection state: [`KeeperState::Expired`] when the session was lost before the
    /// watch fired, [`KeeperState::Closed`] when the client was closed.
    pub state: KeeperState,
    /// The node (empty for session events).
    pub path: String,
}

impl WatchedEvent {
    /// A notification of `event_type` on `path` in `state` (to compare with one received;
    /// ZooKeeper 3.9 added a zxid to it, which a later version of this type may carry).
    pub fn new(event_type: EventType, state: KeeperState, path: &str) -> WatchedEvent {
        WatchedEvent {
            event_type,
            state,
            path: path.to_string(),
        }
    }

    /// Whether this is a session event (the watch ended without a node event).
    pub fn is_session_event(&self) -> bool {
        self.event_type == EventType::None
    }

    pub(crate) fn closed() -> WatchedEvent {
        WatchedEvent {
            event_type: EventType::None,
            state: KeeperState::Closed,
            path: String::new(),
        }
    }
}
