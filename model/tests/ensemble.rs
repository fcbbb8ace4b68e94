//! The ensemble model against ZooKeeper's guarantees: writes are linearizable (one order, every
//! member converges to it), a session reads its own writes, a lagging follower answers from
//! the past until `sync`, acknowledged writes survive a leader crash, and a member cut off or a
//! lost quorum stops service. Each test checks a property a broken model would violate.

use std::time::Instant;

use zkrs_codec::{CreateMode, ErrorCode};
use zkrs_model::{EnsembleError, EnsembleWrite, OperationEnsemble};

fn create(path: &str, data: &[u8]) -> EnsembleWrite {
    EnsembleWrite::Create {
        path: path.into(),
        data: Some(data.to_vec()),
        mode: CreateMode::Persistent,
    }
}

fn set(path: &str, data: &[u8]) -> EnsembleWrite {
    EnsembleWrite::SetData {
        path: path.into(),
        data: Some(data.to_vec()),
        version: -1,
    }
}

fn data(e: &OperationEnsemble, member: usize, path: &str) -> Option<Vec<u8>> {
    e.read(member, path).unwrap().and_then(|(d, _)| d)
}

#[test]
fn a_lagging_follower_reads_the_past_until_sync() {
    let mut e = OperationEnsemble::new(3, Instant::now());
    let s = e.open_session(0).unwrap();
    e.catch_up_all();
    // Writes through the leader; follower 2 applies nothing meanwhile.
    e.write(0, s, create("/cfg", b"v1")).unwrap();
    let ack = e.write(0, s, set("/cfg", b"v2")).unwrap();
    assert_eq!(ack.result.as_ref().unwrap().1.unwrap().version, 1);
    assert_eq!(
        data(&e, 2, "/cfg"),
        None,
        "a follower that applied nothing is behind"
    );
    e.replicate(2, 1);
    assert_eq!(
        data(&e, 2, "/cfg"),
        Some(b"v1".to_vec()),
        "one transaction later: the old value"
    );
    // sync, then read: every write acknowledged before the sync is there.
    let synced = e.sync(2).unwrap();
    assert!(synced >= ack.zxid);
    assert_eq!(data(&e, 2, "/cfg"), Some(b"v2".to_vec()));
}

#[test]
fn a_session_reads_its_own_writes_on_a_lagging_follower() {
    let mut e = OperationEnsemble::new(3, Instant::now());
    let s = e.open_session(1).unwrap();
    let other = e.open_session(0).unwrap();
    e.write(0, other, create("/a", b"")).unwrap();
    // Follower 1 lags behind /a, but the write it forwards is answered after it applied it,
    // and it applies the log in order: /a is there too.
    let ack = e.write(1, s, create("/b", b"mine")).unwrap();
    assert!(ack.result.is_ok(), "{ack:?}");
    assert_eq!(data(&e, 1, "/b"), Some(b"mine".to_vec()));
    assert!(e.read(1, "/a").unwrap().is_some(), "applied in log order");
    assert!(e.applied_zxid(1) >= ack.zxid);
}

#[test]
fn writes_through_any_member_take_one_order_and_every_member_converges() {
    let mut e = OperationEnsemble::new(5, Instant::now());
    let sessions: Vec<i64> = (0..5).map(|m| e.open_session(m).unwrap()).collect();
    e.write(0, sessions[0], create("/q", b"")).unwrap();
    let mut zxids = Vec::new();
    for round in 0..20 {
        let via = round % 5;
        let out = e
            .write(
                via,
                sessions[via],
                EnsembleWrite::Create {
                    path: "/q/n-".into(),
                    data: Some(vec![round as u8]),
                    mode: CreateMode::PersistentSequential,
                },
            )
            .unwrap();
        let (path, _) = out.result.unwrap();
        // Sequence numbers follow the one order the leader gave.
        assert_eq!(path.unwrap(), format!("/q/n-{round:010}"));
        zxids.push(out.zxid);
        if round % 3 == 0 {
            e.replicate((round + 2) % 5, 2);
        }
    }
    assert!(
        zxids.windows(2).all(|w| w[0] < w[1]),
        "zxids increase: {zxids:?}"
    );
    e.catch_up_all();
    let reference: Vec<(String, Option<Vec<u8>>)> = e
        .tree(0)
        .paths()
        .map(|p| (p.to_owned(), e.tree(0).get(p).unwrap().data.clone()))
        .collect();
    for m in 1..5 {
        let tree: Vec<(String, Option<Vec<u8>>)> = e
            .tree(m)
            .paths()
            .map(|p| (p.to_owned(), e.tree(m).get(p).unwrap().data.clone()))
            .collect();
        assert_eq!(tree, reference, "member {m} differs after catching up");
    }
}

#[test]
fn acknowledged_writes_survive_a_leader_crash_and_the_new_epoch_orders_after_them() {
    let mut e = OperationEnsemble::new(3, Instant::now());
    let s = e.open_session(1).unwrap();
    let ack = e.write(1, s, create("/kept", b"x")).unwrap();
    assert_eq!(e.leader(), 0);
    e.crash(0);
    assert_ne!(e.leader(), 0, "a new leader is elected");
    let leader = e.leader();
    assert_eq!(
        data(&e, leader, "/kept"),
        Some(b"x".to_vec()),
        "the committed write survived"
    );
    let next = e.write(leader, s, set("/kept", b"y")).unwrap();
    assert!(next.zxid > ack.zxid, "the new epoch's zxids are larger");
    assert_eq!(next.zxid >> 32, (ack.zxid >> 32) + 1);
    e.restart(0);
    assert_eq!(
        data(&e, 0, "/kept"),
        Some(b"y".to_vec()),
        "a restarted member catches up"
    );
}

#[test]
fn a_partitioned_member_stops_serving_and_a_lost_quorum_stops_writes() {
    let mut e = OperationEnsemble::new(3, Instant::now());
    let s = e.open_session(0).unwrap();
    e.partition(2);
    assert_eq!(e.read(2, "/").unwrap_err(), EnsembleError::NotServing);
    assert!(
        e.write(0, s, create("/x", b"")).is_ok(),
        "two of three still form a quorum"
    );
    e.partition(1);
    assert_eq!(
        e.write(0, s, create("/y", b"")).unwrap_err(),
        EnsembleError::NoQuorum
    );
    e.heal(1);
    e.heal(2);
    assert!(e.write(2, s, create("/y", b"")).is_ok());
    assert!(
        e.read(2, "/x").unwrap().is_some(),
        "a healed member caught up"
    );
}

#[test]
fn a_closed_session_takes_its_ephemerals_on_every_member() {
    let mut e = OperationEnsemble::new(3, Instant::now());
    let s = e.open_session(2).unwrap();
    let out = e
        .write(
            2,
            s,
            EnsembleWrite::Create {
                path: "/lock".into(),
                data: Some(vec![]),
                mode: CreateMode::Ephemeral,
            },
        )
        .unwrap();
    assert_eq!(out.result.unwrap().1.unwrap().ephemeral_owner, s);
    let failed = e.write(2, s, create("/lock/child", b"")).unwrap();
    assert_eq!(
        failed.result.unwrap_err(),
        ErrorCode::NoChildrenForEphemerals
    );
    e.close_session(1, s).unwrap();
    e.catch_up_all();
    for m in 0..3 {
        assert!(
            e.read(m, "/lock").unwrap().is_none(),
            "member {m} still has the ephemeral"
        );
    }
}
