//! The caches over a real 3-member ensemble under faults: the member a cache's session uses
//! is killed and restarted while another client makes random changes, and a cache's session
//! expires (its only member paused past the session timeout) while changes go on, and a watch
//! notification is swallowed by a black hole. Once the faults stop, every cache equals a
//! fresh read. Seeds are printed (replay with ZKR_SEED).

use std::time::Duration;

use tokio::task::block_in_place;
use zkrs_client::{Client, ConnectionState, CreateMode};
use zkrs_recipes::cache::{CuratorCache, PathChildrenCache, StartMode, TreeCache};
use zkrs_testkit::{four_letter_word, Direction, FaultyProxy, TestingCluster, TestingServer};

mod support;
use support::tree::*;
use support::*;

/// Long enough that a killed member is not taken for a lost session.
const SESSION_TIMEOUT: Duration = Duration::from_secs(15);

async fn client(connect_string: &str, timeout: Duration) -> Client {
    within(
        "connecting",
        Client::builder(connect_string)
            .session_timeout(timeout)
            .connect(),
    )
    .await
    .unwrap()
}

/// The member whose `cons` lists the session.
async fn member_of(cluster: &TestingCluster, session_id: i64) -> usize {
    let needle = format!("sid=0x{session_id:x}");
    within("finding the connected member", async {
        loop {
            let found = block_in_place(|| {
                (0..cluster.len()).find(|&i| {
                    cluster.is_running(i)
                        && four_letter_word(
                            cluster.member_address(i),
                            "cons",
                            Duration::from_secs(2),
                        )
                        .is_ok_and(|a| a.contains(&needle))
                })
            });
            if let Some(i) = found {
                return i;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
}

/// `n` random changes, each retried through connection trouble (an election, a killed
/// member); a retried change may apply twice, which only changes the final state.
async fn changes(writer: &Client, root: &str, rng: &mut Rng, n: usize) {
    for _ in 0..n {
        within("a change", async {
            while let Err(e) = random_change(writer, root, rng).await {
                assert!(e.is_retryable(), "{e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caches_converge_across_kills_and_restarts_of_their_member() {
    let cluster = block_in_place(|| TestingCluster::start(3)).unwrap();
    let all = cluster.connect_string();
    let writer = client(&all, SESSION_TIMEOUT).await;
    writer
        .create("/f", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let cache_client = client(&all, SESSION_TIMEOUT).await;
    let curator = CuratorCache::builder(&cache_client, "/f").start().unwrap();
    let tree_client = client(&all, SESSION_TIMEOUT).await;
    let tree = TreeCache::builder(&tree_client, "/f").start().unwrap();
    let children = PathChildrenCache::builder(&tree_client, "/f")
        .start_mode(StartMode::BuildInitialCache)
        .start()
        .unwrap();
    children.initialized().await.unwrap();
    let mut rng = Rng::from_env("kills and restarts");
    let mut states = cache_client.state_changes();

    for round in 0..2 {
        changes(&writer, "/f", &mut rng, 30).await;
        let member = member_of(&cluster, cache_client.session_id()).await;
        block_in_place(|| cluster.kill(member)).unwrap();
        // The cache notices, and comes back on another member with the same session.
        next_state(&mut states, ConnectionState::Suspended).await;
        changes(&writer, "/f", &mut rng, 30).await;
        let session = next_state(&mut states, ConnectionState::Reconnected).await;
        assert_eq!(
            session,
            cache_client.session_id(),
            "round {round}: same session"
        );
        changes(&writer, "/f", &mut rng, 30).await;
        block_in_place(|| {
            cluster.restart(member)?;
            cluster.wait_serving(member, Duration::from_secs(30))
        })
        .unwrap();
    }
    converges("CuratorCache", &writer, "/f", usize::MAX, || {
        view_of(&curator.snapshot())
    })
    .await;
    converges("TreeCache", &writer, "/f", usize::MAX, || {
        view_of(&tree.snapshot())
    })
    .await;
    children_converge("PathChildrenCache", &writer, "/f", || {
        view_of(&children.snapshot())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caches_converge_after_their_session_expires() {
    const SHORT: Duration = Duration::from_secs(4);
    let cluster = block_in_place(|| TestingCluster::start(3)).unwrap();
    // The caches' sessions use member 0 only; the writer the other two.
    let others = format!(
        "{},{}",
        cluster.member_connect_string(1),
        cluster.member_connect_string(2)
    );
    let writer = client(&others, SESSION_TIMEOUT).await;
    writer
        .create("/e", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let cache_client = client(&cluster.member_connect_string(0), SHORT).await;
    let curator = CuratorCache::builder(&cache_client, "/e").start().unwrap();
    let tree_client = client(&cluster.member_connect_string(0), SHORT).await;
    let tree = TreeCache::builder(&tree_client, "/e").start().unwrap();
    within("builds", async {
        curator.initialized().await.unwrap();
        tree.initialized().await.unwrap();
    })
    .await;
    let mut rng = Rng::from_env("session expiry");
    changes(&writer, "/e", &mut rng, 40).await;

    let mut states = cache_client.state_changes();
    let mut events = curator.events();
    let old = cache_client.session_id();
    block_in_place(|| cluster.pause(0)).unwrap();
    next_state(&mut states, ConnectionState::Lost).await;
    changes(&writer, "/e", &mut rng, 40).await;
    block_in_place(|| cluster.resume(0)).unwrap();
    let new = next_state(&mut states, ConnectionState::Reconnected).await;
    assert_ne!(new, old, "a new session");

    converges("CuratorCache", &writer, "/e", usize::MAX, || {
        view_of(&curator.snapshot())
    })
    .await;
    converges("TreeCache", &writer, "/e", usize::MAX, || {
        view_of(&tree.snapshot())
    })
    .await;
    // The cache said what happened.
    let mut told = Vec::new();
    while let Some(event) = events.try_next() {
        told.push(format!("{event:?}"));
    }
    let lost = told.iter().position(|e| e == "Lost");
    // The last Reconnected: on a server before 3.6 the CuratorCache's first addWatch costs a
    // reconnect of its own, before the expiry.
    let back = told.iter().rposition(|e| e == "Reconnected");
    assert!(
        matches!((lost, back), (Some(l), Some(b)) if l < b),
        "Lost then Reconnected: {told:?}"
    );
}

/// A notification lost in a black hole towards the client, on a connection that outlives
/// the hole (shorter than the read timeout): when the hole heals the proxy closes that
/// connection, as TCP would, the session reconnects, and the cache re-reads and catches up.
/// No client can notice a lost notification on a connection that goes on (the server
/// dropped the watch when it fired), which is why the test kit never lets one go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_catches_up_after_a_black_hole_swallowed_a_notification() {
    let zk = block_in_place(TestingServer::start).unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let writer = client(&zk.connect_string(), SESSION_TIMEOUT).await;
    writer
        .create("/bh", b"", CreateMode::Persistent)
        .await
        .unwrap();
    writer
        .create("/bh/a", b"0", CreateMode::Persistent)
        .await
        .unwrap();
    let cache_client = client(&proxy.connect_string(), SESSION_TIMEOUT).await;
    let session = cache_client.session_id();
    let cache = PathChildrenCache::builder(&cache_client, "/bh")
        .start_mode(StartMode::BuildInitialCache)
        .start()
        .unwrap();
    within("the initial build", cache.initialized())
        .await
        .unwrap();
    let data = |cache: &PathChildrenCache| cache.current("/bh/a").and_then(|d| d.data.clone());
    assert_eq!(data(&cache).as_deref(), Some(&b"0"[..]));
    let watched = || {
        block_in_place(|| server_watches(&zk, session))
            .iter()
            .any(|p| p == "/bh/a")
    };
    eventually("the data watch is set", || async { watched() }).await;

    proxy.black_hole(Direction::ToClient);
    writer.set_data("/bh/a", b"1", None).await.unwrap();
    // The watch fired on the server, and its notification went into the hole.
    eventually("the notification is sent", || async { !watched() }).await;
    proxy.pass(Direction::ToClient);

    eventually("the cache learns of the change", || async {
        data(&cache).as_deref() == Some(&b"1"[..])
    })
    .await;
    assert_eq!(cache_client.session_id(), session, "the session survived");
}
