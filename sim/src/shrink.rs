//! What to do with a failing seed: [`Simulation::shrink`] finds the fewest faults of its
//! plan that still fail the same way, and [`Simulation::check_replay`] runs it twice and
//! compares the traces (a seed that does not replay cannot be debugged from its trace).

use std::future::Future;
use std::time::{Duration, Instant};

use crate::faults::Fault;
use crate::finding::Finding;
use crate::world::{Report, Simulation, World};

/// A failing seed with the fewest faults of its plan that still fail the same way
/// ([`Simulation::shrink`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Shrunk {
    /// The faults left out, by number: replay with [`Simulation::skip_faults`].
    pub left_out: Vec<usize>,
    /// The faults that remain: each one is needed for the violation.
    pub faults: Vec<Fault>,
    /// The last failing run, with the faults left out.
    pub report: Report,
    /// How many runs the shrink took.
    pub runs: u64,
    /// Whether every fault was tried; `false` when the budget ran out first (then some of
    /// [`faults`](Self::faults) may not be needed).
    pub complete: bool,
}

/// What a shrink may spend ([`Simulation::shrink_within`]): runs, and real time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShrinkBudget {
    runs: u64,
    real: Option<Duration>,
}

impl ShrinkBudget {
    /// At most `runs` runs and `real` of real time (each run's own limit of real time is cut
    /// to what is left, so the shrink ends within `real`).
    pub fn new(runs: u64, real: Duration) -> ShrinkBudget {
        ShrinkBudget {
            runs,
            real: Some(real),
        }
    }

    /// One run per fault of the plan, however long they take.
    pub fn unlimited() -> ShrinkBudget {
        ShrinkBudget {
            runs: u64::MAX,
            real: None,
        }
    }
}

/// Whether a seed replays its trace ([`Simulation::check_replay`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReplayCheck {
    /// Two runs gave the same trace, line for line.
    Exact {
        /// The trace's hash.
        trace_hash: u64,
    },
    /// Two runs parted: the first line that differs (0-based) and the line each run had
    /// there (`None` where a run had ended).
    Differs {
        /// The line's number.
        line: usize,
        /// The first run's line.
        first: Option<String>,
        /// The second run's line.
        second: Option<String>,
    },
}

impl std::fmt::Display for ReplayCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayCheck::Exact { trace_hash } => {
                write!(f, "replays exactly (trace hash {trace_hash:016x})")
            }
            ReplayCheck::Differs {
                line,
                first,
                second,
            } => write!(
                f,
                "does NOT replay: two runs part at trace line {line}:\n    {}\n    {}\n  \
                 (something the test or the service does draws from outside the seed: a real \
                 clock, a hash order, an unbiased select!, a thread of its own)",
                first.as_deref().unwrap_or("(ended)"),
                second.as_deref().unwrap_or("(ended)"),
            ),
        }
    }
}

impl Simulation {
    /// The fewest faults of this run's plan that still show `failing`'s violation: leaves
    /// each fault out in turn, and keeps it out if the run still fails with a violation of
    /// the same kind ([`Violation::kind`](crate::Violation::kind)). One run per fault of the
    /// plan. `None` if `failing` passed.
    pub fn shrink<F, Fut>(&self, test: F, failing: &Report) -> Option<Shrunk>
    where
        F: Fn(World) -> Fut,
        Fut: Future<Output = Result<(), Finding>> + Send + 'static,
    {
        self.shrink_within(test, failing, ShrinkBudget::unlimited())
    }

    /// [`shrink`](Self::shrink) within `budget`: stops when its runs or its real time are
    /// spent ([`Shrunk::complete`] says whether every fault was tried).
    pub fn shrink_within<F, Fut>(
        &self,
        test: F,
        failing: &Report,
        budget: ShrinkBudget,
    ) -> Option<Shrunk>
    where
        F: Fn(World) -> Fut,
        Fut: Future<Output = Result<(), Finding>> + Send + 'static,
    {
        let kind = failing.violation.as_ref()?.kind();
        let until = budget.real.map(|real| Instant::now() + real);
        let mut left_out = self.skipped().to_vec();
        let mut last = failing.clone();
        let mut runs = 0;
        let mut complete = true;
        for fault in self.plan() {
            let left = until.map(|until| until.saturating_duration_since(Instant::now()));
            if runs >= budget.runs || left == Some(Duration::ZERO) {
                complete = false;
                break;
            }
            let mut trial = left_out.clone();
            trial.push(fault.id);
            let mut sim = self.clone().skip_faults(trial.clone());
            if let Some(left) = left {
                sim = sim.real_limit(left.min(self.real_time_limit()));
            }
            let report = sim.run(&test);
            runs += 1;
            if report.violation.as_ref().map(|v| v.kind()) == Some(kind) {
                left_out = trial;
                last = report;
            }
        }
        let faults = self.clone().skip_faults(left_out.clone()).plan();
        Some(Shrunk {
            left_out,
            faults,
            report: last,
            runs,
            complete,
        })
    }

    /// Runs this seed twice, keeping every trace line, and compares the traces: a seed
    /// whose runs differ cannot be replayed to debug it. Byte-exact replay needs
    /// `--cfg tokio_unstable` ([`Runner`](crate::Runner) says so).
    pub fn check_replay<F, Fut>(&self, test: F) -> ReplayCheck
    where
        F: Fn(World) -> Fut,
        Fut: Future<Output = Result<(), Finding>> + Send + 'static,
    {
        let sim = self.clone().keep_trace(true);
        let first = sim.run(&test);
        let second = sim.run(&test);
        if first.trace == second.trace && first.trace_hash == second.trace_hash {
            return ReplayCheck::Exact {
                trace_hash: first.trace_hash,
            };
        }
        let line = first
            .trace
            .iter()
            .zip(&second.trace)
            .position(|(a, b)| a != b)
            .unwrap_or(first.trace.len().min(second.trace.len()));
        ReplayCheck::Differs {
            line,
            first: first.trace.get(line).cloned(),
            second: second.trace.get(line).cloned(),
        }
    }
}
