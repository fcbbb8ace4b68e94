//! An example to copy: testing a service's own leader election against a simulated
//! ZooKeeper ensemble, over 1,000 fault schedules, in a plain `cargo test` (no JVM, no
//! network, a few seconds).
//!
//! The service below runs a job that must run on one process at a time. It takes a
//! `LeaderLatch`, goes on duty when it leads and off duty when the latch or the connection
//! says it may not lead any more. The test starts three instances in a simulated world where
//! members crash, lag, lose the ensemble and change leaders, the network drops, delays
//! and cuts, and the instances themselves crash and restart, and checks the service's
//! promise: never two instances on duty at once, and once
//! the faults heal, one on duty again within 15 s. One call, [`Runner::check`], runs the
//! seeds, shrinks a failing one and prints how to replay it.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{Client, ConnectionState};
use zkrs_recipes::leader::LeaderLatch;
use zkrs_sim::check::Beliefs;
use zkrs_sim::{FaultConfig, Finding, Runner, Simulation, World};

/// The service under test (in a real project: your crate's code).
mod service {
    use super::*;

    /// Runs instance `id` until the process stops: `on_duty(true)` when it may run the job,
    /// `on_duty(false)` as soon as it may not.
    pub async fn run(client: Client, id: usize, on_duty: impl Fn(bool)) {
        let latch = LeaderLatch::builder(&client, "/jobs/leader")
            .id(format!("instance-{id}"))
            .start()
            .unwrap();
        let mut leads = latch.leadership();
        let mut states = client.state_changes();
        loop {
            // Wait to lead, on a connection that is not suspended.
            if leads.wait_for(|&l| l).await.is_none() {
                return;
            }
            if !matches!(
                client.state(),
                ConnectionState::Connected | ConnectionState::Reconnected
            ) {
                if states.next().await.is_none() {
                    return;
                }
                continue;
            }
            on_duty(true);
            // Off duty at the first sign it may not lead: the latch, or the connection.
            tokio::select! {
                biased;
                _ = states.next() => {}
                _ = leads.wait_for(|&l| !l) => {}
            }
            on_duty(false);
        }
    }
}

/// A crashed process runs no job: an instance's duty ends when its task is dropped.
struct OffDutyAtCrash(Arc<Beliefs>, usize);

impl Drop for OffDutyAtCrash {
    fn drop(&mut self) {
        self.0.end(self.1, Instant::now(), "crashed");
    }
}

/// One seed: three instances, 20 s of faults (the instances crash and restart too), then
/// the checks.
async fn three_instances(world: World) -> Result<(), Finding> {
    let duty = Arc::new(Beliefs::new());
    for id in 0..3 {
        let duty = duty.clone();
        // Started now and again after each of its crashes, with a new client.
        world.spawn_participant(id, move |world| {
            let duty = duty.clone();
            async move {
                let _crash = OffDutyAtCrash(duty.clone(), id);
                // As a service would: try until a session is made.
                let client = world.connect().await;
                let session = client.session_id();
                service::run(client, id, move |on| {
                    if on {
                        duty.begin(id, Instant::now(), session);
                    } else {
                        duty.end(id, Instant::now(), "off duty");
                    }
                })
                .await;
            }
        });
    }
    world.healed().await;
    if duty
        .wait_for_believers(1, Duration::from_secs(15))
        .await
        .is_none()
    {
        return Err(Finding::liveness(format!(
            "no instance on duty 15 s after healing (on duty: {:?})",
            duty.believers()
        )));
    }
    let overlaps = duty.violations(1, Instant::now());
    if overlaps.is_empty() {
        Ok(())
    } else {
        Err(Finding::safety(overlaps.join("\n")))
    }
}

/// The world of one seed: 20 s of faults, a new one every 0.8 s on average, up to two
/// members hurt at once (so the quorum comes and goes), a member leaving out a reply now
/// and then while its connection stays up, and each instance crashing about every 8 s.
fn simulation(seed: u64) -> Simulation {
    Simulation::new(seed).faults(
        FaultConfig::for_duration(Duration::from_secs(20))
            .max_concurrent(2)
            .mean_gap(Duration::from_millis(800))
            .skip_reply_gap(Some(Duration::from_secs(8)))
            .participant_crashes(3, Duration::from_secs(8)),
    )
}

/// 1,000 seeds by default; the environment chooses others (`ZKRS_SIM_SEEDS=5000..6000`,
/// `ZKRS_SIM_BUDGET=10m`, `ZKRS_SIM_JOBS=2`), and `ZKRS_SIM_SEED=S` replays seed S and
/// prints its whole trace. A failing seed is shrunk to the faults that show it, checked to
/// replay, and printed with the command that replays it.
#[test]
fn the_job_never_runs_twice_at_once_over_1000_fault_schedules() {
    Runner::new(simulation)
        .seeds(0..1000)
        .check(three_instances);
}
