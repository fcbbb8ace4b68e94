//! [`WatchedEvent`]: what a watch tells.

use zkr_codec::{EventType, KeeperState};

/// A watch notification, with the path as the client sees it (chroot removed).
#[derive(Debug, Clone, PartialEq, Eq)]
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
