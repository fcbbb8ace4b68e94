//! `zkrs_recipes::metrics::metrics()` counts what the recipes did, against a real server. One test
//! in this binary: the figures are the process's.

use std::time::Duration;

use zkrs_client::Client;
use zkrs_recipes::cache::TreeCache;
use zkrs_recipes::queue::SimpleDistributedQueue;
use zkrs_recipes::{
    leader::LeaderLatch,
    lock::{InterProcessMutex, InterProcessReadWriteLock, InterProcessSemaphoreV2},
    metrics::{metrics, LockKind, LockMetrics, RecipeMetrics},
};
use zkrs_testkit::TestingServer;

mod support;
use support::*;

fn lock(m: &RecipeMetrics, kind: LockKind) -> (u64, u64, u64) {
    m.locks
        .iter()
        .find(|l| l.kind == kind)
        .map_or((0, 0, 0), |l: &LockMetrics| {
            (l.acquired, l.timed_out, l.released)
        })
}

fn lock_metrics(m: &RecipeMetrics, kind: LockKind) -> LockMetrics {
    m.locks
        .iter()
        .find(|l| l.kind == kind)
        .cloned()
        .expect("the kind was used")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_figures_count_what_the_recipes_did() {
    let zk = TestingServer::start().unwrap();
    let a = Client::connect(&zk.connect_string()).await.unwrap();
    let b = Client::connect(&zk.connect_string()).await.unwrap();
    let before = metrics();
    assert_eq!(lock(&before, LockKind::Mutex), (0, 0, 0));

    // Mutex: one timeout while another holds it, then three holds of at least 20 ms.
    let mutex_a = InterProcessMutex::builder(&a, "/m").build().unwrap();
    let mutex_b = InterProcessMutex::builder(&b, "/m").build().unwrap();
    let held = mutex_a.acquire().await.unwrap();
    assert!(mutex_b
        .try_acquire(Duration::from_millis(100))
        .await
        .unwrap()
        .is_none());
    held.release().await.unwrap();
    for _ in 0..3 {
        let guard = mutex_b.acquire().await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(guard); // a dropped guard ends its hold too
    }

    // Semaphore: two leases (its own inner mutex is not counted as a mutex).
    let semaphore = InterProcessSemaphoreV2::builder(&a, "/s", 3)
        .build()
        .unwrap();
    let leases = semaphore.acquire(2).await.unwrap();
    InterProcessSemaphoreV2::return_all(leases).await.unwrap();

    // Read/write: one of each.
    let rw = InterProcessReadWriteLock::builder(&a, "/rw")
        .build()
        .unwrap();
    rw.read_lock()
        .acquire()
        .await
        .unwrap()
        .release()
        .await
        .unwrap();
    let write = rw.write_lock().acquire().await.unwrap();
    drop(write);

    // Leadership: one term, ended by close.
    let latch = LeaderLatch::builder(&a, "/latch").id("a").start().unwrap();
    within("leadership", latch.await_leadership())
        .await
        .unwrap();
    let leading = metrics().leadership;
    assert_eq!(leading.terms, before.leadership.terms + 1);
    assert_eq!(leading.leading, 1);
    tokio::time::sleep(Duration::from_millis(30)).await;
    latch.close().await.unwrap();

    // Queue: three in, three out.
    let queue = SimpleDistributedQueue::builder(&a, "/q").build().unwrap();
    for i in 0..3u8 {
        queue.put([i]).await.unwrap();
    }
    for _ in 0..3 {
        within("take", queue.take()).await.unwrap();
    }

    // Cache: a tree cache sees two nodes created.
    a.create("/t", b"", zkrs_client::CreateMode::Persistent)
        .await
        .unwrap();
    let tree = TreeCache::builder(&a, "/t").start().unwrap();
    let mut events = tree.events();
    a.create("/t/x", b"", zkrs_client::CreateMode::Persistent)
        .await
        .unwrap();
    a.create("/t/y", b"", zkrs_client::CreateMode::Persistent)
        .await
        .unwrap();
    within("the cache sees both", async {
        while tree.get("/t/x").is_none() || tree.get("/t/y").is_none() {
            events.next().await;
        }
    })
    .await;

    // Guards dropped in the background have ended their holds by now (counted at drop).
    let after = metrics();
    assert_eq!(lock(&after, LockKind::Mutex), (4, 1, 4), "{after:#?}");
    assert_eq!(lock(&after, LockKind::Semaphore), (2, 0, 2), "{after:#?}");
    assert_eq!(lock(&after, LockKind::Read), (1, 0, 1));
    assert_eq!(lock(&after, LockKind::Write), (1, 0, 1));
    let mutex = lock_metrics(&after, LockKind::Mutex);
    assert_eq!(mutex.wait.total(), 5, "each acquisition and the timeout");
    assert_eq!(mutex.hold.total(), 4);
    assert!(mutex.hold_total >= Duration::from_millis(60), "{mutex:?}");
    assert!(
        mutex.wait.quantile(1.0).unwrap() >= Duration::from_millis(100),
        "the timeout waited 100 ms: {mutex:?}"
    );
    assert_eq!(after.leadership.terms, before.leadership.terms + 1);
    assert_eq!(after.leadership.leading, 0);
    assert_eq!(after.leadership.term_length.total(), 1);
    assert!(after.leadership.term_total >= Duration::from_millis(30));
    assert_eq!(after.queues.put, 3);
    assert_eq!(after.queues.taken, 3);
    assert!(
        after.caches.events >= 3,
        "the root and two nodes added: {after:#?}"
    );
    assert!(after.caches.reads >= 3, "{after:#?}");
    assert_eq!(after.caches.resyncs, 1, "the initial build");
}
