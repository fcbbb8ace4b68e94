//! A scripted fake ZooKeeper server for the sans-I/O session core, on virtual time.
//!
//! [`Sim`] owns a `Session<u32>` and plays both the driver (it calls the `handle_*` methods,
//! drains events, reads `transmit`) and the server (it decodes the frames the core sent and
//! builds the reply frames a test asks for). No socket, no sleep: time is `t0 + offset`.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use zkrs_codec::{
    check_frame, decode_connect_request, encode_request, jute, parse_request, write_frame,
    Create2Response, Encode, ErrorCode, EventType, GetChildrenResponse, GetDataResponse,
    KeeperState, List, OpCode, PathRecord, PathWatchRequest, ReplyHeader, Stat, StatResponse,
    WatcherEvent, DEFAULT_MAX_FRAME_LEN,
};
use zkrs_session::{ConnId, ConnectionState, Error};
use zkrs_session::{
    Event, Request, Session, SessionConfig, WatchKind, WatchOp, WatcherGroup, WatcherId,
};

/// Milliseconds as a `Duration`.
pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A ConnectRequest as the server decoded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectReq {
    pub protocol_version: i32,
    pub last_zxid_seen: i64,
    pub timeout_ms: i32,
    pub session_id: i64,
    pub passwd: Vec<u8>,
    pub read_only: bool,
    /// The frame's length prefix.
    pub body_len: usize,
}

/// A request frame as the server decoded it.
#[derive(Debug, Clone)]
pub struct Sent {
    pub xid: i32,
    pub op: OpCode,
    /// Everything after the request header.
    pub body: Bytes,
    /// The whole frame, length prefix included.
    pub raw: Bytes,
}

/// Splits a byte stream into whole frames (bodies, without the length prefix).
pub fn split_frames(mut bytes: &[u8]) -> Vec<Bytes> {
    let mut frames = Vec::new();
    while !bytes.is_empty() {
        let len = check_frame(bytes, usize::MAX >> 1)
            .expect("the client sent a bad length prefix")
            .expect("the client sent a partial frame");
        frames.push(Bytes::copy_from_slice(&bytes[4..4 + len]));
        bytes = &bytes[4 + len..];
    }
    frames
}

/// A reply frame: length, header, body.
pub fn reply_frame(xid: i32, zxid: i64, err: ErrorCode, body: &[u8]) -> BytesMut {
    let mut buf = BytesMut::new();
    write_frame(&mut buf, |buf| {
        ReplyHeader { xid, zxid, err }.encode(buf);
        buf.extend_from_slice(body);
    });
    buf
}

/// A connect response frame (with the trailing read-only byte).
pub fn connect_response_frame(
    timeout_ms: i32,
    session_id: i64,
    passwd: &[u8],
    read_only: bool,
) -> BytesMut {
    let mut buf = BytesMut::new();
    write_frame(&mut buf, |buf| {
        jute::put_i32(buf, 0);
        jute::put_i32(buf, timeout_ms);
        jute::put_i64(buf, session_id);
        jute::put_buffer(buf, passwd);
        jute::put_bool(buf, read_only);
    });
    buf
}

/// A notification frame (xid -1, zxid -1).
pub fn notification_frame(event_type: EventType, state: KeeperState, path: &str) -> BytesMut {
    let event = WatcherEvent {
        event_type,
        state,
        path: Some(path),
    };
    reply_frame(-1, -1, ErrorCode::Ok, &event.to_bytes())
}

/// The body of a successful getData reply.
pub fn get_data_body(data: &[u8]) -> BytesMut {
    GetDataResponse {
        data: Some(data),
        stat: Stat::default(),
    }
    .to_bytes()
}

/// The body of a successful exists / setData reply.
pub fn stat_body() -> BytesMut {
    StatResponse {
        stat: Stat::default(),
    }
    .to_bytes()
}

/// The body of a successful create2 reply.
pub fn create2_body(path: &str) -> BytesMut {
    Create2Response {
        path,
        stat: Stat::default(),
    }
    .to_bytes()
}

