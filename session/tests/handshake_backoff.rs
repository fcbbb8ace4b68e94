//! Reconnect back-off under a flapping server, on virtual time: a server that accepts the
//! TCP connection and then fails the handshake (closes it, or answers garbage) is an attempt
//! that failed like any other, so the waits between attempts grow to the cap instead of
//! starting over at the first step (a reconnect every 50-100 ms from every client).

#[path = "support/fake_server.rs"]
mod fake_server;

use fake_server::*;
use std::time::Duration;

/// The waits between successive connection attempts to one host whose every handshake
/// fails by `fail`.
fn waits(fail: impl Fn(&mut Sim)) -> Vec<Duration> {
    let mut sim = Sim::new(config(1, 60_000));
    let mut last = None;
    let mut waits = Vec::new();
    for _ in 0..8 {
        let events = sim.events();
        assert_eq!(connects(&events).len(), 1, "{events:?}");
        if let Some(last) = last {
            waits.push(sim.now - last);
        }
        last = Some(sim.now);
        sim.handle_connected(sim.now);
        sim.take_connect_request();
        fail(&mut sim);
        let next = sim.s.poll_timeout().expect("a next attempt");
        sim.run_until(sim.offset(next).as_millis() as u64);
    }
    waits
}

fn assert_grows(waits: &[Duration]) {
    // The defaults: 50 ms doubling to a 1 s cap, each with jitter in [half, whole].
    assert!(
        waits.iter().skip(4).all(|w| *w >= ms(500)),
        "the back-off starts over: {waits:?}"
    );
    assert!(waits.iter().all(|w| *w <= ms(1_000)), "{waits:?}");
}

#[test]
fn a_server_that_closes_during_the_handshake_meets_a_growing_back_off() {
    assert_grows(&waits(|sim| sim.handle_disconnected(sim.now)));
}

#[test]
fn a_server_that_answers_the_handshake_with_garbage_meets_a_growing_back_off() {
    assert_grows(&waits(|sim| sim.feed(&(-1i32).to_be_bytes())));
}

#[test]
fn a_handshake_that_opens_the_session_starts_the_back_off_over() {
    let mut sim = Sim::connected(config(1, 60_000), 60_000, 0x42);
    sim.handle_disconnected(sim.now);
    let next = sim.s.poll_timeout().expect("a next attempt");
    assert!(next - sim.now <= ms(100), "{:?}", next - sim.now);
}

#[test]
fn a_server_that_grants_the_session_then_drops_meets_a_growing_back_off() {
    // The session is granted, so the handshake worked; the connection then drops at once,
    // every time. Counted as working, each loss started the back-off over: a reconnect every
    // 50-100 ms from every client, for as long as the server flaps.
    assert_grows(&waits(|sim| {
        sim.respond_connect(60_000, 0x42, &[0xAB; 16], false);
        sim.handle_disconnected(sim.now);
    }));
}

#[test]
fn a_connection_that_stayed_open_starts_the_back_off_over() {
    let mut sim = Sim::new(config(1, 60_000));
    // Four flaps: the back-off grows.
    for _ in 0..4 {
        sim.events();
        sim.handle_connected(sim.now);
        sim.take_connect_request();
        sim.respond_connect(60_000, 0x42, &[0xAB; 16], false);
        sim.handle_disconnected(sim.now);
        let next = sim.s.poll_timeout().expect("a next attempt");
        sim.run_until(sim.offset(next).as_millis() as u64);
    }
    // Then a connection that lived longer than the longest wait: it worked.
    sim.events();
    sim.handle_connected(sim.now);
    sim.take_connect_request();
    sim.respond_connect(60_000, 0x42, &[0xAB; 16], false);
    let later = sim.offset(sim.now).as_millis() as u64 + 5_000;
    sim.run_until(later);
    sim.take_bytes();
    sim.handle_disconnected(sim.now);
    let next = sim.s.poll_timeout().expect("a next attempt");
    assert!(next - sim.now <= ms(100), "{:?}", next - sim.now);
}
