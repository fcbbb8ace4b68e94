//! Single-client faults hit one client only: a client cut off (`IsolateClient`) or paused
//! (`PauseClient`) for longer than its session timeout loses its session, as the ensemble
//! expires it, while another client of the same world keeps its own through the whole run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zkrs_client::{Client, ConnectionState};
use zkrs_sim::{FaultConfig, FaultKind, Simulation, World};

/// Single-client faults on client 0, and no other fault (the member faults' mean gap is far
/// past the run).
fn config() -> FaultConfig {
    FaultConfig::for_duration(Duration::from_secs(40))
        .mean_gap(Duration::from_secs(100_000))
        .skip_reply_gap(None)
        .client_faults(1)
}

/// Counts the `Lost` states `client` goes through, until the runtime ends.
fn count_lost(client: &Client) -> Arc<AtomicU64> {
    let lost = Arc::new(AtomicU64::new(0));
    let (count, mut changes) = (lost.clone(), client.state_changes());
    tokio::spawn(async move {
        while let Some(change) = changes.next().await {
            if change.state == ConnectionState::Lost {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    lost
}

async fn connect(world: &World) -> Result<Client, String> {
    let builder = world.client_builder();
    builder.connect().await.map_err(|e| e.to_string())
}

/// The first seed whose plan has a fault of `kind` (on client 0) longer than the session.
fn seed_with(kind: fn(&FaultKind) -> bool) -> u64 {
    (1..100)
        .find(|&seed| {
            Simulation::new(seed)
                .faults(config())
                .plan()
                .iter()
                .any(|f| kind(&f.kind) && f.length > Duration::from_millis(2500))
        })
        .expect("a seed with a long fault of that kind")
}

fn expires_only_the_faulted_session(seed: u64) {
    let sim = Simulation::new(seed).faults(config());
    assert!(
        sim.plan().iter().all(|f| f.kind.client() == Some(0)),
        "{:?}",
        sim.plan()
    );
    let report = sim.run(|world| async move {
        let verdict: Result<(), String> = async move {
            // Client 0 is the one the faults hit, client 1 looks on.
            let faulted = connect(&world).await?;
            let bystander = connect(&world).await?;
            let (faulted_lost, bystander_lost) = (count_lost(&faulted), count_lost(&bystander));
            let session = bystander.session_id();
            world.healed().await;
            // Back after the last fault: a request on each goes through.
            for client in [&faulted, &bystander] {
                tokio::time::timeout(Duration::from_secs(10), async {
                    while client.exists("/").await.is_err() {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                })
                .await
                .map_err(|_| "no request went through 10 s after healing".to_string())?;
            }
            let (f, b) = (
                faulted_lost.load(Ordering::Relaxed),
                bystander_lost.load(Ordering::Relaxed),
            );
            if f == 0 {
                return Err("client 0 kept its session through a fault longer than it".into());
            }
            if b != 0 || bystander.session_id() != session {
                return Err(format!("client 1 lost its session {b} times, untouched"));
            }
            Ok(())
        }
        .await;
        verdict.map_err(zkrs_sim::Finding::from)
    });
    assert!(report.passed(), "seed {seed}: {:?}", report.violation);
}

#[test]
fn a_long_isolation_expires_that_clients_session_only() {
    let seed = seed_with(|k| matches!(k, FaultKind::IsolateClient { .. }));
    expires_only_the_faulted_session(seed);
}

#[test]
fn a_long_pause_expires_that_clients_session_only() {
    let seed = seed_with(|k| matches!(k, FaultKind::PauseClient { .. }));
    expires_only_the_faulted_session(seed);
}
