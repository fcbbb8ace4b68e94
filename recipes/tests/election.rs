//! LeaderElection (ZooKeeper's own election recipe as a state machine) against a real
//! server: the event order, hand-over, the leader's node deleted, restart, session loss.

use std::time::{Duration, Instant};

use zkrs_client::{Client, ConnectionState};
use zkrs_recipes::{
    framework::ConnectionStatePolicy,
    leader::{ElectionEvent, ElectionState, LeaderElection},
};
use zkrs_testkit::{ServerOptions, TestingServer};

use ElectionEvent::*;

mod support;
use support::*;

/// Collects events until (and including) `last`, failing after the deadline.
async fn events_until(
    events: &mut zkrs_client::EventStream<zkrs_recipes::leader::ElectionEvent>,
    last: ElectionEvent,
) -> Vec<ElectionEvent> {
    let mut seen = Vec::new();
    let collect = async {
        while let Some(event) = events.next().await {
            seen.push(event);
            if event == last {
                return;
            }
        }
    };
    if tokio::time::timeout(DEADLINE, collect).await.is_err() {
        panic!("no {last:?} within {DEADLINE:?}; saw {seen:?}");
    }
    seen
}

const ELECTED: [ElectionEvent; 4] = [
    DetermineStart,
    DetermineComplete,
    ElectedStart,
    ElectedComplete,
];
const READY: [ElectionEvent; 4] = [DetermineStart, DetermineComplete, ReadyStart, ReadyComplete];

fn offer_then(rest: [ElectionEvent; 4]) -> Vec<ElectionEvent> {
    [OfferStart, OfferComplete]
        .into_iter()
        .chain(rest)
        .collect()
}

fn start_then(rest: [ElectionEvent; 4]) -> Vec<ElectionEvent> {
    std::iter::once(Start).chain(offer_then(rest)).collect()
}

#[tokio::test]
async fn three_participants_first_offered_first_elected() {
    let zk = TestingServer::start().unwrap();
    let mut clients = Vec::new();
    let mut elections = Vec::new();
    let mut events = Vec::new();
    for i in 1..=3 {
        let client = Client::connect(&zk.connect_string()).await.unwrap();
        // A started election is only ever obtained from `start` (no second start, no state
        // before START); the builder's stream sees every event from START.
        let builder = LeaderElection::builder(&client, "/election-sm").id(format!("host-{i}"));
        let mut sub = builder.events();
        let election = builder.start().unwrap();
        // Each one settles before the next offers: the order of offers is 1, 2, 3.
        let expected = if i == 1 {
            start_then(ELECTED)
        } else {
            start_then(READY)
        };
        let last = *expected.last().unwrap();
        assert_eq!(events_until(&mut sub, last).await, expected, "host-{i}");
        events.push(sub);
        elections.push(election);
        clients.push(client);
    }
    assert!(elections[0].is_leader());
    assert_eq!(elections[0].state(), ElectionState::Elected);
    assert!(!elections[1].is_leader() && !elections[2].is_leader());
    assert_eq!(elections[1].state(), ElectionState::Ready);
    assert_eq!(
        elections[2]
            .leader()
            .await
            .unwrap()
            .map(|p| p.id)
            .as_deref(),
        Some("host-1")
    );
    let offers = elections[1].offers().await.unwrap();
    assert_eq!(
        offers.iter().map(|o| o.id.as_str()).collect::<Vec<_>>(),
        ["host-1", "host-2", "host-3"]
    );
    for (offer, election) in offers.iter().zip(&elections) {
        assert_eq!(Some(&offer.path), election.node_path().as_ref());
        assert!(offer.path.starts_with("/election-sm/n_"), "{}", offer.path);
    }
    assert!(offers.windows(2).all(|w| w[0].sequence < w[1].sequence));

    // The leader leaves: the next in line is elected; the third keeps watching the second.
    let first = elections.remove(0);
    let mut first_events = events.remove(0);
    let first_client = clients.remove(0);
    first.close().await.unwrap();
    assert_eq!(
        events_until(&mut first_events, StopComplete).await,
        [StopStart, StopComplete]
    );
    assert_eq!(
        events_until(&mut events[0], ElectedComplete).await,
        ELECTED.to_vec()
    );
    assert!(elections[0].is_leader());
    assert_eq!(
        elections[1]
            .leader()
            .await
            .unwrap()
            .map(|p| p.id)
            .as_deref(),
        Some("host-2")
    );
    assert_eq!(elections[1].state(), ElectionState::Ready);
    assert_eq!(events[1].try_next(), None, "the third one was disturbed");

    // Joining again (a new election, same id and session): it offers anew, behind the others.
    let builder = LeaderElection::builder(&first_client, "/election-sm").id("host-1");
    let mut again = builder.events();
    let first = builder.start().unwrap();
    assert_eq!(
        events_until(&mut again, ReadyComplete).await,
        start_then(READY)
    );
    let leader = first.leader().await.unwrap().unwrap();
    assert_eq!(leader.id, "host-2");
    let offers = first.offers().await.unwrap();
    assert_eq!(&offers[0].data[..], b"host-2");
    assert_eq!(leader.path, offers[0].path);

    for election in elections.into_iter().chain([first]) {
        election.close().await.unwrap();
    }
    assert!(child_names(&clients[0], "/election-sm").await.is_empty());
}

