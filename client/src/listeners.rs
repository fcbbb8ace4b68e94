//! [`Listeners`]: the fan-out of one event source to any number of [`EventStream`]s.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::event_stream::{event_stream, unbounded_event_stream, EventSender, EventStream, Lagged};

/// The fewest senders worth a sweep for dropped readers.
const MIN_SWEEP: usize = 16;

/// One source's event streams (a recipe's, or the client's state changes): every
/// [`Listeners::subscribe`] gets its own [`EventStream`] of the events from then on, so
/// readers never hold each other up. Closing ends them all (after the events already queued).
pub struct Listeners<T> {
    inner: Arc<Mutex<ListenersInner<T>>>,
}

struct ListenersInner<T> {
    senders: Vec<EventSender<T>>,
    /// `senders.len()` at which [`Listeners::subscribe`] next drops the senders whose
    /// readers are gone: twice the live count after the last sweep, so a source that is
    /// subscribed to and dropped over and over (a recipe per request on a long-lived
    /// client) holds O(live readers), at O(1) amortised per subscription.
    sweep_at: usize,
    /// `None`: unbounded streams.
    capacity: Option<usize>,
    make: fn(usize) -> (EventSender<T>, EventStream<T>),
    closed: bool,
    /// The stream [`Listeners::keep_first`] subscribed, for the next [`Listeners::subscribe`].
    kept: Option<EventStream<T>>,
}

impl<T> Clone for Listeners<T> {
    fn clone(&self) -> Self {
        Listeners {
            inner: self.inner.clone(),
        }
    }
}

impl<T> Listeners<T> {
    fn lock(&self) -> MutexGuard<'_, ListenersInner<T>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T> std::fmt::Debug for Listeners<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("Listeners")
            .field("streams", &inner.senders.len())
            .field("closed", &inner.closed)
            .finish()
    }
}

impl<T: Clone + From<Lagged>> Listeners<T> {
    /// Listeners whose streams buffer at most `capacity` unread events each (past that the
    /// oldest are dropped and the reader is told, see [`event_stream`]).
    pub fn new(capacity: usize) -> Listeners<T> {
        Listeners::with(Some(capacity), |c| event_stream(c))
    }

    /// The buffer size of streams subscribed from now on.
    pub fn set_capacity(&self, capacity: usize) {
        self.lock().capacity = Some(capacity);
    }

    /// Subscribes a stream now and keeps it for the next [`Listeners::subscribe`]. A recipe
    /// calls it as it starts: the stream its user takes right after `start` then holds every
    /// event since, whichever thread the recipe's task ran on meanwhile. Bounded streams
    /// only, so one never taken holds at most `capacity` events.
    pub fn keep_first(&self) {
        let stream = self.subscribe();
        self.lock().kept = Some(stream);
    }
}

impl<T: Clone> Listeners<T> {
    /// Listeners whose streams are unbounded: for rare transitions that must never be
    /// dropped (see [`unbounded_event_stream`]).
    pub fn unbounded() -> Listeners<T> {
        Listeners::with(None, |_| unbounded_event_stream())
    }

    fn with(
        capacity: Option<usize>,
        make: fn(usize) -> (EventSender<T>, EventStream<T>),
    ) -> Listeners<T> {
        Listeners {
            inner: Arc::new(Mutex::new(ListenersInner {
                senders: Vec::new(),
                sweep_at: MIN_SWEEP,
                capacity,
                make,
                closed: false,
                kept: None,
            })),
        }
    }

    /// A new stream of the events from now on (already ended if closed).
    pub fn subscribe(&self) -> EventStream<T> {
        let mut inner = self.lock();
        if let Some(kept) = inner.kept.take() {
            return kept;
        }
        let (tx, rx) = (inner.make)(inner.capacity.unwrap_or(usize::MAX));
        if !inner.closed {
            if inner.senders.len() >= inner.sweep_at {
                inner.senders.retain(|s| !s.is_closed());
                inner.sweep_at = (inner.senders.len() * 2).max(MIN_SWEEP);
            }
            inner.senders.push(tx);
        }
        rx
    }

    /// Sends `event` to every stream whose reader is still there.
    pub fn send(&self, event: T) {
        let mut inner = self.lock();
        Self::send_locked(&mut inner, event);
    }

    /// Runs `f` and sends what it returns, under the listeners' lock: events sent this way
    /// reach every stream in the order `f` ran (a state change and its event stay together).
    pub fn send_with(&self, f: impl FnOnce() -> Option<T>) {
        let mut inner = self.lock();
        if let Some(event) = f() {
            Self::send_locked(&mut inner, event);
        }
    }

    fn send_locked(inner: &mut ListenersInner<T>, event: T) {
        let mut gone = false;
        for sender in &inner.senders {
            gone |= !sender.send(event.clone());
        }
        if gone {
            inner.senders.retain(|s| !s.is_closed());
        }
    }

    /// Ends every stream (after the events already queued); later subscriptions end at once.
    pub fn close(&self) {
        let mut inner = self.lock();
        inner.closed = true;
        inner.senders.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    enum Told {
        Event(u32),
        Lagged(u64),
    }

    impl From<Lagged> for Told {
        fn from(lagged: Lagged) -> Self {
            Told::Lagged(lagged.missed)
        }
    }

    /// A recipe's task may send before its user takes a stream (another worker thread ran
    /// it between `start` and `events`): the stream kept at the start holds those events,
    /// and only the first subscriber gets it.
    #[test]
    fn the_first_stream_after_a_start_sees_the_events_since() {
        let listeners = Listeners::<Told>::new(8);
        listeners.keep_first();
        listeners.send(Told::Event(1));
        let mut first = listeners.subscribe();
        let mut second = listeners.subscribe();
        listeners.send(Told::Event(2));
        assert_eq!(first.try_next(), Some(Told::Event(1)));
        assert_eq!(first.try_next(), Some(Told::Event(2)));
        assert_eq!(second.try_next(), Some(Told::Event(2)));
        assert_eq!(second.try_next(), None);
    }

    #[test]
    fn readers_that_come_and_go_do_not_pile_up_between_events() {
        // A recipe per request on a long-lived client: each subscribes to the client's
        // state changes and drops its stream, while the state never changes.
        let listeners = Listeners::<u32>::unbounded();
        let kept: Vec<EventStream<u32>> = (0..5).map(|_| listeners.subscribe()).collect();
        for _ in 0..10_000 {
            drop(listeners.subscribe());
        }
        let senders = listeners.lock().senders.len();
        assert!(
            senders <= 2 * MIN_SWEEP + kept.len(),
            "{senders} senders held for {} live readers",
            kept.len()
        );
        listeners.send(7);
        for mut stream in kept {
            assert_eq!(stream.try_next(), Some(7));
        }
    }
}
