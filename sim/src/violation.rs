//! What a simulated run can find wrong: the test's verdict, or a run that hangs, livelocks
//! or stalls. The world reports it and the network's pump ends with one.

use std::time::Duration;

use crate::finding::{Finding, FindingKind};

/// What a simulated run found wrong ([`Report::violation`](crate::Report::violation)).
/// `Display` gives the text the campaign prints and the traces quote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Violation {
    /// The test's verdict: what it found ([`Finding`], a kind and the details in its
    /// words: the checkers' findings ([`check`](crate::check)), one a line, or a step that
    /// failed), then the guarantees the run broke
    /// ([`check::guarantees`](crate::check::guarantees)), one a line.
    Found(Finding),
    /// The test was still running after the run's limit of simulated time.
    Hang {
        /// The limit ([`Simulation::limit`](crate::Simulation::limit)).
        limit: Duration,
    },
    /// The network woke `steps` times while virtual time moved less than a millisecond (a
    /// livelock in the simulated world, which virtual time would otherwise never end).
    Stuck {
        /// How many times it woke.
        steps: u64,
        /// The instant, as simulated time since the run began.
        at: Duration,
    },
    /// The network's task failed (it panicked): the error.
    NetworkFailed(String),
    /// The run was still going after its limit of real time
    /// ([`Simulation::real_limit`](crate::Simulation::real_limit)): a loop that keeps virtual
    /// time crawling, which its limit of simulated time would end only hours later.
    Stalled {
        /// The limit.
        real: Duration,
        /// How far simulated time got.
        at: Duration,
    },
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Violation::Found(finding) => finding.fmt(f),
            Violation::Hang { limit } => write!(
                f,
                "hang: still running after {} s of simulated time",
                limit.as_secs()
            ),
            Violation::Stuck { steps, at } => write!(
                f,
                "stuck: the network woke {steps} times without time moving a millisecond, at {} ms",
                at.as_millis()
            ),
            Violation::NetworkFailed(e) => write!(f, "the network failed: {e}"),
            Violation::Stalled { real, at } => write!(
                f,
                "stalled: still running after {:.1} s of real time, at {} ms of simulated time \
                 (a loop that keeps virtual time crawling?)",
                real.as_secs_f64(),
                at.as_millis()
            ),
        }
    }
}

/// The kind of a [`Violation`], without its details: what a shrink keeps
/// ([`Simulation::shrink`](crate::Simulation::shrink)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ViolationKind {
    /// [`Violation::Found`], with the finding's kind.
    Found(FindingKind),
    /// [`Violation::Hang`].
    Hang,
    /// [`Violation::Stuck`].
    Stuck,
    /// [`Violation::NetworkFailed`].
    NetworkFailed,
    /// [`Violation::Stalled`].
    Stalled,
}

impl Violation {
    /// Its kind.
    pub fn kind(&self) -> ViolationKind {
        match self {
            Violation::Found(finding) => ViolationKind::Found(finding.kind()),
            Violation::Hang { .. } => ViolationKind::Hang,
            Violation::Stuck { .. } => ViolationKind::Stuck,
            Violation::NetworkFailed(_) => ViolationKind::NetworkFailed,
            Violation::Stalled { .. } => ViolationKind::Stalled,
        }
    }
}
