//! A run and a shrink are bounded in real time, not only in simulated time: a test that
//! keeps virtual time crawling (a retry loop of microseconds) ends as a finding of its own
//! within its real-time limit, and a shrink stops at its budget of runs or real time.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use zkrs_sim::{FaultConfig, Finding, ShrinkBudget, Simulation, ViolationKind, World};

/// Waits at most `wait` (real time) for `f` on a thread of its own.
fn within<T: Send + 'static>(wait: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(wait)
        .unwrap_or_else(|_| panic!("still running after {wait:?} of real time"))
}

/// Virtual time crawls: a microsecond a step, 600 s of it would take hours of real time.
async fn crawls(world: World) -> Result<(), Finding> {
    let _client = world.connect().await;
    loop {
        tokio::time::sleep(Duration::from_micros(1)).await;
    }
}

#[test]
fn a_run_past_its_real_time_limit_is_a_finding() {
    let started = Instant::now();
    let report = within(Duration::from_secs(60), || {
        Simulation::new(1)
            .real_limit(Duration::from_millis(500))
            .run(crawls)
    });
    let violation = report.violation.expect("a violation");
    assert_eq!(violation.kind(), ViolationKind::Stalled, "{violation}");
    assert!(started.elapsed() < Duration::from_secs(30), "{violation}");
}

async fn always_fails(_world: World) -> Result<(), Finding> {
    Err(Finding::safety("always"))
}

#[test]
fn a_shrink_stops_at_its_budget() {
    let sim = Simulation::new(3).faults(FaultConfig::for_duration(Duration::from_secs(60)));
    assert!(sim.plan().len() > 2, "a plan of several faults");
    let failing = sim.run(always_fails);
    let shrunk = sim
        .shrink_within(
            always_fails,
            &failing,
            ShrinkBudget::new(2, Duration::from_secs(60)),
        )
        .expect("shrunk");
    assert_eq!(shrunk.runs, 2);
    assert!(!shrunk.complete);
    // Out of real time: no run at all.
    let shrunk = sim
        .shrink_within(
            always_fails,
            &failing,
            ShrinkBudget::new(100, Duration::ZERO),
        )
        .expect("shrunk");
    assert_eq!(shrunk.runs, 0);
    assert!(!shrunk.complete);
    let whole = sim.shrink(always_fails, &failing).expect("shrunk");
    assert!(whole.complete);
    assert_eq!(whole.runs, sim.plan().len() as u64);
}
