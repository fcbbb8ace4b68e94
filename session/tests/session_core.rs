//! The sans-I/O session core against a scripted fake server, on virtual time: the handshake,
//! pipelining and xid matching, timers, reconnects across hosts, session loss, watches and
//! their re-registration, close, and malformed server bytes.
//!
//! Tests named after a bug reproduce one found by fuzzing or review, since fixed; run
//! them like any other.

#[path = "support/fake_server.rs"]
mod fake_server;

use fake_server::*;
use zkrs_codec::{
    AddWatchMode, AddWatchRequest, AuthPacket, Decode, Encode, EventType, GetDataResponse,
    KeeperState, OpCode, PathWatchRequest, SetWatches, SetWatches2,
};
use zkrs_session::{ConnectionState, ErrorCode, ErrorKind};
use zkrs_session::{Event, WatchKind, WatchOp, WatcherGroup, WatcherId};

use ConnectionState::*;

/// `00000008 fffffffe 0000000b`: a ping (xid -2, opcode 11, no body).
const PING: [u8; 12] = [0, 0, 0, 8, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0x0b];

const PASSWD: [u8; 16] = [0xAB; 16];

fn err_of(events: &[Event<u32>], token: u32) -> zkrs_session::Error {
    match reply_of(events, token) {
        Some(Err(e)) => e.clone(),
        Some(Ok(r)) => panic!("token {token} succeeded: {r:?}"),
        None => panic!("token {token} not answered in {events:?}"),
    }
}

fn ok_of(events: &[Event<u32>], token: u32) -> zkrs_session::Reply {
    match reply_of(events, token) {
        Some(Ok(r)) => r.clone(),
        Some(Err(e)) => panic!("token {token} failed: {e}"),
        None => panic!("token {token} not answered in {events:?}"),
    }
}

fn unused(events: &[Event<u32>]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::WatcherUnused(w) => Some(w.get()),
            _ => None,
        })
        .collect()
}

fn state_changes(events: &[Event<u32>]) -> Vec<(ConnectionState, i64)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::State(c) => Some((c.state, c.session_id)),
            _ => None,
        })
        .collect()
}

/// Lets time run until a Connect event comes (at most `within_ms`); returns its host.
fn next_connect(sim: &mut Sim, within_ms: u64) -> (usize, Vec<Event<u32>>) {
    let end = sim.offset(sim.now).as_millis() as u64 + within_ms;
    let mut all = Vec::new();
    loop {
        let ev = sim.events();
        let c = connects(&ev);
        all.extend(ev);
        if let Some(&(host, _)) = c.first() {
            return (host, all);
        }
        let next = sim.s.poll_timeout().expect("a timer");
        let next_ms = sim.offset(next).as_millis() as u64;
        assert!(next_ms <= end, "no Connect within {within_ms} ms");
        sim.run_until(next_ms.max(sim.offset(sim.now).as_millis() as u64));
    }
}

/// Reconnects (after a Disconnect) to whichever host comes next and completes the handshake
/// resuming `session_id`; returns the ConnectRequest and the events.
fn reconnect(sim: &mut Sim, session_id: i64, timeout_ms: i32) -> (ConnectReq, Vec<Event<u32>>) {
    let (_, mut events) = next_connect(sim, 5_000);
    sim.handle_connected(sim.now);
    let req = sim.take_connect_request();
    sim.respond_connect(timeout_ms, session_id, &PASSWD, false);
    events.extend(sim.events());
    (req, events)
}

/// Fails every connection attempt until `t0 + end_ms`; returns the events.
fn fail_connects_until(sim: &mut Sim, end_ms: u64) -> Vec<Event<u32>> {
    let mut all = Vec::new();
    for _ in 0..100_000 {
        let ev = sim.events();
        let failed = !connects(&ev).is_empty();
        all.extend(ev);
        if failed {
            sim.handle_connect_failed(sim.now);
            continue;
        }
        match sim.s.poll_timeout() {
            Some(t) if sim.offset(t).as_millis() as u64 <= end_ms => {
                let ms_ =
                    (sim.offset(t).as_millis() as u64).max(sim.offset(sim.now).as_millis() as u64);
                sim.run_until(ms_);
            }
            _ => {
                sim.run_until(end_ms);
                all.extend(sim.events());
                return all;
            }
        }
    }
    panic!("too many steps");
}

// ----- Handshake -----

#[test]
fn handshake_comes_first_and_requests_wait_for_it() {
    let mut cfg = config(1, 30_000);
    cfg.can_be_read_only = true;
    let mut sim = Sim::new(cfg);
    let ev = sim.events();
    assert_eq!(connects(&ev), [(0, ms(30_000))]);
    assert_eq!(sim.s.state(), Connecting);

    let early = sim.get_data("/early");
    assert!(
        sim.s.poll_transmit().is_empty(),
        "nothing is written before the connection"
    );
    sim.handle_connected(sim.now);
    let during = sim.get_data("/during");

    // Exactly the ConnectRequest: length 45, protocol 0, lastZxid 0, timeout 30000,
    // session 0, 16 zero bytes of password, read-only flag 1.
    let bytes = sim.take_bytes();
    let mut expected = vec![0, 0, 0, 45];
    expected.extend_from_slice(&0i32.to_be_bytes());
    expected.extend_from_slice(&0i64.to_be_bytes());
    expected.extend_from_slice(&30_000i32.to_be_bytes());
    expected.extend_from_slice(&0i64.to_be_bytes());
    expected.extend_from_slice(&16i32.to_be_bytes());
    expected.extend_from_slice(&[0; 16]);
    expected.push(1);
    assert_eq!(bytes.len(), 49);
    assert_eq!(&bytes[..], &expected[..]);

    sim.set_time(3);
    sim.respond_connect(6_000, 0x1234, &[7; 16], false);
    let ev = sim.events();
    assert_eq!(state_changes(&ev), [(Connected, 0x1234)]);
    assert_eq!(sim.s.session_id(), 0x1234);
    assert_eq!(sim.s.session_password().expose(), &[7; 16]);
    assert_eq!(sim.s.negotiated_timeout(), ms(6_000));

    // The requests submitted before and during the handshake go out after it, in order.
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 2);
    assert_eq!((sent[0].xid, sent[0].op), (1, OpCode::GetData));
    assert_eq!((sent[1].xid, sent[1].op), (2, OpCode::GetData));
    let want = PathWatchRequest {
        path: "/early",
        watch: false,
    }
    .to_bytes();
    assert_eq!(&sent[0].body[..], &want[..]);
    sim.reply(1, 10, ErrorCode::Ok, &get_data_body(b"e"));
    sim.reply(2, 11, ErrorCode::Ok, &get_data_body(b"d"));
    let ev = sim.events();
    assert_eq!(ok_of(&ev, early).zxid, 10);
    assert_eq!(ok_of(&ev, during).zxid, 11);
}

#[test]
fn request_submitted_during_the_handshake_waits_for_it() {
    let mut sim = Sim::new(config(1, 30_000));
    sim.events();
    sim.handle_connected(sim.now);
    let t = sim.sync("/");
    // Only the ConnectRequest: ZooKeeper reads nothing else before it answers.
    assert_eq!(sim.take_connect_request().session_id, 0);
    assert!(sim.s.poll_transmit().is_empty());
    assert_eq!(sim.s.in_flight(), 0);
    sim.respond_connect(30_000, 0x42, &PASSWD, false);
    let sent = sim.take_sent();
    assert_eq!(
        sent.iter().map(|s| (s.xid, s.op)).collect::<Vec<_>>(),
        [(1, OpCode::Sync)]
    );
    sim.reply(
        1,
        1,
        ErrorCode::Ok,
        &zkrs_codec::PathRecord { path: "/" }.to_bytes(),
    );
    ok_of(&sim.events(), t);
}

#[test]
fn read_only_server_gives_read_only_state() {
    let mut cfg = config(1, 30_000);
    cfg.can_be_read_only = true;
    let mut sim = Sim::new(cfg);
    sim.events();
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(30_000, 9, &PASSWD, true);
    assert_eq!(state_changes(&sim.events()), [(ReadOnly, 9)]);
}

// ----- Pipelining and xids -----

