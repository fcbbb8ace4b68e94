//! A request's reply slot, reused from one request to the next: where the driver leaves the
//! answer and the caller's future finds it. A oneshot channel per request allocated once per
//! request; a slot is taken from the client's free list and goes back to it once both sides
//! are done with it, so a client in steady state allocates none.
//!
//! Each side is done at a single point, under the slot's lock: the sender when it leaves the
//! answer (or drops without one: the caller then gets `closed`), the receiver when it is
//! dropped (whether it took the answer or gave up waiting). Whichever is done second puts
//! the slot back, reset; the other only holds a reference it will drop without touching the
//! slot again, so a new request may already use it. A caller that stops waiting (a dropped
//! future) leaves the slot to the sender, which then drops the answer and frees it: the
//! cancel safety of a oneshot, without its allocation.

use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// A client's free slots, shared by its handles (which take them) and its driver (which
/// may put them back).
#[derive(Debug)]
pub(crate) struct ReplySlots<T>(Arc<Mutex<Vec<Arc<Slot<T>>>>>);

impl<T> Clone for ReplySlots<T> {
    fn clone(&self) -> Self {
        ReplySlots(self.0.clone())
    }
}

impl<T> Default for ReplySlots<T> {
    fn default() -> Self {
        ReplySlots(Arc::new(Mutex::new(Vec::new())))
    }
}

#[derive(Debug)]
struct Slot<T> {
    state: Mutex<State<T>>,
}

#[derive(Debug)]
struct State<T> {
    value: Option<T>,
    waker: Option<Waker>,
    sender_done: bool,
    receiver_done: bool,
}

impl<T> Default for State<T> {
    fn default() -> Self {
        State {
            value: None,
            waker: None,
            sender_done: false,
            receiver_done: false,
        }
    }
}

impl<T> Slot<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T> ReplySlots<T> {
    /// A free slot (a new one when none is free), and its two ends.
    pub(crate) fn take(&self) -> (SlotSender<T>, SlotReceiver<T>) {
        let free = self.0.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let slot = free.unwrap_or_else(|| {
            Arc::new(Slot {
                state: Mutex::new(State::default()),
            })
        });
        (
            SlotSender {
                slot: Some(slot.clone()),
                free: self.clone(),
            },
            SlotReceiver {
                slot,
                free: self.clone(),
            },
        )
    }

    /// Puts back a slot both sides are done with (its state already reset).
    fn put_back(&self, slot: Arc<Slot<T>>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(slot);
    }
}

/// The driver's end: leaves one answer.
#[derive(Debug)]
pub(crate) struct SlotSender<T> {
    /// `None` once the answer is left.
    slot: Option<Arc<Slot<T>>>,
    free: ReplySlots<T>,
}

impl<T> SlotSender<T> {
    /// Leaves the answer and wakes the caller; when the caller is gone, drops the answer and
    /// puts the slot back.
    pub(crate) fn send(mut self, value: T) {
        self.finish(Some(value));
    }

    fn finish(&mut self, value: Option<T>) {
        let Some(slot) = self.slot.take() else {
            return;
        };
        let mut state = slot.lock();
        state.sender_done = true;
        if state.receiver_done {
            *state = State::default();
            drop(state);
            self.free.put_back(slot);
            // The answer nobody waits for is dropped here, outside every lock.
            drop(value);
            return;
        }
        state.value = value;
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> Drop for SlotSender<T> {
    /// Dropped without an answer (the driver stopped): the caller is woken and finds none.
    fn drop(&mut self) {
        self.finish(None);
    }
}

/// The caller's end: a future of the answer, `None` if the sender was dropped without one.
#[derive(Debug)]
pub(crate) struct SlotReceiver<T> {
    slot: Arc<Slot<T>>,
    free: ReplySlots<T>,
}

impl<T> Future for SlotReceiver<T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = self.slot.lock();
        if state.sender_done {
            return Poll::Ready(state.value.take());
        }
        match &state.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => state.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl<T> Drop for SlotReceiver<T> {
    fn drop(&mut self) {
        let mut state = self.slot.lock();
        state.receiver_done = true;
        if state.sender_done {
            let old = mem::take(&mut *state);
            drop(state);
            self.free.put_back(self.slot.clone());
            // An answer never taken (the future was dropped once it was ready).
            drop(old);
        } else {
            // The sender puts the slot back; the waker is of no use any more.
            let waker = state.waker.take();
            drop(state);
            drop(waker);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll<T>(rx: &mut SlotReceiver<T>, waker: &Waker) -> Poll<Option<T>> {
        Pin::new(rx).poll(&mut Context::from_waker(waker))
    }

    fn free_count<T>(slots: &ReplySlots<T>) -> usize {
        slots.0.lock().unwrap().len()
    }

    #[test]
    fn an_answer_wakes_the_caller_and_the_slot_is_reused() {
        let slots = ReplySlots::default();
        let woken = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(woken.clone());
        let (tx, mut rx) = slots.take();
        assert_eq!(poll(&mut rx, &waker), Poll::Pending);
        tx.send(7);
        assert_eq!(woken.0.load(Ordering::SeqCst), 1);
        assert_eq!(poll(&mut rx, &waker), Poll::Ready(Some(7)));
        assert_eq!(free_count(&slots), 0, "not back before the caller is done");
        drop(rx);
        assert_eq!(free_count(&slots), 1);
        let first = slots.0.lock().unwrap()[0].clone();
        let (tx, mut rx) = slots.take();
        assert!(
            Arc::ptr_eq(tx.slot.as_ref().unwrap(), &first),
            "the same slot"
        );
        tx.send(8);
        assert_eq!(
            poll(&mut rx, &waker),
            Poll::Ready(Some(8)),
            "reset between uses"
        );
    }

    #[test]
    fn a_caller_that_gave_up_leaves_the_slot_to_the_sender() {
        let slots = ReplySlots::default();
        let (tx, rx) = slots.take();
        drop(rx);
        assert_eq!(free_count(&slots), 0);
        let answer = Arc::new(());
        tx.send(answer.clone());
        assert_eq!(Arc::strong_count(&answer), 1, "the answer is dropped");
        assert_eq!(free_count(&slots), 1);
    }

    #[test]
    fn a_sender_dropped_without_an_answer_gives_none() {
        let slots = ReplySlots::<u8>::default();
        let waker = Waker::from(Arc::new(Count(AtomicUsize::new(0))));
        let (tx, mut rx) = slots.take();
        drop(tx);
        assert_eq!(poll(&mut rx, &waker), Poll::Ready(None));
        drop(rx);
        assert_eq!(free_count(&slots), 1);
    }

    #[test]
    fn an_answer_never_taken_is_dropped_with_the_receiver() {
        let slots = ReplySlots::default();
        let (tx, rx) = slots.take();
        let answer = Arc::new(());
        tx.send(answer.clone());
        drop(rx);
        assert_eq!(Arc::strong_count(&answer), 1);
        assert_eq!(free_count(&slots), 1);
    }
}
