//! [`EventStream`]: the one stream type that recipes hand their events out through, with a
//! bounded buffer and an explicit signal when a slow reader missed events.
//!
//! Why not a tokio channel: a recipe's task must never wait on its reader (a cache that
//! stalled because nobody read its events would stop converging), and an unbounded queue
//! grows without limit when nobody reads. So the sender never blocks; when the buffer is full
//! the *oldest* event is dropped, and the reader is told how many it missed, in order, by an
//! item made with [`Lagged`] before the events that follow the gap. A reader that sees it
//! re-reads the recipe's current state (every cache has a snapshot) instead of relying on the
//! events it missed.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// Events dropped because the reader fell behind: the stream yields
/// `T::from(Lagged { missed })` in their place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lagged {
    /// How many events were dropped, oldest first.
    pub missed: u64,
}

impl std::fmt::Display for Lagged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the reader fell behind: {} events dropped", self.missed)
    }
}

impl std::error::Error for Lagged {}

/// The buffer size of the streams made by [`event_stream`] when the caller has no better idea.
pub const DEFAULT_EVENT_CAPACITY: usize = 16 * 1024;

struct State<T> {
    items: VecDeque<T>,
    capacity: usize,
    missed: u64,
    /// Makes the item that tells of dropped events; `None` for an unbounded stream.
    lagged: Option<fn(Lagged) -> T>,
    waker: Option<Waker>,
    senders: usize,
    reader_alive: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A panic while holding this lock leaves the queue consistent: keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Makes a stream whose buffer holds at most `capacity` events (at least 1); past that the
/// oldest events are dropped and the reader gets one `T::from(Lagged { missed })` item where
/// they were.
///
/// ```
/// use futures_core::Stream;
/// use zkrs_client::__private::event_stream;
/// use zkrs_client::Lagged;
///
/// #[derive(Debug, PartialEq)]
/// enum Event { Value(u32), Lagged(u64) }
/// impl From<Lagged> for Event {
///     fn from(l: Lagged) -> Event { Event::Lagged(l.missed) }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let (tx, mut events) = event_stream::<Event>(2);
/// for i in 0..5 {
///     tx.send(Event::Value(i));
/// }
/// drop(tx);
/// assert_eq!(events.next().await, Some(Event::Lagged(3)));
/// assert_eq!(events.next().await, Some(Event::Value(3)));
/// assert_eq!(events.next().await, Some(Event::Value(4)));
/// assert_eq!(events.next().await, None); // every sender is gone
/// # });
/// ```
pub fn event_stream<T: From<Lagged>>(capacity: usize) -> (EventSender<T>, EventStream<T>) {
    new_stream(capacity.max(1), Some(T::from))
}

/// Makes a stream whose buffer is not bounded: for rare transitions that must never be
/// dropped (connection states, leadership), where a reader that stops reading costs one item
/// per transition.
pub fn unbounded_event_stream<T>() -> (EventSender<T>, EventStream<T>) {
    new_stream(usize::MAX, None)
}

fn new_stream<T>(
    capacity: usize,
    lagged: Option<fn(Lagged) -> T>,
) -> (EventSender<T>, EventStream<T>) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            capacity,
            missed: 0,
            lagged,
            waker: None,
            senders: 1,
            reader_alive: true,
        }),
    });
    (
        EventSender {
            shared: shared.clone(),
        },
        EventStream { shared },
    )
}

/// The sending side of an [`EventStream`]: never blocks, never fails while the reader lives.
/// Clone it to send from several places; the stream ends when every sender is dropped.
pub struct EventSender<T> {
    shared: Arc<Shared<T>>,
}

impl<T> EventSender<T> {
    /// Queues an event (dropping the oldest one if the buffer is full). Returns `false` when
    /// the reader is gone, so the producer can stop.
    pub fn send(&self, event: T) -> bool {
        let mut state = self.shared.lock();
        if !state.reader_alive {
            return false;
        }
        if state.lagged.is_some() && state.items.len() >= state.capacity {
            state.items.pop_front();
            state.missed += 1;
        }
        state.items.push_back(event);
        if let Some(waker) = state.waker.take() {
            drop(state);
            waker.wake();
        }
        true
    }

    /// Whether the reader is gone.
    pub fn is_closed(&self) -> bool {
        !self.shared.lock().reader_alive
    }
}

impl<T> Clone for EventSender<T> {
    fn clone(&self) -> Self {
        self.shared.lock().senders += 1;
        EventSender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for EventSender<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.senders -= 1;
        if state.senders == 0 {
            if let Some(waker) = state.waker.take() {
                drop(state);
                waker.wake();
            }
        }
    }
}

impl<T> std::fmt::Debug for EventSender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSender").finish_non_exhaustive()
    }
}

