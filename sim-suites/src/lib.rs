//! `zkrs-sim-suites` (not published): the campaign's suites, the real-server fault suites'
//! invariants run in the simulated world, and `zkrs-simulate`, the binary that runs them.
//! For the workspace's own campaigns and tests; no promise. They live apart from `zkrs-sim`
//! so that a user of the simulation builds none of them (the discovery suite needs the
//! recipes' `discovery` feature, serde).
//!
//! The pieces both kinds of run share are here, once, and the real-server suites
//! (`recipes/tests/invariants*.rs`) import them: the lock recipes behind one acquire
//! ([`locks::Recipe`]), the leadership contenders ([`leadership::Contender`]), the sessions
//! worker and its bucket check ([`sessions::worker`], reporting to a [`Sink`]) and the queue
//! layout ([`queues::QUEUES`]); the checkers are in [`zkrs_sim::check`]. Shared code waits on
//! `tokio::time` and takes its randomness as a parameter, so a simulated run stays
//! deterministic.

#![forbid(unsafe_code)]

use std::time::Duration;

use zkrs_client::{Client, ConnectionState};

use zkrs_sim::{FaultConfig, Finding, World};

pub mod barriers;
pub mod caches;
pub mod cancellation;
pub mod counters;
pub mod data;
pub mod discovery;
pub mod leadership;
pub mod locks;
pub mod queues;
pub mod sessions;
pub mod watches;

/// Where a participant shared with the real-server suites reports: the violations it
/// finds, and notes for the trace (a real-server run may drop them).
pub trait Sink: Send + Sync {
    /// Records a violation.
    fn violation(&self, text: String);
    /// A line for the trace.
    fn note(&self, _text: &str) {}
}

impl Sink for data::Problems {
    fn violation(&self, text: String) {
        self.add(text);
    }
    fn note(&self, text: &str) {
        self.trace(text);
    }
}

/// The violations, in order; notes dropped (for real-server runs).
impl Sink for std::sync::Mutex<Vec<String>> {
    fn violation(&self, text: String) {
        self.lock().unwrap().push(text);
    }
}

/// No single step of a participant may take longer; one that does is a hang.
pub const STEP_DEADLINE: Duration = Duration::from_secs(30);

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

/// A session, however long the faults keep it from being made: one client of the world
/// (one number for single-client faults), however many attempts it takes.
pub async fn connect(world: &World) -> Result<Client, String> {
    let builder = world.client_builder();
    for _ in 0..100 {
        match builder.clone().connect().await {
            Ok(client) => return Ok(client),
            Err(e) => world.trace(&format!("connect failed: {e}")),
        }
    }
    Err("no session after 100 attempts".into())
}

/// Waits (at most 5 s) for `client` to be connected again after an error.
pub async fn settle(client: &Client) {
    let mut states = client.state_changes();
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if matches!(
                client.state(),
                ConnectionState::Connected | ConnectionState::Reconnected
            ) {
                return;
            }
            if states.next().await.is_none() {
                return;
            }
        }
    })
    .await;
}

/// For a suite's unit test: seed 11 with 8 s of faults passes, and runs twice to the same
/// trace.
#[cfg(test)]
fn passes_and_repeats(suite: &'static str) {
    let sim =
        zkrs_sim::Simulation::new(11).faults(FaultConfig::for_duration(Duration::from_secs(8)));
    let run = || sim.run(move |world| async move { run(suite, world).await });
    let (first, second) = (run(), run());
    assert!(first.passed(), "{suite}: {:?}", first.violation);
    assert_eq!(first.trace_hash, second.trace_hash, "{suite}");
    assert!(first.faults > 0, "{suite}");
}
