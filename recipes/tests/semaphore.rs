//! InterProcessSemaphoreV2 and InterProcessSemaphoreMutex against a real server: the lease
//! limit, a shared count followed while waiting, all-or-nothing multi-lease acquires, cancel
//! safety, mutual exclusion.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zkrs_client::{Client, OpCode};
use zkrs_recipes::counter::{decode_count, encode_count};
use zkrs_recipes::lock::{InterProcessSemaphoreMutex, InterProcessSemaphoreV2};
use zkrs_testkit::TestingServer;

mod support;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_sessions_three_leases() {
    let zk = TestingServer::start().unwrap();
    let inside = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let connect = zk.connect_string();
        let (inside, most, done) = (inside.clone(), most.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            let client = Client::connect(&connect).await.unwrap();
            let semaphore = InterProcessSemaphoreV2::builder(&client, "/sem/three", 3)
                .build()
                .unwrap();
            for _ in 0..3 {
                let lease = semaphore.acquire_one().await.unwrap();
                let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                assert!(now <= 3, "{now} holders of 3 leases");
                most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10)).await;
                inside.fetch_sub(1, Ordering::SeqCst);
                lease.release().await.unwrap();
                done.fetch_add(1, Ordering::SeqCst);
            }
            client.close().await.unwrap();
        }));
    }
    for t in tasks {
        within("semaphore task", t).await.unwrap();
    }
    assert_eq!(done.load(Ordering::SeqCst), 30);
    assert!(most.load(Ordering::SeqCst) <= 3);
    let checker = connect(&zk).await;
    assert_eq!(children(&checker, "/sem/three/leases").await, 0);
    assert_eq!(children(&checker, "/sem/three/locks").await, 0);
}

/// An uncontended lease: its listing goes out with its create, and the semaphore's mutex is
/// let go in the background, so `acquire_one` does not wait for the mutex's delete
/// (Curator's acquire does); the mutex's node is still deleted.
#[tokio::test]
async fn a_lease_does_not_wait_for_its_mutex_to_be_let_go() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let semaphore = InterProcessSemaphoreV2::builder(&client, "/sem/quick", 1)
        .build()
        .unwrap();
    let mutex_nodes = || async { client.get_children("/sem/quick/locks").await.unwrap().len() };
    // The folders made, as for a semaphore in use.
    let first = within("a first lease", semaphore.acquire_one())
        .await
        .unwrap();
    first.release().await.unwrap();
    eventually("the first mutex node to go", || async {
        mutex_nodes().await == 0
    })
    .await;

    let (deletes, lists) = (requests(&client, Some(OpCode::Delete)), listings(&client));
    let lease = within("a lease", semaphore.acquire_one()).await.unwrap();
    // On this test's one thread nothing else ran between the acquire's return and here.
    assert_eq!(
        requests(&client, Some(OpCode::Delete)),
        deletes,
        "the acquire waited for its mutex's delete"
    );
    // One listing of the mutex's line, one of the leases (pipelined with the lease's create).
    assert_eq!(listings(&client) - lists, 2);
    eventually("the mutex node to be deleted in the background", || async {
        mutex_nodes().await == 0
    })
    .await;
    assert_eq!(requests(&client, Some(OpCode::Delete)), deletes + 1);
    assert_eq!(semaphore.participant_nodes().await.unwrap().len(), 1);
    lease.release().await.unwrap();
}

