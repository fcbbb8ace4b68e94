//! ZooKeeper's guarantees, checked over a run's [`History`]: what ZooKeeper's documentation
//! ("ZooKeeper guarantees" in the programmer's guide, and its section on watches) promises a
//! client, in the exact forms checked here:
//!
//! - **Per-session FIFO** ([`fifo`](super::fifo)): of one client's requests the server
//!   answered without error, the answers reach the application in the order the requests
//!   were submitted; and a session's successful writes have increasing zxids in that order.
//! - **Monotonic reads, single system image** ([`monotonic_reads`](super::monotonic_reads)):
//!   in one session, the zxid of every successful reply (a read's is its server's last
//!   applied) is at least that of every reply before it, across reconnections to other
//!   members.
//! - **Linearizable writes** ([`linearizable_writes`](super::linearizable_writes)): a
//!   successful write whose answer reached its client before another write was submitted
//!   (by any client) has the lower zxid; no two writes share one.
//! - **Watch before data** ([`watch_order`](super::watch_order)): when a one-shot watch set
//!   by a successful read of path P (answered at zxid H) delivers an event, no reply that
//!   reached the same session between that read and the event shows P changed after H (a
//!   Stat of P with mzxid, or for a child watch pzxid, above H): the change that fired the
//!   watch was seen before its event.
//!
//! Each finding names the offending operations and events.

use std::fmt;

use super::history::{Delivery, History, Operation};

/// A broken guarantee, found by [`violations`]. `Display` gives the text the suites report.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum GuaranteeViolation {
    /// One client's answers reached it out of submission order.
    OutOfOrder {
        /// The request submitted first, answered second.
        first: Box<Operation>,
        /// The request submitted later, answered before it.
        overtook: Box<Operation>,
    },
    /// A session's later write has a zxid no higher than its earlier write's.
    WriteZxidsNotIncreasing {
        /// The earlier write.
        earlier: Box<Operation>,
        /// The later one.
        later: Box<Operation>,
    },
    /// A session saw a lower zxid than one it had seen.
    WentBack {
        /// The reply with the higher zxid, seen first.
        seen: Box<Operation>,
        /// The later reply with the lower one.
        later: Box<Operation>,
    },
    /// A write answered before another was submitted has the higher (or the same) zxid.
    WritesNotLinearizable {
        /// The write answered first.
        earlier: Box<Operation>,
        /// The write submitted after that answer.
        later: Box<Operation>,
    },
    /// A reply showed the change a watch announces before the watch's event.
    DataBeforeWatch {
        /// The read that set the watch.
        registered: Box<Operation>,
        /// The reply that showed the change.
        shown: Box<Operation>,
        /// The watch's event, delivered after it.
        event: Box<Delivery>,
    },
}

impl fmt::Display for GuaranteeViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GuaranteeViolation::OutOfOrder { first, overtook } => write!(
                f,
                "per-session FIFO: [{overtook}] was answered before [{first}], submitted earlier"
            ),
            GuaranteeViolation::WriteZxidsNotIncreasing { earlier, later } => write!(
                f,
                "per-session FIFO: write [{later}] has a zxid no higher than the session's earlier write [{earlier}]"
            ),
            GuaranteeViolation::WentBack { seen, later } => write!(
                f,
                "monotonic reads: [{later}] saw a lower zxid than [{seen}], seen before in the same session"
            ),
            GuaranteeViolation::WritesNotLinearizable { earlier, later } => write!(
                f,
                "linearizable writes: [{later}], submitted after [{earlier}] was answered, has a zxid no higher"
            ),
            GuaranteeViolation::DataBeforeWatch {
                registered,
                shown,
                event,
            } => write!(
                f,
                "watch before data: [{shown}] showed a change made after the watch set by [{registered}], before its event [{event}]"
            ),
        }
    }
}

/// Every broken guarantee in `history`, at most `limit` of each kind.
pub fn violations(history: &History, limit: usize) -> Vec<GuaranteeViolation> {
    let mut found = Vec::new();
    super::fifo::check(history, limit, &mut found);
    super::monotonic_reads::check(history, limit, &mut found);
    super::linearizable_writes::check(history, limit, &mut found);
    super::watch_order::check(history, limit, &mut found);
    found
}
