//! InterProcessMultiLock against a real server: all or nothing, reverse-order release, a mix
//! of lock kinds.

use std::time::Duration;

use zkrs_client::{AddWatchMode, Client, ErrorCode, EventType};
use zkrs_recipes::lock::{
    InterProcessMultiLock, InterProcessMutex, InterProcessReadWriteLock, InterProcessSemaphoreMutex,
};
use zkrs_testkit::TestingServer;

mod support;
use support::*;

/// Names of the children of `path` (none if it does not exist).
async fn children(client: &Client, path: &str) -> Vec<String> {
    match client.get_children(path).await {
        Ok(c) => c.to_vec(),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => Vec::new(),
        Err(e) => panic!("{path}: {e}"),
    }
}

/// A multi-lock over mutexes at `paths`, taken in this order.
fn mutexes(client: &Client, paths: [&str; 3]) -> InterProcessMultiLock {
    paths
        .into_iter()
        .fold(InterProcessMultiLock::builder(), |multi, path| {
            multi.lock(InterProcessMutex::builder(client, path).build().unwrap())
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn all_or_nothing() {
    let zk = TestingServer::start().unwrap();
    let (x, y) = (connect(&zk).await, connect(&zk).await);
    let paths = ["/multi/a", "/multi/b", "/multi/c"];
    // Another session holds the last one.
    let held = InterProcessMutex::builder(&x, "/multi/c")
        .build()
        .unwrap()
        .acquire()
        .await
        .unwrap();

    let multi = mutexes(&y, paths);
    assert_eq!(multi.locks().len(), 3);
    let got = multi.try_acquire(Duration::from_millis(400)).await.unwrap();
    assert!(got.is_none(), "acquired though /multi/c is held");
    // a and b were taken, then released before try_acquire returned.
    assert!(children(&x, "/multi/a").await.is_empty());
    assert!(children(&x, "/multi/b").await.is_empty());
    // Our timed-out node under c goes in the background; only the holder's stays.
    let holder = vec![zkrs_recipes::framework::node_name(held.path()).to_string()];
    eventually("timed-out node under c deleted", || async {
        children(&x, "/multi/c").await == holder
    })
    .await;

    // Once c is free, all three are taken.
    let waiting = tokio::spawn({
        let multi = multi.clone();
        async move { multi.acquire().await.unwrap() }
    });
    eventually("multi-lock waits on c", || async {
        children(&x, "/multi/c").await.len() == 2
    })
    .await;
    held.release().await.unwrap();
    let guard = within("multi-lock after c was released", waiting)
        .await
        .unwrap();
    assert!(guard.is_held());
    let held_paths: Vec<&str> = guard
        .guards()
        .iter()
        .map(|g| zkrs_recipes::framework::parent(g.path()))
        .collect();
    assert_eq!(held_paths, paths);
    // Another session's single lock is excluded.
    let other = InterProcessMutex::builder(&x, "/multi/b").build().unwrap();
    assert!(refused(&other).await);
    guard.release().await.unwrap();
    assert!(children(&x, "/multi/a").await.is_empty());
    assert!(children(&x, "/multi/c").await.is_empty());
    // The other session's timed-out node under b goes in the background.
    eventually("b empty", || async {
        children(&x, "/multi/b").await.is_empty()
    })
    .await;
}

#[tokio::test]
async fn released_in_reverse_order() {
    let zk = TestingServer::start().unwrap();
    let (x, y) = (connect(&zk).await, connect(&zk).await);
    let paths = ["/rev/a", "/rev/b", "/rev/c"];
    let multi = mutexes(&y, paths);
    let guard = multi.acquire().await.unwrap();

    // Another session sees the deletes in the order the server applied them (through a
    // persistent recursive watch: 3.6 on).
    if zk.version().unwrap().at_least(3, 6) {
        let mut events = x
            .add_watch("/rev", AddWatchMode::PersistentRecursive)
            .await
            .unwrap();
        guard.release().await.unwrap();
        let mut deleted = Vec::new();
        while deleted.len() < 3 {
            let event = within("delete events", events.next())
                .await
                .expect("watch ended")
                .expect("no event dropped");
            if event.event_type == EventType::NodeDeleted {
                deleted.push(zkrs_recipes::framework::parent(&event.path).to_string());
            }
        }
        assert_eq!(deleted, ["/rev/c", "/rev/b", "/rev/a"]);
    } else {
        guard.release().await.unwrap();
    }

    // Dropping the guard starts the deletes in reverse order too (in the background).
    let guard = multi.acquire().await.unwrap();
    drop(guard);
    eventually("dropped guard's nodes deleted", || async {
        let mut empty = true;
        for p in paths {
            empty &= children(&x, p).await.is_empty();
        }
        empty
    })
    .await;
}

#[tokio::test]
async fn mixed_lock_kinds() {
    let zk = TestingServer::start().unwrap();
    let (x, y) = (connect(&zk).await, connect(&zk).await);
    let rw = InterProcessReadWriteLock::builder(&y, "/mix/rw")
        .build()
        .unwrap();
    let multi = InterProcessMultiLock::builder()
        .lock(
            InterProcessSemaphoreMutex::builder(&y, "/mix/sem")
                .build()
                .unwrap(),
        )
        .lock(
            InterProcessMutex::builder(&y, "/mix/mutex")
                .build()
                .unwrap(),
        )
        .lock(rw.write_lock())
        .build()
        .unwrap();
    assert_eq!(multi.locks()[2].path(), "/mix/rw");

    // A reader on the read/write lock keeps the multi-lock's writer out.
    let reader = InterProcessReadWriteLock::builder(&x, "/mix/rw")
        .build()
        .unwrap()
        .read_lock()
        .acquire()
        .await
        .unwrap();
    let got = multi.try_acquire(Duration::from_millis(400)).await.unwrap();
    assert!(got.is_none());
    assert!(
        children(&x, "/mix/sem/leases").await.is_empty(),
        "lease kept"
    );
    assert!(children(&x, "/mix/mutex").await.is_empty(), "mutex kept");
    reader.release().await.unwrap();

    let guard = within("mixed multi-lock", multi.acquire()).await.unwrap();
    let kinds: Vec<bool> = guard
        .guards()
        .iter()
        .map(|g| g.path().contains("-lease-"))
        .collect();
    assert_eq!(kinds, [true, false, false]);
    assert!(guard.guards()[2].path().contains("-__WRIT__"));
    // Each lock is taken: the semaphore mutex is out of leases for others.
    let sem = InterProcessSemaphoreMutex::builder(&x, "/mix/sem")
        .build()
        .unwrap();
    assert!(sem
        .try_acquire(Duration::from_millis(200))
        .await
        .unwrap()
        .is_none());
    guard.release().await.unwrap();
    let lease = within("semaphore mutex after release", sem.acquire())
        .await
        .unwrap();
    lease.release().await.unwrap();
}
