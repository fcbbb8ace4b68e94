//! Moving a session to another host without suspending it (make before break,
//! `session/src/moving.rs`), on virtual time against a scripted server: the old connection's
//! requests drain before the switch and the new ones wait, in order; a failed move falls
//! back to the old connection; a notification during the switch reaches its watcher once.

#[path = "support/fake_server.rs"]
mod fake_server;

use bytes::BytesMut;
use fake_server::*;
use zkrs_codec::{Decode, ErrorCode, EventType, KeeperState, OpCode, SetWatches};
use zkrs_session::{ConnectionState, Event, HostChange, WatchKind, WatchOp, WatcherId};

/// Connected to one of two hosts (session 0x51); returns the host.
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
    (sim, host)
}

/// The host list loses the current host for a new one (index 1): a move starts.
fn start_move(sim: &mut Sim, host: usize) {
    assert!(sim.s.update_hosts(
        &[Some(1 - host), None],
        vec!["b".into(), "c".into()],
        HostChange::Rebalance,
        sim.now,
    ));
    let events = sim.events();
    assert!(
        matches!(events.as_slice(), [Event::ConnectSpare { host: 1, .. }]),
        "{events:?}"
    );
}

/// No `State` event among `events`.
fn no_state_change(events: &[Event<u32>]) {
    assert!(states(events).is_empty(), "{events:?}");
}

/// Feeds bytes of the old connection (after the switch).
fn feed_retiring(sim: &mut Sim, bytes: &[u8]) {
    let mut buf = BytesMut::from(bytes);
    sim.handle_retiring_read(&mut buf, sim.now);
}

#[test]
fn requests_in_flight_drain_and_requests_made_during_the_move_follow_in_order() {
    let (mut sim, host) = connected_on_two_hosts();
    let a1 = sim.get_data("/a1");
    let a2 = sim.get_data("/a2");
    let sent_a = sim.take_sent();
    assert_eq!(sent_a.len(), 2);
    start_move(&mut sim, host);
    // Before the spare is open, requests still go to the old connection.
    let a3 = sim.get_data("/a3");
    let sent_a3 = sim.take_sent();
    assert_eq!(sent_a3.len(), 1);
    sim.handle_spare_connected(sim.now);
    assert!(sim.events().is_empty(), "no switch with requests in flight");
    // Draining: new requests wait.
    let b1 = sim.get_data("/b1");
    let b2 = sim.get_data("/b2");
    assert!(
        sim.take_bytes().is_empty(),
        "nothing more on the old connection"
    );
    sim.reply_next_zxid(sent_a[0].xid, &get_data_body(b"1"));
    sim.reply_next_zxid(sent_a[1].xid, &get_data_body(b"2"));
    let events = sim.events();
    assert!(reply_of(&events, a1).unwrap().is_ok() && reply_of(&events, a2).unwrap().is_ok());
    assert!(!events.iter().any(|e| matches!(e, Event::UseSpare)));
    let zxid = sim.reply_next_zxid(sent_a3[0].xid, &get_data_body(b"3"));
    let events = sim.events();
    assert!(reply_of(&events, a3).unwrap().is_ok());
    assert!(
        matches!(events.last(), Some(Event::UseSpare)),
        "the switch follows the last reply: {events:?}"
    );
    no_state_change(&events);
    // The new connection: the session, with the last zxid seen.
    let req = sim.take_connect_request();
    assert_eq!(
        (req.session_id, req.passwd, req.last_zxid_seen),
        (0x51, vec![7; 16], zxid)
    );
    sim.respond_connect(4_000, 0x51, &[7; 16], false);
    let events = sim.events();
    assert!(
        matches!(
            events.as_slice(),
            [Event::DropRetiring, Event::Moved { host: 1 }]
        ),
        "{events:?}"
    );
    // Then the requests that waited, in order, with xids after the old connection's.
    let sent_b = sim.take_sent();
    assert_eq!(sent_b.len(), 2, "{sent_b:?}");
    assert!(sent_a3[0].xid < sent_b[0].xid && sent_b[0].xid < sent_b[1].xid);
    sim.reply_next_zxid(sent_b[0].xid, &get_data_body(b"4"));
    sim.reply_next_zxid(sent_b[1].xid, &get_data_body(b"5"));
    let events = sim.events();
    let order: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            Event::Reply { token, result } if result.is_ok() => Some(*token),
            _ => None,
        })
        .collect();
    assert_eq!(order, vec![b1, b2]);
    no_state_change(&events);
    assert_eq!(sim.s.state(), ConnectionState::Connected);
}

