//! A participant of the service crashes as a process does: its task is dropped mid-await,
//! no close reaches the ensemble (its ephemeral node stays until the session expires), and
//! it starts again, with a new session, when the crash ends.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zkrs_client::CreateMode;
use zkrs_sim::{FaultConfig, FaultKind, Finding, ReplayCheck, Simulation, World};

/// Counts its drops: the participant's task was dropped where it waited.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_crashed_participant_leaves_its_session_to_expire_and_starts_again() {
    // Participant crashes only: no other fault starts within 10 s at a mean gap of an hour.
    let sim = Simulation::new(3).faults(
        FaultConfig::for_duration(Duration::from_secs(10))
            .mean_gap(Duration::from_secs(3600))
            .skip_reply_gap(None)
            .participant_crashes(1, Duration::from_secs(3)),
    );
    let plan = sim.plan();
    assert!(plan.iter().all(|f| f.kind == FaultKind::ParticipantCrash));
    let crash = plan.first().copied().expect("a crash in 10 s");
    let test = move |world: World| async move {
        let (starts, dropped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (s, d) = (starts.clone(), dropped.clone());
        world.spawn_participant(0, move |world| {
            let (s, d) = (s.clone(), d.clone());
            async move {
                let n = s.fetch_add(1, Ordering::Relaxed);
                let _guard = Dropped(d);
                let client = world.connect().await;
                let _ = client
                    .create(&format!("/p{n}"), b"", CreateMode::Ephemeral)
                    .await;
                std::future::pending::<()>().await;
            }
        });
        let observer = world.connect().await;
        let exists = |path: &'static str| {
            let observer = observer.clone();
            async move { observer.exists(path).await.map_err(|e| e.to_string()) }
        };
        let at = |t: Duration| tokio::time::sleep(t.saturating_sub(world.now()));
        at(crash.at + Duration::from_millis(50)).await;
        if dropped.load(Ordering::Relaxed) != 1 {
            return Err(Finding::safety("the participant's task was not dropped"));
        }
        if exists("/p0").await?.is_none() {
            return Err(Finding::safety(
                "the crash closed the session: its ephemeral node went at once",
            ));
        }
        at(crash.at + crash.length + Duration::from_millis(500)).await;
        if starts.load(Ordering::Relaxed) != 2 || exists("/p1").await?.is_none() {
            return Err(Finding::liveness("the participant did not start again"));
        }
        // The session timeout is 2 s: expired well within 6 s of the crash.
        at(crash.at + Duration::from_secs(6)).await;
        if exists("/p0").await?.is_some() {
            return Err(Finding::safety("the crashed session never expired"));
        }
        Ok(())
    };
    let report = sim.run(test);
    assert!(report.passed(), "{:?}", report.violation);
    // A run with crashes replays byte for byte.
    let replay = sim.check_replay(test);
    assert!(matches!(replay, ReplayCheck::Exact { .. }), "{replay}");
}
