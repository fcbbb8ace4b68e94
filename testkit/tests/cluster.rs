//! A real three-member ensemble: leader election, failover and rejoin.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::{eventually, pid_alive};
use zkrs_testkit::{four_letter_word, Mode, TestingCluster};

const DEADLINE: Duration = Duration::from_secs(30);

fn modes(cluster: &TestingCluster) -> Vec<Option<Mode>> {
    (0..cluster.len()).map(|i| cluster.member_mode(i)).collect()
}

fn leaders(cluster: &TestingCluster) -> Vec<usize> {
    (0..cluster.len())
        .filter(|&i| cluster.member_mode(i) == Some(Mode::Leader))
        .collect()
}

#[test]
fn ensemble_fails_over_and_members_rejoin() {
    let cluster = TestingCluster::start(3).expect("start ensemble");
    assert_eq!(cluster.len(), 3);
    assert!(!cluster.is_empty());

    // Every member has its own port, and the connect string lists them all.
    let ports: HashSet<u16> = (0..3).map(|i| cluster.member_port(i)).collect();
    assert_eq!(ports.len(), 3);
    let expected: Vec<String> = (0..3).map(|i| cluster.member_connect_string(i)).collect();
    assert_eq!(cluster.connect_string(), expected.join(","));
    for i in 0..3 {
        assert_eq!(
            cluster.member_connect_string(i),
            format!("127.0.0.1:{}", cluster.member_port(i))
        );
        let cfg = std::fs::read_to_string(cluster.member_dir(i).join("data/myid")).unwrap();
        assert_eq!(cfg.trim(), (i + 1).to_string());
    }

    // Exactly one leader, two followers.
    let initial = modes(&cluster);
    assert_eq!(
        initial.iter().filter(|m| **m == Some(Mode::Leader)).count(),
        1,
        "{initial:?}"
    );
    assert_eq!(
        initial
            .iter()
            .filter(|m| **m == Some(Mode::Follower))
            .count(),
        2,
        "{initial:?}"
    );
    let leader = cluster.leader().expect("a leader");
    assert_eq!(initial[leader], Some(Mode::Leader));

    // Kill the leader: another member takes over, the other two serve.
    let old_pid = cluster.member_pid(leader).unwrap();
    cluster.kill(leader).unwrap();
    assert!(!cluster.is_running(leader));
    assert!(!pid_alive(old_pid));
    let new_leader = cluster.wait_for_leader(DEADLINE).expect("a new leader");
    assert_ne!(new_leader, leader);
    for i in (0..3).filter(|&i| i != leader) {
        cluster.wait_serving(i, DEADLINE).unwrap();
        let answer = four_letter_word(cluster.member_address(i), "srvr", DEADLINE).unwrap();
        let mode = Mode::from_srvr(&answer);
        assert!(
            mode == Some(Mode::Leader) || mode == Some(Mode::Follower),
            "member {i}: {answer}"
        );
    }
    assert_eq!(leaders(&cluster), vec![new_leader]);

    // The old leader comes back as a follower.
    cluster.restart(leader).unwrap();
    assert_eq!(cluster.member_mode(leader), Some(Mode::Follower));
    assert_eq!(leaders(&cluster), vec![new_leader]);

    // Pause the current leader (a silent partition): the others elect a new
    // one once the sync limit (2 s) passes without hearing from it.
    cluster.pause(new_leader).unwrap();
    assert!(cluster.is_paused(new_leader));
    eventually(DEADLINE, "a leader other than the paused one", || {
        cluster.leader().is_some_and(|l| l != new_leader)
    });
    // Resumed, it notices it lost its quorum and rejoins as a follower (it
    // may claim leadership for a moment, hence the polling).
    cluster.resume(new_leader).unwrap();
    eventually(DEADLINE, "the resumed member to follow", || {
        cluster.member_mode(new_leader) == Some(Mode::Follower)
    });
    assert_eq!(leaders(&cluster).len(), 1, "{:?}", modes(&cluster));
}

#[test]
fn tiny_ensembles() {
    let err = TestingCluster::start(0).unwrap_err();
    assert!(
        matches!(err, zkrs_testkit::Error::InvalidArgument { .. }),
        "{err:?}"
    );

    // ZooKeeper runs a one-member ensemble in standalone mode.
    let single = TestingCluster::start(1).expect("start");
    assert_eq!(single.member_mode(0), Some(Mode::Standalone));
    assert_eq!(single.connect_string(), single.member_connect_string(0));
    assert_eq!(single.leader(), None);
    let err = single
        .wait_for_leader(Duration::from_millis(200))
        .unwrap_err();
    assert!(err.to_string().contains("Mode: standalone"), "{err}");
}