#[test]
fn hundred_requests_go_out_in_one_transmit_and_complete_in_order() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let tokens: Vec<u32> = (0..100).map(|i| sim.get_data(&format!("/n{i}"))).collect();
    assert_eq!(sim.s.in_flight(), 100);
    let sent = sim.take_sent();
    assert!(sim.s.poll_transmit().is_empty());
    let xids: Vec<i32> = sent.iter().map(|s| s.xid).collect();
    assert_eq!(xids, (1..=100).collect::<Vec<i32>>());
    for (i, s) in sent.iter().enumerate() {
        assert_eq!(s.op, OpCode::GetData);
        let req = PathWatchRequest::decode_exact(&s.body).unwrap();
        assert_eq!(req.path, format!("/n{i}"));
    }
    for (i, s) in sent.iter().enumerate() {
        let data = format!("v{i}");
        sim.reply(
            s.xid,
            1000 + i as i64,
            ErrorCode::Ok,
            &get_data_body(data.as_bytes()),
        );
    }
    let ev = sim.events();
    let answered: Vec<u32> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Reply { token, .. } => Some(*token),
            _ => None,
        })
        .collect();
    assert_eq!(answered, tokens, "replies complete the tokens in order");
    for (i, &t) in tokens.iter().enumerate() {
        let r = ok_of(&ev, t);
        assert_eq!(r.zxid, 1000 + i as i64);
        let body = GetDataResponse::decode_exact(&r.body).unwrap();
        assert_eq!(body.data, Some(format!("v{i}").as_bytes()));
    }
    assert_eq!(sim.s.in_flight(), 0);
    assert_eq!(sim.s.last_zxid(), 1099);
}

#[test]
fn reply_with_unexpected_xid_drops_the_connection() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let a = sim.get_data("/a");
    let b = sim.get_data("/b");
    let c = sim.get_data("/c");
    let sent = sim.take_sent();
    assert_eq!(sent.iter().map(|s| s.xid).collect::<Vec<_>>(), [1, 2, 3]);

    // The server answers xid 2 while xid 1 is the oldest.
    sim.reply(2, 5, ErrorCode::Ok, &get_data_body(b"x"));
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1, "{ev:?}");
    // Every request in flight has an unknown outcome: ConnectionLoss, saying why.
    let ea = err_of(&ev, a);
    assert_eq!(ea.kind(), ErrorKind::ConnectionLoss);
    assert!(chain(&ea).contains("xid 2"), "{ea:?}");
    assert_eq!(err_of(&ev, b).kind(), ErrorKind::ConnectionLoss);
    assert_eq!(err_of(&ev, c).kind(), ErrorKind::ConnectionLoss);
    assert_eq!(states(&ev), [Suspended]);
    assert_eq!(sim.s.in_flight(), 0);
    assert_eq!(
        sim.s.last_zxid(),
        0,
        "a rejected reply's zxid is not adopted"
    );

    let (req, ev) = reconnect(&mut sim, 0x42, 30_000);
    assert_eq!(req.session_id, 0x42);
    assert_eq!(states(&ev), [Reconnected]);
    assert!(
        sim.s.poll_transmit().is_empty(),
        "requests in flight when the connection dropped are never re-sent"
    );
    let d = sim.get_data("/d");
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].xid, 4, "xids are not reused");
    sim.reply(4, 6, ErrorCode::Ok, &get_data_body(b"d"));
    ok_of(&sim.events(), d);
}

/// A request lost on the way (a stream that dropped its bytes without breaking, as a
/// middlebox can): the server answers a later ping, never the request. Found by the data
/// invariant suite (seed 11888572907505754814): puts and takes waited forever on live
/// connections, answered pings keeping them alive.
#[test]
fn a_ping_answered_before_an_older_request_drops_the_connection() {
    let mut sim = Sim::connected(config(1, 6_000), 6_000, 0x42);
    let lost = sim.get_data("/lost");
    assert_eq!(sim.take_sent()[0].xid, 1);
    // Idle for the ping interval (2 s of a 6 s session): a ping, after request 1.
    sim.run_until(2_000);
    assert_eq!(&sim.take_bytes()[..], &PING);
    sim.set_time(2_100);
    sim.reply(-2, 0, ErrorCode::Ok, &[]);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1, "{ev:?}");
    assert_eq!(states(&ev), [Suspended]);
    let e = err_of(&ev, lost);
    assert_eq!(e.kind(), ErrorKind::ConnectionLoss);
    assert!(e.to_string().contains("lost on the way"), "{e}");
}

/// The same ping, answered after the request's own reply: nothing is wrong.
#[test]
fn a_ping_answered_after_the_requests_before_it_is_fine() {
    let mut sim = Sim::connected(config(1, 6_000), 6_000, 0x42);
    let slow = sim.get_data("/slow");
    sim.take_sent();
    sim.run_until(2_000);
    assert_eq!(&sim.take_bytes()[..], &PING);
    sim.set_time(2_100);
    sim.reply(1, 5, ErrorCode::Ok, &get_data_body(b"x"));
    sim.reply(-2, 0, ErrorCode::Ok, &[]);
    let ev = sim.events();
    ok_of(&ev, slow);
    assert_eq!(disconnects(&ev), 0, "{ev:?}");
    // A ping with nothing pending before it, answered while a newer request waits: fine.
    sim.run_until(4_100);
    assert_eq!(&sim.take_bytes()[..], &PING);
    let newer = sim.get_data("/newer");
    sim.take_sent();
    sim.reply(-2, 0, ErrorCode::Ok, &[]);
    assert_eq!(disconnects(&sim.events()), 0);
    sim.reply(2, 6, ErrorCode::Ok, &get_data_body(b"y"));
    ok_of(&sim.events(), newer);
}

#[test]
fn reply_with_nothing_pending_drops_the_connection() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    sim.reply(7, 5, ErrorCode::Ok, &[]);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1);
    assert_eq!(states(&ev), [Suspended]);
}

// ----- Timers -----

#[test]
fn timers_with_a_30_s_session() {
    let mut sim = Sim::new(config(3, 30_000));
    let ev = sim.events();
    let (first, timeout) = connects(&ev)[0];
    assert_eq!(
        timeout,
        ms(10_000),
        "connect timeout = session timeout / hosts"
    );
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(30_000, 0x42, &PASSWD, false);
    sim.events();

    // Ping after 10 s without sending (half of the 20 s read timeout, capped at 10 s).
    assert_eq!(sim.s.poll_timeout(), Some(sim.at(10_000)));
    sim.run_until(9_999);
    assert!(sim.s.poll_transmit().is_empty());
    sim.run_until(10_000);
    assert_eq!(&sim.take_bytes()[..], &PING);
    assert!(sim.events().is_empty());

    // The ping reply counts as hearing from the server, and completes nothing.
    sim.set_time(10_500);
    sim.reply(-2, 0, ErrorCode::Ok, &[]);
    assert!(sim.events().is_empty());
    assert_eq!(sim.s.poll_timeout(), Some(sim.at(20_000)));
    sim.run_until(20_000);
    assert_eq!(&sim.take_bytes()[..], &PING);

    // Sending a request pushes the next ping back.
    sim.set_time(25_000);
    let t = sim.get_data("/x");
    sim.take_sent();
    // Read timeout: 20 s after the last bytes received (10.5 s).
    assert_eq!(sim.s.poll_timeout(), Some(sim.at(30_500)));
    sim.run_until(30_499);
    assert!(sim.events().is_empty());
    sim.run_until(30_500);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1);
    assert_eq!(states(&ev), [Suspended]);
    assert_eq!(err_of(&ev, t).kind(), ErrorKind::ConnectionLoss);
    // The next host at once, with its share of the negotiated timeout.
    let c = connects(&ev);
    assert_eq!(c.len(), 1);
    assert_ne!(c[0].0, first);
    assert_eq!(c[0].1, ms(10_000));

    // A connection attempt that never completes times out after that share.
    sim.run_until(40_499);
    assert!(sim.events().is_empty());
    sim.run_until(40_500);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1);
    let c2 = connects(&ev);
    assert_eq!(c2.len(), 1);
    assert_ne!(c2[0].0, first);
    assert_ne!(c2[0].0, c[0].0);
    assert_eq!(c2[0].1, ms(10_000));
}

#[test]
fn timers_with_a_6_s_session() {
    let mut sim = Sim::new(config(3, 30_000));
    sim.events();
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    // The server grants 6 s: read timeout 4 s, ping after 2 s.
    sim.respond_connect(6_000, 0x42, &PASSWD, false);
    sim.events();
    assert_eq!(sim.s.negotiated_timeout(), ms(6_000));
    assert_eq!(sim.s.poll_timeout(), Some(sim.at(2_000)));
    sim.run_until(1_999);
    assert!(sim.s.poll_transmit().is_empty());
    sim.run_until(2_000);
    assert_eq!(&sim.take_bytes()[..], &PING);
    // No answer at all: the connection is dropped 4 s after the last bytes received.
    sim.run_until(3_999);
    assert!(sim.events().is_empty());
    sim.run_until(4_000);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1);
    assert_eq!(states(&ev), [Suspended]);
    let c = connects(&ev);
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0].1,
        ms(2_000),
        "connect timeout = negotiated timeout / hosts"
    );
}

