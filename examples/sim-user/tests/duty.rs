//! The service's promise, in a simulated world with member, network and instance faults:
//! never two instances on duty at once, and one on duty within 15 s of healing. The careful
//! version keeps it over every seed; the hasty one breaks it, and the runner finds a seed,
//! shrinks it to the faults that show it, and the seed replays.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::Client;
use zkrs_sim::check::Beliefs;
use zkrs_sim::{
    FaultConfig, Finding, FindingKind, ReplayCheck, Runner, Simulation, ViolationKind, World,
};

/// A crashed instance runs no job: its duty ends when its task is dropped.
struct OffDutyAtCrash(Arc<Beliefs>, usize);

impl Drop for OffDutyAtCrash {
    fn drop(&mut self) {
        self.0.end(self.1, Instant::now(), "crashed");
    }
}

/// Three instances of `service`, as participants that crash and restart; then the checks.
async fn three_instances<S, Fut>(world: World, service: S) -> Result<(), Finding>
where
    S: Fn(Client, usize, Box<dyn Fn(bool) + Send + Sync>) -> Fut + Copy + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let duty = Arc::new(Beliefs::new());
    for id in 0..3 {
        let duty = duty.clone();
        world.spawn_participant(id, move |world| {
            let duty = duty.clone();
            async move {
                let _crash = OffDutyAtCrash(duty.clone(), id);
                let client = world.connect().await;
                let session = client.session_id();
                let on_duty = move |on| {
                    if on {
                        duty.begin(id, Instant::now(), session);
                    } else {
                        duty.end(id, Instant::now(), "off duty");
                    }
                };
                service(client, id, Box::new(on_duty)).await;
            }
        });
    }
    world.healed().await;
    let settled = duty.wait_for_believers(1, Duration::from_secs(15)).await;
    // Two on duty at once is the finding, whenever it happened.
    let overlaps = duty.violations(1, Instant::now());
    if !overlaps.is_empty() {
        return Err(Finding::safety(overlaps.join("\n")));
    }
    if settled.is_none() {
        return Err(Finding::liveness(format!(
            "on duty 15 s after healing: {:?}",
            duty.believers()
        )));
    }
    Ok(())
}

/// 20 s of faults: members crash, lag and lose the ensemble, up to two at once; the
/// clients' network goes down for 10-20 s in half the runs (every session expires); each
/// instance crashes about every 10 s.
fn simulation(seed: u64) -> Simulation {
    Simulation::new(seed).faults(
        FaultConfig::for_duration(Duration::from_secs(20))
            .max_concurrent(2)
            .outages(true)
            .participant_crashes(3, Duration::from_secs(10)),
    )
}

async fn careful(world: World) -> Result<(), Finding> {
    three_instances(world, |client, id, on_duty| async move {
        sim_user::careful(client, id, on_duty).await
    })
    .await
}

async fn hasty(world: World) -> Result<(), Finding> {
    three_instances(world, |client, id, on_duty| async move {
        sim_user::hasty(client, id, on_duty).await
    })
    .await
}

#[test]
fn the_careful_service_keeps_one_on_duty() {
    Runner::new(simulation).seeds(0..40).check(careful);
}

#[test]
fn the_hasty_service_is_caught_shrunk_and_replayed() {
    let summary = Runner::new(simulation)
        .seeds(0..100)
        .max_failures(1)
        .run(hasty)
        .expect("the runner runs");
    let failure = summary
        .failures
        .first()
        .unwrap_or_else(|| panic!("no seed found the defect: {summary}"));
    let seed = failure.report.seed;
    // A safety violation, shrunk to fewer faults, that replays exactly.
    let safety = Some(ViolationKind::Found(FindingKind::Safety));
    assert_eq!(failure.report.violation.as_ref().map(|v| v.kind()), safety);
    let shrunk = failure.shrunk.as_ref().expect("shrunk");
    assert!(
        shrunk.faults.len() < simulation(seed).plan().len(),
        "{failure}"
    );
    assert!(
        matches!(failure.replay, Some(ReplayCheck::Exact { .. })),
        "{failure}"
    );
    // Replayed as the report says (ZKRS_SIM_SEED, ZKRS_SIM_SKIP): the same run.
    let again = simulation(seed)
        .skip_faults(shrunk.left_out.clone())
        .run(hasty);
    assert_eq!(again.violation.as_ref().map(|v| v.kind()), safety);
    assert_eq!(again.trace_hash, shrunk.report.trace_hash);
}
