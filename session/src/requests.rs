//! [`Requests`]: what the session has to send and waits to hear about: the bytes to write,
//! the requests in flight (answered in order), the pings, the requests waiting for a usable
//! session.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::BytesMut;
use zkrs_codec::OpCode;

use crate::messages::{Request, WatchOp};

/// Bytes of output buffer a session keeps across connections (a burst grows it further,
/// until the next teardown).
pub(crate) const KEEP_OUT: usize = 16 * 1024;

pub(crate) struct Requests<T> {
    /// Bytes to write (`Session::poll_transmit`).
    pub(crate) out: BytesMut,
    pub(crate) next_xid: i32,
    /// Sent and not answered, oldest first: ZooKeeper answers in order.
    pub(crate) pending: VecDeque<Pending<T>>,
    /// For each ping in flight on this connection, the newest request sent before it. The
    /// server answers a session's requests in order, pings included: a ping answered while
    /// that request is still pending means the request was lost on the way (the stream lost
    /// bytes without breaking), and it would otherwise wait forever on a live connection.
    /// Each ping's send time travels with it, for `Session::last_heard`.
    pub(crate) pings: VecDeque<(Option<i32>, Instant)>,
    /// Requests made while no session was usable, with when each was made: sent when one
    /// is, failed if none is within the session timeout (see `fail_stale_waiting`).
    pub(crate) waiting: VecDeque<Waiting<T>>,
    /// SetWatches frames this connection sent and the server has not answered: a reply
    /// beyond them is a protocol error.
    pub(crate) set_watches_in_flight: usize,
    /// Bytes still to come of a reply over the reply limit, discarded as they arrive
    /// (`receive.rs`, `oversize_reply`).
    pub(crate) skip: usize,
}

/// A request sent and not answered yet.
pub(crate) struct Pending<T> {
    pub(crate) xid: i32,
    pub(crate) op: OpCode,
    pub(crate) token: Option<T>,
    pub(crate) watch: Option<WatchOp>,
    /// When it was written: once its reply arrives, the server is known to have heard from
    /// the session at this instant or later (see `Session::last_heard`).
    pub(crate) sent: Instant,
}

/// A request waiting for a usable session: when it was made, and the session it must go out
/// on (`Session::submit_in_session`), if any.
pub(crate) struct Waiting<T> {
    pub(crate) since: Instant,
    pub(crate) bound: Option<i64>,
    pub(crate) request: Request<T>,
}

impl<T> Requests<T> {
    pub(crate) fn new() -> Requests<T> {
        Requests {
            out: BytesMut::with_capacity(KEEP_OUT),
            next_xid: 1,
            pending: VecDeque::new(),
            pings: VecDeque::new(),
            waiting: VecDeque::new(),
            set_watches_in_flight: 0,
            skip: 0,
        }
    }

    /// The next request's xid: counts from 1, past `i32::MAX` back to 1 (the negative xids
    /// are the protocol's own).
    pub(crate) fn take_xid(&mut self) -> i32 {
        let xid = self.next_xid;
        self.next_xid = if xid == i32::MAX { 1 } else { xid + 1 };
        xid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xids_wrap_from_i32_max_to_1() {
        // Reaching i32::MAX by submitting 2^31 requests is not practical: start near it.
        let mut requests: Requests<u32> = Requests::new();
        requests.next_xid = i32::MAX - 1;
        let xids = [
            requests.take_xid(),
            requests.take_xid(),
            requests.take_xid(),
        ];
        assert_eq!(xids, [i32::MAX - 1, i32::MAX, 1]);
    }
}
