//! What users get from watches: a [`WatchedEvent`], through a one-shot [`OneshotWatch`]
//! future or a [`PersistentWatch`] stream.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::{mpsc, oneshot};
use zkr_codec::{EventType, KeeperState};

use crate::driver::Command;
use crate::session::WatcherId;

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

    fn closed() -> WatchedEvent {
        WatchedEvent {
            event_type: EventType::None,
            state: KeeperState::Closed,
            path: String::new(),
        }
    }
}

/// A one-shot watch left by `get_data_and_watch`, `exists_and_watch` or
/// `get_children_and_watch`: resolves once, with the first event on the node, or with a
/// session event (`Expired`, `Closed`) if the session ended first.
///
/// Watches survive reconnects: the client re-registers them with the last zxid it saw, so a
/// change made while it was disconnected still fires the watch. Dropping it is fine.
#[derive(Debug)]
pub struct OneshotWatch {
    rx: oneshot::Receiver<WatchedEvent>,
}

impl OneshotWatch {
    pub(crate) fn new(rx: oneshot::Receiver<WatchedEvent>) -> OneshotWatch {
        OneshotWatch { rx }
    }
}

impl Future for OneshotWatch {
    type Output = WatchedEvent;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<WatchedEvent> {
        Pin::new(&mut self.rx)
            .poll(cx)
            .map(|r| r.unwrap_or_else(|_| WatchedEvent::closed()))
    }
}

/// A persistent (optionally recursive) watch from `add_watch`: every event until dropped.
/// After a session event (`Expired`, `Closed`) the stream ends.
///
/// Dropping it removes the watch from the server when no other watcher needs it.
#[derive(Debug)]
pub struct PersistentWatch {
    id: WatcherId,
    rx: mpsc::UnboundedReceiver<WatchedEvent>,
    commands: mpsc::WeakUnboundedSender<Command>,
    ended: bool,
}

impl PersistentWatch {
    pub(crate) fn new(
        id: WatcherId,
        rx: mpsc::UnboundedReceiver<WatchedEvent>,
        commands: mpsc::WeakUnboundedSender<Command>,
    ) -> PersistentWatch {
        PersistentWatch {
            id,
            rx,
            commands,
            ended: false,
        }
    }

    /// The next event; `None` once the session ended (after its session event) or the client
    /// is gone.
    pub async fn next(&mut self) -> Option<WatchedEvent> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// Polls for the next event (for use in hand-written futures and streams).
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<WatchedEvent>> {
        if self.ended {
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(event)) => {
                if event.is_session_event() {
                    self.ended = true;
                }
                Poll::Ready(Some(event))
            }
            Poll::Ready(None) => {
                self.ended = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for PersistentWatch {
    fn drop(&mut self) {
        if let Some(commands) = self.commands.upgrade() {
            let _ = commands.send(Command::ForgetWatcher(self.id));
        }
    }
}
