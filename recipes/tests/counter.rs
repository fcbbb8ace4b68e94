//! Shared values and counts, and atomic counters, against a real server: the formats
//! Curator uses, compare-and-set, events, concurrent increments from many sessions (the sum
//! is right and no increment is reported twice), promotion to a lock, and a restart.

use std::collections::HashSet;
use std::time::Duration;

use zkrs_client::{Bytes, CreateMode, EventStream};
use zkrs_recipes::counter::{
    DistributedAtomicInteger, DistributedAtomicLong, PromotedToLock, SharedCount, SharedValue,
    SharedValueEvent,
};
use zkrs_recipes::framework::RetryPolicy;
use zkrs_testkit::TestingServer;

mod support;
use support::*;

async fn next<T: Clone>(
    events: &mut EventStream<SharedValueEvent<T>>,
    what: &str,
) -> SharedValueEvent<T> {
    within(what, events.next())
        .await
        .unwrap_or_else(|| panic!("{what}: stream ended"))
}

/// Waits for a `Changed` event with this value (skipping connection events and older values).
async fn changed_to<T: Clone + PartialEq + std::fmt::Debug>(
    events: &mut EventStream<SharedValueEvent<T>>,
    want: T,
) {
    loop {
        if let SharedValueEvent::Changed(v) = next(events, &format!("a change to {want:?}")).await {
            if v.value == want {
                return;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_count_seed_format_events_and_compare_and_set() {
    let zk = TestingServer::start().unwrap();
    let a = connect(&zk).await;
    let b = connect(&zk).await;
    let ours = SharedCount::builder(&a, "/counts/workers")
        .seed(7)
        .start()
        .unwrap();
    ours.initialized().await.unwrap();
    let (data, _) = a.get_data("/counts/workers").await.unwrap();
    assert_eq!(&data[..], [0, 0, 0, 7], "Curator's format");
    assert_eq!(ours.count(), 7);

    // A second one does not overwrite the seed.
    let theirs = SharedCount::builder(&b, "/counts/workers")
        .seed(99)
        .start()
        .unwrap();
    theirs.initialized().await.unwrap();
    assert_eq!(theirs.count(), 7);
    let mut events = theirs.events();

    ours.set_count(-2).await.unwrap();
    changed_to(&mut events, -2).await;
    let (data, _) = a.get_data("/counts/workers").await.unwrap();
    assert_eq!(&data[..], [0xff, 0xff, 0xff, 0xfe]);

    // Compare-and-set: a stale read loses, and learns the newer value.
    let seen = theirs.versioned_value();
    assert!(ours
        .try_set_count(&ours.versioned_value(), 10)
        .await
        .unwrap());
    let stale = theirs.try_set_count(&seen, 11).await.unwrap();
    assert!(!stale, "written since that read");
    assert_eq!(theirs.count(), 10);
    assert!(theirs
        .try_set_count(&theirs.versioned_value(), 11)
        .await
        .unwrap());
    changed_to(&mut events, 11).await;

    // Bad data is a clear error, not a panic.
    a.create("/counts/bad", b"xy", CreateMode::Persistent)
        .await
        .unwrap();
    let bad = SharedCount::builder(&a, "/counts/bad").start().unwrap();
    let err = bad.initialized().await.unwrap_err();
    assert!(err.to_string().contains("/counts/bad"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_compare_and_set_from_five_sessions_adds_up() {
    let zk = TestingServer::start().unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..5 {
        let client = connect(&zk).await;
        tasks.spawn(async move {
            let count = SharedCount::builder(&client, "/sum").start().unwrap();
            count.initialized().await.unwrap();
            for _ in 0..20 {
                loop {
                    let seen = count.versioned_value();
                    if count.try_set_count(&seen, seen.value + 1).await.unwrap() {
                        break;
                    }
                }
            }
        });
    }
    within("five writers", async {
        while let Some(done) = tasks.join_next().await {
            done.unwrap();
        }
    })
    .await;
    let client = connect(&zk).await;
    let (data, _) = client.get_data("/sum").await.unwrap();
    assert_eq!(&data[..], 100i32.to_be_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_value_follows_across_a_server_restart() {
    let zk = TestingServer::start().unwrap();
    let a = connect(&zk).await;
    let value = SharedValue::builder(&a, "/mode")
        .seed(b"normal")
        .start()
        .unwrap();
    value.initialized().await.unwrap();
    let mut events = value.events();
    tokio::task::block_in_place(|| zk.restart()).unwrap();
    loop {
        if matches!(
            next(&mut events, "reconnected").await,
            SharedValueEvent::Reconnected
        ) {
            break;
        }
    }
    let b = connect(&zk).await;
    b.set_data("/mode", b"maintenance", None).await.unwrap();
    changed_to(&mut events, Bytes::from_static(b"maintenance")).await;
    assert_eq!(&value.value()[..], b"maintenance");
    value.close().await;
    // Closing ends the stream (within the deadline, or `within` fails the test).
    while within("the stream ends", events.next()).await.is_some() {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_long_increments_from_eight_sessions_add_up_and_none_is_told_twice() {
    let zk = TestingServer::start().unwrap();
    let retry = RetryPolicy::Forever {
        sleep: Duration::from_millis(1),
    };
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let client = connect(&zk).await;
        let retry = retry.clone();
        tasks.spawn(async move {
            let counter = DistributedAtomicLong::builder(&client, "/stats/hits")
                .retry(retry)
                .build()
                .unwrap();
            let mut posts = Vec::new();
            for _ in 0..25 {
                let r = counter.increment().await.unwrap();
                assert!(r.succeeded);
                assert_eq!(r.post_value, r.pre_value + 1);
                posts.push(r.post_value);
            }
            posts
        });
    }
    let mut all = HashSet::new();
    within("eight incrementers", async {
        while let Some(posts) = tasks.join_next().await {
            for p in posts.unwrap() {
                assert!(all.insert(p), "{p} reported by two increments");
            }
        }
    })
    .await;
    let client = connect(&zk).await;
    let counter = DistributedAtomicLong::builder(&client, "/stats/hits")
        .retry(retry)
        .build()
        .unwrap();
    assert_eq!(counter.get().await.unwrap().post_value, 200);
    assert_eq!(all.len(), 200);
    let (data, _) = client.get_data("/stats/hits").await.unwrap();
    assert_eq!(&data[..], 200i64.to_be_bytes(), "8 bytes, big-endian");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promoted_to_lock_when_optimism_runs_out() {
    let zk = TestingServer::start().unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let client = connect(&zk).await;
        tasks.spawn(async move {
            // One optimistic try only, then the mutex (with retries under it).
            let counter = DistributedAtomicLong::builder(&client, "/promoted")
                .retry(RetryPolicy::Never)
                .promoted_to_lock(PromotedToLock {
                    lock_path: "/promoted-lock".into(),
                    max_lock_time: Some(Duration::from_secs(20)),
                    retry: RetryPolicy::Forever {
                        sleep: Duration::from_millis(1),
                    },
                })
                .build()
                .unwrap();
            let mut promoted = 0;
            for _ in 0..15 {
                let r = counter.add(2).await.unwrap();
                assert!(r.succeeded, "{r:?}");
                promoted += u32::from(r.stats.promoted_lock_tries > 0);
            }
            promoted
        });
    }
    let mut promoted = 0;
    within("four writers", async {
        while let Some(p) = tasks.join_next().await {
            promoted += p.unwrap();
        }
    })
    .await;
    assert!(promoted > 0, "contention should have promoted some changes");
    let client = connect(&zk).await;
    let counter = DistributedAtomicLong::builder(&client, "/promoted")
        .retry(RetryPolicy::Never)
        .build()
        .unwrap();
    assert_eq!(counter.get().await.unwrap().post_value, 120);
    assert_eq!(
        children(&client, "/promoted-lock").await,
        0,
        "no lock node left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_integer_operations_and_bad_data() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let n = DistributedAtomicInteger::builder(&client, "/a/b/n")
        .build()
        .unwrap();
    let r = n.get().await.unwrap();
    assert_eq!((r.succeeded, r.post_value), (true, 0));
    assert!(
        client.exists("/a/b/n").await.unwrap().is_none(),
        "get creates nothing"
    );

    let r = n.compare_and_set(5, 6).await.unwrap();
    assert!(!r.succeeded);
    assert_eq!((r.pre_value, r.post_value), (0, 0));
    let r = n.compare_and_set(0, 6).await.unwrap();
    assert!(
        r.succeeded,
        "missing reads as 0, and the first write creates it"
    );
    let (data, _) = client.get_data("/a/b/n").await.unwrap();
    assert_eq!(&data[..], [0, 0, 0, 6]);
    assert_eq!(n.subtract(10).await.unwrap().post_value, -4);
    assert_eq!(n.decrement().await.unwrap().post_value, -5);
    let r = n.try_set(42).await.unwrap();
    assert_eq!((r.succeeded, r.pre_value, r.post_value), (true, -5, 42));
    n.force_set(i32::MAX).await.unwrap();
    assert_eq!(
        n.increment().await.unwrap().post_value,
        i32::MIN,
        "wraps as Java does"
    );

    client
        .create("/short", b"abc", CreateMode::Persistent)
        .await
        .unwrap();
    let err = DistributedAtomicLong::builder(&client, "/short")
        .build()
        .unwrap()
        .increment()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/short"), "{err}");
}
