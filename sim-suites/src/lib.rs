//! `zkrs-sim-suites` (not published): the campaign's suites, the real-server fault suites'
//! invariants run in the simulated world, and `zkrs-simulate`, the binary that runs them.
//! For the workspace's own campaigns and tests; no promise. They live apart from `zkrs-sim`
//! so that a user of the simulation builds none of them (the discovery suite needs the
//! recipes' `discovery` feature, serde).
//!
//! The pieces both kinds of run share are here, once, and the real-server suites
//! (`recipes/tests/invariants*.rs`) import them: the lock recipes behind one acquire
//! ([`locks::Recipe`]), the leadership contenders ([`leadership::Contender`]), the sessions
//! worker and its bucket check ([`sessions::worker`], reporting to a [`participant::Sink`])
//! and the queue layout ([`queues::QUEUES`]); the checkers are in [`zkrs_sim::check`].
//! Shared code waits on `tokio::time` and takes its randomness as a parameter, so a simulated
//! run stays deterministic.

#![forbid(unsafe_code)]

use zkrs_sim::{FaultConfig, Finding, World};

pub mod barriers;
pub mod caches;
pub mod cancellation;
pub mod counters;
pub mod data;
pub mod discovery;
pub mod leadership;
pub mod locks;
pub mod participant;
pub mod queues;
pub mod sessions;
pub mod watches;

/// Every suite by name.
pub const SUITES: &[&str] = &[
    "mutex",
    "semaphore",
    "read_write",
    "watches",
    "sessions",
    "caches",
    "queues",
    "latch",
    "election",
    "master",
    "selector",
    "discovery",
    "cancellation",
    "counters",
    "barriers",
];

/// The faults suite `name` runs under: `base`, with an outage of every member in half the
/// runs for the sessions suite (whose bound on a request is what such an outage tests) and
/// the leadership suites, which also get single-client faults on their participants (so a
/// leader's session expires while it may still believe it leads). The other suites' bounds
/// do not allow for an outage.
pub fn fault_config(name: &str, base: FaultConfig) -> FaultConfig {
    match name {
        "sessions" => base.outages(true),
        "latch" | "election" | "master" | "selector" => {
            base.outages(true).client_faults(leadership::PARTICIPANTS)
        }
        "barriers" => base.outages(true).client_faults(barriers::PARTICIPANTS),
        _ => base,
    }
}

/// Runs suite `name` in `world`.
pub async fn run(name: &str, world: World) -> Result<(), Finding> {
    let verdict = match name {
        "mutex" => locks::run(world, locks::LockKind::Mutex).await,
        "semaphore" => locks::run(world, locks::LockKind::Semaphore).await,
        "read_write" => locks::run(world, locks::LockKind::ReadWrite).await,
        "watches" => watches::run(world).await,
        "sessions" => sessions::run(world).await,
        "caches" => caches::run(world).await,
        "queues" => queues::run(world).await,
        "latch" => leadership::run(world, "latch").await,
        "election" => leadership::run(world, "election").await,
        "master" => leadership::run(world, "master").await,
        "selector" => leadership::run(world, "selector").await,
        "discovery" => discovery::run(world).await,
        "cancellation" => cancellation::run(world).await,
        "counters" => counters::run(world).await,
        "barriers" => barriers::run(world).await,
        other => Err(format!("no suite named {other}")),
    };
    verdict.map_err(Finding::from)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use zkrs_sim::{FaultConfig, Simulation};

    /// Seed 11 with 8 s of faults passes, and runs twice to the same trace.
    fn passes_and_repeats(suite: &'static str) {
        let sim = Simulation::new(11).faults(FaultConfig::for_duration(Duration::from_secs(8)));
        let run = || sim.run(move |world| async move { super::run(suite, world).await });
        let (first, second) = (run(), run());
        assert!(first.passed(), "{suite}: {:?}", first.violation);
        assert_eq!(first.trace_hash, second.trace_hash, "{suite}");
        assert!(first.faults > 0, "{suite}");
    }

    /// Each data suite passes a short seed, and the seed repeats byte for byte.
    #[test]
    fn data_suites_pass_and_repeat() {
        for suite in ["watches", "sessions", "caches", "queues"] {
            passes_and_repeats(suite);
        }
    }

    #[test]
    fn barriers_pass_and_repeat() {
        passes_and_repeats("barriers");
    }

    #[test]
    fn cancellation_passes_and_repeats() {
        passes_and_repeats("cancellation");
    }

    #[test]
    fn counters_pass_and_repeat() {
        passes_and_repeats("counters");
    }

    #[test]
    fn discovery_passes_and_repeats() {
        passes_and_repeats("discovery");
    }
}