#[tokio::test]
async fn layout_and_all_or_nothing() {
    let zk = TestingServer::start().unwrap();
    let (a, b) = (connect(&zk).await, connect(&zk).await);
    let sem_a = InterProcessSemaphoreV2::builder(&a, "/sem/n", 3)
        .data(b"a".to_vec())
        .build()
        .unwrap();
    let sem_b = InterProcessSemaphoreV2::builder(&b, "/sem/n", 3)
        .build()
        .unwrap();

    let two = sem_a.acquire(2).await.unwrap();
    assert_eq!(two.len(), 2);
    for lease in &two {
        let name = lease.node_name();
        assert!(
            lease.path().starts_with("/sem/n/leases/_c_"),
            "{}",
            lease.path()
        );
        assert_eq!(&name[39..46], "-lease-", "{name}");
        assert!(name[46..].bytes().all(|c| c.is_ascii_digit()) && name.len() == 56);
        assert_eq!(&lease.data().await.unwrap()[..], b"a");
    }
    let nodes = sem_b.participant_nodes().await.unwrap();
    let paths: Vec<String> = two.iter().map(|l| l.path().to_string()).collect();
    assert_eq!(nodes, paths, "participants, oldest first");
    // The mutex is not held between acquires.
    assert_eq!(children(&a, "/sem/n/locks").await, 0);

    // 2 + 2 > 3: b gets one lease, times out on the second, and gives the first back.
    let got = sem_b
        .try_acquire(2, Duration::from_millis(300))
        .await
        .unwrap();
    assert!(got.is_none());
    assert_eq!(children(&a, "/sem/n/leases").await, 2, "a lease kept");
    // One fits.
    let one = sem_b
        .try_acquire(1, Duration::from_millis(300))
        .await
        .unwrap()
        .expect("one lease left");
    assert!(sem_b
        .try_acquire_one(Duration::ZERO)
        .await
        .unwrap()
        .is_none());
    InterProcessSemaphoreV2::return_all(two).await.unwrap();
    InterProcessSemaphoreV2::return_all(one).await.unwrap();
    assert!(sem_b.acquire(0).await.is_err(), "zero leases is an error");
    eventually("all nodes gone", || async {
        children(&a, "/sem/n/leases").await == 0 && children(&a, "/sem/n/locks").await == 0
    })
    .await;
}

#[tokio::test]
async fn shared_count_raised_lets_a_waiter_in() {
    let zk = TestingServer::start().unwrap();
    let (a, b) = (connect(&zk).await, connect(&zk).await);
    let count = "/sem/config/max";
    let sem_a = InterProcessSemaphoreV2::builder(
        &a,
        "/sem/shared",
        zkrs_recipes::lock::MaxLeases::shared_count(count, 1),
    )
    .build()
    .unwrap();
    let sem_b = InterProcessSemaphoreV2::builder(
        &b,
        "/sem/shared",
        zkrs_recipes::lock::MaxLeases::shared_count(count, 1),
    )
    .build()
    .unwrap();

    let held = sem_a.acquire_one().await.unwrap();
    // The count node was made from the seed, in Curator's format.
    let (data, _) = a.get_data(count).await.unwrap();
    assert_eq!(&data[..], &[0, 0, 0, 1]);
    assert_eq!(sem_b.max_leases().await.unwrap(), 1);

    let waiter = tokio::spawn({
        let sem_b = sem_b.clone();
        async move { sem_b.acquire_one().await.unwrap() }
    });
    // The waiter's lease node is there, over the limit: it is waiting.
    eventually("waiter's lease node", || async {
        children(&a, "/sem/shared/leases").await == 2
    })
    .await;
    assert!(!waiter.is_finished(), "2 leases out of 1");

    a.set_data(count, &encode_count(2), None).await.unwrap();
    let second = within("waiter after the count was raised", waiter)
        .await
        .unwrap();
    assert!(held.is_held() && second.is_held());
    assert_eq!(sem_a.max_leases().await.unwrap(), 2);
    assert_eq!(decode_count(&encode_count(2)), Some(2));

    // Lowering the count takes no lease back, but keeps newcomers out.
    a.set_data(count, &encode_count(0), None).await.unwrap();
    assert!(held.is_held());
    held.release().await.unwrap();
    let late = sem_a.try_acquire_one(Duration::from_millis(300)).await;
    assert!(late.unwrap().is_none());
    second.release().await.unwrap();
}