/// Notifications that keep arriving while pings go unanswered (the server writes to us, but
/// what we send is lost: a one-way black hole) do not keep the connection: the server may be
/// expiring the session, and a lock's holder must hear of trouble before the next in line,
/// told by the expiry's deletion, holds the lock.
#[test]
fn notifications_alone_do_not_keep_the_connection() {
    let mut sim = Sim::connected(config(1, 6_000), 6_000, 0x42);
    // Read timeout 4 s, ping after 2 s of silence.
    sim.run_until(2_000);
    assert_eq!(&sim.take_bytes()[..], &PING);
    sim.set_time(3_000);
    sim.notify(EventType::NodeDeleted, "/a");
    sim.events();
    sim.run_until(3_999);
    assert_eq!(disconnects(&sim.events()), 0);
    // 4 s since the last reply (the handshake), though only 1 s since the notification.
    sim.run_until(4_000);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1, "{ev:?}");
    assert_eq!(states(&ev), [Suspended]);
}

#[test]
fn ping_interval_is_capped_at_10_s() {
    let mut sim = Sim::connected(config(1, 90_000), 90_000, 0x42);
    // Read timeout 60 s; half of it would be 30 s, but a ping goes at least every 10 s.
    assert_eq!(sim.s.poll_timeout(), Some(sim.at(10_000)));
    sim.run_until(10_000);
    assert_eq!(&sim.take_bytes()[..], &PING);
    sim.run_until(59_999);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 0, "{ev:?}");
    sim.run_until(60_000);
    assert_eq!(disconnects(&sim.events()), 1);
}

// ----- Reconnects -----

#[test]
fn failures_go_through_every_host_before_backing_off() {
    let mut sim = Sim::new(config(3, 30_000));
    let ev = sim.events();
    let mut tried = vec![connects(&ev)[0].0];
    for _ in 0..2 {
        sim.handle_connect_failed(sim.now);
        let ev = sim.events();
        let c = connects(&ev);
        assert_eq!(c.len(), 1, "the next host is tried at once: {ev:?}");
        tried.push(c[0].0);
    }
    let mut sorted = tried.clone();
    sorted.sort();
    assert_eq!(sorted, [0, 1, 2], "each host once per round");

    // A whole round failed: back off before the next one.
    sim.handle_connect_failed(sim.now);
    let ev = sim.events();
    assert!(connects(&ev).is_empty(), "{ev:?}");
    let retry = sim.s.poll_timeout().unwrap();
    assert!(retry > sim.now);
    let delay = retry - sim.now;
    assert!(delay >= ms(50) && delay <= ms(1_000), "{delay:?}");
    sim.run_until(sim.offset(retry).as_millis() as u64);
    let ev = sim.events();
    assert_eq!(connects(&ev).first().map(|c| c.0), Some(tried[0]));

    // The second round goes through the hosts in the same order, then backs off again.
    for &host in &tried[1..] {
        sim.handle_connect_failed(sim.now);
        assert_eq!(connects(&sim.events()).first().map(|c| c.0), Some(host));
    }
    sim.handle_connect_failed(sim.now);
    assert!(connects(&sim.events()).is_empty());
    let delay = sim.s.poll_timeout().unwrap() - sim.now;
    assert!(delay >= ms(50) && delay <= ms(1_000), "{delay:?}");
}

#[test]
fn reconnect_resumes_the_session_with_the_last_zxid() {
    let mut sim = Sim::new(config(3, 30_000));
    sim.events();
    sim.handle_connect_failed(sim.now);
    sim.events();
    sim.handle_connected(sim.now);
    let first = sim.take_connect_request();
    assert_eq!((first.session_id, first.last_zxid_seen), (0, 0));
    let passwd: Vec<u8> = (1..=16).collect();
    sim.respond_connect(30_000, 0x77, &passwd, false);
    assert_eq!(state_changes(&sim.events()), [(Connected, 0x77)]);

    let t = sim.get_data("/a");
    let sent = sim.take_sent();
    sim.reply(sent[0].xid, 0x55, ErrorCode::Ok, &get_data_body(b"a"));
    // Neither a notification nor a ping reply moves the last zxid.
    sim.notify(EventType::NodeDataChanged, "/zzz");
    sim.reply(-2, 0x99, ErrorCode::Ok, &[]);
    ok_of(&sim.events(), t);
    assert_eq!(sim.s.last_zxid(), 0x55);

    sim.set_time(1_000);
    sim.handle_disconnected(sim.now);
    let ev = sim.events();
    assert_eq!(states(&ev), [Suspended]);
    assert_eq!(connects(&ev).len(), 1, "the next host at once");
    sim.handle_connected(sim.now);
    let req = sim.take_connect_request();
    assert_eq!(req.session_id, 0x77);
    assert_eq!(req.passwd, passwd);
    assert_eq!(req.last_zxid_seen, 0x55);
    assert_eq!(req.timeout_ms, 30_000);
    sim.respond_connect(30_000, 0x77, &passwd, false);
    assert_eq!(state_changes(&sim.events()), [(Reconnected, 0x77)]);
}

#[test]
fn losing_a_host_mid_order_tries_the_others_before_backing_off() {
    let mut sim = Sim::new(config(3, 30_000));
    let h0 = connects(&sim.events())[0].0;
    sim.handle_connect_failed(sim.now);
    let h1 = connects(&sim.events())[0].0;
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(30_000, 0x42, &PASSWD, false);
    sim.events();
    // The connection works for a while (one dropped at once would be a failed attempt).
    sim.run_until(2_000);
    sim.take_bytes();
    sim.events();

    // The connection to h1 drops: h2 and h0 are tried at once (the Java client only sleeps
    // when it comes back to the host it was last connected to).
    sim.handle_disconnected(sim.now);
    let c = connects(&sim.events());
    assert_eq!(c.len(), 1);
    let h2 = c[0].0;
    assert!(h2 != h0 && h2 != h1);
    sim.handle_connect_failed(sim.now);
    let ev = sim.events();
    assert_eq!(
        connects(&ev).first().map(|c| c.0),
        Some(h0),
        "h0 was not tried since the connection to h1 dropped: no back-off yet ({ev:?})"
    );
}

// ----- Session loss -----

/// Registers a data watch on /a (1), an exist watch on /b (2) and a child watch on /c (3).
fn register_three_watches(sim: &mut Sim) {
    let a = sim.watch_read(WatchKind::Data, "/a", 1);
    let b = sim.watch_read(WatchKind::Exist, "/b", 2);
    let c = sim.watch_read(WatchKind::Child, "/c", 3);
    let sent = sim.take_sent();
    sim.zxid = 0x10;
    sim.reply_next_zxid(sent[0].xid, &get_data_body(b"a"));
    sim.reply(sent[1].xid, 0x12, ErrorCode::NoNode, &[]);
    sim.zxid = 0x12;
    sim.reply_next_zxid(sent[2].xid, &children_body(&["x"]));
    let ev = sim.events();
    ok_of(&ev, a);
    assert_eq!(err_of(&ev, b).code(), Some(ErrorCode::NoNode));
    ok_of(&ev, c);
    assert!(unused(&ev).is_empty());
    assert_eq!(sim.s.last_zxid(), 0x13);
}

#[test]
fn server_expiry_loses_the_session() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    register_three_watches(&mut sim);
    sim.set_time(100);
    sim.handle_disconnected(sim.now);
    assert_eq!(states(&sim.events()), [Suspended]);
    let waiting = sim.get_data("/w");

    let (_, ev) = next_connect(&mut sim, 5_000);
    assert!(reply_of(&ev, waiting).is_none());
    sim.handle_connected(sim.now);
    assert_eq!(sim.take_connect_request().session_id, 0x42);
    // Timeout 0: the session expired.
    sim.respond_connect(0, 0, &[0; 16], false);
    let ev = sim.events();
    assert_eq!(state_changes(&ev), [(Lost, 0)]);
    assert_eq!(sim.s.session_id(), 0);
    assert!(err_of(&ev, waiting).is_session_expired());
    let mut watched = watch_events(&ev);
    watched.sort_by_key(|w| w.0);
    assert_eq!(
        watched,
        [1, 2, 3].map(|w| (w, EventType::None, KeeperState::Expired, String::new()))
    );
    assert!(!zkrs_session::__private::has_watches(&sim.s));
    assert_eq!(disconnects(&ev), 1);

    // The next handshake asks for a new session.
    let (req, ev) = reconnect(&mut sim, 0x43, 30_000);
    assert_eq!(req.session_id, 0);
    assert_eq!(req.passwd, [0; 16]);
    assert_eq!(state_changes(&ev), [(Reconnected, 0x43)]);
    assert!(sim.s.poll_transmit().is_empty(), "no watch to set again");
}

