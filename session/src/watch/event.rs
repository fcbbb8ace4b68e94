//! [`WatchedEvent`]: one notification as a watcher hears it. The wire record it comes from is
//! the codec's `WatcherEvent` (the name of ZooKeeper's jute record); from the core up, the
//! client included, it is this one type, named as in the Java client's API.

use zkrs_codec::{EventType, KeeperState};

/// A watch notification for one watcher. The core hands it out with the server's path
/// ([`Event::Watch`](crate::Event::Watch)); the client gives it to the application with the
/// path as the client sees it (chroot removed).
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
}
