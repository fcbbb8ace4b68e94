//! Barriers against a real server: a barrier holds its waiters until removed (or their
//! timeout); five members of a double barrier enter together and leave together; a timed
//! enter that fails, or a dropped one, leaves no member node behind.

use std::time::Duration;

use zkrs_recipes::barrier::{DistributedBarrier, DistributedDoubleBarrier, READY_NODE};
use zkrs_testkit::TestingServer;

mod support;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_barrier_holds_until_removed() {
    let zk = TestingServer::start().unwrap();
    let a = connect(&zk).await;
    let gate = DistributedBarrier::builder(&a, "/gates/g").build().unwrap();
    assert!(
        gate.wait_on_barrier(Some(Duration::ZERO)).await.unwrap(),
        "not set: open"
    );
    gate.set_barrier().await.unwrap();
    gate.set_barrier().await.unwrap();
    assert!(!gate
        .wait_on_barrier(Some(Duration::from_millis(200)))
        .await
        .unwrap());
    let mut waiters = tokio::task::JoinSet::new();
    for _ in 0..3 {
        let client = connect(&zk).await;
        waiters.spawn(async move {
            DistributedBarrier::builder(&client, "/gates/g")
                .build()
                .unwrap()
                .wait_on_barrier(None)
                .await
                .unwrap()
        });
    }
    // The waiters wait: none is done after a round trip of everyone's.
    assert!(waiters.try_join_next().is_none());
    gate.remove_barrier().await.unwrap();
    gate.remove_barrier().await.unwrap();
    within("every waiter goes on", async {
        while let Some(done) = waiters.join_next().await {
            assert!(done.unwrap());
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_members_enter_together_and_leave_together() {
    let zk = TestingServer::start().unwrap();
    let (in_tx, mut in_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut members = tokio::task::JoinSet::new();
    for i in 0..5 {
        if i == 4 {
            // Four are waiting inside (their nodes exist), and none is let in yet.
            let admin = connect(&zk).await;
            eventually("four members waiting", || async {
                children(&admin, "/phase").await == 4
            })
            .await;
            assert!(
                in_rx.try_recv().is_err(),
                "entered before the fifth arrived"
            );
        }
        let client = connect(&zk).await;
        let in_tx = in_tx.clone();
        members.spawn(async move {
            let barrier = DistributedDoubleBarrier::builder(&client, "/phase", 5)
                .build()
                .unwrap();
            assert!(
                barrier.enter(Some(DEADLINE)).await.unwrap(),
                "member {i} entered"
            );
            in_tx.send(i).unwrap();
            assert!(
                barrier.leave(Some(DEADLINE)).await.unwrap(),
                "member {i} left"
            );
            // Once leave returns, every member is gone.
            let left = client.get_children("/phase").await.unwrap();
            assert!(
                left.iter().all(|n| n == READY_NODE) && left.len() <= 1,
                "{:?}",
                left.to_vec()
            );
        });
    }
    within("all five", async {
        while let Some(done) = members.join_next().await {
            done.unwrap();
        }
    })
    .await;
    let mut entered: Vec<usize> = std::iter::from_fn(|| in_rx.try_recv().ok()).collect();
    entered.sort();
    assert_eq!(entered, [0, 1, 2, 3, 4]);
    let admin = connect(&zk).await;
    assert_eq!(
        children(&admin, "/phase").await,
        0,
        "ready deleted by the leavers"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_or_dropped_enter_leaves_no_member_behind() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let early = DistributedDoubleBarrier::builder(&client, "/b", 3)
        .build()
        .unwrap();
    assert!(!early.enter(Some(Duration::from_millis(300))).await.unwrap());
    eventually("the timed-out member's node goes", || async {
        children(&client, "/b").await == 0
    })
    .await;

    // An enter dropped while waiting.
    let other = connect(&zk).await;
    let dropped = DistributedDoubleBarrier::builder(&other, "/b", 3)
        .build()
        .unwrap();
    let waiting = tokio::time::timeout(Duration::from_millis(300), dropped.enter(None)).await;
    assert!(waiting.is_err(), "nobody else is there");
    eventually("the dropped member's node goes", || async {
        children(&client, "/b").await == 0
    })
    .await;

    // So a later group of three is not let in by a stale member.
    let mut members = tokio::task::JoinSet::new();
    for _ in 0..2 {
        let c = connect(&zk).await;
        members.spawn(async move {
            DistributedDoubleBarrier::builder(&c, "/b", 3)
                .build()
                .unwrap()
                .enter(Some(Duration::from_millis(500)))
                .await
                .unwrap()
        });
    }
    within("two of three", async {
        while let Some(entered) = members.join_next().await {
            assert!(!entered.unwrap(), "only two arrived");
        }
    })
    .await;
    assert!(client.exists("/b/ready").await.unwrap().is_none());
}
