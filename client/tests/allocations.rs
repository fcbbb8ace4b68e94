//! Heap allocations per `get_data` round trip, against a real server from the test kit.
//!
//! The target: at most 2 per round trip, the request frame (one `BytesMut`) and the reply slot
//! (one oneshot channel). Everything else is reused: the driver's write buffer, the core's
//! queues, the command channel's blocks, and the read buffer, of which the reply is a `Bytes`
//! slice (no copy, no allocation).
//!
//! The test kit's counting global allocator wraps the system one and counts every
//! allocation made by any thread of this process while the measured code runs. The
//! ZooKeeper server is a JVM in another process, so it is not counted; it is started, and the client connected and warmed up,
//! before counting starts. The runtime is tokio's current-thread one, so the caller's task
//! and the client's driver task both run on the test thread (the count is global anyway).
//!
//! Run with `cargo test -p zkrs-client --test allocations -- --nocapture` to see the figures.

use zkrs_client::{Client, CreateMode};
use zkrs_testkit::measure::{allocation_counts, CountingAllocator};
use zkrs_testkit::TestingServer;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// What was allocated while `f` ran: (allocations, reallocations, bytes).
async fn count<F: std::future::Future>(f: F) -> (u64, u64, u64) {
    let before = allocation_counts();
    f.await;
    let spent = allocation_counts() - before;
    (spent.allocations, spent.reallocations, spent.bytes)
}

const ROUND_TRIPS: u64 = 1000;
const VALUE_LEN: usize = 1024;

#[tokio::test(flavor = "current_thread")]
async fn get_data_allocates_at_most_twice_per_round_trip() {
    // Everything that allocates once happens before counting: the server, the connection,
    // the node, and enough round trips for every buffer and queue to reach its size.
    let server =
        TestingServer::start().expect("start ZooKeeper (run scripts/install-zookeeper.sh)");
    let client = Client::connect(&server.connect_string()).await.unwrap();
    client
        .create("/alloc", &[7u8; VALUE_LEN], CreateMode::Persistent)
        .await
        .unwrap();
    for _ in 0..200 {
        let (data, _stat) = client.get_data("/alloc").await.unwrap();
        assert_eq!(data.len(), VALUE_LEN);
    }

    let (allocations, reallocations, bytes) = count(async {
        for _ in 0..ROUND_TRIPS {
            let (data, stat) = client.get_data("/alloc").await.unwrap();
            assert_eq!(data.len(), VALUE_LEN);
            assert_eq!(stat.data_length, VALUE_LEN as i32);
        }
    })
    .await;

    let per_round_trip = (allocations + reallocations) as f64 / ROUND_TRIPS as f64;
    println!(
        "get_data, {VALUE_LEN}-byte value: {ROUND_TRIPS} round trips, {allocations} allocations \
         + {reallocations} reallocations ({per_round_trip:.3} per round trip), \
         {:.0} bytes per round trip",
        bytes as f64 / ROUND_TRIPS as f64
    );
    assert!(
        per_round_trip <= 2.0,
        "{per_round_trip:.3} allocations per get_data round trip (target: at most 2, the \
         request frame and the oneshot)"
    );

    client.close().await.unwrap();
}
