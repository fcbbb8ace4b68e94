//! One-shot watches that nobody waits for any more must not pile up on a long-lived session.
//!
//! A service that reads a node and leaves a watch on it, again and again, dropping the watch
//! each time (a config poll, a recipe step cut short by its timeout), on a node that never
//! changes: before the fix every call left one entry in the driver's sinks and one in the
//! session's registry, for the life of the session (tens of bytes each, and the sinks pin
//! nothing else, so only the live heap shows it). Now the driver forgets watches whose
//! receiver is gone as its sinks grow. Live watches are left alone: one kept through the
//! whole run still fires.
//!
//! The live heap comes from the test kit's counting allocator (every thread of this process;
//! the server is a JVM in another process).

use std::time::Duration;

use zkrs_client::{Client, CreateMode, EventType};
use zkrs_testkit::measure::{live_heap_bytes, CountingAllocator};
use zkrs_testkit::TestingServer;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const CALLS: usize = 20_000;
const DEADLINE: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "current_thread")]
async fn dropped_one_shot_watches_do_not_accumulate() {
    let server =
        TestingServer::start().expect("start ZooKeeper (run scripts/install-zookeeper.sh)");
    let client = Client::connect(&server.connect_string()).await.unwrap();
    client
        .create("/config", b"v1", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create("/other", b"", CreateMode::Persistent)
        .await
        .unwrap();
    // Kept for the whole run: must still fire at the end.
    let (_, _, kept) = client.get_data_and_watch("/config").await.unwrap();
    // Warm up every buffer and queue, then measure.
    for _ in 0..1_000 {
        drop(client.get_data_and_watch("/config").await.unwrap());
    }
    let before = live_heap_bytes();
    for i in 0..CALLS {
        if i % 4 == 3 {
            // Cut short: the call is dropped after its request went out, before the reply
            // (its watch is registered when the reply comes, and nobody will read it).
            let _ = tokio::time::timeout(Duration::ZERO, client.exists_and_watch("/other")).await;
        } else {
            let (_, _, watch) = client.get_data_and_watch("/config").await.unwrap();
            drop(watch);
        }
    }
    // Let the cut-short calls' replies arrive (the client answers in order).
    client.get_data("/config").await.unwrap();
    let grown = live_heap_bytes().saturating_sub(before);
    println!("live heap grew {grown} bytes over {CALLS} abandoned watches");
    assert!(
        grown < 64 * 1024,
        "{grown} bytes more live after {CALLS} dropped one-shot watches: they pile up"
    );

    // The live watch was left alone, on the client and on the server. (The server's watch
    // on /other goes at the sweep that finds its last abandoned registration: the sweeps
    // are amortised, so some abandoned ones wait for the next.)
    client.set_data("/config", b"v2", None).await.unwrap();
    let event = tokio::time::timeout(DEADLINE, kept)
        .await
        .expect("the kept watch fires");
    assert_eq!(event.event_type, EventType::NodeDataChanged);
    assert_eq!(event.path, "/config");
}
