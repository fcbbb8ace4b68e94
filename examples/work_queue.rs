//! A work queue: three producers put jobs into a `DistributedQueue` (Curator's nodes and item
//! format), three consumers on their own sessions take them with a lock path, so a job is
//! removed only once handled, and a job whose handler fails is put back (Curator's REQUEUE).
//! Every job is handled exactly once in the end.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example work_queue`.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use zkrs::Client;
use zkrs_recipes::queue::DistributedQueue;
use zkrs_testkit::TestingServer;

const QUEUE: &str = "/example/jobs";
const LOCKS: &str = "/example/jobs-locks";
const JOBS: usize = 60;

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }
    let run = format!("{}", std::process::id());

    let mut producers = tokio::task::JoinSet::new();
    for p in 0..3 {
        let client = Client::connect(&connect).await?;
        let run = run.clone();
        producers.spawn(async move {
            let queue = DistributedQueue::builder(&client, QUEUE).build()?;
            for j in 0..JOBS / 3 {
                queue.put(format!("{run}:job-{p}-{j}")).await?;
            }
            client.close().await?;
            Ok::<_, zkrs::Error>(())
        });
    }

    while let Some(done) = producers.join_next().await {
        done??;
    }
    let handled = Arc::new(Mutex::new(BTreeSet::new()));
    let mut consumers = tokio::task::JoinSet::new();
    for c in 0..3 {
        let client = Client::connect(&connect).await?;
        let (run, handled) = (run.clone(), handled.clone());
        consumers.spawn(async move {
            let queue = DistributedQueue::builder(&client, QUEUE)
                .lock_path(LOCKS)
                .build()?;
            let mut consumer = queue.consumer();
            let mut failed_once = false;
            // Until every job of this run was handled (by anyone).
            while handled.lock().unwrap().len() < JOBS {
                let Some(message) = consumer.take_timeout(Duration::from_millis(500)).await? else {
                    continue;
                };
                // One item per node here (a producer's `put_multi` would put several).
                let job = String::from_utf8_lossy(&message.items()[0]).to_string();
                if !job.starts_with(&format!("{run}:")) {
                    // A job left by an earlier run of this example: drop it.
                    message.complete().await?;
                    continue;
                }
                if c == 0 && !failed_once {
                    // This consumer's first handler fails: the job goes back to the queue.
                    failed_once = true;
                    println!("consumer {c}: {job} failed, put back");
                    message.fail().await?;
                    continue;
                }
                assert!(
                    handled.lock().unwrap().insert(job.clone()),
                    "{job} handled twice"
                );
                message.complete().await?;
            }
            client.close().await?;
            Ok::<_, zkrs::Error>(())
        });
    }
    while let Some(done) = consumers.join_next().await {
        done??;
    }
    println!(
        "{} jobs handled, each exactly once",
        handled.lock().unwrap().len()
    );
    Ok(())
}