/// The body of a successful getChildren reply.
pub fn children_body(children: &[&str]) -> BytesMut {
    GetChildrenResponse {
        children: List::Slice(children),
    }
    .to_bytes()
}

/// Config for `hosts` hosts and a session timeout in milliseconds.
pub fn config(hosts: usize, timeout_ms: u64) -> SessionConfig {
    SessionConfig::new(hosts, ms(timeout_ms))
}

/// A request frame encoded with xid 0, as the client's handles encode them.
pub fn frame(op: OpCode, body: &impl Encode) -> BytesMut {
    let mut buf = BytesMut::new();
    encode_request(&mut buf, 0, op, body);
    buf
}

/// The driver and the server around one session core.
pub struct Sim {
    pub s: Session<u32>,
    pub t0: Instant,
    pub now: Instant,
    next_token: u32,
    /// The server's zxid counter (each reply made with [`Sim::reply_next_zxid`] bumps it).
    pub zxid: i64,
}

impl Sim {
    /// A new session core at `t0`; its first Connect event is left in the queue.
    pub fn new(cfg: SessionConfig) -> Sim {
        let t0 = Instant::now();
        Sim {
            s: Session::new(cfg, t0),
            t0,
            now: t0,
            next_token: 1,
            zxid: 0,
        }
    }

    /// A session that completed its handshake (one host, `timeout_ms` negotiated, session id
    /// `session_id`, password 16 × 0xAB), with every event so far drained.
    pub fn connected(cfg: SessionConfig, timeout_ms: i32, session_id: i64) -> Sim {
        let mut sim = Sim::new(cfg);
        let events = sim.events();
        assert!(
            matches!(events.as_slice(), [Event::Connect { .. }]),
            "{events:?}"
        );
        sim.handle_connected(sim.now);
        let req = sim.take_connect_request();
        assert_eq!(req.session_id, 0);
        sim.respond_connect(timeout_ms, session_id, &[0xAB; 16], false);
        let events = sim.events();
        assert!(
            events.iter().any(|e| matches!(
                e,
                Event::State(c) if c.state == ConnectionState::Connected
            )),
            "{events:?}"
        );
        sim
    }

    /// The driver's inputs by role, as the tests speak of them: each finds the connection's
    /// name (as a driver keeps it from the events) and calls the core's input by connection;
    /// with no connection of that role ever named, nothing (the core would ignore it).
    fn conn(&self, role: usize) -> Option<ConnId> {
        let (current, spare, retiring) = zkrs_session::__private::connections(&self.s);
        [current, spare, retiring][role]
    }

    pub fn handle_connected(&mut self, now: Instant) {
        if let Some(conn) = self.conn(0) {
            self.s.handle_connected(conn, now);
        }
    }

    pub fn handle_connect_failed(&mut self, now: Instant) {
        self.handle_disconnected(now);
    }

    pub fn handle_disconnected(&mut self, now: Instant) {
        if let Some(conn) = self.conn(0) {
            self.s.handle_closed(conn, None, now);
        }
    }

    pub fn handle_io_error(&mut self, error: std::io::Error, now: Instant) {
        if let Some(conn) = self.conn(0) {
            self.s.handle_closed(conn, Some(error), now);
        }
    }

    pub fn handle_read(&mut self, buf: &mut BytesMut, now: Instant) {
        if let Some(conn) = self.conn(0) {
            self.s.handle_read(conn, buf, now);
        }
    }

    pub fn handle_spare_connected(&mut self, now: Instant) {
        if let Some(conn) = self.conn(1) {
            self.s.handle_connected(conn, now);
        }
    }

    pub fn handle_spare_failed(&mut self, error: Option<std::io::Error>, now: Instant) {
        if let Some(conn) = self.conn(1) {
            self.s.handle_closed(conn, error, now);
        }
    }

    pub fn handle_retiring_read(&mut self, buf: &mut BytesMut, now: Instant) {
        if let Some(conn) = self.conn(2) {
            self.s.handle_read(conn, buf, now);
        }
    }

    pub fn handle_retiring_closed(&mut self, now: Instant) {
        if let Some(conn) = self.conn(2) {
            self.s.handle_closed(conn, None, now);
        }
    }

