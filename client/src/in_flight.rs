//! The bound on a client's requests in flight: past it, callers wait (asynchronously, and
//! cancel-safely: a caller dropped while waiting sent nothing) instead of growing the
//! driver's queue, the core's output buffer and its pending queue without limit.
//!
//! A permit is taken before a request is handed to the driver and travels with its reply
//! slot ([`ReplyTx`]), so it is held until the answer is delivered or the request fails,
//! even when the caller stopped waiting for it: a caller that gives up on requests (a
//! `select!` with a short timeout) cannot pile them up behind a stalled server either.

use std::sync::Arc;

use tokio::sync::{oneshot, Semaphore};

use crate::error::{Error, ErrorInternals, Result};
use crate::protocol::ReplyTx;
use crate::session::Reply;

/// Requests in flight per client unless [`crate::ClientBuilder::max_in_flight`] says
/// otherwise: four times the 256 a busy service keeps outstanding, below the server's
/// default `globalOutstandingLimit` (1,000 per server, spread over its clients).
pub const DEFAULT_MAX_IN_FLIGHT: usize = 1024;

/// The permits of one client (`None`: no bound).
#[derive(Debug)]
pub(crate) struct InFlight {
    permits: Option<Arc<Semaphore>>,
    max: usize,
}

impl InFlight {
    /// At most `max` requests in flight; `usize::MAX` (or anything past what a semaphore
    /// holds) for no bound.
    pub(crate) fn new(max: usize) -> InFlight {
        let max = max.max(1);
        let permits = (max < Semaphore::MAX_PERMITS).then(|| Arc::new(Semaphore::new(max)));
        InFlight { permits, max }
    }

    /// A reply slot holding a permit, waiting for one if every permit is taken.
    pub(crate) async fn slot(&self) -> Result<(ReplyTx, oneshot::Receiver<Result<Reply>>)> {
        let permit = match &self.permits {
            Some(permits) => Some(
                permits
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|_| Error::closed())?,
            ),
            None => None,
        };
        Ok(ReplyTx::new(permit))
    }

    /// Requests holding a place now (`None` when there is no bound: not counted then).
    pub(crate) fn count(&self) -> Option<usize> {
        self.permits
            .as_ref()
            .map(|p| self.max - p.available_permits())
    }
}
