//! The core on virtual time, with no socket: expiry, containers and TTL nodes reaped, timeouts
//! negotiated, and bad input closing the connection instead of panicking.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use proptest::prelude::*;
use zkrs_codec::{
    check_frame, decode_connect_response, encode_connect_request, encode_request, jute::Reader,
    parse_reply, Acl, ConnectRequest, CreateMode, CreateRequest, CreateTtlRequest, Decode,
    ErrorCode, EventType, List, OpCode, PathWatchRequest, ReplyHeader, WatcherEvent,
};
use zkrs_model::{ConnectionId, Server, ServerConfig};

/// A frame the model sent.
#[derive(Debug)]
enum Out {
    Reply(ReplyHeader),
    Event(EventType, String),
}

/// No body (pings).
struct Empty;

impl zkrs_codec::Encode for Empty {
    fn encode(&self, _: &mut BytesMut) {}
}

struct Client {
    conn: ConnectionId,
    session: i64,
    timeout_ms: i32,
    xid: i32,
}

/// `n` milliseconds after the tests' common start.
fn ms(n: u64) -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now) + Duration::from_millis(n)
}

/// Everything the server has to send, per connection (and whether it closes it).
fn flush(server: &mut Server) -> HashMap<ConnectionId, (Vec<u8>, bool)> {
    let mut out: HashMap<ConnectionId, (Vec<u8>, bool)> = HashMap::new();
    while let Some(t) = server.poll_transmit() {
        let entry = out.entry(t.connection).or_default();
        entry.0.extend_from_slice(&t.data);
        entry.1 |= t.close;
    }
    out
}

/// Everything the server has to send to `conn` (and whether it closes it); other
/// connections' output is dropped.
fn drain(server: &mut Server, conn: ConnectionId) -> (Vec<u8>, bool) {
    let mut bytes = Vec::new();
    let mut closed = false;
    while let Some(t) = server.poll_transmit() {
        if t.connection == conn {
            bytes.extend_from_slice(&t.data);
            closed |= t.close;
        }
    }
    (bytes, closed)
}

fn frames(bytes: &[u8]) -> Vec<Out> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while let Ok(Some(len)) = check_frame(rest, usize::MAX >> 1) {
        let (header, body) = parse_reply(&rest[4..4 + len]).unwrap();
        if header.xid == -1 {
            let e = WatcherEvent::decode(&mut Reader::new(body)).unwrap();
            out.push(Out::Event(e.event_type, e.path.unwrap_or("").to_owned()));
        } else {
            out.push(Out::Reply(header));
        }
        rest = &rest[4 + len..];
    }
    out
}

fn connect(server: &mut Server, now: Instant, timeout_ms: i32) -> Client {
    let conn = server.accept("127.0.0.1", now);
    let mut buf = BytesMut::new();
    encode_connect_request(
        &mut buf,
        &ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout_ms,
            session_id: 0,
            passwd: &[0; 16],
        },
        false,
    );
    server.handle_input(conn, &buf, now);
    let (bytes, closed) = drain(server, conn);
    assert!(!closed);
    let len = check_frame(&bytes, 1 << 20).unwrap().unwrap();
    let (resp, _) = decode_connect_response(&bytes[4..4 + len]).unwrap();
    Client {
        conn,
        session: resp.session_id,
        timeout_ms: resp.timeout_ms,
        xid: 1,
    }
}

fn call(
    server: &mut Server,
    now: Instant,
    c: &mut Client,
    op: OpCode,
    body: &dyn zkrs_codec::Encode,
) -> Vec<Out> {
    let mut buf = BytesMut::new();
    encode_request(&mut buf, c.xid, op, body);
    c.xid += 1;
    server.handle_input(c.conn, &buf, now);
    frames(&drain(server, c.conn).0)
}

fn create(
    server: &mut Server,
    now: Instant,
    c: &mut Client,
    path: &str,
    mode: CreateMode,
) -> ErrorCode {
    let req = CreateRequest {
        path,
        data: Some(b""),
        acl: List::from(Acl::OPEN_ACL_UNSAFE),
        mode,
    };
    let op = if mode == CreateMode::Container {
        OpCode::CreateContainer
    } else {
        OpCode::Create
    };
    match call(server, now, c, op, &req).last() {
        Some(Out::Reply(h)) => h.err,
        other => panic!("no reply: {other:?}"),
    }
}

fn exists_watch(server: &mut Server, now: Instant, c: &mut Client, path: &str) {
    call(
        server,
        now,
        c,
        OpCode::Exists,
        &PathWatchRequest { path, watch: true },
    );
}

#[test]
fn timeouts_are_clamped_to_two_and_twenty_ticks() {
    let mut server = Server::new(ServerConfig::default(), ms(0));
    assert_eq!(connect(&mut server, ms(0), 10).timeout_ms, 400);
    assert_eq!(connect(&mut server, ms(0), 3000).timeout_ms, 3000);
    assert_eq!(connect(&mut server, ms(0), 600_000).timeout_ms, 4000);
}

