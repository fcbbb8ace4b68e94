//! [`WatchedEvent`]: what a watch tells (the session core's type: one name from the core to
//! the application), and what a persistent watch yields.

use crate::event_stream::Lagged;

pub use crate::session::WatchedEvent;

/// What a [`PersistentWatch`](crate::PersistentWatch) yields: an event, or `Err(Lagged)`
/// where events were dropped because the reader fell behind.
pub type PersistentWatchItem = Result<WatchedEvent, Lagged>;

/// Lets a persistent watch's bounded buffer tell of the events it dropped.
impl From<Lagged> for PersistentWatchItem {
    fn from(lagged: Lagged) -> PersistentWatchItem {
        Err(lagged)
    }
}

/// What a one-shot watch says when the client closed before it fired.
pub(crate) fn closed() -> WatchedEvent {
    WatchedEvent::new(
        zkrs_codec::EventType::None,
        zkrs_codec::KeeperState::Closed,
        "",
    )
}
