//! The facts sheet's connection-loss cases for locks, with the loss put exactly where it hurts
//! by a faulty proxy between the client and a real server:
//! - connection loss during the create: the node was made but its reply lost; after the
//!   reconnect the lock finds and adopts its node (protected name, same session): no orphan,
//!   no second node;
//! - release during a connection loss: the release keeps trying, and the node goes away once
//!   the connection returns, or with the session when it expires (CURATOR-678).

use std::time::Duration;

use zkrs_client::{Client, ClientBuilder, ConnectionState, CreateMode, StateChanges};
use zkrs_recipes::framework::node_name;
use zkrs_recipes::lock::InterProcessMutex;
use zkrs_testkit::{FaultyProxy, TestingServer};

mod support;
use support::*;

/// Polls the server (through `observer`, directly connected) until `dir` has `n` children.
async fn children_become(observer: &Client, dir: &str, n: usize) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let children = observer.get_children(dir).await.unwrap().to_vec();
        if children.len() == n {
            return children;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{dir}: {children:?}, want {n} children"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn state_becomes(changes: &mut StateChanges, state: ConnectionState) {
    within(&format!("{state:?}"), async {
        while let Some(change) = changes.next().await {
            if change.state == state {
                return;
            }
        }
        panic!("client gone before {state:?}");
    })
    .await
}

async fn setup(
    dir: &str,
    session_timeout: Duration,
) -> (TestingServer, FaultyProxy, Client, Client) {
    let zk = TestingServer::start().unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let observer = Client::connect(&zk.connect_string()).await.unwrap();
    observer
        .create("/locks", b"", CreateMode::Persistent)
        .await
        .unwrap();
    observer
        .create(dir, b"", CreateMode::Persistent)
        .await
        .unwrap();
    let client = ClientBuilder::new(proxy.connect_string())
        .session_timeout(session_timeout)
        .connect()
        .await
        .unwrap();
    (zk, proxy, observer, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_loss_during_the_create_adopts_the_node_made() {
    let (_zk, proxy, observer, client) = setup("/locks/create", Duration::from_secs(4)).await;
    let session = client.session_id();
    proxy.mute_replies(true);
    let mutex = InterProcessMutex::builder(&client, "/locks/create")
        .build()
        .unwrap();
    let acquiring = tokio::spawn(async move { mutex.acquire().await });
    // The create reaches the server; its reply never comes back.
    let made = children_become(&observer, "/locks/create", 1).await;
    proxy.heal(); // the connection drops; the next one works
    let guard = within("acquire after the loss", acquiring)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(client.session_id(), session, "the session survived");
    assert_eq!(node_name(guard.path()), made[0], "our node was adopted");
    let now = observer
        .get_children("/locks/create")
        .await
        .unwrap()
        .to_vec();
    assert_eq!(now, made, "no second node");
    guard.release().await.unwrap();
    children_become(&observer, "/locks/create", 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_during_a_partition_deletes_the_node_when_the_connection_returns() {
    let (_zk, proxy, observer, client) = setup("/locks/release", Duration::from_secs(4)).await;
    let guard = InterProcessMutex::builder(&client, "/locks/release")
        .build()
        .unwrap()
        .acquire()
        .await
        .unwrap();
    let node = node_name(guard.path()).to_string();
    let mut changes = client.state_changes();
    proxy.partition();
    let releasing = tokio::spawn(guard.release());
    state_becomes(&mut changes, ConnectionState::Suspended).await;
    // The release cannot have succeeded: the node is still there, and it keeps trying.
    assert_eq!(
        observer
            .get_children("/locks/release")
            .await
            .unwrap()
            .to_vec(),
        [node]
    );
    assert!(
        !releasing.is_finished(),
        "release returned while the node stayed"
    );
    proxy.heal();
    within("release", releasing).await.unwrap().unwrap();
    assert!(client.state().is_connected());
    children_become(&observer, "/locks/release", 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_during_a_long_partition_ends_with_the_session() {
    let (_zk, proxy, observer, client) = setup("/locks/expire", Duration::from_secs(2)).await;
    let guard = InterProcessMutex::builder(&client, "/locks/expire")
        .build()
        .unwrap()
        .acquire()
        .await
        .unwrap();
    let mut changes = client.state_changes();
    proxy.partition();
    let releasing = tokio::spawn(guard.release());
    // The server expires the session: the node goes with it, release or not.
    children_become(&observer, "/locks/expire", 0).await;
    state_becomes(&mut changes, ConnectionState::Lost).await;
    proxy.heal();
    within("release after the session ended", releasing)
        .await
        .unwrap()
        .unwrap();
    assert!(observer
        .get_children("/locks/expire")
        .await
        .unwrap()
        .is_empty());
}
