//! Sessions that outlive a client: resuming one by id and password, the server's refusal,
//! and detaching (stopping without closeSession), on virtual time against a scripted server.

#[path = "support/fake_server.rs"]
mod fake_server;

use fake_server::*;
use zkrs_codec::OpCode;
use zkrs_session::{ConnectionState, Event};

const PASSWD: [u8; 16] = [0x5A; 16];

fn resuming(session_id: i64) -> Sim {
    let mut cfg = config(1, 4_000);
    cfg.resume = Some((session_id, PASSWD.to_vec().into()));
    let mut sim = Sim::new(cfg);
    assert!(matches!(sim.events().as_slice(), [Event::Connect { .. }]));
    sim.handle_connected(sim.now);
    sim
}

fn states(events: &[Event<u32>]) -> Vec<ConnectionState> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::State(c) => Some(c.state),
            _ => None,
        })
        .collect()
}

#[test]
fn the_first_handshake_presents_the_session_to_resume() {
    let mut sim = resuming(0x7001);
    let req = sim.take_connect_request();
    assert_eq!((req.session_id, req.passwd), (0x7001, PASSWD.to_vec()));
    sim.respond_connect(4_000, 0x7001, &PASSWD, false);
    let events = sim.events();
    assert_eq!(states(&events), [ConnectionState::Connected]);
    assert_eq!(sim.s.session_id(), 0x7001);
    assert_eq!(sim.s.session_password().expose(), PASSWD);
}

#[test]
fn a_refused_resume_is_lost_with_the_reason_then_a_new_session_is_asked_for() {
    let mut sim = resuming(0x7002);
    sim.take_connect_request();
    // ZooKeeper's answer to an expired session and to a wrong password alike.
    sim.respond_connect(0, 0, &[0; 16], false);
    let events = sim.events();
    assert_eq!(states(&events), [ConnectionState::Lost]);
    assert_eq!(
        sim.s
            .last_connection_failure()
            .map(ToString::to_string)
            .as_deref(),
        Some(
            "the server refused to resume session 0x7002: it has expired, or its password is \
             wrong"
        )
    );
    assert_eq!(sim.s.session_id(), 0);
    // The next attempt asks for a new session.
    let next = sim.s.poll_timeout().expect("a reconnection is planned");
    sim.s.handle_timeout(next);
    sim.events();
    sim.handle_connected(next);
    let req = sim.take_connect_request();
    assert_eq!((req.session_id, req.passwd), (0, vec![0; 16]));
}

#[test]
fn detaching_sends_no_close_session() {
    let mut sim = Sim::connected(config(1, 4_000), 4_000, 0x7003);
    let token = sim.get_data("/a");
    sim.take_sent();
    sim.s.detach();
    assert!(
        sim.s.poll_transmit().is_empty(),
        "nothing sent, no closeSession"
    );
    let events = sim.events();
    assert!(
        matches!(events.first(), Some(Event::Disconnect)),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Reply { token: t, result: Err(e) } if *t == token && e.is_closed()
        )),
        "{events:?}"
    );
    assert_eq!(states(&events), [ConnectionState::Closed]);
    assert!(matches!(events.last(), Some(Event::Closed)));
    // Closed for good: a request now fails at once, and nothing is written.
    let late = sim.get_data("/b");
    let events = sim.events();
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Reply { token: t, result: Err(_) } if *t == late)));
    assert!(sim.take_sent().iter().all(|s| s.op != OpCode::CloseSession));
}

/// One host and a 30 s session: the host's share of the timeout is all of it. A server that
/// accepts the reconnection and never answers (ZooKeeper 3.8 does, to a connection made while
/// it starts) must not hold the only attempt until the session is gone: the attempt is given
/// half of what is left, and the next one resumes the session in time.
#[test]
fn an_unanswered_handshake_leaves_time_to_resume_the_session() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x7004);
    let lost_at = 1_000;
    sim.run_until(lost_at);
    let now = sim.now;
    sim.handle_disconnected(now);
    assert_eq!(states(&sim.events()), [ConnectionState::Suspended]);

    // The reconnection: TCP connected, the ConnectRequest sent, no answer ever.
    let mut handshakes = 0;
    let resumed_at = loop {
        let next = sim.s.poll_timeout().expect("a timer while suspended");
        let next_ms = sim.offset(next).as_millis() as u64;
        assert!(
            next_ms < lost_at + 30_000,
            "no new attempt before the session's timeout"
        );
        sim.run_until(next_ms);
        let events = sim.events();
        assert!(
            !states(&events).contains(&ConnectionState::Lost),
            "{events:?}"
        );
        if !events.iter().any(|e| matches!(e, Event::Connect { .. })) {
            continue;
        }
        sim.handle_connected(sim.now);
        let req = sim.take_connect_request();
        assert_eq!(req.session_id, 0x7004, "each attempt resumes the session");
        handshakes += 1;
        if handshakes == 2 {
            break sim.offset(sim.now).as_millis() as u64;
        }
    };
    assert!(
        resumed_at <= lost_at + 16_000,
        "second attempt at {resumed_at} ms"
    );
    sim.respond_connect(30_000, 0x7004, &[0xAB; 16], false);
    assert_eq!(states(&sim.events()), [ConnectionState::Reconnected]);
    let failure = sim.s.last_connection_failure().map(ToString::to_string);
    assert!(
        failure
            .as_deref()
            .is_some_and(|f| f.starts_with("no handshake reply from the server within 14")),
        "the first attempt's end, in words: {failure:?}"
    );
}
