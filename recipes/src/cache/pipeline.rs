//! [`Pipeline`]: many requests in flight, their answers handled in the order they were sent.
//!
//! A cache's correctness rests on one fact: ZooKeeper answers one session's requests in the
//! order they were sent, each answer reflecting the tree at that point. If the cache handles
//! the answers in that same order, every answer is newer than the ones before it, and no
//! stale read can overwrite a newer one (a node created again after an earlier "no node"
//! answer, say). So requests are started (sent) the moment they are pushed, and their
//! results are taken from the front only.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

enum Slot<T> {
    Waiting(Pin<Box<dyn Future<Output = T> + Send>>),
    Done(T),
}

/// A FIFO of requests in flight.
pub(crate) struct Pipeline<T> {
    slots: VecDeque<Slot<T>>,
    noop: Waker,
}

struct NoWake;
impl Wake for NoWake {
    fn wake(self: Arc<Self>) {}
}

impl<T> Pipeline<T> {
    pub(crate) fn new() -> Pipeline<T> {
        Pipeline {
            slots: VecDeque::new(),
            noop: Waker::from(Arc::new(NoWake)),
        }
    }

    /// Starts `request` now: the client's operations send their request on their first poll,
    /// so polling it once here puts it on the wire in push order. Its result is taken later
    /// by [`Pipeline::next`], when everything pushed before it has been taken.
    pub(crate) fn push(&mut self, request: impl Future<Output = T> + Send + 'static) {
        let mut request: Pin<Box<dyn Future<Output = T> + Send>> = Box::pin(request);
        let mut cx = Context::from_waker(&self.noop);
        let slot = match request.as_mut().poll(&mut cx) {
            Poll::Ready(result) => Slot::Done(result),
            Poll::Pending => Slot::Waiting(request),
        };
        self.slots.push_back(slot);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The result of the oldest request, once it is there. Cancel-safe: nothing is taken
    /// until it is returned. Pending forever when nothing is in flight.
    pub(crate) async fn next(&mut self) -> T {
        std::future::poll_fn(|cx| self.poll_front(cx)).await
    }

    fn poll_front(&mut self, cx: &mut Context<'_>) -> Poll<T> {
        let result = match self.slots.front_mut() {
            None => return Poll::Pending,
            Some(Slot::Done(_)) => None,
            Some(Slot::Waiting(request)) => match request.as_mut().poll(cx) {
                Poll::Ready(result) => Some(result),
                Poll::Pending => return Poll::Pending,
            },
        };
        let slot = self.slots.pop_front();
        match (result, slot) {
            (Some(result), _) => Poll::Ready(result),
            (None, Some(Slot::Done(result))) => Poll::Ready(result),
            (None, _) => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::oneshot;

    #[tokio::test]
    async fn results_come_in_push_order_whatever_order_they_finish_in() {
        let mut pipeline = Pipeline::new();
        let (tx1, rx1) = oneshot::channel::<u32>();
        let (tx2, rx2) = oneshot::channel::<u32>();
        pipeline.push(async move { rx1.await.unwrap() });
        pipeline.push(async move { rx2.await.unwrap() });
        pipeline.push(async { 3 });
        tx2.send(2).unwrap();
        tx1.send(1).unwrap();
        assert_eq!(pipeline.len(), 3);
        assert_eq!(pipeline.next().await, 1);
        assert_eq!(pipeline.next().await, 2);
        assert_eq!(pipeline.next().await, 3);
        assert!(pipeline.is_empty());
    }

    #[tokio::test]
    async fn a_request_starts_when_pushed() {
        let mut pipeline = Pipeline::new();
        let started = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = started.clone();
        pipeline.push(async move {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
            std::future::pending::<()>().await
        });
        assert!(started.load(std::sync::atomic::Ordering::SeqCst));
    }
}
