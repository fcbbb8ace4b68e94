//! `zkrs-sim`: the real zkrs client and recipes against a simulated ZooKeeper ensemble, on
//! virtual time, with network and member faults drawn from one seed.
//!
//! A [`Simulation`] runs a test on a current-thread tokio runtime whose clock is paused:
//! whenever every task waits, time jumps to the next timer, so a minute of faults takes
//! milliseconds. The ensemble is `zkrs-model`'s (checked against ZooKeeper 3.8 by its own
//! differential tests); clients reach it over in-memory links with latency, black holes,
//! resets and cut frames, while members crash, restart, lose the ensemble, lag behind the
//! leader and change leaders, and single clients are cut off or paused ([`FaultKind`]). The
//! library runs unchanged: it takes its connections from a dialer, its time from tokio's
//! clock and its random draws from one seeded stream, the three seams it has for this.
//!
//! One seed is one run: the same seed gives the same trace, byte for byte, and the same
//! [`Report::trace_hash`].
//!
//! Every run records what its clients' applications saw (each operation with its session,
//! times, result and zxids; each watch event delivered) and checks ZooKeeper's guarantees
//! over it when the test ends: per-session FIFO, monotonic reads, linearizable writes and
//! watch before data ([`check::guarantees`]).
//!
//! Run simulations from a plain `#[test]` (not `#[tokio::test]`): each builds its own
//! runtime. [`Runner`] runs many seeds of one test in one call, with the seeds, a time budget
//! and threads from the environment; it shrinks each failing seed to the faults that show it
//! ([`Simulation::shrink`]), checks that it replays ([`Simulation::check_replay`]) and says
//! how to replay it. A test returns what it found as a [`Finding`] with a [`FindingKind`].
//! The service's own participants crash and restart too ([`World::spawn_participant`],
//! [`FaultConfig::participant_crashes`]).

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod check;
mod connect;
mod faults;
mod finding;
mod frames;
mod network;
mod participant;
mod rng;
mod runner;
mod runner_error;
mod settings;
mod shrink;
mod trace;
mod violation;
mod world;

pub use faults::{Direction, Fault, FaultConfig, FaultKind};
pub use finding::{Finding, FindingKind};
pub use network::{host_name, PORT};
pub use rng::SimRng;
pub use runner::{Failure, Runner, Summary, EXACT_REPLAY};
pub use runner_error::RunnerError;
pub use shrink::{ReplayCheck, ShrinkBudget, Shrunk};
pub use trace::Trace;
pub use violation::{Violation, ViolationKind};
pub use world::{Report, Simulation, World};
