//! [`PersistentWatcher`]: a persistent (optionally recursive) watch that outlives
//! connection loss and session loss, as Curator's `PersistentWatcher`.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::oneshot;
use zkrs_client::__private::{event_stream, EventSender};
use zkrs_client::{
    validate_path, AddWatchMode, Client, ConnectionState, Error, EventStream, Lagged, Result,
    WatchedEvent, DEFAULT_EVENT_CAPACITY,
};

use crate::framework::{wait_connected, Backoff};

/// What a [`PersistentWatcher`] tells.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum PersistentWatcherEvent {
    /// A node event.
    Event(WatchedEvent),
    /// The watch is (again) in place: after the first `addWatch`, after every reconnect, and
    /// after a new session replaced a lost one (the watch is then added anew). Events may have
    /// been missed before it: re-read what you derive from them.
    Reset,
    /// The watch cannot be added and will not be retried: the server is older than 3.6
    /// (`Unimplemented`), or refuses (`NoAuth`), or the path is invalid. The stream ends.
    Failed(Error),
    /// The reader fell behind and `missed` events were dropped (treat it as a reset).
    Lagged {
        /// How many events were dropped.
        missed: u64,
    },
}

impl From<Lagged> for PersistentWatcherEvent {
    fn from(lagged: Lagged) -> Self {
        PersistentWatcherEvent::Lagged {
            missed: lagged.missed,
        }
    }
}

/// A persistent watch kept in place across reconnects and session losses: it is added again
/// on every new session, and says so with [`PersistentWatcherEvent::Reset`].
///
/// Events come through a bounded [`EventStream`] (16 Ki events unless set otherwise): a
/// reader that stops reading costs at most that much memory and is told what it missed.
/// Dropping it (or [`PersistentWatcher::close`]) removes the watch from the server.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_client::AddWatchMode;
/// use zkrs_recipes::cache::{PersistentWatcher, PersistentWatcherEvent};
/// let mut watcher =
///     PersistentWatcher::builder(&client, "/config", AddWatchMode::PersistentRecursive).start()?;
/// while let Some(event) = watcher.next().await {
///     match event {
///         PersistentWatcherEvent::Event(e) => println!("{:?} {}", e.event_type, e.path),
///         PersistentWatcherEvent::Reset => println!("(re)watching: re-read /config"),
///         other => println!("{other:?}"),
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct PersistentWatcher {
    events: EventStream<PersistentWatcherEvent>,
    close: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// Settings for a [`PersistentWatcher`]; [`PersistentWatcherBuilder::start`] starts it.
#[derive(Debug)]
#[must_use = "a builder does nothing until started"]
pub struct PersistentWatcherBuilder {
    client: Client,
    path: String,
    mode: AddWatchMode,
    event_capacity: usize,
}

impl PersistentWatcherBuilder {
    /// The most unread events held (default
    /// [`DEFAULT_EVENT_CAPACITY`](zkrs_client::DEFAULT_EVENT_CAPACITY)).
    pub fn event_capacity(mut self, capacity: usize) -> PersistentWatcherBuilder {
        self.event_capacity = capacity;
        self
    }

    /// Starts watching (in a task: needs a tokio runtime). `InvalidInput` for a bad path.
    pub fn start(self) -> Result<PersistentWatcher> {
        validate_path(&self.path)?;
        Ok(PersistentWatcher::spawn(
            &self.client,
            &self.path,
            self.mode,
            self.event_capacity,
        ))
    }
}

impl PersistentWatcher {
    /// Settings for a watch of `path` in `mode` (the node, or its whole subtree).
    pub fn builder(client: &Client, path: &str, mode: AddWatchMode) -> PersistentWatcherBuilder {
        PersistentWatcherBuilder {
            client: client.clone(),
            path: path.to_string(),
            mode,
            event_capacity: DEFAULT_EVENT_CAPACITY,
        }
    }

    /// Starts the task that keeps the watch (the path was checked).
    pub(crate) fn spawn(
        client: &Client,
        path: &str,
        mode: AddWatchMode,
        capacity: usize,
    ) -> PersistentWatcher {
        let (tx, events) = event_stream(capacity);
        let (close_tx, close_rx) = oneshot::channel();
        let task = tokio::spawn(keep_watching(
            client.clone(),
            path.to_string(),
            mode,
            tx,
            close_rx,
        ));
        PersistentWatcher {
            events,
            close: Some(close_tx),
            task: Some(task),
        }
    }

    /// The next event; `None` once closed, or after [`PersistentWatcherEvent::Failed`].
    pub async fn next(&mut self) -> Option<PersistentWatcherEvent> {
        self.events.next().await
    }

    /// Removes the watch and waits for its task to end.
    pub async fn close(mut self) {
        if let Some(close) = self.close.take() {
            let _ = close.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl futures_core::Stream for PersistentWatcher {
    type Item = PersistentWatcherEvent;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().events.poll_event(cx)
    }
}

impl Drop for PersistentWatcher {
    fn drop(&mut self) {
        // The task sees its close signal dropped, drops the watch (which removes it from the
        // server) and ends.
        self.close.take();
    }
}

async fn keep_watching(
    client: Client,
    path: String,
    mode: AddWatchMode,
    tx: EventSender<PersistentWatcherEvent>,
    close: oneshot::Receiver<()>,
) {
    let watching = async {
        let mut backoff = Backoff::new();
        loop {
            if wait_connected(&client).await.is_err() {
                return;
            }
            // Subscribe before adding, so a reconnect right after is not missed.
            let mut changes = client.state_changes();
            let mut watch = match client.add_watch(&path, mode).await {
                Ok(watch) => {
                    backoff.reset();
                    watch
                }
                Err(e) if e.is_retryable() => {
                    if backoff.pause(&client).await.is_err() {
                        return;
                    }
                    continue;
                }
                Err(e) => {
                    tx.send(PersistentWatcherEvent::Failed(e));
                    return;
                }
            };
            let session = client.session_id();
            if !tx.send(PersistentWatcherEvent::Reset) {
                return;
            }
            loop {
                tokio::select! {
                    biased;
                    event = watch.next() => match event {
                        // The session ended (or the client closed): add it anew.
                        Some(Ok(event)) if event.is_session_event() => break,
                        Some(Ok(event)) => {
                            if !tx.send(PersistentWatcherEvent::Event(event)) {
                                return;
                            }
                        }
                        // This task fell behind the driver (it only forwards, so that is
                        // rare): the reader re-reads, as after any lag.
                        Some(Err(lagged)) => {
                            if !tx.send(PersistentWatcherEvent::from(lagged)) {
                                return;
                            }
                        }
                        None => break,
                    },
                    change = changes.next() => match change {
                        None => return,
                        Some(c) if c.state == ConnectionState::Closed => return,
                        // Back on the same session: the client re-registered the watch,
                        // and changes made while away may have been missed.
                        Some(c) if c.state == ConnectionState::Reconnected && c.session_id == session => {
                            if !tx.send(PersistentWatcherEvent::Reset) {
                                return;
                            }
                        }
                        Some(_) => {}
                    },
                }
            }
        }
    };
    tokio::select! {
        biased;
        _ = close => {}
        () = watching => {}
    }
}
