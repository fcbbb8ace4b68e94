//! What a server chooses is checked before it is used: the negotiated session timeout is
//! kept within a sane range around what was asked, and a special reply nothing asked for
//! (a SetWatches or AUTH xid) is a protocol error, not liveness or a reason to forget an
//! identity.

#[path = "support/fake_server.rs"]
mod fake_server;

use fake_server::*;
use std::time::Duration;
use zkrs_codec::ErrorCode;
use zkrs_session::{ConnectionFailure, Secret};

/// xids of the replies that answer no request of the caller's.
const SET_WATCHES_XID: i32 = -8;
const AUTH_XID: i32 = -4;

fn negotiated_for(asked_ms: u64, granted_ms: i32) -> Duration {
    let mut sim = Sim::new(config(1, asked_ms));
    sim.events();
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(granted_ms, 0x42, &[0xAB; 16], false);
    sim.s.negotiated_timeout()
}

/// The connection was dropped, the frame named as the reason.
fn assert_dropped_as_malformed(sim: &mut Sim) {
    let events = sim.events();
    assert_eq!(disconnects(&events), 1, "{events:?}");
    assert!(
        matches!(
            sim.s.last_connection_failure(),
            Some(ConnectionFailure::MalformedFrame(_))
        ),
        "{:?}",
        sim.s.last_connection_failure()
    );
}

#[test]
fn a_granted_timeout_of_days_is_capped() {
    // i32::MAX ms is 24 days: a read timeout of 16 days would leave a dead server unnoticed.
    let t = negotiated_for(10_000, i32::MAX);
    assert!(t <= Duration::from_secs(120), "{t:?}");
    // A server's minimum above what was asked (2 ticks) is taken as it is.
    assert_eq!(negotiated_for(1_000, 4_000), ms(4_000));
    // A client that asked for more than the cap keeps what it asked for at most.
    assert_eq!(negotiated_for(300_000, 600_000), ms(300_000));
    assert_eq!(negotiated_for(300_000, 200_000), ms(200_000));
}

#[test]
fn a_granted_timeout_of_a_millisecond_is_raised_to_the_floor() {
    // 1 ms would make the read timeout and the ping interval zero: a reconnect loop.
    let t = negotiated_for(10_000, 1);
    assert!(t >= ms(100), "{t:?}");
    // What a real server grants (2 ticks of 50 ms) is kept.
    assert_eq!(negotiated_for(10_000, 100), ms(100));
}

#[test]
fn an_unsolicited_set_watches_reply_is_a_protocol_error() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    sim.take_bytes();
    sim.reply(SET_WATCHES_XID, 0, ErrorCode::Ok, &[]);
    assert_dropped_as_malformed(&mut sim);
}

#[test]
fn an_unsolicited_auth_failure_neither_drops_an_identity_nor_passes() {
    let mut cfg = config(1, 30_000);
    cfg.auth
        .push(("digest".into(), Secret::from(b"user:pass".to_vec())));
    let mut sim = Sim::new(cfg);
    sim.events();
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(30_000, 0x42, &[0xAB; 16], false);
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1, "the identity is sent once");
    sim.reply(AUTH_XID, 0, ErrorCode::Ok, &[]); // its answer
    assert_eq!(disconnects(&sim.events()), 0);
    // A second AUTH reply nobody asked for, claiming failure.
    sim.reply(AUTH_XID, 0, ErrorCode::AuthFailed, &[]);
    assert_dropped_as_malformed(&mut sim);
    // The identity is still the session's: the next connection sends it again.
    let next = sim.s.poll_timeout().expect("a next attempt");
    sim.run_until(sim.offset(next).as_millis() as u64);
    sim.events();
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(30_000, 0x42, &[0xAB; 16], false);
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 1, "the identity is sent again: {sent:?}");
}
