//! InterProcessMutex against a real server: exclusion, fairness, timeouts, cancel safety.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zkrs_client::{Client, CreateMode, ErrorCode};
use zkrs_recipes::lock::InterProcessMutex;
use zkrs_testkit::TestingServer;

mod support;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_sessions_never_overlap() {
    let zk = TestingServer::start().unwrap();
    let counter = Arc::new(AtomicUsize::new(0));
    let inside = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let connect = zk.connect_string();
        let counter = counter.clone();
        let inside = inside.clone();
        tasks.push(tokio::spawn(async move {
            let client = Client::connect(&connect).await.unwrap();
            let mutex = InterProcessMutex::builder(&client, "/locks/counter")
                .build()
                .unwrap();
            for _ in 0..5 {
                let guard = mutex.acquire().await.unwrap();
                assert_eq!(
                    inside.fetch_add(1, Ordering::SeqCst),
                    0,
                    "two holders at once"
                );
                // A read-modify-write that loses updates without the lock.
                let value = counter.load(Ordering::SeqCst);
                tokio::task::yield_now().await;
                counter.store(value + 1, Ordering::SeqCst);
                inside.fetch_sub(1, Ordering::SeqCst);
                guard.release().await.unwrap();
            }
            client.close().await.unwrap();
        }));
    }
    for t in tasks {
        within("lock task", t).await.unwrap();
    }
    assert_eq!(counter.load(Ordering::SeqCst), 100, "an update was lost");
    let checker = Client::connect(&zk.connect_string()).await.unwrap();
    let left = checker
        .get_children("/locks/counter")
        .await
        .map(|c| c.len())
        .unwrap_or(0);
    assert_eq!(left, 0, "lock nodes left behind");
}

#[tokio::test]
async fn timeout_and_dropped_acquire_leave_no_node() {
    let zk = TestingServer::start().unwrap();
    let a = Client::connect(&zk.connect_string()).await.unwrap();
    let b = Client::connect(&zk.connect_string()).await.unwrap();
    let held = InterProcessMutex::builder(&a, "/locks/x")
        .build()
        .unwrap()
        .acquire()
        .await
        .unwrap();
    assert!(held.path().starts_with("/locks/x/_c_"), "{}", held.path());
    assert!(held.path().contains("-lock-"), "{}", held.path());

    let waiting = InterProcessMutex::builder(&b, "/locks/x").build().unwrap();
    let got = waiting
        .try_acquire(Duration::from_millis(300))
        .await
        .unwrap();
    assert!(got.is_none());
    // A dropped acquire future: its node must go too.
    let dropped = tokio::time::timeout(Duration::from_millis(300), waiting.acquire()).await;
    assert!(dropped.is_err());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let children = a.get_children("/locks/x").await.unwrap();
        if children.len() == 1 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "orphans: {:?}",
            children.to_vec()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Hand-off: b waits, a releases, b gets it.
    let next = tokio::spawn({
        let waiting = waiting.clone();
        async move { waiting.acquire().await.unwrap() }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    held.release().await.unwrap();
    let guard = within("hand-off", next).await.unwrap();
    assert!(guard.is_held());
    assert_eq!(
        waiting.participant_nodes().await.unwrap(),
        vec![guard.path().to_string()]
    );
}

#[tokio::test]
async fn lock_directory_deleted_and_recreated() {
    let zk = TestingServer::start().unwrap();
    let a = Client::connect(&zk.connect_string()).await.unwrap();
    let b = Client::connect(&zk.connect_string()).await.unwrap();
    let guard = InterProcessMutex::builder(&a, "/locks/d")
        .build()
        .unwrap()
        .acquire()
        .await
        .unwrap();
    let waiter = tokio::spawn({
        let b = b.clone();
        async move {
            InterProcessMutex::builder(&b, "/locks/d")
                .build()
                .unwrap()
                .acquire()
                .await
                .unwrap()
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Someone deletes everything: the holder's node and the waiter's, then the directory.
    // The waiter reacts meanwhile (it may make a new node, or the directory again), so keep
    // at it until the directory is gone once; then recreate it.
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let children = match a.get_children("/locks/d").await {
            Ok(c) => c.to_vec(),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => break,
            Err(e) => panic!("{e}"),
        };
        for child in children {
            match a.delete(&format!("/locks/d/{child}"), None).await {
                Ok(()) => {}
                Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
                Err(e) => panic!("{e}"),
            }
        }
        match a.delete("/locks/d", None).await {
            Ok(()) => break,
            Err(e) if matches!(e.code(), Some(ErrorCode::NotEmpty | ErrorCode::NoNode)) => {}
            Err(e) => panic!("{e}"),
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "could not delete /locks/d"
        );
    }
    match a.create("/locks/d", b"", CreateMode::Persistent).await {
        Ok(_) => {}
        Err(e) if e.code() == Some(ErrorCode::NodeExists) => {} // the waiter made it again first
        Err(e) => panic!("{e}"),
    }
    let got = within("waiter after recreate", waiter).await.unwrap();
    assert!(got.path().starts_with("/locks/d/_c_"));
    drop(guard);
}

#[tokio::test]
async fn a_bad_lock_path_is_refused_naming_it() {
    let zk = TestingServer::start().unwrap();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    // Refused by `build`, before anything is sent.
    let err = InterProcessMutex::builder(&client, "bad/path")
        .build()
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
    assert_eq!(
        err.to_string(),
        "invalid input: path must start with '/': bad/path"
    );
}

#[tokio::test]
async fn namespaced_clients_share_locks_under_their_namespace() {
    let zk = TestingServer::start().unwrap();
    let connect = zk.connect_string();
    let a = zkrs_recipes::framework::connect_with_namespace(&connect, "/apps/billing", |b| b)
        .await
        .unwrap();
    let guard = InterProcessMutex::builder(&a, "/lock")
        .build()
        .unwrap()
        .acquire()
        .await
        .unwrap();
    assert!(guard.path().starts_with("/lock/_c_"), "{}", guard.path());
    // Seen from the root, the node is under the namespace.
    let root = Client::connect(&connect).await.unwrap();
    let children = root.get_children("/apps/billing/lock").await.unwrap();
    assert_eq!(children.len(), 1);
    // A second namespaced client (the node exists now) contends for the same lock.
    let b = zkrs_recipes::framework::connect_with_namespace(&connect, "/apps/billing", |b| b)
        .await
        .unwrap();
    let other = InterProcessMutex::builder(&b, "/lock").build().unwrap();
    assert!(refused(&other).await);
    guard.release().await.unwrap();
    assert!(other.try_acquire(DEADLINE).await.unwrap().is_some());
    let err = zkrs_recipes::framework::connect_with_namespace(&format!("{connect}/x"), "/y", |b| b)
        .await
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
}