    /// `t0 + ms`.
    pub fn at(&self, ms_: u64) -> Instant {
        self.t0 + ms(ms_)
    }

    /// Milliseconds since t0 of an instant.
    pub fn offset(&self, t: Instant) -> Duration {
        t - self.t0
    }

    /// Sets the clock (never backwards) without calling anything.
    pub fn set_time(&mut self, ms_: u64) {
        let t = self.at(ms_);
        assert!(t >= self.now, "time goes forward only");
        self.now = t;
    }

    /// Runs the core's timers up to `t0 + ms`, the way a driver does: sleeps until
    /// `poll_timeout`, calls `handle_timeout` then, and so on. Fails on a busy loop.
    pub fn run_until(&mut self, ms_: u64) {
        let target = self.at(ms_);
        let mut spins = 0;
        while let Some(t) = self.s.poll_timeout() {
            if t > target {
                break;
            }
            let before = self.now;
            self.now = self.now.max(t);
            self.s.handle_timeout(self.now);
            if self.now == before {
                spins += 1;
                assert!(spins < 1000, "poll_timeout stays in the past: busy loop");
            } else {
                spins = 0;
            }
        }
        self.now = self.now.max(target);
    }

    /// Every event queued so far.
    pub fn events(&mut self) -> Vec<Event<u32>> {
        std::iter::from_fn(|| self.s.poll_event()).collect()
    }

    /// The bytes waiting to be written, consumed.
    pub fn take_bytes(&mut self) -> Bytes {
        let bytes = Bytes::copy_from_slice(self.s.poll_transmit());
        self.s.advance_transmit(bytes.len());
        bytes
    }

    /// The ConnectRequest the core sent (the only frame waiting), consumed.
    pub fn take_connect_request(&mut self) -> ConnectReq {
        let bytes = self.take_bytes();
        let frames = split_frames(&bytes);
        assert_eq!(frames.len(), 1, "expected exactly one ConnectRequest frame");
        let (req, read_only) =
            decode_connect_request(&frames[0]).expect("a ConnectRequest that decodes");
        ConnectReq {
            protocol_version: req.protocol_version,
            last_zxid_seen: req.last_zxid_seen,
            timeout_ms: req.timeout_ms,
            session_id: req.session_id,
            passwd: req.passwd.to_vec(),
            read_only,
            body_len: frames[0].len(),
        }
    }

    /// Every request frame waiting, decoded, consumed.
    pub fn take_sent(&mut self) -> Vec<Sent> {
        let bytes = self.take_bytes();
        let mut sent = Vec::new();
        let mut rest = &bytes[..];
        for body in split_frames(&bytes) {
            let raw = Bytes::copy_from_slice(&rest[..4 + body.len()]);
            rest = &rest[4 + body.len()..];
            let (header, tail) = parse_request(&body).expect("a request header that decodes");
            sent.push(Sent {
                xid: header.xid,
                op: header.op,
                body: body.slice_ref(tail),
                raw,
            });
        }
        sent
    }

