//! [`Listeners`]: the event streams of one recipe, each reader with its own bounded stream.

use std::sync::{Arc, Mutex, MutexGuard};

use zkr_client::{event_stream, EventSender, EventStream, Lagged};

/// A recipe's event streams: every [`Listeners::subscribe`] gets its own bounded
/// [`EventStream`] of the events from then on, so readers never hold each other up. Closing
/// ends them all (after the events already queued).
pub struct Listeners<T> {
    inner: Arc<Mutex<Inner<T>>>,
}

struct Inner<T> {
    senders: Vec<EventSender<T>>,
    capacity: usize,
    closed: bool,
}

impl<T> Clone for Listeners<T> {
    fn clone(&self) -> Self {
        Listeners {
            inner: self.inner.clone(),
        }
    }
}

impl<T> Listeners<T> {
    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
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
    /// Listeners whose streams buffer at most `capacity` unread events each.
    pub fn new(capacity: usize) -> Listeners<T> {
        Listeners {
            inner: Arc::new(Mutex::new(Inner {
                senders: Vec::new(),
                capacity,
                closed: false,
            })),
        }
    }

    /// The buffer size of streams subscribed from now on.
    pub fn set_capacity(&self, capacity: usize) {
        self.lock().capacity = capacity;
    }

    /// A new stream of the events from now on (already ended if closed).
    pub fn subscribe(&self) -> EventStream<T> {
        let mut inner = self.lock();
        let (tx, rx) = event_stream(inner.capacity);
        if !inner.closed {
            inner.senders.push(tx);
        }
        rx
    }

    /// Sends `event` to every stream whose reader is still there.
    pub fn send(&self, event: T) {
        let mut inner = self.lock();
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
