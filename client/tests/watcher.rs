//! A `Watcher` gathering many one-shot watches into one stream, against a real server: every
//! watch fires once into it, in the server's order, with the chroot removed; dropping its
//! stream removes the watches it left from the server (also those whose request was still in
//! flight), and leaves every other watch of the session alone.

use std::time::Duration;

use zkrs_client::*;
use zkrs_testkit::{four_letter_word, TestingServer};

const DEADLINE: Duration = Duration::from_secs(10);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {DEADLINE:?}"))
}

/// The paths this session watches on the server (`wchc`).
fn server_watches(zk: &TestingServer, session_id: i64) -> Vec<String> {
    let answer = four_letter_word(zk.address(), "wchc", Duration::from_secs(5)).unwrap();
    let mut ours = false;
    let mut paths = Vec::new();
    for line in answer.lines() {
        if let Some(id) = line.strip_prefix("0x") {
            ours = i64::from_str_radix(id.trim(), 16).ok() == Some(session_id);
        } else if ours && !line.trim().is_empty() {
            paths.push(line.trim().to_string());
        }
    }
    paths.sort();
    paths
}

/// Waits until the session's server-side watches are `want`; on failure, says which the
/// server still had (so a rare failure names the watch that stayed).
async fn server_watches_become(zk: &TestingServer, session_id: i64, want: &[&str]) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let seen = server_watches(zk, session_id);
        if seen == want {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server's watches: still {seen:?} after {DEADLINE:?}, want {want:?}"
        );
        // wchc is a snapshot: look again until the removals have been applied.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_stream_for_many_watches_in_server_order() {
    let zk = TestingServer::start().unwrap();
    let setup = Client::connect(&zk.connect_string()).await.unwrap();
    setup
        .create("/app", b"", CreateMode::Persistent)
        .await
        .unwrap();
    for p in ["/app/a", "/app/b"] {
        setup.create(p, b"", CreateMode::Persistent).await.unwrap();
    }
    let client = Client::connect(&format!("{}/app", zk.connect_string()))
        .await
        .unwrap();
    let (watcher, mut events) = client.watcher();
    client.get_data_with_watcher("/a", &watcher).await.unwrap();
    assert!(client
        .exists_with_watcher("/c", &watcher)
        .await
        .unwrap()
        .is_none());
    let children = client
        .get_children_with_watcher("/", &watcher)
        .await
        .unwrap();
    assert_eq!(children.len(), 2);
    // A failed read leaves no watch and sends nothing into the stream.
    let err = client
        .get_data_with_watcher("/nope", &watcher)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NoNode));

    setup.set_data("/app/a", b"1", None).await.unwrap();
    setup
        .create("/app/c", b"", CreateMode::Persistent)
        .await
        .unwrap();
    setup.set_data("/app/a", b"2", None).await.unwrap();
    let mut got = Vec::new();
    for _ in 0..3 {
        let e = within("an event", events.next()).await.unwrap();
        got.push((e.event_type, e.path));
    }
    assert_eq!(
        got,
        [
            (EventType::NodeDataChanged, "/a".to_string()),
            (EventType::NodeCreated, "/c".to_string()),
            (EventType::NodeChildrenChanged, "/".to_string()),
        ]
    );
    // One-shot: the second change of /a fired nothing.
    client.sync("/").await.unwrap();
    client.exists("/").await.unwrap();
    assert!(events.try_next().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_removes_its_watches_and_only_those() {
    let zk = TestingServer::start().unwrap();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    let session = client.session_id();
    for i in 0..50 {
        client
            .create(&format!("/n{i:02}"), b"", CreateMode::Persistent)
            .await
            .unwrap();
    }
    // Someone else's watch on a path the watcher also watches.
    let (_, _, mine) = client.get_data_and_watch("/n00").await.unwrap();
    let (watcher, events) = client.watcher();
    for i in 0..25 {
        client
            .get_data_with_watcher(&format!("/n{i:02}"), &watcher)
            .await
            .unwrap();
    }
    // And 25 more still in flight when the stream is dropped.
    let mut in_flight = Vec::new();
    for i in 25..50 {
        let (client, watcher) = (client.clone(), watcher.clone());
        in_flight.push(tokio::spawn(async move {
            client
                .get_data_with_watcher(&format!("/n{i:02}"), &watcher)
                .await
        }));
    }
    drop(events);
    for request in in_flight {
        within("a request in flight", request)
            .await
            .unwrap()
            .unwrap();
    }
    server_watches_become(&zk, session, &["/n00"]).await;
    client.set_data("/n00", b"x", None).await.unwrap();
    let event = within("the other watch", mine).await;
    assert_eq!(event.event_type, EventType::NodeDataChanged);
}

/// A watcher left on one path more than once (`getData` twice, `exists` too) hears each
/// notification once, as a Java `Watcher` object passed to those calls does: the Java client
/// gathers the watchers a notification triggers into a set. A notification that ends a watch
/// of every kind at once (the node deleted under a data and a child watch) is heard once too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_left_twice_on_a_path_hears_each_notification_once() {
    let zk = TestingServer::start().unwrap();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    for p in ["/a", "/b"] {
        client.create(p, b"", CreateMode::Persistent).await.unwrap();
    }
    let (watcher, mut events) = client.watcher();
    let (other, mut other_events) = client.watcher();
    client.get_data_with_watcher("/a", &watcher).await.unwrap();
    client.get_data_with_watcher("/a", &watcher).await.unwrap();
    assert!(client
        .exists_with_watcher("/a", &watcher)
        .await
        .unwrap()
        .is_some());
    client.get_data_with_watcher("/a", &other).await.unwrap();
    client.set_data("/a", b"1", None).await.unwrap();
    let first = within("the change of /a", events.next()).await.unwrap();
    assert_eq!(
        (first.event_type, first.path.as_str()),
        (EventType::NodeDataChanged, "/a")
    );
    // Another watcher of the same path hears it too.
    let theirs = within("the other watcher", other_events.next())
        .await
        .unwrap();
    assert_eq!(
        (theirs.event_type, theirs.path.as_str()),
        (EventType::NodeDataChanged, "/a")
    );
    // The next event in the stream is the next notification, not the same one again.
    client.get_data_with_watcher("/b", &watcher).await.unwrap();
    client.set_data("/b", b"1", None).await.unwrap();
    let next = within("the change of /b", events.next()).await.unwrap();
    assert_eq!(
        (next.event_type, next.path.as_str()),
        (EventType::NodeDataChanged, "/b")
    );
    // A delete ends a data and a child watch at once: heard once.
    client.get_data_with_watcher("/b", &watcher).await.unwrap();
    client
        .get_children_with_watcher("/b", &watcher)
        .await
        .unwrap();
    client.delete("/b", None).await.unwrap();
    let deleted = within("the delete of /b", events.next()).await.unwrap();
    assert_eq!(
        (deleted.event_type, deleted.path.as_str()),
        (EventType::NodeDeleted, "/b")
    );
    client.get_data_with_watcher("/a", &watcher).await.unwrap();
    client.set_data("/a", b"2", None).await.unwrap();
    let last = within("the second change of /a", events.next())
        .await
        .unwrap();
    assert_eq!(
        (last.event_type, last.path.as_str()),
        (EventType::NodeDataChanged, "/a")
    );
    assert!(events.try_next().is_none());
}