    /// Feeds server bytes to the core.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut buf = BytesMut::from(bytes);
        self.handle_read(&mut buf, self.now);
    }

    /// The server accepts the handshake.
    pub fn respond_connect(&mut self, timeout_ms: i32, session_id: i64, passwd: &[u8], ro: bool) {
        let f = connect_response_frame(timeout_ms, session_id, passwd, ro);
        self.feed(&f);
    }

    /// The server answers `xid`.
    pub fn reply(&mut self, xid: i32, zxid: i64, err: ErrorCode, body: &[u8]) {
        let f = reply_frame(xid, zxid, err, body);
        self.feed(&f);
    }

    /// The server answers `xid` successfully with the next zxid.
    pub fn reply_next_zxid(&mut self, xid: i32, body: &[u8]) -> i64 {
        self.zxid += 1;
        let zxid = self.zxid;
        self.reply(xid, zxid, ErrorCode::Ok, body);
        zxid
    }

    /// The server sends a watch notification.
    pub fn notify(&mut self, event_type: EventType, path: &str) {
        let f = notification_frame(event_type, KeeperState::SyncConnected, path);
        self.feed(&f);
    }

    fn token(&mut self) -> u32 {
        let t = self.next_token;
        self.next_token += 1;
        t
    }

    /// Submits a request frame; returns its token.
    pub fn submit_frame(&mut self, op: OpCode, frame: BytesMut, watch: Option<WatchOp>) -> u32 {
        let token = self.token();
        self.s.submit(
            Request {
                frame,
                op,
                token,
                watch,
            },
            self.now,
        );
        token
    }

    /// Submits getData(path) without a watch, bound to session `session_id`
    /// (`Session::submit_in_session`).
    #[allow(dead_code)] // Not every test binary that includes this file uses it.
    pub fn get_data_in_session(&mut self, path: &str, session_id: i64) -> u32 {
        let token = self.token();
        let frame = frame(OpCode::GetData, &PathWatchRequest { path, watch: false });
        let request = Request {
            frame,
            op: OpCode::GetData,
            token,
            watch: None,
        };
        self.s.submit_in_session(request, session_id, self.now);
        token
    }

    /// Submits getData(path) without a watch.
    pub fn get_data(&mut self, path: &str) -> u32 {
        let f = frame(OpCode::GetData, &PathWatchRequest { path, watch: false });
        self.submit_frame(OpCode::GetData, f, None)
    }

    /// Submits a read that leaves a watch of `kind` (getData, exists or getChildren), for
    /// watcher number `watcher`.
    pub fn watch_read(&mut self, kind: WatchKind, path: &str, watcher: u64) -> u32 {
        self.watch_read_into(kind, path, watcher, None)
    }

    /// [`Sim::watch_read`] through `group`.
    pub fn watch_read_into(
        &mut self,
        kind: WatchKind,
        path: &str,
        watcher: u64,
        group: Option<WatcherGroup>,
    ) -> u32 {
        let op = match kind {
            WatchKind::Data => OpCode::GetData,
            WatchKind::Exist => OpCode::Exists,
            WatchKind::Child => OpCode::GetChildren,
            other => panic!("not a read watch: {other:?}"),
        };
        let f = frame(op, &PathWatchRequest { path, watch: true });
        self.submit_frame(
            op,
            f,
            Some(WatchOp::Register {
                kind,
                path: path.to_string(),
                watcher: WatcherId::new(watcher),
                group,
            }),
        )
    }

    /// Submits sync(path).
    pub fn sync(&mut self, path: &str) -> u32 {
        let f = frame(OpCode::Sync, &PathRecord { path });
        self.submit_frame(OpCode::Sync, f, None)
    }
}

/// The `Reply` event's result for `token`, if there is one among `events`.
pub fn reply_of(events: &[Event<u32>], token: u32) -> Option<&Result<zkrs_session::Reply, Error>> {
    events.iter().find_map(|e| match e {
        Event::Reply { token: t, result } if *t == token => Some(result),
        _ => None,
    })
}

/// The states of the `State` events among `events`, in order.
pub fn states(events: &[Event<u32>]) -> Vec<ConnectionState> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::State(c) => Some(c.state),
            _ => None,
        })
        .collect()
}

/// The hosts of the `Connect` events among `events`, in order.
pub fn connects(events: &[Event<u32>]) -> Vec<(usize, Duration)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Connect { host, timeout, .. } => Some((*host, *timeout)),
            _ => None,
        })
        .collect()
}

/// How many `Disconnect` events are among `events`.
pub fn disconnects(events: &[Event<u32>]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::Disconnect))
        .count()
}

/// The watch events among `events`: (watcher, event type, keeper state, path).
pub fn watch_events(events: &[Event<u32>]) -> Vec<(u64, EventType, KeeperState, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Watch { watcher, event } => Some((
                watcher.get(),
                event.event_type,
                event.state,
                event.path.clone(),
            )),
            _ => None,
        })
        .collect()
}

/// The default max frame length, re-exported for tests.
pub const MAX_FRAME: usize = DEFAULT_MAX_FRAME_LEN;