#[test]
fn disconnected_longer_than_the_session_timeout_is_lost() {
    let mut sim = Sim::connected(config(1, 6_000), 6_000, 0x42);
    register_three_watches(&mut sim);
    sim.set_time(1_000);
    sim.handle_disconnected(sim.now);
    sim.events();
    let waiting = sim.get_data("/w");

    let ev = fail_connects_until(&mut sim, 6_999);
    assert!(!states(&ev).contains(&Lost), "{ev:?}");
    assert!(connects(&ev).len() > 1, "reconnects were attempted");
    assert_eq!(sim.s.session_id(), 0x42);
    let ev = fail_connects_until(&mut sim, 7_000);
    assert_eq!(state_changes(&ev), [(Lost, 0)]);
    assert!(err_of(&ev, waiting).is_session_expired());
    assert_eq!(watch_events(&ev).len(), 3);
    assert!(watch_events(&ev)
        .iter()
        .all(|w| w.2 == KeeperState::Expired));
    assert_eq!(sim.s.session_id(), 0);

    // The next handshake asks for a new session.
    let (req, ev) = reconnect(&mut sim, 0x43, 6_000);
    assert_eq!(req.session_id, 0);
    assert_eq!(state_changes(&ev), [(Reconnected, 0x43)]);
}

/// Found by the sessions invariant suite (30 minutes, seed 11798505285612818441): once the
/// session was lost, a request made while no server answered waited for a new session
/// however long that took (nine waited over 8 s with a 2 s session timeout). It now fails
/// with `ConnectionLoss` after waiting the session timeout, as one made while suspended does.
#[test]
fn a_request_waits_for_a_connection_no_longer_than_the_session_timeout() {
    let mut sim = Sim::connected(config(1, 6_000), 6_000, 0x42);
    sim.set_time(1_000);
    sim.handle_disconnected(sim.now);
    sim.events();
    let ev = fail_connects_until(&mut sim, 7_000);
    assert_eq!(state_changes(&ev), [(Lost, 0)]);
    // No session and no server: a request made now waits for a connection...
    let waiting = sim.get_data("/w");
    let ev = fail_connects_until(&mut sim, 12_999);
    assert!(reply_of(&ev, waiting).is_none(), "{ev:?}");
    // ...for the session timeout, no longer.
    let ev = fail_connects_until(&mut sim, 13_000);
    let err = err_of(&ev, waiting);
    assert_eq!(err.kind(), ErrorKind::ConnectionLoss);
    assert!(
        err.to_string()
            .contains("within the session timeout (6000 ms)"),
        "{err}"
    );
    // The next session does not send it.
    let (req, ev) = reconnect(&mut sim, 0x43, 6_000);
    assert_eq!(req.session_id, 0);
    assert_eq!(state_changes(&ev), [(Reconnected, 0x43)]);
    assert!(
        sim.s.poll_transmit().is_empty(),
        "the failed request was sent"
    );
    // A request made while connecting, answered by the next session, is sent as before.
    sim.handle_disconnected(sim.now);
    sim.events();
    let later = sim.get_data("/w");
    let (_, ev) = reconnect(&mut sim, 0x43, 6_000);
    assert!(reply_of(&ev, later).is_none());
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
}

/// A request bound to a session (`submit_in_session`) goes out on that session only: sent
/// while it lasts, across a reconnection that resumes it; failed with `SessionExpired`,
/// and never sent, once it is lost, even when made after the loss and before the next
/// session, where a plain request would wait for that session and go out on it.
#[test]
fn a_request_bound_to_a_session_is_never_sent_on_the_next() {
    let mut sim = Sim::connected(config(1, 6_000), 6_000, 0x42);
    let now = sim.get_data_in_session("/w", 0x42);
    assert_eq!(sim.take_sent().len(), 1, "sent on its session");
    let elsewhere = sim.get_data_in_session("/w", 0x41);
    assert!(err_of(&sim.events(), elsewhere).is_session_expired());
    assert!(sim.take_sent().is_empty(), "sent on another session");
    let _ = now;

    // Suspended, then resumed: it waits, and goes out on the same session.
    sim.set_time(1_000);
    sim.handle_disconnected(sim.now);
    sim.events();
    let resumed = sim.get_data_in_session("/w", 0x42);
    let (_, ev) = reconnect(&mut sim, 0x42, 6_000);
    assert!(reply_of(&ev, resumed).is_none());
    assert_eq!(
        sim.take_sent().len(),
        1,
        "sent once the session was resumed"
    );

    // Lost: a bound request made after the loss fails at once; a plain one waits and goes
    // out on the next session.
    sim.set_time(2_000);
    sim.handle_disconnected(sim.now);
    sim.events();
    let ev = fail_connects_until(&mut sim, 8_000);
    assert_eq!(state_changes(&ev), [(Lost, 0)]);
    let bound = sim.get_data_in_session("/w", 0x42);
    let err = err_of(&sim.events(), bound);
    assert!(err.is_session_expired(), "{err}");
    let plain = sim.get_data("/w");
    let (_, ev) = reconnect(&mut sim, 0x43, 6_000);
    assert_eq!(state_changes(&ev), [(Reconnected, 0x43)]);
    assert!(reply_of(&ev, plain).is_none());
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1, "only the plain request goes out: {sent:?}");
}

#[test]
fn a_session_reported_lost_is_not_resumed_by_a_late_handshake() {
    let mut sim = Sim::connected(config(1, 6_000), 6_000, 0x42);
    sim.set_time(1_000);
    sim.handle_disconnected(sim.now);
    sim.events();
    next_connect(&mut sim, 1_000);
    sim.handle_connected(sim.now);
    assert_eq!(sim.take_connect_request().session_id, 0x42);
    // The server is slow to answer: 6 s after the disconnection the core gives up the session
    // (the handshake's own deadline, 6 s after it started, is later).
    sim.run_until(7_000);
    let ev = sim.events();
    assert_eq!(states(&ev), [Lost]);
    // Then the answer arrives: it must not resume session 0x42, which the application was
    // told is gone (its ephemeral nodes and watches with it).
    sim.respond_connect(6_000, 0x42, &PASSWD, false);
    let ev = sim.events();
    assert_ne!(
        sim.s.session_id(),
        0x42,
        "session 0x42 was reported Lost, then resumed: {ev:?}"
    );
    assert!(!states(&ev).contains(&Reconnected), "{ev:?}");
    // The next handshake asks for a new session.
    let (req, ev) = reconnect(&mut sim, 0x43, 6_000);
    assert_eq!(req.session_id, 0);
    assert_eq!(state_changes(&ev), [(Reconnected, 0x43)]);
}

// ----- Watches -----

