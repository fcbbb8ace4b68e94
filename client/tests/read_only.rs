//! Read-only mode against a real ensemble: a member cut off from its quorum serves reads
//! (readonlymode.enabled), a client that allows it reads there, and moves to a read-write
//! server once the quorum returns (it looks for one with the `isro` probe).
//!
//! What ZooKeeper 3.8 itself requires, learned here: a read-only server creates sessions only
//! when `localSessionsEnabled=true` (otherwise createSession is refused with NotReadOnly), it
//! never resumes a global session, and it serves the data it reloads from disk, so a client
//! that has seen a later zxid is refused (no going back in time).

use std::time::Duration;

use zkrs_client::{ClientBuilder, ConnectionState, CreateMode, ErrorCode, StateChanges};
use zkrs_testkit::{ServerOptions, TestingCluster};

async fn wait_for_state(
    changes: &mut StateChanges,
    what: &str,
    done: impl Fn(ConnectionState) -> bool,
) {
    let deadline = Duration::from_secs(60);
    tokio::time::timeout(deadline, async {
        loop {
            match changes.next().await {
                Some(c) if done(c.state) => return,
                Some(_) => {}
                None => panic!("client gone while waiting for {what}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what} not reached within {deadline:?}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_from_a_read_only_member_then_back_to_read_write() {
    let options = ServerOptions::new()
        .read_only_mode(true)
        .config("localSessionsEnabled", "true")
        .max_session_timeout_ms(20_000);
    let cluster = TestingCluster::start_with(3, options).unwrap();
    let leader = cluster.wait_for_leader(Duration::from_secs(30)).unwrap();
    let survivor = (leader + 1) % 3;
    cluster
        .wait_serving(survivor, Duration::from_secs(30))
        .unwrap();
    let others: Vec<usize> = (0..3).filter(|&i| i != survivor).collect();
    for &i in &others {
        cluster.kill(i).unwrap();
    }

    // A client that accepts read-only servers gets a session from the survivor.
    let client = ClientBuilder::new(cluster.connect_string())
        .can_be_read_only(true)
        .session_timeout(Duration::from_secs(15))
        .connect_timeout(Duration::from_secs(60))
        .connect()
        .await
        .unwrap();
    assert_eq!(client.state(), ConnectionState::ReadOnly);
    // A brand-new client: its last zxid is the survivor's own, so it is not refused.
    assert!(client.exists("/zookeeper").await.unwrap().is_some());
    let err = client
        .create("/ro", b"", CreateMode::Persistent)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NotReadOnly), "{err}");

    // The quorum returns: the client finds a read-write server and writes again.
    let mut changes = client.state_changes();
    for &i in &others {
        cluster.start_member(i).unwrap();
    }
    wait_for_state(&mut changes, "read-write", |s| {
        matches!(s, ConnectionState::Reconnected | ConnectionState::Connected)
    })
    .await;
    client
        .create("/ro", b"", CreateMode::Persistent)
        .await
        .unwrap();
    client.close().await.unwrap();
}
