//! Why a [`Runner`](crate::Runner) could not run: what the runner and the environment's
//! settings it reads both report.

use std::fmt;

/// Why a [`Runner`](crate::Runner) could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunnerError {
    /// A `ZKRS_SIM_*` variable's value does not parse.
    Environment {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What it should look like.
        expected: &'static str,
    },
    /// This build cannot replay a seed byte for byte ([`EXACT_REPLAY`](crate::EXACT_REPLAY)
    /// is false), and the runner was not told to go on without
    /// ([`Runner::inexact_replay`](crate::Runner::inexact_replay)).
    InexactReplay,
}

impl fmt::Display for RunnerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunnerError::Environment {
                variable,
                value,
                expected,
            } => write!(
                f,
                "{variable}={value:?} does not parse: expected {expected}"
            ),
            RunnerError::InexactReplay => f.write_str(
                "zkrs-sim cannot replay a seed byte for byte in this build: tokio seeds its own \
                 random draws (the order a watch channel's waiters wake in) only when built \
                 with `--cfg tokio_unstable`, so a failing seed may not fail again. Add to \
                 your project's .cargo/config.toml:\n\n    [build]\n    rustflags = \
                 [\"--cfg\", \"tokio_unstable\"]\n\n(it only unlocks tokio's unstable APIs), \
                 or call `Runner::inexact_replay(true)` to run without exact replays.",
            ),
        }
    }
}

impl std::error::Error for RunnerError {}