#[test]
fn a_spare_that_cannot_connect_leaves_the_session_on_its_connection_and_is_tried_again() {
    let (mut sim, host) = connected_on_two_hosts();
    start_move(&mut sim, host);
    // While the spare is dialed, requests still go to the old connection.
    let during = sim.get_data("/during");
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    // The spare cannot connect (say the new server refuses connections).
    sim.handle_spare_failed(
        Some(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
        sim.now,
    );
    let events = sim.events();
    assert!(
        events.iter().any(|e| matches!(e, Event::DropSpare)),
        "{events:?}"
    );
    no_state_change(&events);
    assert!(sim
        .s
        .last_connection_failure()
        .is_some_and(|f| f.to_string().starts_with("could not connect")));
    sim.reply_next_zxid(sent[0].xid, &get_data_body(b"x"));
    assert!(reply_of(&sim.events(), during).unwrap().is_ok());
    // The old host left the list: the move is tried again, on the next host of the list.
    let retried = events
        .iter()
        .any(|e| matches!(e, Event::ConnectSpare { host: 0, .. }));
    assert!(retried, "{events:?}");
}

#[test]
fn a_handshake_that_fails_after_the_switch_falls_back_to_the_old_connection() {
    let (mut sim, host) = connected_on_two_hosts();
    sim.watch_read(WatchKind::Data, "/w", 9);
    let sent = sim.take_sent();
    sim.reply_next_zxid(sent[0].xid, &get_data_body(b"w"));
    sim.events();
    start_move(&mut sim, host);
    sim.handle_spare_connected(sim.now);
    assert!(matches!(sim.events().as_slice(), [Event::UseSpare]));
    sim.take_connect_request();
    // Requests and an identity made during the switch wait for its outcome.
    let waiting = sim.get_data("/waits");
    sim.s
        .add_auth("digest".into(), b"u:p".into(), Some(777), sim.now);
    // The new server closes the connection instead of answering.
    sim.handle_disconnected(sim.now);
    let events = sim.events();
    assert!(
        matches!(
            events.as_slice(),
            [Event::Disconnect, Event::RestoreRetiring, ..]
        ),
        "{events:?}"
    );
    no_state_change(&events);
    assert_eq!(sim.s.state(), ConnectionState::Connected);
    // Back on the old connection: the identity, then the request that waited.
    let sent = sim.take_sent();
    let ops: Vec<OpCode> = sent.iter().map(|s| s.op).collect();
    assert_eq!(ops, vec![OpCode::Auth, OpCode::GetData], "{sent:?}");
    sim.reply(-4, 0, ErrorCode::Ok, &[]);
    sim.reply_next_zxid(sent[1].xid, &get_data_body(b"x"));
    let events = sim.events();
    assert!(reply_of(&events, 777).unwrap().is_ok());
    assert!(reply_of(&events, waiting).unwrap().is_ok());
    // The old connection still has the watch: its notification comes through.
    sim.notify(EventType::NodeDataChanged, "/w");
    assert_eq!(watch_events(&sim.events()).len(), 1);
}

#[test]
fn a_read_only_new_host_is_given_up() {
    let (mut sim, host) = connected_on_two_hosts();
    start_move(&mut sim, host);
    sim.handle_spare_connected(sim.now);
    sim.events();
    sim.take_connect_request();
    sim.respond_connect(4_000, 0x51, &[7; 16], true);
    let events = sim.events();
    assert!(
        matches!(
            events.as_slice(),
            [Event::Disconnect, Event::RestoreRetiring, ..]
        ),
        "{events:?}"
    );
    no_state_change(&events);
    assert_eq!(
        sim.s
            .last_connection_failure()
            .map(ToString::to_string)
            .as_deref(),
        Some("the host moved to is a read-only server: the session stays where it was")
    );
}

#[test]
fn an_old_connection_that_breaks_before_the_switch_reconnects_as_usual() {
    let (mut sim, host) = connected_on_two_hosts();
    start_move(&mut sim, host);
    sim.handle_disconnected(sim.now);
    let events = sim.events();
    assert!(
        events.iter().any(|e| matches!(e, Event::DropSpare)),
        "{events:?}"
    );
    assert_eq!(states(&events), vec![ConnectionState::Suspended]);
    assert!(!connects(&events).is_empty(), "{events:?}");
}

#[test]
fn a_notification_during_the_switch_reaches_its_watcher_once() {
    let (mut sim, host) = connected_on_two_hosts();
    sim.watch_read(WatchKind::Data, "/changed", 1);
    sim.watch_read(WatchKind::Data, "/quiet", 2);
    let sent = sim.take_sent();
    sim.reply_next_zxid(sent[0].xid, &get_data_body(b"c"));
    let zxid = sim.reply_next_zxid(sent[1].xid, &get_data_body(b"q"));
    sim.events();
    start_move(&mut sim, host);
    sim.handle_spare_connected(sim.now);
    assert!(matches!(sim.events().as_slice(), [Event::UseSpare]));
    sim.take_connect_request();
    // During the handshake, the old server notifies a change (with a ping reply).
    let mut old = notification_frame(
        EventType::NodeDataChanged,
        KeeperState::SyncConnected,
        "/changed",
    );
    old.extend_from_slice(&reply_frame(-2, zxid, ErrorCode::Ok, &[]));
    feed_retiring(&mut sim, &old);
    let first = watch_events(&sim.events());
    assert_eq!(
        first,
        vec![(
            1,
            EventType::NodeDataChanged,
            KeeperState::SyncConnected,
            "/changed".to_string()
        )]
    );
    sim.respond_connect(4_000, 0x51, &[7; 16], false);
    sim.events();
    // SetWatches on the new connection: only the watch still set, from the last zxid.
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].op, OpCode::SetWatches);
    let set = SetWatches::decode_prefix(&sent[0].body).unwrap();
    assert_eq!(set.relative_zxid, zxid);
    assert_eq!(set.data_watches.iter().collect::<Vec<_>>(), vec!["/quiet"]);
    // The new server fires what changed since that zxid (the same change): nobody hears it
    // twice. Later bytes of the old connection are nobody's any more.
    sim.notify(EventType::NodeDataChanged, "/changed");
    feed_retiring(
        &mut sim,
        &notification_frame(
            EventType::NodeDataChanged,
            KeeperState::SyncConnected,
            "/changed",
        ),
    );
    assert!(watch_events(&sim.events()).is_empty());
    // The other watch is live on the new connection.
    sim.notify(EventType::NodeDataChanged, "/quiet");
    assert_eq!(watch_events(&sim.events()).len(), 1);
}

