//! Persistent nodes and group membership against a real server: a node deleted from outside
//! comes back, foreign data stays, a sequential node keeps its first name, a node survives
//! its session's expiry (paused server) and comes back with its data on the new session,
//! TTL nodes with their touch child, and a group's live member list.

use std::time::Duration;

use tokio::task::block_in_place;
use zkrs_client::{ConnectionState, CreateMode, EventStream};
use zkrs_recipes::node::{GroupMember, PersistentNode, PersistentNodeEvent, PersistentTtlNode};
use zkrs_testkit::{ServerOptions, TestingServer};

mod support;
use support::*;

async fn created(events: &mut EventStream<PersistentNodeEvent>) -> String {
    loop {
        match within("a (re)creation", events.next()).await {
            Some(PersistentNodeEvent::Created { path }) => return path,
            Some(_) => {}
            None => panic!("the stream ended"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_deleted_from_outside_comes_back_and_foreign_data_stays() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let other = connect(&zk).await;
    let node = PersistentNode::builder(&client, "/svc/api/me", CreateMode::Ephemeral)
        .data(b"v1")
        .start()
        .unwrap();
    let mut events = node.events();
    assert!(node.wait_for_initial_create(DEADLINE).await.unwrap());
    assert_eq!(created(&mut events).await, "/svc/api/me");
    let (data, stat) = other.get_data("/svc/api/me").await.unwrap();
    assert_eq!(
        (&data[..], stat.ephemeral_owner),
        (&b"v1"[..], client.session_id())
    );

    other.delete("/svc/api/me", None).await.unwrap();
    assert_eq!(created(&mut events).await, "/svc/api/me");
    let (data, _) = other.get_data("/svc/api/me").await.unwrap();
    assert_eq!(&data[..], b"v1");

    // Someone else's write stays (Curator's behaviour): the node is not made again.
    let before = other.exists("/svc/api/me").await.unwrap().unwrap();
    other
        .set_data("/svc/api/me", b"theirs", None)
        .await
        .unwrap();
    node.set_data(b"v2").await.unwrap();
    let (data, stat) = other.get_data("/svc/api/me").await.unwrap();
    assert_eq!(&data[..], b"v2");
    assert_eq!(stat.czxid, before.czxid, "the same node, not a new one");
    assert!(events.try_next().is_none(), "no re-creation");

    node.close().await.unwrap();
    assert!(
        other.exists("/svc/api/me").await.unwrap().is_none(),
        "close deletes it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protected_sequential_node_keeps_its_first_name() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let node = PersistentNode::builder(&client, "/seq/n-", CreateMode::EphemeralSequential)
        .data(b"x")
        .protection(true)
        .start()
        .unwrap();
    let mut events = node.events();
    let first = created(&mut events).await;
    assert!(
        first.starts_with("/seq/_c_") && first.contains("-n-"),
        "{first}"
    );
    client.delete(&first, None).await.unwrap();
    assert_eq!(
        created(&mut events).await,
        first,
        "created again, unsequenced"
    );
    assert_eq!(children(&client, "/seq").await, 1);
    drop(node);
    eventually("a dropped node is deleted", || async {
        children(&client, "/seq").await == 0
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ephemeral_node_survives_its_session_expiry() {
    const TIMEOUT: Duration = Duration::from_secs(2);
    let zk = TestingServer::start().unwrap();
    let client = connect_with_timeout(&zk, TIMEOUT).await;
    let node = PersistentNode::builder(&client, "/live/me", CreateMode::Ephemeral)
        .data(b"mine")
        .start()
        .unwrap();
    let mut events = node.events();
    created(&mut events).await;
    let first = client.session_id();
    let mut states = client.state_changes();

    block_in_place(|| zk.pause()).unwrap();
    next_state(&mut states, ConnectionState::Lost).await;
    block_in_place(|| zk.resume()).unwrap();
    assert_eq!(created(&mut events).await, "/live/me");
    let other = connect(&zk).await;
    let (data, stat) = other.get_data("/live/me").await.unwrap();
    assert_eq!(&data[..], b"mine");
    assert_ne!(client.session_id(), first, "a new session");
    assert_eq!(
        stat.ephemeral_owner,
        client.session_id(),
        "owned by the new session"
    );
    // It stays: the old session's expiry does not take it.
    let (_stat, watch) = other.exists_and_watch("/live/me").await.unwrap();
    other.sync("/").await.unwrap();
    assert!(
        tokio::time::timeout(TIMEOUT * 2, watch).await.is_err(),
        "the node was deleted after the new session created it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ttl_node_with_its_touch_child() {
    let zk = TestingServer::start_with(ServerOptions::new().extended_types(true)).unwrap();
    let client = connect(&zk).await;
    let node = PersistentTtlNode::builder(&client, "/ttl/worker", Duration::from_millis(500))
        .data(b"busy")
        .start()
        .unwrap();
    assert!(node.wait_for_initial_create(DEADLINE).await.unwrap());
    let (data, _) = client.get_data("/ttl/worker").await.unwrap();
    assert_eq!(&data[..], b"busy");
    // Touched every ttl/2: still there after several TTLs.
    let (_, first) = client.get_data("/ttl/worker/touch").await.unwrap();
    eventually("touched again", || async {
        client
            .get_data("/ttl/worker/touch")
            .await
            .unwrap()
            .1
            .version
            > first.version + 2
    })
    .await;
    node.close().await.unwrap();
    assert!(client.exists("/ttl/worker").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_members_see_each_other_come_and_go() {
    let zk = TestingServer::start().unwrap();
    let mut members = Vec::new();
    for id in ["a", "b", "c"] {
        let client = connect(&zk).await;
        let member = GroupMember::builder(&client, "/group")
            .id(id)
            .data(id.as_bytes())
            .start()
            .unwrap();
        member.initialized().await.unwrap();
        members.push(member);
    }
    assert!(GroupMember::builder(&connect(&zk).await, "/group")
        .id("x/y")
        .start()
        .is_err());
    let ids = |m: &GroupMember| m.current_members().into_keys().collect::<Vec<_>>();
    eventually("a sees everyone", || async {
        ids(&members[0]) == ["a", "b", "c"]
    })
    .await;
    members[1].set_this_data(b"b2").await.unwrap();
    eventually("c sees b's new data", || async {
        members[2].current_members()["b"] == b"b2"[..]
    })
    .await;
    members.remove(1).close().await.unwrap();
    eventually("b left", || async { ids(&members[0]) == ["a", "c"] }).await;
    eventually("b left, for c too", || async {
        ids(&members[1]) == ["a", "c"]
    })
    .await;
}