#[tokio::test]
async fn dropped_acquires_leave_no_node() {
    let zk = TestingServer::start().unwrap();
    let (a, b, c) = (connect(&zk).await, connect(&zk).await, connect(&zk).await);
    let sem_a = InterProcessSemaphoreV2::builder(&a, "/sem/drop", 1)
        .build()
        .unwrap();
    let sem_b = InterProcessSemaphoreV2::builder(&b, "/sem/drop", 1)
        .build()
        .unwrap();
    let sem_c = InterProcessSemaphoreV2::builder(&c, "/sem/drop", 1)
        .build()
        .unwrap();
    let held = sem_a.acquire_one().await.unwrap();

    // b waits for a lease (holding the semaphore's mutex), c waits for the mutex.
    let task_b = tokio::spawn({
        let sem_b = sem_b.clone();
        async move { sem_b.acquire_one().await }
    });
    eventually("b waits for a lease", || async {
        children(&a, "/sem/drop/leases").await == 2
    })
    .await;
    let task_c = tokio::spawn({
        let sem_c = sem_c.clone();
        async move { sem_c.acquire_one().await }
    });
    eventually("c waits for the mutex", || async {
        children(&a, "/sem/drop/locks").await == 2
    })
    .await;
    task_b.abort();
    task_c.abort();
    assert!(task_b.await.unwrap_err().is_cancelled());
    assert!(task_c.await.unwrap_err().is_cancelled());
    // A timed-out future, dropped by `timeout`.
    let dropped = tokio::time::timeout(Duration::from_millis(300), sem_b.acquire_one()).await;
    assert!(dropped.is_err());
    eventually("abandoned nodes deleted", || async {
        children(&a, "/sem/drop/leases").await == 1 && children(&a, "/sem/drop/locks").await == 0
    })
    .await;
    assert_eq!(
        sem_c.participant_nodes().await.unwrap(),
        vec![held.path().to_string()]
    );

    // Nothing left to block the next taker.
    held.release().await.unwrap();
    let next = within("lease after the holder left", sem_c.acquire_one())
        .await
        .unwrap();
    next.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_mutex_excludes() {
    let zk = TestingServer::start().unwrap();
    let inside = Arc::new(AtomicUsize::new(0));
    let counter = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let connect = zk.connect_string();
        let (inside, counter) = (inside.clone(), counter.clone());
        tasks.push(tokio::spawn(async move {
            let client = Client::connect(&connect).await.unwrap();
            let mutex = InterProcessSemaphoreMutex::builder(&client, "/sem/mutex")
                .build()
                .unwrap();
            for _ in 0..3 {
                let lease = mutex.acquire().await.unwrap();
                assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                let n = counter.load(Ordering::SeqCst);
                tokio::task::yield_now().await;
                counter.store(n + 1, Ordering::SeqCst);
                inside.fetch_sub(1, Ordering::SeqCst);
                lease.release().await.unwrap();
            }
            client.close().await.unwrap();
        }));
    }
    for t in tasks {
        within("semaphore mutex task", t).await.unwrap();
    }
    assert_eq!(counter.load(Ordering::SeqCst), 18, "an update was lost");

    let (a, b) = (connect(&zk).await, connect(&zk).await);
    let held = InterProcessSemaphoreMutex::builder(&a, "/sem/mutex")
        .build()
        .unwrap()
        .acquire()
        .await
        .unwrap();
    assert!(held.path().starts_with("/sem/mutex/leases/_c_"));
    let other = InterProcessSemaphoreMutex::builder(&b, "/sem/mutex")
        .build()
        .unwrap();
    let got = other.try_acquire(Duration::from_millis(300)).await.unwrap();
    assert!(got.is_none());
    assert_eq!(
        other.participant_nodes().await.unwrap(),
        vec![held.path().to_string()]
    );
    drop(held); // released in the background
    let got = within("hand-off", other.acquire()).await.unwrap();
    assert!(got.is_held());
}
