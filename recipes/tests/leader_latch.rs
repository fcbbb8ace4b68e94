//! LeaderLatch against a real server: the seed scenario, and the failure cases of the facts
//! sheet that concern leadership.

use std::time::Duration;

use zkrs_client::{AclEntry, Client, CreateMode, CreateOptions, ErrorCode, ErrorKind};
use zkrs_recipes::leader::{CloseMode, LeaderLatch};
use zkrs_testkit::TestingServer;

mod support;
use support::*;

/// Waits until exactly one of `latches` leads (every one of them having settled on the same
/// leader), and returns its index.
async fn sole_leader(latches: &[LeaderLatch]) -> usize {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let leaders: Vec<usize> = (0..latches.len())
            .filter(|&i| latches[i].is_leader())
            .collect();
        if let [only] = leaders[..] {
            // Every participant must agree on who leads.
            let mut agreed = true;
            for l in latches {
                let leader = l.leader().await.unwrap().expect("a leader");
                agreed &= leader.id == latches[only].id();
            }
            if agreed {
                return only;
            }
        }
        assert!(leaders.len() <= 1, "two leaders at once: {leaders:?}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "no single leader within {DEADLINE:?}"
        );
        // Not settled yet: look again shortly (bounded by the deadline above).
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_latches_one_leader_then_another() {
    let zk = TestingServer::start().unwrap();
    let mut clients = Vec::new();
    let mut latches = Vec::new();
    for i in 0..10 {
        let client = Client::connect(&zk.connect_string()).await.unwrap();
        latches.push(
            LeaderLatch::builder(&client, "/election")
                .id(format!("p{i}"))
                .start()
                .unwrap(),
        );
        clients.push(client);
    }
    let first = sole_leader(&latches).await;
    let participants = latches[0].participants().await.unwrap();
    assert_eq!(participants.len(), 10);
    assert!(participants[0].is_leader && participants.iter().skip(1).all(|p| !p.is_leader));
    for p in &participants {
        assert!(
            p.path.starts_with("/election/_c_") && p.path.contains("-latch-"),
            "{}",
            p.path
        );
    }

    // The leader leaves: exactly one other takes over.
    let leaving = latches.remove(first);
    let mut gone = leaving.events();
    leaving.close_with(CloseMode::NotifyLeader).await.unwrap();
    assert_eq!(
        tokio::time::timeout(DEADLINE, gone.next()).await.unwrap(),
        Some(zkrs_recipes::leader::LeadershipEvent::Lost)
    );
    let second = sole_leader(&latches).await;
    assert_ne!(latches[second].id(), format!("p{first}"));
    assert_eq!(latches[0].participants().await.unwrap().len(), 9);

    // Everyone leaves: no node stays behind.
    for latch in latches {
        latch.close_with(CloseMode::Silent).await.unwrap();
    }
    let left = clients[0].get_children("/election").await.unwrap();
    assert!(left.is_empty(), "nodes left: {:?}", left.to_vec());
}

#[tokio::test]
async fn leader_notices_its_node_deleted_and_rejoins() {
    let zk = TestingServer::start().unwrap();
    let a = Client::connect(&zk.connect_string()).await.unwrap();
    let b = Client::connect(&zk.connect_string()).await.unwrap();
    let la = LeaderLatch::builder(&a, "/e2").id("a").start().unwrap();
    assert!(la.await_leadership_timeout(DEADLINE).await.unwrap());
    let lb = LeaderLatch::builder(&b, "/e2").id("b").start().unwrap();
    let mut a_changes = la.events();
    // Someone deletes the leader's node: a must step down, b must lead.
    let node = la.node_path().unwrap();
    b.delete(&node, None).await.unwrap();
    assert_eq!(
        tokio::time::timeout(DEADLINE, a_changes.next())
            .await
            .unwrap(),
        Some(zkrs_recipes::leader::LeadershipEvent::Lost)
    );
    assert!(lb.await_leadership_timeout(DEADLINE).await.unwrap());
    // a comes back in line behind b, with a new node (a moment after b leads: both react to
    // the same deletion).
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let parts = lb.participants().await.unwrap();
        let ids: Vec<&str> = parts.iter().map(|p| p.id.as_str()).collect();
        if ids == ["b", "a"] {
            break;
        }
        assert!(ids == ["b"], "unexpected line: {ids:?}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "a never rejoined: {ids:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_ne!(la.node_path().unwrap(), node, "a rejoined with a new node");
}

/// A waiting participant watches its own node as well as its predecessor's: when someone
/// deletes its node while the leader still leads, it rejoins at once (before, it noticed
/// only at the hand-off, which it took with the deleted node: it led, then stepped down).
#[tokio::test]
async fn waiter_notices_its_node_deleted_before_the_hand_off() {
    let zk = TestingServer::start().unwrap();
    let a = Client::connect(&zk.connect_string()).await.unwrap();
    let b = Client::connect(&zk.connect_string()).await.unwrap();
    let la = LeaderLatch::builder(&a, "/e4").id("a").start().unwrap();
    assert!(la.await_leadership_timeout(DEADLINE).await.unwrap());
    let lb = LeaderLatch::builder(&b, "/e4").id("b").start().unwrap();
    let mut b_changes = lb.events();
    eventually("b waits behind a", || async {
        la.participants().await.unwrap().len() == 2 && lb.node_path().is_some()
    })
    .await;
    let first = lb.node_path().unwrap();
    a.delete(&first, None).await.unwrap();
    // While a still leads, b is back in line with a new node.
    eventually("b rejoins while a leads", || async {
        let ids: Vec<String> = la
            .participants()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.id)
            .collect();
        ids == ["a", "b"] && lb.node_path().is_some_and(|node| node != first)
    })
    .await;
    assert!(la.is_leader() && !lb.is_leader());
    // The hand-off: b leads once, with its new node, and stays leader.
    la.close().await.unwrap();
    assert!(lb.await_leadership_timeout(DEADLINE).await.unwrap());
    assert_eq!(
        within("b's first event", b_changes.next()).await,
        Some(zkrs_recipes::leader::LeadershipEvent::Gained)
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(300), b_changes.next())
            .await
            .is_err(),
        "b's leadership changed again after the hand-off"
    );
    assert!(lb.is_leader());
}

#[tokio::test]
async fn dropped_latch_leaves_no_node() {
    let zk = TestingServer::start().unwrap();
    let a = Client::connect(&zk.connect_string()).await.unwrap();
    a.create("/e3", b"", CreateMode::Persistent).await.unwrap();
    let latch = LeaderLatch::builder(&a, "/e3").id("x").start().unwrap();
    assert!(latch.await_leadership_timeout(DEADLINE).await.unwrap());
    drop(latch);
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !a.get_children("/e3").await.unwrap().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "node left behind");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn errors_no_retry_can_fix_stop_the_latch_and_say_why() {
    let zk = TestingServer::start().unwrap();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    // An invalid path: refused by `start`, before anything is sent.
    let err = LeaderLatch::builder(&client, "bad/path")
        .id("x")
        .start()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("bad/path"), "{err}");
    // No permission to create under the path.
    let read_only = [AclEntry::read_only()];
    let options = CreateOptions::new(CreateMode::Persistent).acl(&read_only);
    client.create_with("/locked", b"", &options).await.unwrap();
    let latch = LeaderLatch::builder(&client, "/locked")
        .id("x")
        .start()
        .unwrap();
    let err = tokio::time::timeout(DEADLINE, latch.await_leadership())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NoAuth), "{err}");
    assert_eq!(
        latch.failure().and_then(|e| e.code()),
        Some(ErrorCode::NoAuth)
    );
    latch.close_with(CloseMode::Silent).await.unwrap();
    // The client is still fine.
    assert!(client.exists("/locked").await.unwrap().is_some());
}
