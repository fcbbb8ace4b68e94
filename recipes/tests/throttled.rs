//! A server that says it is overloaded: every request answered `ThrottledOp` for 5 s, then
//! served. The recipes' retries must back off (a bounded number of requests in the window)
//! and the work must still complete once the server serves again.
//!
//! The server is the test kit's `ScriptedServer`, not a real ZooKeeper: ZooKeeper (3.6+)
//! answers `ThrottledOp` only for a request that waited in its `RequestThrottler` queue longer
//! than `zookeeper.throttled_op_wait_time`, which takes another load keeping the pipeline
//! full (`zookeeper.request_throttle_max_requests`); whether a given retry waits that long
//! depends on that load's timing, so the window could not be made exact. The scripted server
//! answers like a ZooKeeper server (same frames) and counts every request it is sent; the
//! client's own metrics must count the same.
//!
//! (Tried against ZooKeeper 3.9.5 with `request_throttle_max_requests=1`,
//! `request_throttle_stall_time=100`, `throttled_op_wait_time=1` and a second client keeping
//! 50 requests in flight: one request in 50 of a sequential caller came back `ThrottledOp`,
//! scattered, never a window of them.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zkrs_client::{Client, ClientBuilder, CreateMode};
use zkrs_recipes::framework::{create_protected, delete_until_gone, ProtectedName};
use zkrs_recipes::queue::SimpleDistributedQueue;
use zkrs_testkit::scripted::{reply_frame, Jute, Request};
use zkrs_testkit::ScriptedServer;

mod support;

/// How long the server throttles, from the first request it is sent.
const WINDOW: Duration = Duration::from_secs(5);

/// The most requests a retrying recipe may send in the window: the back-off's sleeps (10 ms
/// doubling to a 1 s cap, jittered up to half again) allow about a dozen; a hot loop sends
/// thousands.
const MAX_IN_WINDOW: usize = 30;

/// The longest the work may take: the window, plus the longest back-off sleep, plus a margin
/// for a busy machine.
const DEADLINE: Duration = Duration::from_secs(10);

const THROTTLED_OP: i32 = -127;

/// The queue the scripted server holds one item in, and that item.
const QUEUE: &str = "/throttled-queue";
const ITEM: &[u8] = b"item";
const OP_CREATE: i32 = 1;
const OP_DELETE: i32 = 2;
const OP_EXISTS: i32 = 3;
const OP_GET_DATA: i32 = 4;
const OP_GET_CHILDREN: i32 = 8;
const OP_SYNC: i32 = 9;
const OP_GET_CHILDREN2: i32 = 12;
const OP_CREATE2: i32 = 15;

/// What the server saw: requests in the window, after it, and when the first came.
#[derive(Default)]
struct Counts {
    first: Mutex<Option<Instant>>,
    throttled: AtomicUsize,
    served: AtomicUsize,
}

/// A server answering every request `ThrottledOp` for [`WINDOW`] from the first, then
/// serving an empty tree's answers (creates succeed, deletes succeed, listings are empty).
fn throttling_server() -> (ScriptedServer, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let seen = counts.clone();
    let server = ScriptedServer::start(move |conn| {
        conn.handshake()?;
        let seen = seen.clone();
        conn.serve(move |request| {
            let first = *seen.first.lock().unwrap().get_or_insert_with(Instant::now);
            if first.elapsed() < WINDOW {
                seen.throttled.fetch_add(1, Ordering::SeqCst);
                return Some(reply_frame(request.xid, 1, THROTTLED_OP, &[]));
            }
            seen.served.fetch_add(1, Ordering::SeqCst);
            Some(reply_frame(request.xid, 2, 0, &served(request)))
        })
    })
    .expect("scripted server");
    (server, counts)
}

/// The body of a successful reply to `request`.
fn served(request: &Request) -> Vec<u8> {
    let path = request.path().unwrap_or_default();
    match request.op {
        OP_CREATE | OP_SYNC => Jute::new().string(&path).into_vec(),
        OP_CREATE2 => Jute::new().string(&path).stat().into_vec(),
        OP_EXISTS => Jute::new().stat().into_vec(),
        OP_GET_CHILDREN => children(&path).into_vec(),
        OP_GET_CHILDREN2 => children(&path).stat().into_vec(),
        OP_GET_DATA => Jute::new().buffer(ITEM).stat().into_vec(),
        OP_DELETE => Vec::new(),
        other => panic!("the test serves no op {other}"),
    }
}

