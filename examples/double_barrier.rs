//! Five workers on their own sessions meet at a `DistributedDoubleBarrier` (Curator's nodes:
//! Java members can join the same barrier): none starts its step before all five have
//! entered, and none goes on before all five have left.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example double_barrier`.

use std::time::{Duration, Instant};

use zkr::Client;
use zkr_recipes::barrier::DistributedDoubleBarrier;
use zkr_testkit::TestingServer;

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }
    let start = Instant::now();
    let path = format!("/example/phase-{}", std::process::id());
    let mut workers = tokio::task::JoinSet::new();
    for w in 0..5u64 {
        let client = Client::connect(&connect).await?;
        let path = path.clone();
        workers.spawn(async move {
            // Workers arrive at different times.
            tokio::time::sleep(Duration::from_millis(100 * w)).await;
            let barrier = DistributedDoubleBarrier::new(&client, &path, 5);
            println!("{:>5} ms: worker {w} arrives", start.elapsed().as_millis());
            assert!(barrier.enter(Some(Duration::from_secs(30))).await?);
            println!("{:>5} ms: worker {w} is in", start.elapsed().as_millis());
            assert!(barrier.leave(Some(Duration::from_secs(30))).await?);
            println!("{:>5} ms: worker {w} has left", start.elapsed().as_millis());
            client.close().await
        });
    }
    while let Some(done) = workers.join_next().await {
        done??;
    }
    Ok(())
}
