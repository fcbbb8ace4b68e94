//! The host list changing under a live session (`Session::update_hosts`), on virtual time
//! against a scripted server: a client whose host stays keeps its connection (renumbered);
//! one whose host left moves its session to the new host without suspending it (the move
//! protocol itself: `session_move.rs`).

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
    sim.handle_connected(sim.now);
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
fn a_client_whose_host_left_moves_without_suspension_and_keeps_its_session() {
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
    // As many hosts as before, the current one gone: p_old = 1 * (2 - 2) / ... = 0, so the
    // new host (index 1) first. Make before break: a second connection, the first kept.
    let events = sim.events();
    assert!(
        matches!(events.as_slice(), [Event::ConnectSpare { host: 1, .. }]),
        "{events:?}"
    );
    sim.handle_spare_connected(sim.now);
    let events = sim.events();
    assert!(matches!(events.as_slice(), [Event::UseSpare]), "{events:?}");
    let req = sim.take_connect_request();
    assert_eq!((req.session_id, req.passwd), (0x51, vec![7; 16]));
    sim.respond_connect(4_000, 0x51, &[7; 16], false);
    let events = sim.events();
    assert!(
        matches!(
            events.as_slice(),
            [Event::DropRetiring, Event::Moved { host: 1 }]
        ),
        "no state change: {events:?}"
    );
    assert_eq!(sim.s.state(), ConnectionState::Connected);
    assert_eq!((sim.s.session_id(), sim.s.current_host()), (0x51, Some(1)));
}

#[test]
fn a_client_not_connected_yet_moves_the_old_way() {
    let mut sim = Sim::new(config(2, 4_000));
    let host = match sim.events().as_slice() {
        [Event::Connect { host, .. }] => *host,
        other => panic!("{other:?}"),
    };
    // The host being connected to leaves the list: nothing to keep, a new attempt.
    assert!(sim.s.update_hosts(
        &[Some(1 - host), None],
        vec!["b".into(), "c".into()],
        HostChange::Rebalance,
        sim.now,
    ));
    let events = sim.events();
    assert!(
        matches!(events.first(), Some(Event::Disconnect)),
        "{events:?}"
    );
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
/// past, a one-shot watcher notified once, no switch with requests in flight) over random
/// scripts in which the host list changes, the session moves (its spare connection opens or
/// fails, the old one notifies or closes) and the client detaches.
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
        // Make the host changes frequent: many action bytes 0x2d (update), 0x4d (detach) or
        // 0x8d (a step of a move's spare or old connection: opened, failed, a notification
        // on the old one, closed).
        for i in (3..len).step_by(7) {
            if next() % 3 == 0 {
                script[i] = match next() % 8 {
                    0 => 0x4d,
                    1..=3 => 0x8d,
                    _ => 0x2d,
                };
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
        sim.handle_connected(sim.now);
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
    let events = sim.events();
    assert!(
        matches!(events.as_slice(), [Event::ConnectSpare { .. }]),
        "{events:?}"
    );
}
