//! A broken guarantee of ZooKeeper's, as [`violations`](super::guarantees::violations)
//! reports it, with the operations and events that show it.

use std::fmt;

use super::history::{Delivery, Operation};

/// A broken guarantee, found by [`violations`](super::guarantees::violations). `Display`
/// gives the text the suites report.
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