#[test]
fn watches_register_on_success_and_fire_once() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    // getData with a watch on a missing node: no watch.
    let t = sim.watch_read(WatchKind::Data, "/missing", 10);
    let sent = sim.take_sent();
    let req = PathWatchRequest::decode_exact(&sent[0].body).unwrap();
    assert!(req.watch);
    sim.reply(sent[0].xid, 1, ErrorCode::NoNode, &[]);
    let ev = sim.events();
    assert_eq!(err_of(&ev, t).code(), Some(ErrorCode::NoNode));
    assert_eq!(unused(&ev), [10]);
    assert!(!zkrs_session::__private::has_watches(&sim.s));

    // exists on a missing node: an exist watch.
    let t = sim.watch_read(WatchKind::Exist, "/b", 2);
    let sent = sim.take_sent();
    sim.reply(sent[0].xid, 2, ErrorCode::NoNode, &[]);
    let ev = sim.events();
    assert_eq!(err_of(&ev, t).code(), Some(ErrorCode::NoNode));
    assert!(unused(&ev).is_empty());
    assert!(zkrs_session::__private::has_watches(&sim.s));

    // Data watch (getData), exists on an existing node (a data watch), child watch.
    let t3 = sim.watch_read(WatchKind::Data, "/a", 3);
    let t4 = sim.watch_read(WatchKind::Exist, "/a", 4);
    let t5 = sim.watch_read(WatchKind::Child, "/a", 5);
    let sent = sim.take_sent();
    sim.reply(sent[0].xid, 3, ErrorCode::Ok, &get_data_body(b"a"));
    sim.reply(sent[1].xid, 4, ErrorCode::Ok, &stat_body());
    sim.reply(sent[2].xid, 5, ErrorCode::Ok, &children_body(&[]));
    let ev = sim.events();
    for t in [t3, t4, t5] {
        ok_of(&ev, t);
    }

    sim.notify(EventType::NodeDataChanged, "/a");
    let mut fired = watch_events(&sim.events());
    fired.sort_by_key(|w| w.0);
    let changed = |w| {
        (
            w,
            EventType::NodeDataChanged,
            KeeperState::SyncConnected,
            "/a".to_string(),
        )
    };
    assert_eq!(fired, [changed(3), changed(4)]);
    sim.notify(EventType::NodeDataChanged, "/a");
    assert!(sim.events().is_empty(), "one-shot watches fire once");

    sim.notify(EventType::NodeCreated, "/b");
    let fired = watch_events(&sim.events());
    assert_eq!(fired.len(), 1);
    assert_eq!((fired[0].0, fired[0].1), (2, EventType::NodeCreated));
    sim.notify(EventType::NodeChildrenChanged, "/a");
    let fired = watch_events(&sim.events());
    assert_eq!(fired.len(), 1);
    assert_eq!(
        (fired[0].0, fired[0].1),
        (5, EventType::NodeChildrenChanged)
    );
    assert!(!zkrs_session::__private::has_watches(&sim.s));
}

#[test]
fn reconnect_sends_auth_then_set_watches_then_waiting_requests() {
    let mut cfg = config(1, 30_000);
    cfg.auth.push(("digest".into(), b"u:p".into()));
    let mut sim = Sim::new(cfg);
    sim.events();
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(30_000, 0x42, &PASSWD, false);
    sim.events();
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].xid, sent[0].op), (-4, OpCode::Auth));
    sim.reply(-4, 0, ErrorCode::Ok, &[]);
    register_three_watches(&mut sim);

    sim.set_time(100);
    sim.handle_disconnected(sim.now);
    let waiting = sim.get_data("/w");
    let (req, ev) = reconnect(&mut sim, 0x42, 30_000);
    assert_eq!(req.last_zxid_seen, 0x13);
    assert_eq!(states(&ev), [Suspended, Reconnected]);

    let sent = sim.take_sent();
    let kinds: Vec<(i32, OpCode)> = sent.iter().map(|s| (s.xid, s.op)).collect();
    assert_eq!(
        kinds,
        [
            (-4, OpCode::Auth),
            (-8, OpCode::SetWatches),
            (4, OpCode::GetData)
        ]
    );
    let auth = AuthPacket::decode_exact(&sent[0].body).unwrap();
    assert_eq!(
        (auth.auth_type, auth.scheme, auth.auth),
        (0, "digest", &b"u:p"[..])
    );
    let sw = SetWatches::decode_exact(&sent[1].body).unwrap();
    assert_eq!(sw.relative_zxid, 0x13);
    assert_eq!(sw.data_watches.iter().collect::<Vec<_>>(), ["/a"]);
    assert_eq!(sw.exist_watches.iter().collect::<Vec<_>>(), ["/b"]);
    assert_eq!(sw.child_watches.iter().collect::<Vec<_>>(), ["/c"]);

    // Their replies, then the request's.
    sim.reply(-4, 0, ErrorCode::Ok, &[]);
    sim.reply(-8, 0x13, ErrorCode::Ok, &[]);
    sim.reply(4, 0x14, ErrorCode::Ok, &get_data_body(b"w"));
    let ev = sim.events();
    ok_of(&ev, waiting);
    assert_eq!(disconnects(&ev), 0);
}

#[test]
fn persistent_watches_are_set_again_with_set_watches2() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let add = |sim: &mut Sim, path: &str, mode, kind, watcher| {
        let f = frame(OpCode::AddWatch, &AddWatchRequest { path, mode });
        sim.submit_frame(
            OpCode::AddWatch,
            f,
            Some(WatchOp::Register {
                kind,
                path: path.into(),
                watcher: WatcherId::new(watcher),
                group: None,
            }),
        )
    };
    add(
        &mut sim,
        "/p",
        AddWatchMode::Persistent,
        WatchKind::Persistent,
        1,
    );
    add(
        &mut sim,
        "/r",
        AddWatchMode::PersistentRecursive,
        WatchKind::PersistentRecursive,
        2,
    );
    sim.watch_read(WatchKind::Data, "/a", 3);
    for s in sim.take_sent() {
        let body = if s.op == OpCode::GetData {
            get_data_body(b"").to_vec()
        } else {
            Vec::new()
        };
        sim.reply(s.xid, 7, ErrorCode::Ok, &body);
    }
    sim.events();
    // A persistent watch fires without going away.
    sim.notify(EventType::NodeDataChanged, "/p");
    sim.notify(EventType::NodeDataChanged, "/p");
    assert_eq!(watch_events(&sim.events()).len(), 2);

    sim.handle_disconnected(sim.now);
    reconnect(&mut sim, 0x42, 30_000);
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].xid, sent[0].op), (-8, OpCode::SetWatches2));
    assert_eq!(sent[0].op.code(), 105);
    let sw = SetWatches2::decode_exact(&sent[0].body).unwrap();
    assert_eq!(sw.relative_zxid, 7);
    assert_eq!(sw.data_watches.iter().collect::<Vec<_>>(), ["/a"]);
    assert!(sw.exist_watches.is_empty() && sw.child_watches.is_empty());
    assert_eq!(sw.persistent_watches.iter().collect::<Vec<_>>(), ["/p"]);
    assert_eq!(
        sw.persistent_recursive_watches.iter().collect::<Vec<_>>(),
        ["/r"]
    );
}

#[test]
fn many_watches_are_set_again_in_batches_of_at_most_128_kib() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    // About 300 KiB of paths: 3000 paths of 100 bytes, in three kinds.
    let paths: Vec<String> = (0..3000).map(|i| format!("/big/{i:0>95}")).collect();
    let kinds = [WatchKind::Data, WatchKind::Exist, WatchKind::Child];
    for (i, p) in paths.iter().enumerate() {
        sim.watch_read(kinds[i % 3], p, i as u64);
    }
    let sent = sim.take_sent();
    for s in &sent {
        let (err, body) = match s.op {
            OpCode::GetData => (ErrorCode::Ok, get_data_body(b"").to_vec()),
            OpCode::Exists => (ErrorCode::NoNode, Vec::new()),
            _ => (ErrorCode::Ok, children_body(&[]).to_vec()),
        };
        sim.reply(s.xid, 99, err, &body);
    }
    assert!(unused(&sim.events()).is_empty());

    sim.handle_disconnected(sim.now);
    reconnect(&mut sim, 0x42, 30_000);
    let sent = sim.take_sent();
    assert!(sent.len() >= 3, "{} SetWatches for ~300 KiB", sent.len());
    let mut seen: Vec<String> = Vec::new();
    for s in &sent {
        assert_eq!((s.xid, s.op), (-8, OpCode::SetWatches));
        let sw = SetWatches::decode_exact(&s.body).unwrap();
        assert_eq!(sw.relative_zxid, 99);
        let mut bytes = 0;
        for list in [sw.data_watches, sw.exist_watches, sw.child_watches] {
            for p in list.iter() {
                bytes += p.len() + 4;
                seen.push(p.to_string());
            }
        }
        assert!(bytes <= 128 * 1024, "a batch of {bytes} path bytes");
        assert!(s.raw.len() < 128 * 1024 + 64);
    }
    seen.sort();
    let mut want = paths.clone();
    want.sort();
    assert_eq!(seen, want, "every watched path exactly once");
}

