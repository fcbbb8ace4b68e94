//! Leader election:
//! - [`LeaderLatch`]: Curator's latch (leads while its node sorts first).
//! - [`LeaderSelector`]: Curator's selector (leads while a task runs, on a mutex).
//! - [`LeaderElection`]: ZooKeeper's own election recipe, as a state machine with events.
//! - [`MasterElection`]: one ephemeral node; whoever creates it is master.
//!
//! Each is made by its `builder(&client, path)` and started by the builder's `start()`; "who
//! leads" is `leader()` on each, and "our node" `node_path()` where there is one.
//!
//! All four speak one vocabulary, the [`Leadership`] trait: `is_leader`, `leadership`,
//! `await_leadership`, `await_leadership_timeout`, `events` and `close` (Curator's names, such
//! as `hasLeadership`, are in each type's docs).

mod election;
mod handle;
mod latch;
mod leadership;
mod master;
mod options;
mod selector;

pub use leadership::{Leadership, LeadershipEvent};

pub use election::{
    election_leader, ElectionEvent, ElectionState, LeaderElection, LeaderElectionBuilder,
    LeaderOffer, OFFER_PREFIX,
};
pub use latch::{
    participants, CloseMode, LeaderLatch, LeaderLatchBuilder, Participant, LATCH_NAME,
};
pub use master::{MasterElection, MasterElectionBuilder, DEFAULT_MASTER_PATH};
pub use selector::{CancelReason, LeaderContext, LeaderSelector, LeaderSelectorBuilder};
