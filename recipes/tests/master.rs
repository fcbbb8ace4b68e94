//! MasterElection (one ephemeral node) against a real server: exactly one master, hand-over,
//! resign and rejoin, a deleted node, session loss, and no node left behind.

use std::time::{Duration, Instant};

use zkrs_client::{Client, ConnectionState};
use zkrs_recipes::leader::MasterElection;
use zkrs_testkit::{ServerOptions, TestingServer};

mod support;
use support::*;

/// Waits until exactly one contender is master and the node agrees (its id, its session);
/// fails if two ever are at once. Returns the master's index.
async fn sole_master(contenders: &[(Client, MasterElection)]) -> usize {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let masters: Vec<usize> = (0..contenders.len())
            .filter(|&i| contenders[i].1.is_leader())
            .collect();
        assert!(masters.len() <= 1, "two masters at once: {masters:?}");
        if let [only] = masters[..] {
            let (client, election) = &contenders[only];
            let (data, stat) = client.get_data(election.path()).await.unwrap();
            assert_eq!(&data[..], election.id().as_bytes());
            assert_eq!(stat.ephemeral_owner, client.session_id());
            if contenders
                .iter()
                .all(|(_, e)| e.is_leader() == (e.id() == election.id()))
            {
                return only;
            }
        }
        assert!(Instant::now() < deadline, "no single master in time");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn contenders(zk: &TestingServer, path: &str, n: usize) -> Vec<(Client, MasterElection)> {
    let mut out = Vec::new();
    for i in 0..n {
        let client = Client::connect(&zk.connect_string()).await.unwrap();
        let election = MasterElection::builder(&client, path)
            .id(format!("m{i}"))
            .start()
            .unwrap();
        out.push((client, election));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_one_master_among_five_then_one_new() {
    let zk = TestingServer::start().unwrap();
    let mut all = contenders(&zk, "/master", 5).await;
    let first = sole_master(&all).await;
    assert_eq!(
        all[0].1.leader().await.unwrap().map(|p| p.id).as_deref(),
        Some(all[first].1.id())
    );
    let (_, leaving) = all.remove(first);
    let mut was = leaving.leadership();
    leaving.close().await.unwrap();
    assert!(!was.get());
    let second = sole_master(&all).await;
    assert_ne!(all[second].1.id(), format!("m{first}"));

    // Resign: the master steps down and stays out; another takes over.
    let resigned_id = all[second].1.id().to_string();
    tokio::time::timeout(DEADLINE, all[second].1.resign())
        .await
        .unwrap()
        .unwrap();
    assert!(!all[second].1.is_leader());
    let third = sole_master(&all).await;
    assert_ne!(all[third].1.id(), resigned_id);
    // Rejoined, it contends again: once everyone else leaves, it is master.
    assert!(all[second].1.rejoin());
    assert!(!all[second].1.rejoin());
    let keep = all.remove(second);
    for (_, election) in all.drain(..) {
        election.close().await.unwrap();
    }
    assert!(keep.1.await_leadership_timeout(DEADLINE).await.unwrap());
    // Dropped: the node goes in the background.
    drop(keep.1);
    let deadline = Instant::now() + DEADLINE;
    while keep.0.exists("/master").await.unwrap().is_some() {
        assert!(Instant::now() < deadline, "master node left behind");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn deleted_node_means_a_new_contest() {
    let zk = TestingServer::start().unwrap();
    let all = contenders(&zk, "/jobs/master", 3).await;
    let first = sole_master(&all).await;
    let mut was = all[first].1.leadership();
    all[(first + 1) % 3]
        .0
        .delete("/jobs/master", None)
        .await
        .unwrap();
    tokio::time::timeout(DEADLINE, was.wait_for(|m| !*m))
        .await
        .unwrap()
        .expect("the contender is gone");
    sole_master(&all).await;
    for (_, election) in all {
        election.close().await.unwrap();
    }
}

#[tokio::test]
async fn a_master_whose_session_is_lost_steps_down_and_wins_again_with_the_new_one() {
    let zk = TestingServer::start_with(ServerOptions::new().tick_time_ms(200)).unwrap();
    let client = connect_with_timeout(&zk, Duration::from_secs(1)).await;
    let old_session = client.session_id();
    let election = MasterElection::builder(&client, zkrs_recipes::leader::DEFAULT_MASTER_PATH)
        .id("solo")
        .start()
        .unwrap();
    assert!(election.await_leadership_timeout(DEADLINE).await.unwrap());
    let mut states = client.state_changes();
    zk.pause().unwrap();
    next_state(&mut states, ConnectionState::Suspended).await;
    assert!(!election.is_leader(), "master while suspended");
    next_state(&mut states, ConnectionState::Lost).await;
    assert!(!election.is_leader());
    zk.resume().unwrap();
    // The old session's node may outlive the old session on the server for a moment: it has
    // our id but is not ours, so it must not count. Master again only with the new session.
    assert!(election.await_leadership_timeout(DEADLINE).await.unwrap());
    assert!(election.is_leader());
    assert_ne!(client.session_id(), old_session);
    let (data, stat) = client.get_data("/master").await.unwrap();
    assert_eq!(&data[..], b"solo");
    assert_eq!(stat.ephemeral_owner, client.session_id());
    election.close().await.unwrap();
    assert!(client.exists("/master").await.unwrap().is_none());
}
