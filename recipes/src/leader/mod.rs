//! Leader election:
//! - [`LeaderLatch`]: Curator's latch (leads while its node sorts first).
//! - [`LeaderSelector`]: Curator's selector (leads while a task runs, on a mutex).
//! - [`LeaderElection`]: ZooKeeper's own election recipe, as a state machine with events.
//! - [`MasterElection`]: one ephemeral node; whoever creates it is master.

mod election;
mod latch;
mod master;
mod selector;

pub use election::{
    ElectionEvent, ElectionEvents, ElectionState, LeaderElection, LeaderOffer, OFFER_PREFIX,
};
pub use latch::{participants, CloseMode, LeaderLatch, LeadershipChanges, Participant, LATCH_NAME};
pub use master::{MasterElection, DEFAULT_MASTER_PATH};
pub use selector::{CancelReason, LeaderContext, LeaderSelector, LeaderSelectorBuilder};
