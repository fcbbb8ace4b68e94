//! Heap allocations per `get_data` round trip, against a real server from the test kit.
//!
//! The target: none in steady state (at most 0.1 per round trip, amortized). The request
//! frame is cut from the caller thread's arena (`frame_arena.rs`), the reply slot is reused
//! (`reply_slot.rs`), and everything else is reused too: the driver's write buffer, the
//! core's queues, the command channel's blocks, and the read buffer, of which the reply is a
//! `Bytes` slice (no copy, no allocation). Before the arena and the slots, each round trip
//! allocated twice: a `BytesMut` and a oneshot channel.
//!
//! The test kit's counting global allocator wraps the system one and counts every allocation made
//! by any thread of this process while the measured code runs. The ZooKeeper server is a JVM in
//! another process, so it is not counted; it is started, and the client connected and warmed up,
//! before counting starts. The runtime is tokio's current-thread one, so the caller's task and the
//! client's driver task both run on the test thread (the count is global anyway).
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
/// Amortized: a new arena chunk or reply slot now and then is allowed, one per request is not.
const MOST_PER_ROUND_TRIP: f64 = 0.1;

#[tokio::test(flavor = "current_thread")]
async fn get_data_allocates_nothing_in_steady_state() {
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
        per_round_trip <= MOST_PER_ROUND_TRIP,
        "{per_round_trip:.3} allocations per get_data round trip (target: none in steady state)"
    );

    // Eight callers at once, so that requests overlap in flight (`join!` keeps the eight
    // futures inline: it allocates nothing itself).
    let (allocations, reallocations, _) = count(async {
        let caller = || async {
            for _ in 0..ROUND_TRIPS / 8 {
                let (data, _) = client.get_data("/alloc").await.unwrap();
                assert_eq!(data.len(), VALUE_LEN);
            }
        };
        tokio::join!(
            caller(),
            caller(),
            caller(),
            caller(),
            caller(),
            caller(),
            caller(),
            caller()
        );
    })
    .await;
    let per_round_trip = (allocations + reallocations) as f64 / ROUND_TRIPS as f64;
    println!("get_data, 8 callers at once: {per_round_trip:.3} allocations per round trip");
    assert!(
        per_round_trip <= MOST_PER_ROUND_TRIP,
        "{per_round_trip:.3} allocations per pipelined get_data round trip"
    );

    client.close().await.unwrap();
}