/// A recipe's events, in order: a [`futures_core::Stream`] (so `StreamExt` and
/// `tokio::select!` work on it), with a plain [`EventStream::next`] for the common case.
///
/// The buffer is bounded (see [`event_stream`]): a reader that stops reading costs at most
/// `capacity` events of memory, and it is told how many it missed. It never makes the
/// producer wait or go wrong. The stream ends (`None`) when the recipe is closed or dropped.
pub struct EventStream<T> {
    shared: Arc<Shared<T>>,
}

impl<T> EventStream<T> {
    /// The next event; `None` once the recipe has stopped and every event was read.
    pub async fn next(&mut self) -> Option<T> {
        std::future::poll_fn(|cx| self.poll_event(cx)).await
    }

    /// An event already queued, without waiting.
    pub fn try_next(&mut self) -> Option<T> {
        let mut state = self.shared.lock();
        take(&mut state)
    }

    /// Polls for the next event (what [`futures_core::Stream::poll_next`] calls).
    pub fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = self.shared.lock();
        if let Some(item) = take(&mut state) {
            return Poll::Ready(Some(item));
        }
        if state.senders == 0 {
            return Poll::Ready(None);
        }
        if !state
            .waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            state.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// How many events are queued now.
    pub fn len(&self) -> usize {
        let state = self.shared.lock();
        state.items.len() + usize::from(state.missed > 0)
    }

    /// Whether no event is queued now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn take<T>(state: &mut State<T>) -> Option<T> {
    if let (Some(lagged), true) = (state.lagged, state.missed > 0) {
        let missed = std::mem::take(&mut state.missed);
        return Some(lagged(Lagged { missed }));
    }
    state.items.pop_front()
}

impl<T> futures_core::Stream for EventStream<T> {
    type Item = T;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        self.get_mut().poll_event(cx)
    }
}

impl<T> Drop for EventStream<T> {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.reader_alive = false;
        state.items.clear();
        // The reader's waker keeps its task's allocation alive for as long as a sender
        // lives (a client's state-change sender lives as long as the session): let it go.
        let waker = state.waker.take();
        drop(state);
        drop(waker);
    }
}

impl<T> std::fmt::Debug for EventStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("queued", &self.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    enum E {
        V(u32),
        Lag(u64),
    }
    impl From<Lagged> for E {
        fn from(l: Lagged) -> E {
            E::Lag(l.missed)
        }
    }

    #[test]
    fn keeps_order_and_reports_the_gap_where_it_was() {
        let (tx, mut rx) = event_stream::<E>(3);
        for i in 0..3 {
            assert!(tx.send(E::V(i)));
        }
        assert_eq!(rx.try_next(), Some(E::V(0)));
        for i in 3..7 {
            tx.send(E::V(i));
        }
        // Buffer of 3: 1, 2 and 3 were dropped to make room for 4, 5, 6.
        assert_eq!(rx.try_next(), Some(E::Lag(3)));
        assert_eq!(rx.try_next(), Some(E::V(4)));
        assert_eq!(rx.len(), 2);
        assert_eq!(rx.try_next(), Some(E::V(5)));
        assert_eq!(rx.try_next(), Some(E::V(6)));
        assert_eq!(rx.try_next(), None);
    }

    #[test]
    fn ends_when_every_sender_is_gone_and_tells_senders_when_the_reader_is() {
        let (tx, mut rx) = event_stream::<E>(8);
        let tx2 = tx.clone();
        tx.send(E::V(1));
        drop(tx);
        let waker = Waker::from(Arc::new(NoWake));
        let mut cx = Context::from_waker(&waker);
        assert_eq!(rx.poll_event(&mut cx), Poll::Ready(Some(E::V(1))));
        assert_eq!(rx.poll_event(&mut cx), Poll::Pending);
        drop(tx2);
        assert_eq!(rx.poll_event(&mut cx), Poll::Ready(None));

        let (tx, rx) = event_stream::<E>(8);
        assert!(!tx.is_closed());
        drop(rx);
        assert!(tx.is_closed());
        assert!(!tx.send(E::V(2)));
    }

    #[test]
    fn an_unbounded_stream_drops_nothing() {
        let (tx, mut rx) = unbounded_event_stream::<u32>();
        for i in 0..100_000 {
            tx.send(i);
        }
        assert_eq!(rx.len(), 100_000);
        assert_eq!(rx.try_next(), Some(0));
    }

    #[test]
    fn a_dropped_reader_lets_go_of_its_waker() {
        let (tx, mut rx) = event_stream::<E>(8);
        let task = Arc::new(NoWake);
        let waker = Waker::from(task.clone());
        assert_eq!(
            rx.poll_event(&mut Context::from_waker(&waker)),
            Poll::Pending
        );
        drop(waker);
        assert_eq!(Arc::strong_count(&task), 2, "the stream holds the waker");
        drop(rx);
        assert_eq!(
            Arc::strong_count(&task),
            1,
            "a live sender must not keep the finished reader's task alive"
        );
        drop(tx);
    }

    struct NoWake;
    impl std::task::Wake for NoWake {
        fn wake(self: Arc<Self>) {}
    }
}