/// A listing: one item in [`QUEUE`], nothing elsewhere.
fn children(path: &str) -> Jute {
    if path == QUEUE {
        Jute::new().i32(1).string("qn-0000000001")
    } else {
        Jute::new().i32(0)
    }
}

async fn connect(server: &ScriptedServer) -> Client {
    let connecting = ClientBuilder::new(server.connect_string())
        .session_timeout(Duration::from_secs(10))
        .connect();
    tokio::time::timeout(DEADLINE, connecting)
        .await
        .expect("connected in time")
        .expect("connected")
}

/// Runs `work` against a throttling server and checks the request count and completion.
async fn check<F, Fut, T>(what: &str, work: F)
where
    F: FnOnce(Client) -> Fut,
    Fut: std::future::Future<Output = zkrs_client::Result<T>>,
{
    let (server, counts) = throttling_server();
    let client = connect(&server).await;
    let started = Instant::now();
    let done = tokio::time::timeout(DEADLINE, work(client.clone())).await;
    let throttled = counts.throttled.load(Ordering::SeqCst);
    let served = counts.served.load(Ordering::SeqCst);
    let counted = support::requests(&client, None);
    eprintln!(
        "{what}: {throttled} requests answered ThrottledOp in {WINDOW:?} \
         ({:.1}/s), {served} served after; done in {:?}",
        throttled as f64 / WINDOW.as_secs_f64(),
        started.elapsed()
    );
    let done = done.unwrap_or_else(|_| panic!("{what}: not done within {DEADLINE:?}"));
    assert!(
        done.is_ok(),
        "{what}: failed: {:?}",
        done.err().map(|e| e.to_string())
    );
    assert!(
        throttled <= MAX_IN_WINDOW,
        "{what}: {throttled} requests in the {WINDOW:?} of throttling, more than {MAX_IN_WINDOW}"
    );
    assert!(
        served >= 1,
        "{what}: nothing was served after the throttling"
    );
    assert_eq!(
        counted,
        (throttled + served) as u64,
        "{what}: the client's metrics count other requests than the server saw"
    );
    let _ = client.close().await;
}

#[tokio::test]
async fn a_guaranteed_delete_backs_off_while_throttled() {
    check("delete_until_gone", |client| async move {
        delete_until_gone(&client, "/throttled/node").await
    })
    .await;
}

#[tokio::test]
async fn a_protected_create_backs_off_while_throttled() {
    check("create_protected", |client| async move {
        create_protected(
            &client,
            "/throttled",
            "lock-",
            b"",
            CreateMode::EphemeralSequential,
            &ProtectedName::new(),
        )
        .await
    })
    .await;
}

#[tokio::test]
async fn a_queue_consumer_backs_off_while_throttled() {
    check("SimpleDistributedQueue::take", |client| async move {
        let queue = SimpleDistributedQueue::builder(&client, QUEUE).build()?;
        let item = queue.take().await?;
        assert_eq!(&item[..], ITEM);
        Ok(())
    })
    .await;
}

#[tokio::test]
async fn a_take_with_a_timeout_keeps_it_while_throttled() {
    const TIMEOUT: Duration = Duration::from_millis(500);
    let (server, _counts) = throttling_server();
    let client = connect(&server).await;
    let queue = SimpleDistributedQueue::builder(&client, QUEUE)
        .build()
        .unwrap();
    let started = Instant::now();
    let taken = tokio::time::timeout(DEADLINE, queue.take_timeout(TIMEOUT))
        .await
        .expect("the take returned");
    let took = started.elapsed();
    assert!(taken.unwrap().is_none(), "nothing to take while throttled");
    // The timeout, plus the longest a request and its answer take on a busy machine.
    assert!(
        took < TIMEOUT + Duration::from_millis(400),
        "a take with a {TIMEOUT:?} timeout took {took:?}"
    );
    let _ = client.close().await;
}