#[test]
fn a_session_with_a_persistent_watch_moves_the_old_way() {
    let (mut sim, host) = connected_on_two_hosts();
    let f = frame(
        OpCode::AddWatch,
        &zkrs_codec::AddWatchRequest {
            path: "/p",
            mode: zkrs_codec::AddWatchMode::Persistent,
        },
    );
    sim.submit_frame(
        OpCode::AddWatch,
        f,
        Some(WatchOp::Register {
            kind: WatchKind::Persistent,
            path: "/p".into(),
            watcher: WatcherId::new(5),
            group: None,
        }),
    );
    let sent = sim.take_sent();
    sim.reply_next_zxid(sent[0].xid, &[]);
    sim.events();
    assert!(sim.s.update_hosts(
        &[Some(1 - host), None],
        vec!["b".into(), "c".into()],
        HostChange::Rebalance,
        sim.now,
    ));
    let events = sim.events();
    assert_eq!(
        states(&events),
        vec![ConnectionState::Suspended],
        "{events:?}"
    );
    assert_eq!(disconnects(&events), 1);
}

/// The fuzz harness's invariants over random scripts built to reach moves: the session is
/// connected first, then requests, replies, notifications, host-list changes and the steps
/// of a move's two connections (spare opened or failed, a notification on the old one, the
/// old one closed) come in random order, with reconnections now and then. Among them: no
/// switch with a request in flight on the old connection, a one-shot watcher notified at
/// most once, legal state transitions (no `Suspended` from a move), every token answered.
#[test]
fn random_scripts_with_moves_keep_the_invariants() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // (action byte, argument bytes), weighted by repetition.
    let connect: &[u8] = &[0x07, 0x03, 0x04];
    for _ in 0..5_000 {
        let mut script = vec![1 | (next() as u8 & 0x0a), 60, next() as u8];
        script.extend_from_slice(connect);
        for _ in 0..(20 + next() % 120) {
            let args = |n: usize, next: &mut dyn FnMut() -> u64| -> Vec<u8> {
                (0..n).map(|_| next() as u8).collect()
            };
            match next() % 16 {
                // Reads (with a one-shot watch or not) and writes; no persistent watch
                // (a session holding one moves the old way).
                0 | 1 => {
                    let ops = [0, 1, 2, 3, 6, 7, 8, 9, 10, 13];
                    let op = ops[(next() % ops.len() as u64) as usize];
                    script.push(0x00);
                    script.push(op | (next() as u8 & 0x10));
                    script.extend(args(3, &mut next));
                }
                // Mostly good answers to the oldest request.
                2..=5 => {
                    script.push(0x02);
                    let mode = next() as u8;
                    script.push(if mode & 0x80 == 0 { mode & 0x07 } else { mode });
                }
                6 => {
                    script.push(0x04);
                    script.extend(args(1, &mut next));
                }
                7 => {
                    script.push(0x2d);
                    script.extend(args(5, &mut next));
                }
                // Mostly: the spare opens; or a notification on the old connection.
                8..=10 => {
                    script.push(0x8d);
                    script.push([0, 0, 0, 0, 1, 2, 2, 3][(next() % 8) as usize]);
                    script.extend(args(1, &mut next));
                }
                // The server answers a handshake (resuming the session asked for).
                11 | 12 => script.extend_from_slice(&[0x03, 0x04]),
                13 => {
                    script.push(0x05);
                    script.push(next() as u8 & 0x3f);
                }
                14 => script.push(0x06),
                _ if next() % 2 == 0 => script.push(0x09),
                _ => script.extend_from_slice(connect),
            }
        }
        zkrs_session::fuzzing::session_with_host_updates(&script);
    }
}

#[test]
fn a_read_only_new_host_with_the_old_connection_gone_is_a_reconnection() {
    let (mut sim, host) = connected_on_two_hosts();
    start_move(&mut sim, host);
    sim.handle_spare_connected(sim.now);
    sim.events();
    sim.take_connect_request();
    sim.handle_retiring_closed(sim.now);
    sim.respond_connect(4_000, 0x51, &[7; 16], true);
    let events = sim.events();
    assert_eq!(
        states(&events),
        vec![ConnectionState::Suspended, ConnectionState::ReadOnly],
        "{events:?}"
    );
    assert_eq!(sim.s.session_id(), 0x51);
}
