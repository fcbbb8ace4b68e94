//! A reply over the client's reply limit, on virtual time against the scripted server: only
//! its request fails (kind `ReplyTooLarge`, naming the size and the limit), its bytes are
//! skipped as they come without being kept, and the connection, the session and every other
//! request go on. A frame over the limit that answers no pending request still drops the
//! connection (a lying length).

#[path = "support/fake_server.rs"]
mod fake_server;

use bytes::BytesMut;
use fake_server::*;
use zkrs_codec::{EventType, KeeperState};
use zkrs_session::{ConnectionState, ErrorCode, ErrorKind, Event, WatchKind};

/// 2 MiB of node data: over the default reply limit, however much room it leaves.
const BIG: usize = 2 * 1024 * 1024;

fn error_of(events: &[Event<u32>], token: u32) -> zkrs_session::Error {
    match reply_of(events, token) {
        Some(Err(e)) => e.clone(),
        other => panic!("token {token}: {other:?}"),
    }
}

/// Feeds `bytes` in chunks of `chunk` bytes, as a socket would, and checks after each read
/// that the core kept no more than a header's worth of them in the read buffer.
fn feed_in_chunks(sim: &mut Sim, bytes: &[u8], chunk: usize) -> usize {
    let mut buf = BytesMut::new();
    let mut most_left = 0;
    for piece in bytes.chunks(chunk) {
        buf.extend_from_slice(piece);
        sim.handle_read(&mut buf, sim.now);
        most_left = most_left.max(buf.len());
    }
    most_left
}

#[test]
fn a_reply_over_the_reply_limit_fails_only_its_request() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let big = sim.watch_read(WatchKind::Data, "/big", 7);
    let small = sim.get_data("/small");
    let sent = sim.take_sent();
    assert_eq!(sent.len(), 2);

    let mut bytes = reply_frame(
        sent[0].xid,
        5,
        ErrorCode::Ok,
        &get_data_body(&vec![0xCD; BIG]),
    );
    let total = bytes.len() - 4;
    bytes.extend_from_slice(&reply_frame(
        sent[1].xid,
        5,
        ErrorCode::Ok,
        &get_data_body(b"ok"),
    ));
    let kept = feed_in_chunks(&mut sim, &bytes, 64 * 1024);
    assert!(kept < 64 * 1024, "the big reply's bytes were kept: {kept}");

    let events = sim.events();
    assert_eq!(disconnects(&events), 0, "{events:?}");
    assert!(states(&events).is_empty(), "{:?}", states(&events));
    let e = error_of(&events, big);
    assert_eq!(e.kind(), ErrorKind::ReplyTooLarge, "{e}");
    assert!(!e.is_retryable(), "{e}");
    let limit = config(1, 30_000).max_reply_len;
    let text = e.to_string();
    assert!(
        text.contains(&total.to_string()) && text.contains(&limit.to_string()),
        "{text}"
    );
    // Its watcher is released: the caller never got the watch.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::WatcherUnused(w) if w.get() == 7)),
        "{events:?}"
    );
    match reply_of(&events, small) {
        Some(Ok(_)) => {}
        other => panic!("the next request: {other:?}"),
    }
    assert_eq!(sim.s.state(), ConnectionState::Connected);
    assert_eq!(sim.s.last_zxid(), 5);

    // The connection lives on: the next request is answered on it.
    let after = sim.get_data("/after");
    let xid = sim.take_sent()[0].xid;
    sim.reply(xid, 6, ErrorCode::Ok, &get_data_body(b"fine"));
    let events = sim.events();
    assert!(
        matches!(reply_of(&events, after), Some(Ok(_))),
        "{events:?}"
    );
    assert_eq!(disconnects(&events), 0);
}

#[test]
fn a_reply_over_the_limit_arriving_at_once_is_skipped_too() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let big = sim.get_data("/big");
    let xid = sim.take_sent()[0].xid;
    sim.reply(xid, 5, ErrorCode::Ok, &get_data_body(&vec![1; BIG]));
    let events = sim.events();
    assert_eq!(disconnects(&events), 0, "{events:?}");
    assert_eq!(error_of(&events, big).kind(), ErrorKind::ReplyTooLarge);
}

#[test]
fn an_oversize_frame_answering_no_pending_request_drops_the_connection() {
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let t = sim.get_data("/a");
    let xid = sim.take_sent()[0].xid;
    sim.reply(xid + 1, 5, ErrorCode::Ok, &get_data_body(&vec![1; BIG]));
    let events = sim.events();
    assert_eq!(disconnects(&events), 1, "{events:?}");
    let e = error_of(&events, t);
    assert_eq!(e.kind(), ErrorKind::ConnectionLoss, "{e}");

    // A notification that large is no request's answer either.
    let mut sim = Sim::connected(config(1, 30_000), 30_000, 0x42);
    let path = "x".repeat(BIG);
    let f = notification_frame(
        EventType::NodeDataChanged,
        KeeperState::SyncConnected,
        &path,
    );
    sim.feed(&f);
    assert_eq!(disconnects(&sim.events()), 1);
}
