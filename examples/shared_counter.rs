//! Counters shared by several processes, on Curator's formats (a Java process can use the same
//! nodes):
//! - a `DistributedAtomicLong` (8 bytes): four sessions increment it concurrently; every
//!   increment applies exactly once (a compare-and-set on the node's version, retried when
//!   another session wrote first), and the sum comes out right;
//! - a `SharedCount` (4 bytes): three sessions raise it with compare-and-set loops while a
//!   fourth follows it through its change events, until it sees the final count.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example shared_counter`.

use std::time::Duration;

use zkrs::{Client, ErrorCode};
use zkrs_recipes::counter::{DistributedAtomicLong, SharedCount, SharedValueEvent};
use zkrs_recipes::framework::RetryPolicy;
use zkrs_testkit::TestingServer;

type Error = Box<dyn std::error::Error + Send + Sync>;

const SESSIONS: i64 = 4;
const INCREMENTS: i64 = 25;
const WRITERS: i32 = 3;
const RAISES: i32 = 5;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }
    let base = format!("/example/counters-{}", std::process::id());
    let hits_path = format!("{base}/hits");
    let limit_path = format!("{base}/limit");
    // Contention is retried until the change applies, a few ms apart.
    let retry = RetryPolicy::Forever {
        sleep: Duration::from_millis(2),
    };

    // --- DistributedAtomicLong: 4 sessions x 25 increments.
    let admin = Client::connect(&connect).await?;
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..SESSIONS {
        let client = Client::connect(&connect).await?;
        let (path, retry) = (hits_path.clone(), retry.clone());
        workers.spawn(async move {
            let hits = DistributedAtomicLong::builder(&client, &path)
                .retry(retry)
                .build()?;
            let mut tries = 0;
            for _ in 0..INCREMENTS {
                let r = hits.increment().await?;
                assert!(r.succeeded && r.post_value == r.pre_value + 1);
                tries += r.stats.optimistic_tries;
            }
            client.close().await?;
            Ok::<u32, Error>(tries)
        });
    }
    let mut tries = 0;
    while let Some(done) = workers.join_next().await {
        tries += done??;
    }
    let hits = DistributedAtomicLong::builder(&admin, &hits_path)
        .retry(retry)
        .build()?;
    let total = hits.get().await?.post_value;
    println!(
        "hits after {SESSIONS} sessions x {INCREMENTS} increments: {total} \
         ({tries} tries: {} retried after another session wrote first)",
        tries as i64 - SESSIONS * INCREMENTS
    );
    assert_eq!(total, SESSIONS * INCREMENTS);
    let (data, _) = admin.get_data(&hits_path).await?;
    println!("the node holds 8 bytes, big-endian: {:02x?}", &data[..]);

    // --- SharedCount: a follower sees the count change; three writers raise it.
    let follower_client = Client::connect(&connect).await?;
    let follower = SharedCount::builder(&follower_client, &limit_path).start()?;
    follower.initialized().await?;
    let mut changes = follower.events();
    let mut writers = tokio::task::JoinSet::new();
    for w in 0..WRITERS {
        let client = Client::connect(&connect).await?;
        let path = limit_path.clone();
        writers.spawn(async move {
            let limit = SharedCount::builder(&client, &path).start()?;
            limit.initialized().await?;
            for _ in 0..RAISES {
                // Compare-and-set on the version read: if another writer got in first, the
                // new count is read and we try again from it.
                loop {
                    let seen = limit.versioned_value();
                    if limit.try_set_count(&seen, seen.value + 1).await? {
                        break;
                    }
                    println!(
                        "  writer {w}: count moved past {}, trying again",
                        seen.value
                    );
                }
            }
            limit.close().await;
            client.close().await?;
            Ok::<(), Error>(())
        });
    }
    let last = WRITERS * RAISES;
    // Quick successive writes may show as one change: only the latest value is told.
    let follow = async {
        while let Some(event) = changes.next().await {
            match event {
                SharedValueEvent::Changed(v) => {
                    println!("follower: count {} (version {})", v.value, v.version);
                    if v.value == last {
                        return Ok(());
                    }
                }
                other => println!("follower: {other:?}"),
            }
        }
        Err::<(), Error>("the follower's events ended".into())
    };
    tokio::time::timeout(Duration::from_secs(20), follow).await??;
    while let Some(done) = writers.join_next().await {
        done??;
    }
    assert_eq!(follower.count(), last);
    let (data, _) = admin.get_data(&limit_path).await?;
    println!("the node holds 4 bytes, big-endian: {:02x?}", &data[..]);
    follower.close().await;
    follower_client.close().await?;

    // (The parents were made as containers: the server would remove them once empty.)
    for path in [&hits_path, &limit_path, &base] {
        match admin.delete(path, None).await {
            Err(e) if e.code() != Some(ErrorCode::NoNode) => return Err(e.into()),
            _ => {}
        }
    }
    admin.close().await?;
    Ok(())
}
