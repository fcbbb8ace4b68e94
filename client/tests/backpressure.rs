//! Backpressure: a client holds at most `max_in_flight` requests (sent, or queued to be sent,
//! and unanswered), so a caller that floods it cannot grow its memory without limit.
//!
//! - Against a stalled server (SIGSTOP), 1,000,000 getData are each polled once and dropped,
//!   as a caller with a short timeout does: at most the bound is queued, the heap stays
//!   flat. Without the bound (`max_in_flight(usize::MAX)`, the old behaviour) every one of
//!   them is queued: run with `ZKRS_FLOOD_UNBOUNDED=1` to see this test fail.
//! - Against a live server, 1,000,000 getData from 8,192 callers (8 times the bound): every
//!   one is answered (none lost), and the heap peaks in the first tenth of the run, never
//!   growing with the number of requests.
//!
//! `ZKRS_FLOOD_OPS` sets the number of requests of each phase (default 1,000,000).

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};
use std::time::Duration;

use zkrs_client::{Client, CreateMode};
use zkrs_testkit::measure::{live_heap_bytes, CountingAllocator};
use zkrs_testkit::{ServerOptions, TestingServer};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const DEADLINE: Duration = Duration::from_secs(120);
const BOUND: usize = 1024;

fn ops() -> usize {
    std::env::var("ZKRS_FLOOD_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

async fn within<F: Future>(what: &str, f: F) -> F::Output {
    within_for(DEADLINE, what, f).await
}

async fn within_for<F: Future>(deadline: Duration, what: &str, f: F) -> F::Output {
    tokio::time::timeout(deadline, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: not done within {deadline:?}"))
}

/// The live flood's deadline: it measures memory, not the server's speed, and servers differ
/// (3.7.2 answered 100,000 getData in 20 s where 3.9.5 took 15 s, on a busy machine).
const FLOOD_DEADLINE: Duration = Duration::from_secs(300);

async fn client(zk: &TestingServer) -> Client {
    let max = if std::env::var_os("ZKRS_FLOOD_UNBOUNDED").is_some() {
        usize::MAX
    } else {
        BOUND
    };
    let client = within(
        "connect",
        Client::builder(&zk.connect_string())
            .session_timeout(Duration::from_secs(40))
            .max_in_flight(max)
            .connect(),
    )
    .await
    .unwrap();
    client
        .create("/flood", b"payload", CreateMode::Persistent)
        .await
        .unwrap();
    client
}

/// One test, the two floods in turn: the heap counts are the whole process's, so nothing
/// else may run beside them.
#[tokio::test(flavor = "current_thread")]
async fn floods_keep_the_heap_flat() {
    // ZooKeeper's default tickTime (sessions of up to 40 s), so that a slow flood against
    // the stalled server does not outlast the session.
    let zk = TestingServer::start_with(ServerOptions::default().tick_time_ms(2000)).unwrap();
    let client = client(&zk).await;
    requests_given_up_on_do_not_pile_up_behind_a_stalled_server(&zk, &client).await;
    a_million_requests_all_answered_with_flat_memory(&client).await;
}

async fn requests_given_up_on_do_not_pile_up_behind_a_stalled_server(
    zk: &TestingServer,
    client: &Client,
) {
    zk.pause().unwrap();
    let before = live_heap_bytes();
    let started = std::time::Instant::now();
    // Unconstrained: tokio's cooperative budget would otherwise make every poll after the
    // first 128 pending, sending nothing.
    tokio::task::unconstrained(async {
        let waker = Waker::from(Arc::new(NoWake));
        let mut cx = Context::from_waker(&waker);
        for _ in 0..ops() {
            // Polled once, then dropped: handed over if a place is free, else never sent.
            let request = pin!(client.get_data("/flood"));
            assert!(request.poll(&mut cx).is_pending(), "the server is stalled");
        }
    })
    .await;
    let grown = live_heap_bytes().saturating_sub(before);
    let took = started.elapsed();
    let in_flight = client.in_flight();
    println!(
        "flood of {} abandoned getData in {took:?}: heap grew by {grown} bytes, in flight {in_flight:?}",
        ops()
    );
    // About 300 bytes per queued request (its frame, its reply slot, the driver's queue);
    // 2 MiB is room for the bound's 1,024, far from the 1,000,000 of an unbounded client
    // (377 MB measured).
    assert!(grown < 2 << 20, "heap grew by {grown} bytes");
    assert_eq!(in_flight, Some(BOUND), "the bound is full, and no more");

    // The server wakes: what was queued is answered, places free up; the next request (sent
    // after them, answered after them) finds every place free again.
    zk.resume().unwrap();
    let (data, _) = within("a read after the stall", client.get_data("/flood"))
        .await
        .unwrap();
    assert_eq!(&data[..], b"payload");
    assert_eq!(client.in_flight(), Some(0));
}

async fn a_million_requests_all_answered_with_flat_memory(client: &Client) {
    let total = ops();
    // The caller keeps 8 times the bound in flight: 8,192 tasks, each reading in a loop.
    let callers = 8 * BOUND;
    let issued = Arc::new(AtomicUsize::new(0));
    let answered = Arc::new(AtomicUsize::new(0));
    let peaks = Arc::new(Mutex::new((0usize, 0usize))); // (first tenth, whole run)
    let base = live_heap_bytes();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..callers {
        let (client, issued, answered, peaks) = (
            client.clone(),
            issued.clone(),
            answered.clone(),
            peaks.clone(),
        );
        tasks.spawn(async move {
            while issued.fetch_add(1, Ordering::Relaxed) < total {
                let (data, _) = client.get_data("/flood").await.unwrap();
                assert_eq!(&data[..], b"payload");
                let n = answered.fetch_add(1, Ordering::Relaxed) + 1;
                if n % 1000 == 0 {
                    let live = live_heap_bytes().saturating_sub(base);
                    let mut p = peaks.lock().unwrap();
                    p.1 = p.1.max(live);
                    if n <= total / 10 {
                        p.0 = p.1;
                    }
                    assert!(client.in_flight().unwrap_or(0) <= BOUND);
                }
            }
        });
    }
    within_for(FLOOD_DEADLINE, "the flood", async {
        while let Some(done) = tasks.join_next().await {
            done.unwrap();
        }
    })
    .await;
    let answered = answered.load(Ordering::Relaxed);
    let (peak_early, peak) = *peaks.lock().unwrap();
    println!(
        "{total} getData from {callers} callers: {answered} answered; \
         heap peak {peak} bytes, {peak_early} in the first tenth"
    );
    assert_eq!(answered, total, "no request lost");
    assert!(
        peak <= peak_early + peak_early / 4,
        "the heap grew with the number of requests: {peak} in all, {peak_early} in the first tenth"
    );
}

/// A waker that does nothing (`Waker::noop` needs Rust 1.85; the crate supports 1.82).
struct NoWake;

impl std::task::Wake for NoWake {
    fn wake(self: Arc<Self>) {}
}