#[test]
fn a_notification_reaches_a_group_once_however_many_of_its_registrations_it_ends() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let group = Some(WatcherGroup::new(100));
    // getData and exists on /a through the group, and the same getData again; a lone watch
    // on /a too; and the group's child watch on /a, which a delete also ends.
    let t1 = sim.watch_read_into(WatchKind::Data, "/a", 1, group);
    let t2 = sim.watch_read_into(WatchKind::Exist, "/a", 2, group);
    let t3 = sim.watch_read_into(WatchKind::Data, "/a", 3, group);
    let t4 = sim.watch_read(WatchKind::Data, "/a", 4);
    let t5 = sim.watch_read_into(WatchKind::Child, "/a", 5, group);
    let sent = sim.take_sent();
    sim.reply_next_zxid(sent[0].xid, &get_data_body(b"a"));
    sim.reply_next_zxid(sent[1].xid, &stat_body());
    sim.reply_next_zxid(sent[2].xid, &get_data_body(b"a"));
    sim.reply_next_zxid(sent[3].xid, &get_data_body(b"a"));
    sim.reply_next_zxid(sent[4].xid, &children_body(&[]));
    let ev = sim.events();
    for t in [t1, t2, t3, t4, t5] {
        ok_of(&ev, t);
    }

    sim.notify(EventType::NodeDeleted, "/a");
    let ev = sim.events();
    // The group hears it once (through its first registration), the lone watcher too; the
    // group's other registrations end without an event of their own.
    let heard: Vec<u64> = watch_events(&ev).into_iter().map(|w| w.0).collect();
    assert_eq!(heard.len(), 2, "{ev:?}");
    assert!(heard.contains(&4), "{ev:?}");
    assert_eq!(heard.iter().filter(|w| [1, 2, 3, 5].contains(w)).count(), 1);
    let mut released = unused(&ev);
    released.sort_unstable();
    let mut rest: Vec<u64> = [1, 2, 3, 5]
        .into_iter()
        .filter(|w| !heard.contains(w))
        .collect();
    rest.sort_unstable();
    assert_eq!(released, rest);
    assert_eq!(zkrs_session::__private::one_shot_watchers(&sim.s), 0);
}

#[test]
fn abandoned_one_shot_watches_are_swept_when_the_watchers_double() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    // Each watch on /stable is left and its receiver dropped at once (odd watchers), or kept
    // (even ones): nothing ever fires.
    let mut swept = Vec::new();
    let mut asked = 0;
    for w in 1..=200u64 {
        let t = sim.watch_read(WatchKind::Data, "/stable", w);
        let sent = sim.take_sent();
        sim.reply_next_zxid(sent[0].xid, &get_data_body(b"x"));
        ok_of(&sim.events(), t);
        let now = sim.now;
        swept.extend(sim.s.sweep_abandoned(
            |id| {
                asked += 1;
                id.get() % 2 == 1
            },
            now,
        ));
        // Never more than twice the live ones (or the sweep's floor).
        let held = zkrs_session::__private::one_shot_watchers(&sim.s);
        let live = w as usize / 2;
        assert!(held <= (2 * live).max(64), "{held} held after {w}");
    }
    assert!(asked > 0);
    assert!(swept.iter().all(|w| w.get() % 2 == 1), "{swept:?}");
    assert!(swept.windows(2).all(|p| p[0] < p[1]), "in the order made");
    let held = zkrs_session::__private::one_shot_watchers(&sim.s);
    assert!(held < 200 - 50, "{held}: abandoned watches are kept");
    // The server's watch stays: the live watchers still need it.
    let sent = sim.take_sent();
    assert!(
        sent.iter().all(|s| s.op != OpCode::RemoveWatches),
        "{sent:?}"
    );
    // A forgotten watcher hears nothing: the change reaches the live ones only.
    sim.notify(EventType::NodeDataChanged, "/stable");
    let heard: Vec<u64> = watch_events(&sim.events())
        .into_iter()
        .map(|w| w.0)
        .collect();
    assert!(heard
        .iter()
        .all(|w| w % 2 == 0 || !swept.iter().any(|s| s.get() == *w)));
    assert!((100..=200).contains(&heard.len()), "{}", heard.len());
}

// ----- close() -----

#[test]
fn close_sends_close_session_and_finishes_on_its_reply() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    register_three_watches(&mut sim);
    let pending = sim.get_data("/x");
    let sent = sim.take_sent();
    let pending_xid = sent[0].xid;

    sim.s.close(Some(9_000), sim.now);
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].op, OpCode::CloseSession);
    assert_eq!(sent[0].op.code(), -11);
    assert_eq!(sent[0].xid, pending_xid + 1);
    assert!(sent[0].body.is_empty());

    // Submitting after close() fails at once.
    let late = sim.get_data("/late");
    let ev = sim.events();
    assert!(err_of(&ev, late).is_closed());
    assert!(sim.s.poll_transmit().is_empty());

    sim.reply(pending_xid, 0x20, ErrorCode::Ok, &get_data_body(b"x"));
    ok_of(&sim.events(), pending);
    sim.reply(sent[0].xid, 0x21, ErrorCode::Ok, &[]);
    let ev = sim.events();
    assert_eq!(state_changes(&ev), [(Closed, 0)]);
    assert_eq!(disconnects(&ev), 1);
    let closed: Vec<_> = watch_events(&ev);
    assert_eq!(closed.len(), 3);
    assert!(closed
        .iter()
        .all(|w| (w.1, w.2) == (EventType::None, KeeperState::Closed)));
    ok_of(&ev, 9_000);
    assert!(matches!(ev.last(), Some(Event::Closed)), "{ev:?}");
    assert_eq!(sim.s.poll_timeout(), None);

    // Nothing happens any more.
    sim.s.handle_timeout(sim.at(1_000_000));
    sim.handle_connected(sim.now);
    sim.handle_disconnected(sim.now);
    sim.reply(1, 1, ErrorCode::Ok, &[]);
    assert!(sim.events().is_empty());
    assert!(sim.s.poll_transmit().is_empty());
    let after = sim.get_data("/after");
    assert!(err_of(&sim.events(), after).is_closed());
    sim.s.close(Some(9_001), sim.now);
    ok_of(&sim.events(), 9_001);
}

#[test]
fn close_without_an_answer_finishes_after_the_read_timeout() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let pending = sim.get_data("/x");
    sim.take_sent();
    sim.s.close(Some(9_000), sim.now);
    sim.take_sent();
    sim.run_until(19_999);
    let ev = sim.events();
    assert!(!ev.iter().any(|e| matches!(e, Event::Closed)), "{ev:?}");
    sim.run_until(20_000);
    let ev = sim.events();
    assert!(err_of(&ev, pending).is_closed());
    ok_of(&ev, 9_000);
    assert_eq!(states(&ev), [Closed]);
    assert!(matches!(ev.last(), Some(Event::Closed)));
}

#[test]
fn close_while_disconnected_fails_waiting_requests() {
    let mut sim = Sim::new(config(1, 30_000));
    sim.events();
    let waiting = sim.get_data("/w");
    sim.s.close(None, sim.now);
    let ev = sim.events();
    assert!(err_of(&ev, waiting).is_closed());
    assert_eq!(disconnects(&ev), 1, "the connection attempt is abandoned");
    assert_eq!(states(&ev), [Closed]);
    assert!(matches!(ev.last(), Some(Event::Closed)));
    assert_eq!(sim.s.poll_timeout(), None);
}

#[test]
fn add_auth_token_is_answered_when_closed_before_connecting() {
    let mut sim = Sim::new(config(1, 30_000));
    sim.events();
    sim.s
        .add_auth("digest".into(), b"u:p".into(), Some(77), sim.now);
    sim.s.close(None, sim.now);
    let ev = sim.events();
    assert!(matches!(ev.last(), Some(Event::Closed)));
    assert!(
        reply_of(&ev, 77).is_some(),
        "add_auth's token was dropped without an answer: {ev:?}"
    );
}

#[test]
fn submitted_close_session_is_answered() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let mut f = bytes::BytesMut::new();
    zkrs_codec::encode_header_only(&mut f, 0, OpCode::CloseSession);
    let t = sim.submit_frame(OpCode::CloseSession, f, None);
    sim.s.close(Some(9_000), sim.now);
    let sent = sim.take_sent();
    assert_eq!(
        sent.iter().map(|s| s.op).collect::<Vec<_>>(),
        [OpCode::CloseSession; 2]
    );
    // The server answers the first closeSession and closes the connection: the close that
    // `close()` asked for ends there, and the submitted one has its answer.
    sim.reply(sent[0].xid, 5, ErrorCode::Ok, &[]);
    sim.handle_disconnected(sim.now);
    let ev = sim.events();
    assert!(matches!(ev.last(), Some(Event::Closed)), "{ev:?}");
    assert!(
        reply_of(&ev, t).is_some(),
        "the submitted closeSession was never answered: {ev:?}"
    );
}

