//! Clients (zkrs-client) on the members of a model ensemble over TCP: a held follower serves
//! the past, its clients' writes and syncs wait for it, watches fire when it applies the
//! change, sessions move between members, and a cut-off or crashed member catches up.

use std::time::Duration;

use tokio::time::timeout;
use zkrs_client::Client;
use zkrs_codec::{CreateMode, EventType};
use zkrs_model::{ServerConfig, TcpEnsemble};

const DEADLINE: Duration = Duration::from_secs(20);
/// How long a request that cannot be answered (its member is held) is given to show it is
/// not answered. The model is deterministic: it cannot answer while held, however long.
const BLOCKED: Duration = Duration::from_millis(150);

async fn connect(connect_string: &str) -> Client {
    timeout(DEADLINE, Client::connect(connect_string))
        .await
        .expect("connect in time")
        .expect("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_follower_serves_the_past_until_it_applies_and_sync_waits_for_it() {
    let ensemble = TcpEnsemble::start(3, ServerConfig::default())
        .await
        .unwrap();
    let leader = connect(&ensemble.addr(0).to_string()).await;
    let follower = connect(&ensemble.addr(2).to_string()).await;
    leader
        .create("/cfg", b"v1", CreateMode::Persistent)
        .await
        .unwrap();
    follower.sync("/cfg").await.unwrap();
    let (data, _, watch) = follower.get_data_and_watch("/cfg").await.unwrap();
    assert_eq!(&data[..], b"v1");

    ensemble.with_ensemble(|e, _| e.hold(2)).await.unwrap();
    leader.set_data("/cfg", b"v2", None).await.unwrap();
    let (data, _) = follower.get_data("/cfg").await.unwrap();
    assert_eq!(&data[..], b"v1", "a held follower answers from the past");
    let lag = ensemble
        .with_ensemble(|e, _| (e.applied_zxid(2), e.committed_zxid()))
        .await
        .unwrap();
    assert!(lag.0 < lag.1, "follower behind: {lag:?}");

    let sync = {
        let follower = follower.clone();
        tokio::spawn(async move { follower.sync("/cfg").await })
    };
    let mut sync = sync;
    assert!(
        timeout(BLOCKED, &mut sync).await.is_err(),
        "sync answered by a follower that has not caught up"
    );
    ensemble.with_ensemble(|e, _| e.release(2)).await.unwrap();
    timeout(DEADLINE, sync).await.unwrap().unwrap().unwrap();
    let event = timeout(DEADLINE, watch)
        .await
        .expect("the watch fires once applied");
    assert_eq!(event.event_type, EventType::NodeDataChanged);
    let (data, _) = follower.get_data("/cfg").await.unwrap();
    assert_eq!(&data[..], b"v2", "after sync, every acknowledged write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_through_a_held_follower_is_answered_once_it_applied_it() {
    let ensemble = TcpEnsemble::start(3, ServerConfig::default())
        .await
        .unwrap();
    let follower = connect(&ensemble.addr(1).to_string()).await;
    let leader = connect(&ensemble.addr(0).to_string()).await;
    ensemble.with_ensemble(|e, _| e.hold(1)).await.unwrap();
    let mut create = {
        let follower = follower.clone();
        tokio::spawn(async move { follower.create("/mine", b"x", CreateMode::Persistent).await })
    };
    assert!(
        timeout(BLOCKED, &mut create).await.is_err(),
        "answered before applied"
    );
    // Committed meanwhile: the leader sees it.
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let (found, watch) = leader.exists_and_watch("/mine").await.unwrap();
        if found.is_some() {
            break;
        }
        tokio::time::timeout_at(deadline, watch)
            .await
            .expect("committed");
    }
    ensemble
        .with_ensemble(|e, _| e.replicate(1, usize::MAX))
        .await
        .unwrap();
    assert_eq!(
        timeout(DEADLINE, create).await.unwrap().unwrap().unwrap(),
        "/mine"
    );
    let (data, _) = follower.get_data("/mine").await.unwrap();
    assert_eq!(&data[..], b"x", "the session reads its own write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_move_off_cut_off_members_and_a_lost_quorum_stalls_writes() {
    let ensemble = TcpEnsemble::start(3, ServerConfig::default())
        .await
        .unwrap();
    let pair = format!("{},{}", ensemble.addr(1), ensemble.addr(2));
    let client = connect(&pair).await;
    let session = client.session_id();
    client
        .create("/e", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    for m in [1, 2] {
        // Whichever member the client is on, it is cut off once: the session moves.
        ensemble
            .with_ensemble(move |e, _| e.partition(m))
            .await
            .unwrap();
        // A request in flight when the member cut the connection fails (ConnectionLoss);
        // the client reconnects to the other member, where the session goes on.
        let stat = timeout(DEADLINE, async {
            loop {
                match client.exists("/e").await {
                    Ok(stat) => return stat,
                    Err(e) if e.is_retryable() => continue,
                    Err(e) => panic!("exists: {e}"),
                }
            }
        })
        .await
        .expect("the session resumes on another member");
        assert_eq!(stat.unwrap().ephemeral_owner, session);
        ensemble.with_ensemble(move |e, _| e.heal(m)).await.unwrap();
    }
    assert_eq!(client.session_id(), session, "the same session throughout");

    let leader = connect(&ensemble.addr(0).to_string()).await;
    ensemble
        .with_ensemble(|e, _| {
            e.partition(1);
            e.partition(2);
        })
        .await
        .unwrap();
    let mut write = {
        let leader = leader.clone();
        tokio::spawn(async move { leader.create("/q", b"", CreateMode::Persistent).await })
    };
    assert!(
        timeout(BLOCKED, &mut write).await.is_err(),
        "a write without a quorum"
    );
    ensemble.with_ensemble(|e, _| e.heal(2)).await.unwrap();
    timeout(DEADLINE, write).await.unwrap().unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_member_replays_the_log_and_a_closed_session_ends_everywhere() {
    let ensemble = TcpEnsemble::start(3, ServerConfig::default())
        .await
        .unwrap();
    let watcher = connect(&ensemble.addr(0).to_string()).await;
    let owner = connect(&ensemble.addr(2).to_string()).await;
    owner
        .create("/lock", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    owner
        .create("/kept", b"k", CreateMode::Persistent)
        .await
        .unwrap();
    let (_, gone) = watcher.exists_and_watch("/lock").await.unwrap();
    owner.close().await.unwrap();
    assert_eq!(
        timeout(DEADLINE, gone).await.unwrap().event_type,
        EventType::NodeDeleted
    );

    ensemble.with_ensemble(|e, _| e.crash(1)).await.unwrap();
    watcher.set_data("/kept", b"k2", None).await.unwrap();
    let (same, zxids) = ensemble
        .with_ensemble(|e, _| {
            e.restart(1);
            let paths = |m: usize| -> Vec<String> {
                e.member(m).tree().paths().map(str::to_owned).collect()
            };
            (
                paths(1) == paths(0),
                (e.applied_zxid(1), e.committed_zxid()),
            )
        })
        .await
        .unwrap();
    assert!(same, "the restarted member has the leader's tree");
    assert_eq!(zxids.0, zxids.1, "and every committed transaction");
    let reader = connect(&ensemble.addr(1).to_string()).await;
    assert_eq!(&reader.get_data("/kept").await.unwrap().0[..], b"k2");
    assert!(reader.exists("/lock").await.unwrap().is_none());
}
