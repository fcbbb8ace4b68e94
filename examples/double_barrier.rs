//! Five workers on their own sessions meet at a `DistributedDoubleBarrier` (Curator's nodes:
//! Java members can join the same barrier). They arrive at different times and work for
//! different lengths of time, yet none starts working before all five have entered, and none
//! goes on before all five have left. The example checks both, and that the barrier leaves no
//! node behind.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example double_barrier`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zkrs::{Client, ErrorCode};
use zkrs_recipes::barrier::DistributedDoubleBarrier;
use zkrs_testkit::TestingServer;

type Error = Box<dyn std::error::Error + Send + Sync>;

const WORKERS: usize = 5;
/// How long a worker waits to enter, and to leave, before it gives up.
const PATIENCE: Duration = Duration::from_secs(30);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }
    let start = Instant::now();
    let at = move || format!("{:>5} ms", start.elapsed().as_millis());
    let path = format!("/example/phase-{}", std::process::id());
    // What the workers have done so far, to check the barrier's promise.
    let arrived = Arc::new(AtomicUsize::new(0));
    let worked = Arc::new(AtomicUsize::new(0));

    let mut workers = tokio::task::JoinSet::new();
    for w in 0..WORKERS {
        let client = Client::connect(&connect).await?;
        let (path, arrived, worked) = (path.clone(), arrived.clone(), worked.clone());
        workers.spawn(async move {
            // Workers arrive 150 ms apart.
            tokio::time::sleep(Duration::from_millis(150 * w as u64)).await;
            let barrier = DistributedDoubleBarrier::builder(&client, &path, WORKERS)
                .build()
                .unwrap();
            arrived.fetch_add(1, Ordering::SeqCst);
            println!("{}: worker {w} arrives", at());
            if !barrier.enter(Some(PATIENCE)).await? {
                return Err(format!("worker {w}: the others did not come").into());
            }
            // Nobody is in before everyone has arrived.
            assert_eq!(arrived.load(Ordering::SeqCst), WORKERS);
            println!("{}: worker {w} is in: working", at());
            // The first to arrive works longest.
            tokio::time::sleep(Duration::from_millis(100 * (WORKERS - w) as u64)).await;
            worked.fetch_add(1, Ordering::SeqCst);
            println!("{}: worker {w} is done, leaving", at());
            if !barrier.leave(Some(PATIENCE)).await? {
                return Err(format!("worker {w}: the others did not leave").into());
            }
            // Nobody is out before everyone has finished.
            assert_eq!(worked.load(Ordering::SeqCst), WORKERS);
            println!("{}: worker {w} has left", at());
            client.close().await?;
            Ok::<(), Error>(())
        });
    }
    while let Some(done) = workers.join_next().await {
        done??;
    }

    // Every member node is gone, and so is `ready`.
    let client = Client::connect(&connect).await?;
    let left = client.get_children(&path).await?;
    assert!(left.is_empty(), "left behind: {left:?}");
    // (A container: the server would remove it once empty.)
    match client.delete(&path, None).await {
        Err(e) if e.code() != Some(ErrorCode::NoNode) => return Err(e.into()),
        _ => {}
    }
    client.close().await?;
    println!("all {WORKERS} entered together and left together");
    Ok(())
}