// ----- Read-only servers -----

/// A session on a read-only server (3 hosts), with its probe for a read-write server due.
fn read_only_session() -> (Sim, usize) {
    let mut cfg = config(3, 30_000);
    cfg.can_be_read_only = true;
    let mut sim = Sim::new(cfg);
    sim.events();
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(30_000, 0x42, &PASSWD, true);
    assert_eq!(states(&sim.events()), [ReadOnly]);
    sim.run_until(100);
    let ev = sim.events();
    let probe = ev
        .iter()
        .find_map(|e| match e {
            Event::ProbeReadWrite { host } => Some(*host),
            _ => None,
        })
        .expect("a probe for a read-write server");
    (sim, probe)
}

#[test]
fn read_write_server_found_connects_there_only() {
    let (mut sim, rw) = read_only_session();
    sim.s.handle_read_write_found(rw, sim.now);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1);
    assert_eq!(
        connects(&ev).iter().map(|c| c.0).collect::<Vec<_>>(),
        [rw],
        "{ev:?}"
    );
}

#[test]
fn read_write_server_found_while_closing_stays_closed() {
    let (mut sim, rw) = read_only_session();
    sim.s.close(Some(9_000), sim.now);
    sim.take_sent();
    sim.s.handle_read_write_found(rw, sim.now);
    let ev = sim.events();
    let closed_at = ev
        .iter()
        .position(|e| matches!(e, Event::Closed))
        .expect("closed");
    assert_eq!(
        closed_at,
        ev.len() - 1,
        "events after Event::Closed: {:?}",
        &ev[closed_at..]
    );
    assert_eq!(sim.s.poll_timeout(), None);
    assert_eq!(sim.s.state(), Closed);
}

// ----- Malformed server bytes -----

#[test]
fn negative_frame_length_drops_the_connection() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let t = sim.get_data("/a");
    sim.take_sent();
    sim.feed(&(-5i32).to_be_bytes());
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1);
    assert_eq!(states(&ev), [Suspended]);
    let e = err_of(&ev, t);
    assert_eq!(e.kind(), ErrorKind::ConnectionLoss);
    assert!(chain(&e).contains("length prefix -5"), "{e:?}");
}

#[test]
fn frame_longer_than_the_maximum_drops_the_connection() {
    let mut cfg = config(1, 30_000);
    cfg.max_reply_len = 1024;
    let mut sim = Sim::connected(cfg, 30_000, 0x42);
    let t = sim.get_data("/a");
    let xid = sim.take_sent()[0].xid;
    // Only the length prefix and a header answering no pending request have arrived: no
    // need to wait for 4096 bytes. (A reply that large to the pending request fails that
    // request alone: tests/oversize_reply.rs.)
    let mut head = 4096i32.to_be_bytes().to_vec();
    head.extend_from_slice(&(xid + 1).to_be_bytes());
    head.extend_from_slice(&[0; 12]);
    sim.feed(&head);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1);
    let e = err_of(&ev, t);
    assert_eq!(e.kind(), ErrorKind::ConnectionLoss);
    let text = chain(&e);
    assert!(text.contains("4096") && text.contains("1024"), "{text}");
}

#[test]
fn truncated_connect_response_drops_the_connection() {
    let mut sim = Sim::new(config(1, 30_000));
    sim.events();
    let waiting = sim.get_data("/w");
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    // protocol version and timeout, then nothing: 8 bytes of a 36-byte record.
    let mut f = Vec::new();
    f.extend_from_slice(&8i32.to_be_bytes());
    f.extend_from_slice(&0i32.to_be_bytes());
    f.extend_from_slice(&30_000i32.to_be_bytes());
    sim.feed(&f);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1, "{ev:?}");
    assert_eq!(sim.s.state(), Connecting);
    assert!(
        reply_of(&ev, waiting).is_none(),
        "a request never sent is kept"
    );
    // The request goes out after the next (good) handshake.
    let (_, ev) = reconnect(&mut sim, 0x42, 30_000);
    assert_eq!(states(&ev), [Connected]);
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1);
    sim.reply(sent[0].xid, 1, ErrorCode::Ok, &get_data_body(b"w"));
    ok_of(&sim.events(), waiting);
}

#[test]
fn garbage_get_data_body_fails_the_request_and_drops_the_connection() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let t = sim.get_data("/a");
    let other = sim.get_data("/b");
    let sent = sim.take_sent();
    // A data length of 9 with one byte after it.
    sim.reply(sent[0].xid, 3, ErrorCode::Ok, &[0, 0, 0, 9, 1]);
    let ev = sim.events();
    assert_eq!(disconnects(&ev), 1);
    let e = err_of(&ev, t);
    assert_eq!(e.code(), None);
    assert_eq!(e.kind(), zkrs_session::ErrorKind::Protocol);
    let text = chain(&e);
    assert!(
        text.contains("malformed") && text.contains("truncated"),
        "{text}"
    );
    assert_eq!(err_of(&ev, other).kind(), ErrorKind::ConnectionLoss);
}

#[test]
fn random_garbage_never_panics() {
    // A quick sweep; the fuzz target covers this far more thoroughly.
    let mut seed = 0x1234_5678_9abc_def0u64;
    for _ in 0..200 {
        let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
        sim.get_data("/a");
        sim.take_sent();
        let mut bytes = Vec::new();
        for _ in 0..64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            bytes.push((seed >> 24) as u8);
        }
        // A plausible length prefix followed by garbage.
        bytes[..4].copy_from_slice(&60i32.to_be_bytes());
        sim.feed(&bytes);
        sim.events();
    }
}

#[test]
fn session_id_zero_from_the_server_does_not_spin() {
    let mut sim = Sim::connected(config(1, 6_000), 6_000, 0);
    sim.handle_disconnected(sim.now);
    // `fail_connects_until` uses `run_until`, which fails on a busy loop.
    fail_connects_until(&mut sim, 20_000);
}

#[test]
fn a_lost_connection_says_why_to_the_requests_in_flight() {
    use std::error::Error as _;
    // Silence: no reply within the read timeout (2/3 of the negotiated 3 s).
    let mut sim = Sim::connected(config(1, 3_000), 3_000, 0x77);
    sim.events();
    let t = sim.get_data("/quiet");
    sim.take_sent();
    sim.run_until(2_100);
    let err = err_of(&sim.events(), t);
    assert_eq!(err.kind(), ErrorKind::ConnectionLoss);
    assert!(
        err.to_string()
            .contains("no reply from the server within the read timeout (2000 ms)"),
        "{err}"
    );

    // An I/O error: the source, not repeated in Display.
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x78);
    sim.events();
    let t = sim.get_data("/reset");
    sim.take_sent();
    let now = sim.now;
    sim.handle_io_error(
        std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer"),
        now,
    );
    let err = err_of(&sim.events(), t);
    assert_eq!(err.kind(), ErrorKind::ConnectionLoss);
    assert!(!err.to_string().contains("reset by peer"), "{err}");
    let io = err
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .expect("the io::Error as the source");
    assert_eq!(io.kind(), std::io::ErrorKind::ConnectionReset);

    // A later loss without a cause does not inherit the old one.
    let t = sim.get_data("/later");
    let (_host, _) = next_connect(&mut sim, 5_000);
    let now = sim.now;
    sim.handle_connected(now);
    sim.respond_connect(30_000, 0x78, &PASSWD, false);
    sim.take_sent();
    let now = sim.now;
    sim.handle_disconnected(now);
    let err = err_of(&sim.events(), t);
    assert!(!err.to_string().contains("reset by peer"), "{err}");
}

