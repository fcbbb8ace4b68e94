//! What users get from watches: a [`WatchedEvent`], through a one-shot [`OneshotWatch`]
//! future, a [`PersistentWatch`] stream, or a [`Watcher`] that gathers the events of many
//! one-shot watches into one [`WatcherEvents`] stream.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::event_stream::EventStream;
use crate::protocol::Command;
use crate::session::{WatcherGroup, WatcherId};
use crate::watched_event::{PersistentWatchItem, WatchedEvent};
use tokio::sync::{mpsc, oneshot};

/// A one-shot watch left by `get_data_and_watch`, `exists_and_watch` or
/// `get_children_and_watch`: resolves once, with the first event on the node, or with a
/// session event (`Expired`, `Closed`) if the session ended first.
///
/// Watches survive reconnects: the client re-registers them with the last zxid it saw, so a
/// change made while it was disconnected still fires the watch. Dropping it is fine: the
/// client forgets a watch nobody waits for (in batches, as new watches are left), and
/// removes the server's watch when no other watcher of the session needs it, so a session
/// that leaves and drops watches for its whole life holds only the live ones.
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
            .map(|r| r.unwrap_or_else(|_| crate::watched_event::closed()))
    }
}

/// A persistent (optionally recursive) watch from
/// [`Client::add_watch`](crate::Client::add_watch): every event until dropped. After a
/// session event (`Expired`, `Closed`) the stream ends.
///
/// Its buffer is bounded (16 Ki events by default, see
/// [`Client::add_watch_with_capacity`](crate::Client::add_watch_with_capacity)): the driver
/// never waits for a slow reader, and a reader that stops reading a busy recursive watch
/// costs at most that many events of memory. When the buffer is full the oldest events are
/// dropped and the reader gets one `Err(Lagged { missed })` where they were; it should then
/// re-read what it watches. `zkrs_recipes::cache::PersistentWatcher` also keeps the watch
/// across session loss.
///
/// Dropping it removes the watch from the server when no other watcher needs it.
///
/// ```no_run
/// # async fn f(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_client::AddWatchMode;
///
/// let mut watch = client.add_watch("/config", AddWatchMode::PersistentRecursive).await?;
/// while let Some(item) = watch.next().await {
///     match item {
///         Ok(event) => println!("{:?} {}", event.event_type, event.path),
///         Err(lagged) => println!("missed {} events: re-reading /config", lagged.missed),
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping a persistent watch removes it from the server"]
pub struct PersistentWatch {
    id: WatcherId,
    rx: EventStream<PersistentWatchItem>,
    commands: mpsc::WeakUnboundedSender<Command>,
    ended: bool,
}

impl PersistentWatch {
    pub(crate) fn new(
        id: WatcherId,
        rx: EventStream<PersistentWatchItem>,
        commands: mpsc::WeakUnboundedSender<Command>,
    ) -> PersistentWatch {
        PersistentWatch {
            id,
            rx,
            commands,
            ended: false,
        }
    }

    /// The next event (or `Err(Lagged)` where events were dropped); `None` once the session
    /// ended (after its session event) or the client is gone.
    pub async fn next(&mut self) -> Option<PersistentWatchItem> {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// An event already queued, without waiting.
    pub fn try_next(&mut self) -> Option<PersistentWatchItem> {
        if self.ended {
            return None;
        }
        let item = self.rx.try_next()?;
        Some(self.seen(item))
    }

    /// Polls for the next event (for use in hand-written futures and streams).
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<PersistentWatchItem>> {
        if self.ended {
            return Poll::Ready(None);
        }
        match self.rx.poll_event(cx) {
            Poll::Ready(Some(item)) => Poll::Ready(Some(self.seen(item))),
            Poll::Ready(None) => {
                self.ended = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Notes a session event, after which the stream ends.
    fn seen(&mut self, item: PersistentWatchItem) -> PersistentWatchItem {
        if item.as_ref().is_ok_and(WatchedEvent::is_session_event) {
            self.ended = true;
        }
        item
    }
}

impl futures_core::Stream for PersistentWatch {
    type Item = PersistentWatchItem;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<PersistentWatchItem>> {
        PersistentWatch::poll_next(self.get_mut(), cx)
    }
}

impl Drop for PersistentWatch {
    fn drop(&mut self) {
        if let Some(commands) = self.commands.upgrade() {
            let _ = commands.send(Command::ForgetWatcher(self.id));
        }
    }
}

/// One receiver for many one-shot watches, like passing the same `Watcher` object to many
/// calls of the Java client: every watch left through
/// [`Client::get_data_with_watcher`](crate::Client::get_data_with_watcher),
/// [`Client::exists_with_watcher`](crate::Client::exists_with_watcher) or
/// [`Client::get_children_with_watcher`](crate::Client::get_children_with_watcher) with a
/// clone of it fires into the one [`WatcherEvents`] stream made with it. Recipes that watch
/// thousands of nodes (the caches) use it instead of thousands of futures.
///
/// Each registration is still a one-shot watch: it fires once, with the node event, or with a
/// session event (`Expired`, `Closed`) if the session ended first. So the stream holds at most
/// one event per watch left, and its memory is bounded by the watches set. Like the Java
/// watcher, one notification reaches the stream once, however many of its watches it ends (a
/// path watched by `getData` and `exists` with the same watcher, or a delete that ends a data
/// and a child watch).
#[derive(Debug, Clone)]
pub struct Watcher {
    pub(crate) group: WatcherGroup,
    pub(crate) tx: mpsc::UnboundedSender<WatchedEvent>,
}

/// The events of every watch left with a [`Watcher`], in the order the server sent them.
///
/// Dropping it forgets every watch still waiting, and removes them from the server
/// (`removeWatches`) where no other watcher of the session needs them.
#[derive(Debug)]
pub struct WatcherEvents {
    group: WatcherGroup,
    rx: mpsc::UnboundedReceiver<WatchedEvent>,
    commands: mpsc::WeakUnboundedSender<Command>,
}

impl WatcherEvents {
    pub(crate) fn new(
        group: WatcherGroup,
        rx: mpsc::UnboundedReceiver<WatchedEvent>,
        commands: mpsc::WeakUnboundedSender<Command>,
    ) -> WatcherEvents {
        WatcherEvents {
            group,
            rx,
            commands,
        }
    }

    /// The next event. `None` never comes while the [`Watcher`] or a clone of it is alive.
    pub async fn next(&mut self) -> Option<WatchedEvent> {
        self.rx.recv().await
    }

    /// Polls for the next event.
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<WatchedEvent>> {
        self.rx.poll_recv(cx)
    }

    /// An event already queued, without waiting.
    pub fn try_next(&mut self) -> Option<WatchedEvent> {
        self.rx.try_recv().ok()
    }
}

impl futures_core::Stream for WatcherEvents {
    type Item = WatchedEvent;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WatchedEvent>> {
        self.get_mut().rx.poll_recv(cx)
    }
}

impl Drop for WatcherEvents {
    fn drop(&mut self) {
        if let Some(commands) = self.commands.upgrade() {
            let _ = commands.send(Command::ForgetGroup(self.group));
        }
    }
}
