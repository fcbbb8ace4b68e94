//! `InterProcessMutex`: five workers, each on its own session (as five processes would be),
//! increment a counter stored in a znode with a read-modify-write that would lose updates
//! without the lock. With the lock, no update is lost. Also shows `try_acquire` giving up
//! after a timeout.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example mutex`.

use std::time::{Duration, Instant};

use zkrs::{Client, CreateMode, ErrorCode};
use zkrs_recipes::lock::InterProcessMutex;
use zkrs_testkit::TestingServer;

const LOCK: &str = "/example/mutex";
const COUNTER: &str = "/example/counter";
const WORKERS: usize = 5;
const ROUNDS: usize = 10;

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }

    let setup = Client::connect(&connect).await?;
    for path in ["/example", COUNTER] {
        match setup.create(path, b"0", CreateMode::Persistent).await {
            Ok(_) => {}
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => {}
            Err(e) => return Err(e.into()),
        }
    }
    setup.set_data(COUNTER, b"0", None).await?;

    let start = Instant::now();
    println!("{WORKERS} workers each add 1 to {COUNTER}, {ROUNDS} times, under the lock {LOCK}");
    let mut tasks = Vec::new();
    for w in 1..=WORKERS {
        let connect = connect.clone();
        tasks.push(tokio::spawn(async move {
            let client = Client::connect(&connect).await?;
            let mutex = InterProcessMutex::builder(&client, LOCK)
                .data(format!("worker-{w}"))
                .build()?;
            for round in 1..=ROUNDS {
                let guard = mutex.acquire().await?;
                // Read, think, write: another writer in between would lose this update.
                let (data, _) = client.get_data(COUNTER).await?;
                let value: u64 = std::str::from_utf8(&data)?.parse()?;
                tokio::time::sleep(Duration::from_millis(2)).await;
                client
                    .set_data(COUNTER, (value + 1).to_string().as_bytes(), None)
                    .await?;
                if round == 1 || round == ROUNDS {
                    println!(
                        "{:>5} ms  worker-{w} holds {} (round {round}): {value} -> {}",
                        start.elapsed().as_millis(),
                        zkrs_recipes::framework::node_name(guard.path()),
                        value + 1
                    );
                }
                guard.release().await?;
            }
            client.close().await?;
            Ok::<(), Error>(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    let (data, _) = setup.get_data(COUNTER).await?;
    println!(
        "{:>5} ms  counter = {} (expected {}): no update lost",
        start.elapsed().as_millis(),
        String::from_utf8_lossy(&data),
        WORKERS * ROUNDS
    );

    // A holder, and someone who will not wait long.
    let holder = InterProcessMutex::builder(&setup, LOCK)
        .build()?
        .acquire()
        .await?;
    let impatient = Client::connect(&connect).await?;
    let mutex = InterProcessMutex::builder(&impatient, LOCK).build()?;
    let got = mutex.try_acquire(Duration::from_millis(200)).await?;
    println!(
        "{:>5} ms  while it is held, try_acquire(200 ms) got it? {}",
        start.elapsed().as_millis(),
        got.is_some()
    );
    holder.release().await?;
    let guard = mutex.try_acquire(Duration::from_millis(200)).await?;
    println!(
        "{:>5} ms  once released, try_acquire(200 ms) got it? {}",
        start.elapsed().as_millis(),
        guard.is_some()
    );
    if let Some(guard) = guard {
        guard.release().await?;
    }
    impatient.close().await?;
    setup.close().await?;
    Ok(())
}
