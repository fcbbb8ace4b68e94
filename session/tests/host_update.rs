//! The host list changing under a live session (`Session::update_hosts`), on virtual time
//! against a scripted server: a client whose host stays keeps its connection (renumbered);
//! one whose host left moves at once and resumes its session on the new host.

#[path = "support/fake_server.rs"]
mod fake_server;

use fake_server::*;
use zkrs_session::{ConnectionState, Event, HostChange};

fn connected_on_two_hosts() -> (Sim, usize) {
    let mut sim = Sim::new(config(2, 4_000));
    let host = match sim.events().as_slice() {
        [Event::Connect { host, .. }] => *host,
        other => panic!("{other:?}"),
    };
    sim.s.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(4_000, 0x51, &[7; 16], false);
    sim.events();
    assert_eq!(sim.s.current_host(), Some(host));
    (sim, host)
}

#[test]
fn a_client_whose_host_stays_keeps_its_connection() {
    let (mut sim, host) = connected_on_two_hosts();
    let other = 1 - host;
    // The same two hosts, listed the other way round.
    let mut kept = vec![None; 2];
    kept[0] = Some(other);
    kept[1] = Some(host);
    let moved = sim.s.update_hosts(
        &kept,
        vec!["b".into(), "a".into()],
        HostChange::Rebalance,
        sim.now,
    );
    assert!(!moved);
    assert!(sim.events().is_empty(), "no disconnect, no state change");
    assert_eq!(
        sim.s.current_host(),
        Some(1),
        "renumbered into the new list"
    );
    assert_eq!(sim.s.state(), ConnectionState::Connected);
}

#[test]
fn a_client_whose_host_left_moves_at_once_and_keeps_its_session() {
    let (mut sim, host) = connected_on_two_hosts();
    let other = 1 - host;
    // Only the other host is left, and one new host.
    let moved = sim.s.update_hosts(
        &[Some(other), None],
        vec!["b".into(), "c".into()],
        HostChange::Rebalance,
        sim.now,
    );
    assert!(moved);
    let events = sim.events();
    assert!(
        matches!(events.first(), Some(Event::Disconnect)),
        "{events:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::State(c) if c.state == ConnectionState::Suspended)));
    // As many hosts as before, the current one gone: p_old = 1 * (2 - 2) / ... = 0, so the
    // new host (index 1) first.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Connect { host: 1, .. })),
        "{events:?}"
    );
    assert_eq!(
        sim.s
            .last_connection_failure()
            .map(ToString::to_string)
            .as_deref(),
        Some("the host list changed: moving to another host to even the load")
    );
    sim.s.handle_connected(sim.now);
    let req = sim.take_connect_request();
    assert_eq!((req.session_id, req.passwd), (0x51, vec![7; 16]));
    sim.respond_connect(4_000, 0x51, &[7; 16], false);
    let events = sim.events();
    assert!(events.iter().any(
        |e| matches!(e, Event::State(c) if c.state == ConnectionState::Reconnected && c.session_id == 0x51)
    ));
}

#[test]
fn an_empty_list_is_ignored() {
    let (mut sim, host) = connected_on_two_hosts();
    assert!(!sim
        .s
        .update_hosts(&[], Vec::new(), HostChange::Rebalance, sim.now));
    assert!(sim.events().is_empty());
    assert_eq!(sim.s.current_host(), Some(host));
}

/// The fuzz harness's invariants (every token answered once, no event after `Closed`,
/// `Connect` only to a host of the current list, legal state transitions, no timer in the
/// past) over random scripts in which the host list changes and the client detaches.
#[test]
fn random_scripts_with_host_changes_keep_the_invariants() {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..20_000 {
        let len = 3 + (next() % 200) as usize;
        let mut script: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        // Make the host changes frequent: many action bytes 0x2d (update) or 0x4d (detach).
        for i in (3..len).step_by(7) {
            if next() % 3 == 0 {
                script[i] = if next() % 8 == 0 { 0x4d } else { 0x2d };
            }
        }
        zkrs_session::fuzzing::session_with_host_updates(&script);
    }
}

#[test]
fn a_replacing_host_change_never_draws_a_move_away_from_a_kept_host() {
    // Rebalance moves a client of 2 hosts given 8 (6 added) with probability 3/4;
    // Replace never does, whatever the seed.
    for seed in 1..=40u64 {
        let mut cfg = config(2, 4_000);
        cfg.seed = seed;
        let mut sim = Sim::new(cfg);
        let host = match sim.events().as_slice() {
            [Event::Connect { host, .. }] => *host,
            other => panic!("{other:?}"),
        };
        sim.s.handle_connected(sim.now);
        sim.take_connect_request();
        sim.respond_connect(4_000, 0x51, &[7; 16], false);
        sim.events();
        let mut kept = vec![None; 8];
        kept[0] = Some(0);
        kept[1] = Some(1);
        let names = (0..8).map(|i| format!("h{i}")).collect();
        assert!(
            !sim.s
                .update_hosts(&kept, names, HostChange::Replace, sim.now),
            "seed {seed}"
        );
        assert!(sim.events().is_empty(), "seed {seed}: no disconnect");
        assert_eq!(sim.s.current_host(), Some(host), "seed {seed}");
    }
    // A client whose host left still moves.
    let (mut sim, host) = connected_on_two_hosts();
    let kept = vec![Some(1 - host), None];
    assert!(sim.s.update_hosts(
        &kept,
        vec!["x".into(), "y".into()],
        HostChange::Replace,
        sim.now
    ));
    assert!(sim.events().iter().any(|e| matches!(e, Event::Disconnect)));
}
