//! PersistentWatcher against a real server: events of the whole subtree, a Reset on every
//! (re)start of the watch, the watch added again on a new session after an expiry (paused
//! server), and close removing it from the server.

use std::time::Duration;

use tokio::task::block_in_place;
use zkrs_client::{AddWatchMode, Client, ConnectionState, CreateMode, EventType};
use zkrs_recipes::cache::{PersistentWatcher, PersistentWatcherEvent};
use zkrs_testkit::TestingServer;

mod support;
use support::*;

async fn next(w: &mut PersistentWatcher, what: &str) -> PersistentWatcherEvent {
    within(what, w.next())
        .await
        .unwrap_or_else(|| panic!("{what}: ended"))
}

/// The next node event (skipping resets), as (type, path).
async fn node_event(w: &mut PersistentWatcher, what: &str) -> (EventType, String) {
    loop {
        if let PersistentWatcherEvent::Event(e) = next(w, what).await {
            return (e.event_type, e.path);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persistent_watch_outlives_its_session() {
    const TIMEOUT: Duration = Duration::from_secs(2);
    let zk = TestingServer::start().unwrap();
    let writer = connect(&zk).await;
    let client = Client::builder(&zk.connect_string())
        .session_timeout(TIMEOUT)
        .connect()
        .await
        .unwrap();
    let mut watcher = PersistentWatcher::builder(&client, "/w", AddWatchMode::PersistentRecursive)
        .start()
        .unwrap();
    let first = next(&mut watcher, "first reset").await;
    if !zk.version().unwrap().at_least(3, 6) {
        // No persistent watches before 3.6: one event that says so, and the stream ends.
        match first {
            PersistentWatcherEvent::Failed(e) => {
                assert_eq!(
                    e.code(),
                    Some(zkrs_client::ErrorCode::Unimplemented),
                    "{e:?}"
                );
                assert!(e.to_string().contains("needs ZooKeeper 3.6"), "{e}");
            }
            other => panic!("not Failed: {other:?}"),
        }
        let end = tokio::time::timeout(Duration::from_secs(10), watcher.next()).await;
        assert!(matches!(end, Ok(None)), "{end:?}");
        return;
    }
    assert!(matches!(first, PersistentWatcherEvent::Reset), "{first:?}");
    writer
        .create("/w", b"", CreateMode::Persistent)
        .await
        .unwrap();
    writer
        .create("/w/a", b"", CreateMode::Persistent)
        .await
        .unwrap();
    assert_eq!(
        node_event(&mut watcher, "create").await,
        (EventType::NodeCreated, "/w".into())
    );
    assert_eq!(
        node_event(&mut watcher, "child").await,
        (EventType::NodeCreated, "/w/a".into())
    );

    // The session expires (the server is paused past the session timeout).
    let mut states = client.state_changes();
    let first = client.session_id();
    block_in_place(|| zk.pause()).unwrap();
    next_state(&mut states, ConnectionState::Lost).await;
    block_in_place(|| zk.resume()).unwrap();
    loop {
        if matches!(
            next(&mut watcher, "reset after the new session").await,
            PersistentWatcherEvent::Reset
        ) {
            break;
        }
    }
    assert_ne!(client.session_id(), first);
    writer.set_data("/w/a", b"x", None).await.unwrap();
    assert_eq!(
        node_event(&mut watcher, "after the expiry").await,
        (EventType::NodeDataChanged, "/w/a".into())
    );

    // Closing removes the watch from the server.
    let session = client.session_id();
    assert_eq!(server_watches(&zk, session), ["/w"]);
    watcher.close().await;
    eventually("the watch is removed", || async {
        server_watches(&zk, session).is_empty()
    })
    .await;
}
