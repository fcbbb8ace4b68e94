//! Counters shared by several processes, on Curator's formats: four sessions increment a
//! `DistributedAtomicLong` (8 bytes) concurrently and the sum comes out right; a
//! `SharedCount` (4 bytes) changed by one session is followed by another through its events.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example shared_counter`.

use std::time::Duration;

use zkr::Client;
use zkr_recipes::counter::{DistributedAtomicLong, SharedCount, SharedValueEvent};
use zkr_recipes::RetryPolicy;
use zkr_testkit::TestingServer;

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }
    let retry = RetryPolicy::Forever {
        sleep: Duration::from_millis(2),
    };

    let admin = Client::connect(&connect).await?;
    let hits = DistributedAtomicLong::new(&admin, "/example/hits", retry.clone());
    hits.force_set(0).await?;
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let client = Client::connect(&connect).await?;
        let retry = retry.clone();
        workers.spawn(async move {
            let hits = DistributedAtomicLong::new(&client, "/example/hits", retry);
            for _ in 0..25 {
                assert!(hits.increment().await?.succeeded);
            }
            client.close().await
        });
    }
    while let Some(done) = workers.join_next().await {
        done??;
    }
    println!(
        "hits after 4 x 25 increments: {}",
        hits.get().await?.post_value
    );

    // A SharedCount: one session sets it, another follows it.
    let follower = Client::connect(&connect).await?;
    let seen = SharedCount::new(&follower, "/example/limit", 4);
    seen.start().await?;
    let mut changes = seen.events();
    let limit = SharedCount::new(&admin, "/example/limit", 4);
    limit.start().await?;
    let before = limit.versioned_value()?;
    limit.try_set_count(&before, before.value + 1).await?;
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), changes.next()).await? {
        if let SharedValueEvent::Changed(v) = event {
            println!(
                "the follower sees the limit change to {} (version {})",
                v.value, v.version
            );
            break;
        }
    }
    Ok(())
}
