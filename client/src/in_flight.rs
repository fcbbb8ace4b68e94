//! The bound on a client's requests in flight: past it, callers wait (asynchronously, and
//! cancel-safely: a caller dropped while waiting sent nothing) instead of growing the
//! driver's queue, the core's output buffer and its pending queue without limit.
//!
//! A place is taken before a request is handed to the driver and travels with its reply
//! slot (`ReplyTx`), so it is held until the answer is delivered or the request fails,
//! even when the caller stopped waiting for it: a caller that gives up on requests (a
//! `select!` with a short timeout) cannot pile them up behind a stalled server either.
//!
//! Not tokio's `Semaphore`: its release takes the waiters' lock every time, which the
//! session bench measured at about 4% more CPU per request at 256 in flight. Here taking a
//! place is one compare-and-swap and freeing it one subtraction; only callers that found the
//! bound full wait on a `Notify`, and only then does a release wake one.

use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use tokio::sync::Notify;

/// Requests in flight per client unless [`crate::ClientBuilder::max_in_flight`] says
/// otherwise: four times the 256 a busy service keeps outstanding, below the server's
/// default `globalOutstandingLimit` (1,000 per server, spread over its clients).
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1024;

/// The places of one client (`None`: no bound).
#[derive(Debug)]
pub(crate) struct InFlight {
    bound: Option<Arc<Bound>>,
}

#[derive(Debug)]
struct Bound {
    max: usize,
    taken: AtomicUsize,
    /// Callers waiting for a place (they registered with `freed` first).
    waiting: AtomicUsize,
    freed: Notify,
}

impl Bound {
    fn try_take(&self) -> bool {
        let mut taken = self.taken.load(SeqCst);
        while taken < self.max {
            match self
                .taken
                .compare_exchange_weak(taken, taken + 1, SeqCst, SeqCst)
            {
                Ok(_) => return true,
                Err(now) => taken = now,
            }
        }
        false
    }
}

/// One request's place in flight, freed when dropped (with its reply slot).
#[derive(Debug)]
pub(crate) struct Place(Arc<Bound>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.taken.fetch_sub(1, SeqCst);
        // A waiter registered with `freed` before it counted itself and checked again, so
        // either it sees this place free or this sees it waiting: no wake-up is lost.
        if self.0.waiting.load(SeqCst) > 0 {
            self.0.freed.notify_one();
        }
    }
}

/// Uncounts a waiter, also when its caller gives up.
struct Waiter<'a>(&'a AtomicUsize);

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

impl InFlight {
    /// At most `max` requests in flight; `usize::MAX` for no bound; 0 is taken as 1.
    pub(crate) fn new(max: usize) -> InFlight {
        let bound = (max != usize::MAX).then(|| {
            Arc::new(Bound {
                max: max.max(1),
                taken: AtomicUsize::new(0),
                waiting: AtomicUsize::new(0),
                freed: Notify::new(),
            })
        });
        InFlight { bound }
    }

    /// A place, waiting for one if every place is taken (`None` when there is no bound).
    /// Cancel-safe: dropped while waiting, it holds nothing (a wake-up it was given goes to
    /// the next waiter: tokio's `Notified` passes it on).
    pub(crate) async fn place(&self) -> Option<Place> {
        let bound = self.bound.as_ref()?;
        while !bound.try_take() {
            let mut freed = pin!(bound.freed.notified());
            freed.as_mut().enable();
            bound.waiting.fetch_add(1, SeqCst);
            let _waiter = Waiter(&bound.waiting);
            if bound.try_take() {
                break;
            }
            freed.await;
        }
        Some(Place(bound.clone()))
    }

    /// Places taken and callers waiting for one, now (`None` when there is no bound).
    pub(crate) fn counts(&self) -> Option<(usize, usize)> {
        self.bound
            .as_ref()
            .map(|b| (b.taken.load(SeqCst), b.waiting.load(SeqCst)))
    }
}
