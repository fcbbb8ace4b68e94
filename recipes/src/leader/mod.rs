//! Leader election: the latch, and (later) the selector, the classic election state machine
//! and the single-node master.

mod latch;

pub use latch::{participants, CloseMode, LeaderLatch, LeadershipChanges, Participant, LATCH_NAME};
