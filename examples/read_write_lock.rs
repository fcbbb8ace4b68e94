//! A writer and readers taking turns on an `InterProcessReadWriteLock`, each on its own
//! session (as separate processes would be): readers share the lock, the writer holds it
//! alone, and a reader arriving while the writer waits queues behind it. Ends with a
//! downgrade: write, then keep reading with no writer slipping in between.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example read_write_lock`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zkrs::{Client, CreateMode, ErrorCode};
use zkrs_recipes::lock::InterProcessReadWriteLock;
use zkrs_testkit::TestingServer;

const LOCK: &str = "/example/rwlock";
const DATA: &str = "/example/config";

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }

    let setup = Client::connect(&connect).await?;
    for path in ["/example", DATA] {
        match setup
            .create(path, b"version 0", CreateMode::Persistent)
            .await
        {
            Ok(_) => {}
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => {}
            Err(e) => return Err(e.into()),
        }
    }

    let start = Instant::now();
    let readers_inside = Arc::new(AtomicUsize::new(0));
    let log = move |who: &str, what: String| {
        println!("{:>6} ms  {who:<9} {what}", start.elapsed().as_millis());
    };

    let mut tasks = Vec::new();
    {
        let connect = connect.clone();
        tasks.push(tokio::spawn(async move {
            let client = Client::connect(&connect).await?;
            let lock = InterProcessReadWriteLock::builder(&client, LOCK)
                .build()?
                .write_lock();
            for version in 1..=3 {
                tokio::time::sleep(Duration::from_millis(120)).await;
                log("writer", "waits for the write lock".into());
                let guard = lock.acquire().await?;
                log(
                    "writer",
                    format!("holds it alone, writes version {version}"),
                );
                let data = format!("version {version}");
                client.set_data(DATA, data.as_bytes(), None).await?;
                tokio::time::sleep(Duration::from_millis(150)).await;
                guard.release().await?;
                log("writer", "released".into());
            }
            client.close().await?;
            Ok::<(), Error>(())
        }));
    }
    for r in 1..=3 {
        let connect = connect.clone();
        let inside = readers_inside.clone();
        tasks.push(tokio::spawn(async move {
            let who = format!("reader {r}");
            let client = Client::connect(&connect).await?;
            let lock = InterProcessReadWriteLock::builder(&client, LOCK)
                .build()?
                .read_lock();
            for _ in 0..4 {
                let guard = lock.acquire().await?;
                let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                let (data, _) = client.get_data(DATA).await?;
                let data = String::from_utf8_lossy(&data).into_owned();
                log(&who, format!("reads {data:?} ({n} reading)"));
                tokio::time::sleep(Duration::from_millis(60 + 20 * r)).await;
                inside.fetch_sub(1, Ordering::SeqCst);
                guard.release().await?;
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
            client.close().await?;
            Ok::<(), Error>(())
        }));
    }
    for task in tasks {
        task.await??;
    }

    // Downgrade: write, then read what was written while no writer can get in.
    let client = Client::connect(&connect).await?;
    let lock = InterProcessReadWriteLock::builder(&client, LOCK).build()?;
    let write = lock.write_lock().acquire().await?;
    client.set_data(DATA, b"final", None).await?;
    let read = write.downgrade().await?;
    let (data, _) = client.get_data(DATA).await?;
    println!(
        "downgraded: reading {:?} under {}",
        String::from_utf8_lossy(&data),
        read.path()
    );
    read.release().await?;

    client.delete(DATA, None).await?;
    client.close().await?;
    setup.close().await?;
    println!("done");
    Ok(())
}
