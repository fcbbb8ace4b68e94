//! Apache Curator 5.4 (the Java peers of the root crate's `tests/java`) against the model over
//! TCP: a mutex shared with our recipe, a leader latch between two Curator clients, and
//! Curator's three caches following our writes, as `tests/curator_interop.rs` runs them against
//! a real server.

#[path = "../../tests/support/mod.rs"]
mod curator_support;

use std::time::Duration;

use curator_support::{children_until, within, Peer, DEADLINE};
use tokio::time::Instant;
use zkrs_client::Client;
use zkrs_codec::CreateMode;
use zkrs_model::TcpServer;
use zkrs_recipes::lock::InterProcessMutex;

async fn connect(model: &TcpServer) -> Client {
    within("connect", Client::connect(&model.connect_string()))
        .await
        .expect("connect to the model")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curator_and_our_mutex_exclude_each_other_on_the_model() {
    let model = TcpServer::start().await.unwrap();
    let cs = model.connect_string();
    let client = connect(&model).await;
    let path = "/interop/mutex";
    let mutex = InterProcessMutex::builder(&client, path).build().unwrap();
    let guard = within("rust acquire", mutex.acquire()).await.unwrap();

    let mut peer = Peer::start("java-mutex", &["mutex", &cs, path]).await;
    children_until(&client, path, "curator's lock node", |c| c.len() == 2).await;
    peer.assert_silent("curator acquired the mutex rust holds")
        .await;
    guard.release().await.unwrap();
    let theirs = peer.expect("ACQUIRED").await;
    assert!(theirs.starts_with(path), "{theirs}");
    let attempt = mutex.try_acquire(Duration::from_millis(300)).await.unwrap();
    assert!(attempt.is_none(), "rust acquired the mutex curator holds");
    assert_eq!(peer.ask("release", "RELEASED").await, "");
    let guard = within("rust acquire after curator", mutex.acquire())
        .await
        .unwrap();
    guard.release().await.unwrap();
    peer.exit().await;
    children_until(&client, path, "no node left", |c| c.is_empty()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curator_latches_elect_one_leader_on_the_model() {
    let model = TcpServer::start().await.unwrap();
    let cs = model.connect_string();
    let client = connect(&model).await;
    let path = "/interop/latch";
    let mut j1 = Peer::start("java-1", &["latch", &cs, path, "java-1"]).await;
    j1.expect("LEADER").await;
    let mut j2 = Peer::start("java-2", &["latch", &cs, path, "java-2"]).await;
    children_until(&client, path, "java-2's latch node", |c| c.len() == 2).await;
    assert_eq!(
        j2.ask_list("participants", "PARTICIPANTS").await,
        ["java-1", "java-2"]
    );
    assert_eq!(j1.ask("has", "HAS_LEADERSHIP").await, "true");
    assert_eq!(j2.ask("has", "HAS_LEADERSHIP").await, "false");
    j1.ask("close", "CLOSED").await;
    j2.expect("LEADER").await;
    assert_eq!(j2.ask("leader", "LEADER_ID").await, "java-2");
    // java-1 comes back at the end of the line (exit closes a started latch).
    j1.ask("start", "STARTED").await;
    children_until(&client, path, "java-1's new node", |c| c.len() == 2).await;
    assert_eq!(
        j1.ask_list("participants", "PARTICIPANTS").await,
        ["java-2", "java-1"]
    );
    assert_eq!(j1.ask("has", "HAS_LEADERSHIP").await, "false");
    for peer in [j1, j2] {
        peer.exit().await;
    }
    children_until(&client, path, "no latch node left", |c| c.is_empty()).await;
}

/// Asks the peer until its answer satisfies `done` (the caches update on their own threads;
/// there is nothing to wait on but the answer), failing at the deadline.
async fn ask_until(
    peer: &mut Peer,
    command: &str,
    keyword: &str,
    done: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let answer = peer.ask(command, keyword).await;
        if done(&answer) {
            return answer;
        }
        assert!(Instant::now() < deadline, "{command}: still {answer:?}");
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curators_caches_follow_our_writes_on_the_model() {
    let model = TcpServer::start().await.unwrap();
    let cs = model.connect_string();
    let client = connect(&model).await;
    client
        .create("/cache", b"root", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create("/cache/a", b"1", CreateMode::Persistent)
        .await
        .unwrap();

    let mut peer = Peer::start("java-cache", &["cache", &cs, "/cache", "/cache/a"]).await;
    peer.expect("CACHES_READY").await;
    let children = peer.ask("children", "CHILDREN").await;
    assert!(
        children.starts_with("/cache/a:") && children.ends_with(":0:31"),
        "{children}"
    );

    client.set_data("/cache/a", b"2", None).await.unwrap();
    client
        .create("/cache/b", b"", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create("/cache/b/deep", b"x", CreateMode::Persistent)
        .await
        .unwrap();
    ask_until(&mut peer, "node", "NODE", |n| n.ends_with(":1:32")).await;
    ask_until(&mut peer, "children", "CHILDREN", |c| {
        c.contains("/cache/b:")
    })
    .await;
    let view = ask_until(&mut peer, "view", "VIEW", |v| v.contains("/cache/b/deep:")).await;
    assert_eq!(view.split(',').count(), 4, "{view}");

    client.delete("/cache/b/deep", None).await.unwrap();
    client.delete("/cache/a", None).await.unwrap();
    ask_until(&mut peer, "node", "NODE", str::is_empty).await;
    ask_until(&mut peer, "view", "VIEW", |v| v.split(',').count() == 2).await;
    peer.exit().await;
}
