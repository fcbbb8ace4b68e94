//! Ways out stopped early leave no node behind, in the simulated world (no faults, so
//! nothing but the timing of the close matters). The `cancellation` suite found both: a
//! latch close dropped at its first await (seed 44), and a persistent node closed while its
//! first create was in flight (seed 39); each left an ephemeral node of a live session, so
//! for the session's life a latch led by nobody, or a member that had left still listed.

use std::time::Duration;

use zkrs_client::{Client, CreateMode};
use zkrs_recipes::leader::LeaderLatch;
use zkrs_recipes::node::PersistentNode;
use zkrs_sim::{FaultConfig, Finding, Simulation, World};

async fn connect(world: &World) -> Result<Client, String> {
    world
        .client_builder()
        .connect()
        .await
        .map_err(|e| e.to_string())
}

/// Waits (at most 5 s) until `dir` has no children, looking first 100 ms after the close
/// (a create still in flight then is applied by then); `Err` with what is left.
async fn empties(client: &Client, dir: &str) -> Result<(), String> {
    tokio::time::sleep(Duration::from_millis(100)).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let children = client.get_children(dir).await.map_err(|e| e.to_string())?;
        if children.is_empty() {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            let left: Vec<&str> = children.iter().collect();
            return Err(format!("{dir} still holds {left:?} 5 s after the close"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[test]
fn a_latch_close_dropped_at_its_first_await_still_deletes_the_node() {
    let report = Simulation::new(1)
        .faults(FaultConfig::none())
        .run(|world| async move {
            let client = connect(&world).await?;
            let latch = LeaderLatch::builder(&client, "/latch")
                .id("a")
                .start()
                .unwrap();
            let led = latch
                .await_leadership_timeout(Duration::from_secs(10))
                .await
                .map_err(|e| e.to_string())?;
            if !led {
                return Err("no leadership".into());
            }
            // The close waits for the latch's task first: dropped there.
            let cut = tokio::time::timeout(Duration::ZERO, latch.close()).await;
            if cut.is_ok() {
                return Err("the close finished at its first poll".into());
            }
            empties(&client, "/latch").await.map_err(Finding::from)
        });
    assert!(report.passed(), "{:?}", report.violation);
}

#[test]
fn a_persistent_node_closed_with_its_first_create_in_flight_leaves_no_node() {
    let report = Simulation::new(1)
        .faults(FaultConfig::none())
        .run(|world| async move {
            let client = connect(&world).await?;
            let observer = connect(&world).await?;
            observer
                .create("/members", b"", CreateMode::Persistent)
                .await
                .map_err(|e| e.to_string())?;
            // The link takes 0.1-2 ms each way: closes from 0 to 4 ms after the start land
            // before the create is sent, while it is in flight, and after its reply.
            let mut in_flight = 0;
            for step in 0..40 {
                let node = PersistentNode::builder(&client, "/members/me", CreateMode::Ephemeral)
                    .data(b"x")
                    .start()
                    .map_err(|e| e.to_string())?;
                tokio::time::sleep(Duration::from_micros(step * 100)).await;
                if node.node_path().is_none() {
                    in_flight += 1;
                }
                node.close().await.map_err(|e| e.to_string())?;
                empties(&observer, "/members")
                    .await
                    .map_err(|e| format!("closed {} us after the start: {e}", step * 100))?;
            }
            if in_flight == 0 {
                return Err("no close came before the create's reply".into());
            }
            Ok(())
        });
    assert!(report.passed(), "{:?}", report.violation);
}
