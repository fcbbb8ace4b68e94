//! ZooKeeper's guarantees, checked over a run's [`History`]: what ZooKeeper's documentation
//! ("ZooKeeper guarantees" in the programmer's guide, and its section on watches) promises a
//! client, in the exact forms checked here:
//!
//! - **Per-session FIFO** (`fifo.rs`): of one client's requests the server
//!   answered without error, the answers reach the application in the order the requests
//!   were submitted; and a session's successful writes have increasing zxids in that order.
//! - **Monotonic reads, single system image** (`monotonic_reads.rs`):
//!   in one session, the zxid of every successful reply (a read's is its server's last
//!   applied) is at least that of every reply before it, across reconnections to other
//!   members.
//! - **Linearizable writes** (`linearizable_writes.rs`): a
//!   successful write whose answer reached its client before another write was submitted
//!   (by any client) has the lower zxid; no two writes share one.
//! - **Watch before data** (`watch_order.rs`): when a one-shot watch set
//!   by a successful read of path P (answered at zxid H) delivers a change's event, no reply that
//!   reached the same session between that read and the event shows P changed after H (a
//!   Stat of P with mzxid, or for a child watch pzxid, above H): the change that fired the
//!   watch was seen before its event.
//!
//! Each finding names the offending operations and events.

pub use super::guarantee_violation::GuaranteeViolation;
use super::history::History;

/// Every broken guarantee in `history`, at most `limit` of each kind.
pub fn violations(history: &History, limit: usize) -> Vec<GuaranteeViolation> {
    let mut found = Vec::new();
    super::fifo::check(history, limit, &mut found);
    super::monotonic_reads::check(history, limit, &mut found);
    super::linearizable_writes::check(history, limit, &mut found);
    super::watch_order::check(history, limit, &mut found);
    found
}