#[test]
fn every_failed_attempt_says_why() {
    // One host, 2 s: each attempt (TCP connection and handshake) may take 2 s.
    let mut sim = Sim::new(config(1, 2_000));
    assert_eq!(
        sim.s
            .last_connection_failure()
            .map(ToString::to_string)
            .as_deref(),
        None
    );
    sim.events();

    // The TCP connection is refused.
    let now = sim.now;
    sim.handle_io_error(
        std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused"),
        now,
    );
    assert_eq!(
        sim.s
            .last_connection_failure()
            .map(ToString::to_string)
            .as_deref(),
        Some("could not connect: refused")
    );

    // Connected, but no handshake reply before the attempt's deadline.
    next_connect(&mut sim, 5_000);
    let started = sim.offset(sim.now).as_millis() as u64;
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.run_until(started + 2_000);
    assert_eq!(disconnects(&sim.events()), 1);
    assert_eq!(
        sim.s
            .last_connection_failure()
            .map(ToString::to_string)
            .as_deref(),
        Some("no handshake reply from the server within 2000 ms of connecting")
    );
    assert!(
        matches!(
            sim.s.last_connection_failure(),
            Some(zkrs_session::ConnectionFailure::HandshakeTimeout(t)) if *t == ms(2_000)
        ),
        "a typed reason"
    );

    // A handshake reply with a negative password length.
    next_connect(&mut sim, 5_000);
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    let mut f = Vec::new();
    for field in [20i32, 0, 2_000, 0, 0x42, -5] {
        f.extend_from_slice(&field.to_be_bytes());
    }
    sim.feed(&f);
    assert_eq!(disconnects(&sim.events()), 1);
    let why = sim.s.last_connection_failure().unwrap().to_string();
    assert!(
        why.starts_with("the server sent a malformed frame") && why.contains("-5"),
        "{why}"
    );

    // The server says the session expired.
    next_connect(&mut sim, 5_000);
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(0, 0, &[0; 16], false);
    assert_eq!(
        sim.s
            .last_connection_failure()
            .map(ToString::to_string)
            .as_deref(),
        Some("the server says the session expired")
    );

    // A refused connection without an error to tell.
    next_connect(&mut sim, 5_000);
    let now = sim.now;
    sim.handle_connect_failed(now);
    assert_eq!(
        sim.s
            .last_connection_failure()
            .map(ToString::to_string)
            .as_deref(),
        Some("could not connect")
    );

    // A session at last: the last failure is kept (it is history, not the state).
    let (_, ev) = reconnect(&mut sim, 0x42, 2_000);
    assert_eq!(states(&ev), [Connected]);
    assert_eq!(
        sim.s
            .last_connection_failure()
            .map(ToString::to_string)
            .as_deref(),
        Some("could not connect")
    );
}

/// A two-step mechanism for the core's tests: sends "hello", expects "challenge", sends
/// "answer", expects "ok".
struct Scripted {
    step: usize,
}

impl zkrs_session::SaslExchange for Scripted {
    fn step(
        &mut self,
        server: Option<&[u8]>,
    ) -> Result<zkrs_session::SaslStep, zkrs_session::SaslError> {
        use zkrs_session::SaslStep::*;
        self.step += 1;
        match (self.step, server) {
            (1, None) => Ok(Send(b"hello".to_vec())),
            (2, Some(b"challenge")) => Ok(Send(b"answer".to_vec())),
            (3, Some(b"ok")) => Ok(Done),
            (_, other) => Err(zkrs_session::SaslError::new(format!(
                "unexpected {other:?}"
            ))),
        }
    }
}

fn sasl_config() -> zkrs_session::SessionConfig {
    let mut cfg = config(1, 30_000);
    cfg.sasl = Some(zkrs_session::SaslMechanism::new("TEST", || {
        Box::new(Scripted { step: 0 })
    }));
    cfg.auth = vec![("digest".into(), b"u:p".into())];
    cfg
}

fn sasl_token(sent: &Sent) -> Vec<u8> {
    zkrs_codec::GetSaslRequest::decode_prefix(&sent.body)
        .unwrap()
        .token
        .to_vec()
}

#[test]
fn sasl_runs_before_anything_else_and_the_session_opens_after_it() {
    let mut sim = Sim::new(sasl_config());
    sim.events();
    sim.handle_connected(sim.now);
    let t = sim.sync("/");
    sim.take_connect_request();
    sim.respond_connect(30_000, 0x42, &PASSWD, false);
    // Only the first SASL token: the identity and the waiting request hold back, and
    // nobody is told the session is usable yet.
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (sent[0].op, sasl_token(&sent[0])),
        (OpCode::Sasl, b"hello".to_vec())
    );
    assert!(states(&sim.events()).is_empty());
    sim.reply(
        sent[0].xid,
        0,
        ErrorCode::Ok,
        &zkrs_codec::SetSaslResponse {
            token: b"challenge",
        }
        .to_bytes(),
    );
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sasl_token(&sent[0]), b"answer");
    sim.reply(
        sent[0].xid,
        0,
        ErrorCode::Ok,
        &zkrs_codec::SetSaslResponse { token: b"ok" }.to_bytes(),
    );
    // Now: the identity, then the request, and Connected.
    let sent = sim.take_sent();
    assert_eq!(
        sent.iter().map(|s| s.op).collect::<Vec<_>>(),
        [OpCode::Auth, OpCode::Sync]
    );
    assert_eq!(states(&sim.events()), [Connected]);
    sim.reply(-4, 0, ErrorCode::Ok, &[]);
    sim.reply(
        sent[1].xid,
        1,
        ErrorCode::Ok,
        &zkrs_codec::PathRecord { path: "/" }.to_bytes(),
    );
    ok_of(&sim.events(), t);
}

#[test]
fn a_sasl_refusal_fails_everything_with_auth_failed_and_stops() {
    let mut sim = Sim::new(sasl_config());
    sim.events();
    sim.handle_connected(sim.now);
    let t = sim.sync("/");
    sim.take_connect_request();
    sim.respond_connect(30_000, 0x42, &PASSWD, false);
    let sent = sim.take_sent();
    sim.reply(sent[0].xid, 0, ErrorCode::AuthFailed, &[]);
    let events = sim.events();
    assert_eq!(err_of(&events, t).kind(), ErrorKind::AuthFailed);
    assert_eq!(states(&events), [AuthFailed, Closed]);
    let why = sim.s.last_connection_failure().unwrap().to_string();
    assert!(why.contains("TEST authentication failed"), "{why}");
    // No retry: nothing to connect to, ever.
    sim.run_until(120_000);
    assert!(connects(&sim.events()).is_empty());
}

#[test]
fn a_silent_sasl_server_times_out_and_the_next_connection_starts_over() {
    let mut sim = Sim::new(sasl_config());
    sim.events();
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(30_000, 0x42, &PASSWD, false);
    sim.take_sent();
    // No SASL reply within the read timeout (2/3 of 30 s): the connection goes.
    sim.run_until(20_100);
    let events = sim.events();
    assert_eq!(disconnects(&events), 1, "{events:?}");
    let why = sim.s.last_connection_failure().unwrap().to_string();
    assert!(why.contains("no SASL reply"), "{why}");
    // A new connection runs a fresh exchange from its first step.
    sim.run_until(25_000);
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(30_000, 0x42, &PASSWD, false);
    let sent = sim.take_sent();
    assert_eq!(sasl_token(&sent[0]), b"hello");
}

/// An error's message with every cause behind it, as an error-chain printer shows it.
fn chain(e: &zkrs_session::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

#[test]
fn the_server_last_heard_from_us_when_the_newest_answered_request_was_sent() {
    let mut sim = Sim::new(config(1, 30_000));
    sim.events();
    assert_eq!(sim.s.last_heard(), None, "no session yet");
    sim.set_time(1);
    sim.handle_connected(sim.now);
    sim.take_bytes();
    sim.set_time(3);
    sim.respond_connect(6_000, 0x1234, &[7; 16], false);
    sim.events();
    // The handshake left at 1 ms: the server touched the session no earlier.
    assert_eq!(sim.s.last_heard(), Some(sim.at(1)));

    sim.set_time(10);
    sim.get_data("/a");
    sim.set_time(20);
    sim.get_data("/b");
    assert_eq!(sim.take_sent().len(), 2);
    // The first reply arrives at 50 ms: heard at its send time, 10 ms, not at 50.
    sim.set_time(50);
    sim.reply(1, 5, ErrorCode::Ok, &get_data_body(b"a"));
    assert_eq!(sim.s.last_heard(), Some(sim.at(10)));
    sim.set_time(60);
    sim.reply(2, 6, ErrorCode::Ok, &get_data_body(b"b"));
    assert_eq!(sim.s.last_heard(), Some(sim.at(20)));
    sim.events();

    // A ping counts the same way: sent when idle for the ping interval (2 s here, so at
    // 2020 ms), heard at its send time once answered.
    sim.run_until(2_100);
    assert_eq!(&sim.take_bytes()[..], &PING);
    let ping_sent = sim.at(2_020);
    sim.set_time(2_500);
    sim.reply(-2, 0, ErrorCode::Ok, &[]);
    assert_eq!(sim.s.last_heard(), Some(ping_sent));

    // A lost session forgets it.
    sim.run_until(20_000);
    assert!(states(&sim.events()).contains(&Lost));
    assert_eq!(sim.s.last_heard(), None);
}
