//! The seed runner: a failing seed is found, shrunk to the faults that show it, checked to
//! replay, and replays with what the shrink printed; a test that draws from outside the seed
//! is told it does not replay. (Run without `ZKRS_SIM_*` in the environment: those choose
//! other seeds.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use zkrs_sim::{
    FaultConfig, Finding, FindingKind, ReplayCheck, Runner, RunnerError, Simulation, ViolationKind,
    World,
};

fn simulation(seed: u64) -> Simulation {
    Simulation::new(seed)
        .faults(FaultConfig::for_duration(Duration::from_secs(10)).skip_reply_gap(None))
}

/// Fails (a safety finding) when any read of a session fails during the faults: a member
/// crash or a reset under the session makes one fail, most faults do not.
async fn every_read_succeeds(world: World) -> Result<(), Finding> {
    let client = world.connect().await;
    let deadline = Duration::from_secs(10);
    while world.now() < deadline {
        if let Err(e) = client.exists("/").await {
            return Err(Finding::safety(format!(
                "a read failed at {} ms: {e}",
                world.now().as_millis()
            )));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

#[test]
fn a_failing_seed_is_shrunk_checked_and_replayed() {
    let summary = Runner::new(simulation)
        .seeds(0..20)
        .max_failures(1)
        .run(every_read_succeeds)
        .expect("the runner runs");
    assert_eq!(summary.failures.len(), 1, "{summary}");
    let failure = &summary.failures[0];
    let seed = failure.report.seed;
    let plan = simulation(seed).plan();
    let shrunk = failure.shrunk.as_ref().expect("shrunk");
    // Fewer faults, and the same kind of violation.
    assert!(
        !shrunk.faults.is_empty() && shrunk.faults.len() < plan.len(),
        "{} of {} faults left: {failure}",
        shrunk.faults.len(),
        plan.len()
    );
    let kind = |r: &zkrs_sim::Report| r.violation.as_ref().map(|v| v.kind());
    assert_eq!(
        kind(&shrunk.report),
        Some(ViolationKind::Found(FindingKind::Safety))
    );
    assert!(
        matches!(failure.replay, Some(ReplayCheck::Exact { .. })),
        "{failure}"
    );
    // What the report says replays it: the seed with the faults left out fails again, with
    // the same trace.
    assert!(failure
        .replay_with
        .contains(&format!("ZKRS_SIM_SEED={seed}")));
    let again = simulation(seed)
        .skip_faults(shrunk.left_out.clone())
        .run(every_read_succeeds);
    assert_eq!(again.trace_hash, shrunk.report.trace_hash);
    assert_eq!(kind(&again), kind(&shrunk.report));
    // It stopped at the first failure.
    assert_eq!(summary.seeds, seed + 1);
}

#[test]
fn a_seed_that_passes_everywhere_passes() {
    let summary = Runner::new(|seed| Simulation::new(seed).faults(FaultConfig::none()))
        .seeds(0..5)
        .jobs(2)
        .run(|world| async move {
            world
                .connect()
                .await
                .exists("/")
                .await
                .map_err(|e| e.to_string())?;
            Ok(())
        })
        .unwrap();
    assert!(summary.passed(), "{summary}");
    assert_eq!(summary.seeds, 5);
}

/// Counts runs across the process: a test that traces it draws from outside the seed.
static RUNS: AtomicU64 = AtomicU64::new(0);

#[test]
fn a_seed_that_does_not_replay_is_told() {
    let summary = Runner::new(|seed| Simulation::new(seed).faults(FaultConfig::none()))
        .seeds(0..1)
        .run(|world| async move {
            let run = RUNS.fetch_add(1, Ordering::Relaxed);
            world.trace(&format!("run {run}"));
            Err(Finding::liveness("always"))
        })
        .unwrap();
    let failure = &summary.failures[0];
    match &failure.replay {
        Some(ReplayCheck::Differs {
            first: Some(a),
            second: Some(b),
            ..
        }) => assert!(
            a.contains("run ") && b.contains("run ") && a != b,
            "{a} {b}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(failure.to_string().contains("does NOT replay"), "{failure}");
}

#[test]
fn the_error_without_tokio_unstable_says_what_to_add() {
    let text = RunnerError::InexactReplay.to_string();
    assert!(text.contains(".cargo/config.toml"), "{text}");
    assert!(
        text.contains("rustflags = [\"--cfg\", \"tokio_unstable\"]"),
        "{text}"
    );
    // This workspace sets the flag: its runs replay exactly.
    const { assert!(zkrs_sim::EXACT_REPLAY) };
}