#[tokio::test]
async fn leader_whose_node_is_deleted_fails_and_offers_again() {
    let zk = TestingServer::start().unwrap();
    let ca = Client::connect(&zk.connect_string()).await.unwrap();
    let cb = Client::connect(&zk.connect_string()).await.unwrap();
    let builder = LeaderElection::builder(&ca, "/election-del").id("a");
    let mut a_events = builder.events();
    let a = builder.start().unwrap();
    events_until(&mut a_events, ElectedComplete).await;
    let builder = LeaderElection::builder(&cb, "/election-del").id("b");
    let mut b_events = builder.events();
    let b = builder.start().unwrap();
    events_until(&mut b_events, ReadyComplete).await;

    let old = a.node_path().unwrap();
    cb.delete(&old, None).await.unwrap();
    let mut expected = vec![Failed];
    expected.extend(offer_then(READY));
    assert_eq!(events_until(&mut a_events, ReadyComplete).await, expected);
    assert_eq!(
        events_until(&mut b_events, ElectedComplete).await,
        ELECTED.to_vec()
    );
    assert_ne!(a.node_path().unwrap(), old);
    assert!(b.is_leader() && !a.is_leader());

    // Dropped: the node goes in the background.
    drop(a);
    let deadline = Instant::now() + DEADLINE;
    while child_names(&cb, "/election-del").await.len() != 1 {
        assert!(Instant::now() < deadline, "a's node left behind");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    b.close().await.unwrap();
    assert!(child_names(&cb, "/election-del").await.is_empty());
}

/// Freezes the (only) server for longer than the session timeout: the client reports its
/// session lost; the election goes FAILED, then offers again with the new session.
async fn session_loss(policy: ConnectionStatePolicy) {
    let zk = TestingServer::start_with(ServerOptions::new().tick_time_ms(200)).unwrap();
    let client = connect_with_timeout(&zk, Duration::from_secs(1)).await;
    let old_session = client.session_id();
    let builder = LeaderElection::builder(&client, "/election-exp")
        .id("a")
        .policy(policy);
    let mut events = builder.events();
    let election = builder.start().unwrap();
    events_until(&mut events, ElectedComplete).await;
    let old_node = election.node_path().unwrap();

    let mut states = client.state_changes();
    zk.pause().unwrap();
    next_state(&mut states, ConnectionState::Suspended).await;
    match policy {
        // Leadership is not counted on from the moment the connection is suspended.
        ConnectionStatePolicy::Standard => assert!(!election.is_leader()),
        // Session-only: still ELECTED while the session may be alive.
        ConnectionStatePolicy::SessionOnly => {
            assert!(election.is_leader());
            assert_eq!(election.state(), ElectionState::Elected);
        }
        other => panic!("no expectation for {other:?}"),
    }
    next_state(&mut states, ConnectionState::Lost).await;
    assert!(!election.is_leader());
    zk.resume().unwrap();

    // FAILED, a new offer, and (once the old session's node is gone) ELECTED again.
    let seen = events_until(&mut events, OfferComplete).await;
    assert_eq!(seen, [Failed, OfferStart, OfferComplete], "{policy:?}");
    let deadline = Instant::now() + DEADLINE;
    while !election.is_leader() {
        assert!(Instant::now() < deadline, "not elected again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_ne!(client.session_id(), old_session);
    let node = election.node_path().unwrap();
    assert_ne!(node, old_node);
    let stat = client.exists(&node).await.unwrap().unwrap();
    assert_eq!(stat.ephemeral_owner, client.session_id());
    assert!(client.exists(&old_node).await.unwrap().is_none());
    election.close().await.unwrap();
    assert!(child_names(&client, "/election-exp").await.is_empty());
}

#[tokio::test]
async fn session_loss_fails_then_offers_again_standard() {
    session_loss(ConnectionStatePolicy::Standard).await;
}

#[tokio::test]
async fn session_loss_fails_then_offers_again_session_only() {
    session_loss(ConnectionStatePolicy::SessionOnly).await;
}