#[test]
fn a_silent_session_expires_and_its_ephemerals_go_with_a_watch_event() {
    let mut server = Server::new(ServerConfig::default(), ms(0));
    let mut owner = connect(&mut server, ms(0), 1000);
    let mut watcher = connect(&mut server, ms(0), 4000);
    assert_eq!(
        create(&mut server, ms(0), &mut owner, "/e", CreateMode::Ephemeral),
        ErrorCode::Ok
    );
    exists_watch(&mut server, ms(0), &mut watcher, "/e");

    // The watcher pings; the owner is silent. Expiry is due at the tick after 1000 ms.
    let mut now = ms(0);
    while now < ms(1000) {
        now += Duration::from_millis(100);
        call(&mut server, now, &mut watcher, OpCode::Ping, &Empty);
        server.handle_timeout(now);
        assert!(
            server.session_ids().contains(&owner.session),
            "expired early at {now:?}"
        );
    }
    let due = server.poll_timeout().expect("an expiry is due");
    assert!(due <= ms(1200), "expiry scheduled at {due:?}");
    server.handle_timeout(ms(1200));
    assert!(!server.session_ids().contains(&owner.session));
    let mut out = flush(&mut server);
    let (bytes, closed) = out.remove(&owner.conn).unwrap_or_default();
    assert!(
        bytes.is_empty() && closed,
        "the expired session's connection is closed"
    );
    assert!(server.tree().get("/e").is_none());
    let events = frames(&out.remove(&watcher.conn).unwrap_or_default().0);
    assert!(
        matches!(&events[..], [Out::Event(EventType::NodeDeleted, p)] if p == "/e"),
        "{events:?}"
    );
}

#[test]
fn containers_and_ttl_nodes_are_reaped_when_the_reaper_runs() {
    let mut config = ServerConfig::default();
    config.container_check_interval = Duration::from_millis(1000);
    let mut server = Server::new(config, ms(0));
    let mut c = connect(&mut server, ms(0), 4000);
    assert_eq!(
        create(&mut server, ms(0), &mut c, "/box", CreateMode::Container),
        ErrorCode::Ok
    );
    assert_eq!(
        create(&mut server, ms(0), &mut c, "/never", CreateMode::Container),
        ErrorCode::Ok
    );
    assert_eq!(
        create(&mut server, ms(0), &mut c, "/box/x", CreateMode::Persistent),
        ErrorCode::Ok
    );
    let ttl = CreateTtlRequest {
        path: "/ttl",
        data: Some(b""),
        acl: List::from(Acl::OPEN_ACL_UNSAFE),
        mode: CreateMode::PersistentWithTtl,
        ttl_ms: 1500,
    };
    call(&mut server, ms(0), &mut c, OpCode::CreateTtl, &ttl);
    assert!(server.tree().get("/ttl").is_some());

    // Delete the child: the container is now empty and had a child, so it goes at the next pass.
    let del = zkrs_codec::PathVersionRequest {
        path: "/box/x",
        version: -1,
    };
    call(&mut server, ms(10), &mut c, OpCode::Delete, &del);
    call(&mut server, ms(900), &mut c, OpCode::Ping, &Empty);
    server.handle_timeout(ms(900));
    assert!(
        server.tree().get("/box").is_some(),
        "reaped before the pass"
    );
    server.handle_timeout(ms(1000));
    assert!(
        server.tree().get("/box").is_none(),
        "an emptied container is reaped"
    );
    assert!(
        server.tree().get("/never").is_some(),
        "a never-used container stays"
    );
    assert!(
        server.tree().get("/ttl").is_some(),
        "the TTL has not passed"
    );
    call(&mut server, ms(1900), &mut c, OpCode::Ping, &Empty);
    server.handle_timeout(ms(2000));
    assert!(
        server.tree().get("/ttl").is_none(),
        "a TTL node unmodified for its TTL is reaped"
    );
}

#[test]
fn an_oversized_frame_closes_the_connection() {
    let mut server = Server::new(ServerConfig::default(), ms(0));
    let c = connect(&mut server, ms(0), 4000);
    server.handle_input(c.conn, &0x0010_0000i32.to_be_bytes(), ms(1));
    assert!(
        drain(&mut server, c.conn).1,
        "a frame over jute.maxbuffer closes"
    );
    assert!(
        server.session_ids().contains(&c.session),
        "the session stays"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random bytes as the handshake, or after it, never panic; the connection is answered or
    /// closed.
    #[test]
    fn random_bytes_never_panic(handshake in any::<bool>(), bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut server = Server::new(ServerConfig::default(), ms(0));
        let conn = if handshake {
            server.accept("127.0.0.1", ms(0))
        } else {
            connect(&mut server, ms(0), 4000).conn
        };
        server.handle_input(conn, &bytes, ms(1));
        let _ = drain(&mut server, conn);
        server.handle_timeout(ms(10_000));
        while server.poll_transmit().is_some() {}
    }

    /// A well-framed request with a random opcode and body never panics either.
    #[test]
    fn random_requests_never_panic(op in -12i32..110, body in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut server = Server::new(ServerConfig::default(), ms(0));
        let c = connect(&mut server, ms(0), 4000);
        let mut frame = Vec::new();
        frame.extend_from_slice(&((8 + body.len()) as i32).to_be_bytes());
        frame.extend_from_slice(&1i32.to_be_bytes());
        frame.extend_from_slice(&op.to_be_bytes());
        frame.extend_from_slice(&body);
        server.handle_input(c.conn, &frame, ms(1));
        let _ = drain(&mut server, c.conn);
    }
}
