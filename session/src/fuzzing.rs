//! The body of the `session` fuzz target (`fuzz/fuzz_targets/session.rs`), kept in the library
//! so the seed corpus is replayed by an ordinary `cargo test` on stable
//! (`session/tests/session_fuzz_seeds.rs`). Built only with the `fuzzing` feature.
//!
//! [`session`] builds a `Session<u32>` on virtual time and reads its input as a script: each
//! step is an action byte and its arguments (submit a request, feed raw or well-formed server
//! bytes, let time pass, connect, disconnect, close, forget a watcher, add an identity, ...).
//! A small server model reads what the core transmits and answers the oldest request it got,
//! like a real server. After every step the events are drained and these invariants checked
//! (a failed one panics, and is a bug in the core):
//!
//! - no panic anywhere;
//! - every token is answered at most once, and only tokens that were handed in;
//! - after [`Event::Closed`] nothing more is emitted, except the immediate answers to calls
//!   made after it; `Closed` comes once;
//! - `in_flight()` never exceeds the requests handed in and not answered yet, plus the
//!   requests the core sends by itself (closeSession, removeWatches);
//! - no busy loop: after `handle_timeout(now)`, `poll_timeout()` is later than `now`;
//! - at most one connection at a time: no `Connect` until the previous one was ended by a
//!   `Disconnect`; hosts are in range;
//! - the client's bytes are well-formed: a ConnectRequest first on each connection, then
//!   request frames with a known opcode, special xids only for ping/auth/setWatches, and
//!   ordinary xids strictly increasing over the whole session;
//! - a one-shot watcher fires at most once, and never after `WatcherUnused`;
//! - a session that was reported `Lost` never comes back in a later state change, and state
//!   changes follow the documented transitions (`Suspended` only from a connected state, ...);
//! - a successful reply's body decodes as its request's reply record;
//! - SetWatches comes before any ordinary request on a connection;
//! - at the end of the script, `close` then time passing answers every token exactly once, and
//!   every watcher handed in was either released (`WatcherUnused`) or told something.
//!
//! [`session`] looks past the known bugs listed in [`KNOWN_BUGS`] (so that the fuzzer finds
//! new ones); [`session_strict`] does not; [`session_trace`] prints what a script does.
//!
//! Script format (once the input runs out, missing bytes read as 0): three bytes of settings
//! (flags: `& 3` + 1 hosts, `& 4` read-only allowed, `& 8` one identity in the config, `& 16`
//! 8-byte SetWatches batches, `& 32` 64-byte frame limit; session timeout in 100 ms units minus
//! one; host shuffle seed), then actions, `byte % 16`:
//!
//! | byte | action | argument bytes |
//! | --- | --- | --- |
//! | 0 | submit | opcode selector (`& 16`: with a watch), path index |
//! | 1 | raw server bytes | count (`% 64`), the bytes |
//! | 2 | server answers its oldest request | mode (`& 15`: 0-7 ok, 8-9 NoNode, 10 error, 11 garbage body, 12 truncated body, 13-15 extra bytes; `>> 6`: zxid), more by mode |
//! | 3 | server connect response | flags (`& 7` timeout, `& 0x18` session: resume/0/new, `& 0x20` no read-only byte, `& 0x40` read-only, `& 0x80` truncated) |
//! | 4 | server notification | event type and path |
//! | 5 | time passes, then `handle_timeout` if due | `>> 6`: ms, ×50 ms, s, to the next deadline; `& 63`: amount |
//! | 6 | `handle_timeout` now | |
//! | 7, 8, 9 | `handle_connected`, `handle_connect_failed`, `handle_disconnected` | |
//! | 10 | `close` (`& 16`: with a token) | |
//! | 11 | `forget_watcher` | watcher index |
//! | 12 | `add_auth` (`& 16`: with a token) | |
//! | 13 | `handle_read_write_found` | host |
//! | 14 | stall writes / write some (when stalled) | (when stalled) u16 byte count |
//! | 15 | server answers its oldest request in two reads | split point, then as 2 |

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use zkrs_codec::{
    check_frame, decode_connect_request, encode_header_only, encode_request, jute, parse_request,
    write_frame, Acl, AddWatchMode, AddWatchRequest, AuthPacket, Create2Response, CreateMode,
    CreateRequest, Decode, Encode, ErrorCode, EventType, GetAclResponse,
    GetAllChildrenNumberResponse, GetChildren2Response, GetChildrenResponse, GetDataResponse,
    GetEphemeralsResponse, KeeperState, List, MultiList, MultiRequest, MultiResponse, OpCode,
    PathRecord, PathVersionRequest, PathWatchRequest, ReplyHeader, SetDataRequest, SetWatches,
    SetWatches2, Stat, StatResponse, WatcherEvent, WatcherType, WatchesRequest, WhoAmIResponse,
};

use super::{
    Conn, ConnectionState, Event, Request, Session, SessionConfig, WatchKind, WatchOp, WatcherId,
};

/// Known bugs of the core that [`session`] looks past, so that the fuzzer can find others
/// ([`session_strict`] tolerates none). Each has an `#[ignore]`d test in
/// `session/tests/session_core.rs` and a reproducer in `session/tests/session_fuzz_seeds.rs`;
/// set its flag to `false` here once it is fixed.
#[derive(Debug, Clone, Copy)]
pub struct KnownBugs {
    /// `add_auth` with a token while not connected, then `close()`: the token is never
    /// answered (`finish_close` does not drain `pending_auth_later`).
    pub add_auth_token_leak: bool,
    /// `handle_read_write_found` emits two `Connect` events (the next host's, then the
    /// read-write host's); during `close()` it emits `Connect` after `Closed`.
    pub read_write_found: bool,
    /// A server that grants session id 0: once disconnected, `poll_timeout` stays in the past.
    pub session_id_zero_spin: bool,
    /// A closeSession request handed to `submit`, answered while `close()` is under way:
    /// `handle_frame` finishes the close and drops that request's token unanswered.
    pub submitted_close_session_token_leak: bool,
}

/// [`session`], where action 13 may also change the host list
/// ([`Session::update_hosts`](crate::Session::update_hosts)) or detach
/// ([`Session::detach`](crate::Session::detach)): the same invariants must hold.
pub fn session_with_host_updates(data: &[u8]) {
    let mut h = Harness::new(data, KNOWN_BUGS);
    h.host_updates = true;
    let mut steps = 0;
    while !h.input.is_empty() && steps < 4096 {
        h.step();
        steps += 1;
    }
    h.finish();
}

/// The known bugs [`session`] tolerates today.
pub const KNOWN_BUGS: KnownBugs = KnownBugs {
    add_auth_token_leak: false,
    read_write_found: false,
    session_id_zero_spin: false,
    submitted_close_session_token_leak: false,
};

const STRICT: KnownBugs = KnownBugs {
    add_auth_token_leak: false,
    read_write_found: false,
    session_id_zero_spin: false,
    submitted_close_session_token_leak: false,
};

const PATHS: [&str; 5] = ["/", "/a", "/a/b", "/c", "/a/b/c"];

/// The script: bytes taken from the front; 0 once it runs out.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.byte(), self.byte()])
    }

    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (taken, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        taken
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What the fake server knows about the current connection.
#[derive(Default)]
struct Server {
    /// Bytes received on this connection and not parsed yet.
    rx: BytesMut,
    /// The next frame must be a ConnectRequest.
    expect_connect: bool,
    /// The session id and password of this connection's ConnectRequest.
    connect_seen: Option<(i64, Vec<u8>)>,
    /// Whether an ordinary request (xid > 0) came on this connection.
    seen_ordinary: bool,
    /// Raw bytes were sent on this connection: a "connect response" after them is read
    /// together with them, so it is not the modelled server's answer.
    raw_bytes: bool,
    /// Requests received and not answered: (xid, opcode).
    queue: VecDeque<(i32, OpCode)>,
    /// The largest ordinary xid received over the whole session.
    last_xid: i32,
    /// The server's zxid counter.
    zxid: i64,
    /// Session ids handed out.
    next_session: i64,
}

impl Server {
    fn reset_connection(&mut self, expect_connect: bool) {
        self.rx.clear();
        self.expect_connect = expect_connect;
        self.connect_seen = None;
        self.seen_ordinary = false;
        self.raw_bytes = false;
        self.queue.clear();
    }

    /// Parses every whole frame received, checking that the client's bytes are well-formed.
    fn parse(&mut self, can_be_read_only: bool) {
        loop {
            let len = match check_frame(&self.rx, usize::MAX >> 1) {
                Ok(Some(len)) => len,
                Ok(None) => return,
                Err(e) => panic!("the client sent a bad length prefix: {e}"),
            };
            let frame = self.rx.split_to(4 + len);
            let body = &frame[4..];
            if self.expect_connect {
                self.expect_connect = false;
                let (req, read_only) = decode_connect_request(body)
                    .unwrap_or_else(|e| panic!("the first frame is not a ConnectRequest: {e}"));
                assert_eq!(req.protocol_version, 0);
                assert_eq!(
                    body.len(),
                    4 + 8 + 4 + 8 + 4 + req.passwd.len() + 1,
                    "ConnectRequest with trailing bytes"
                );
                assert_eq!(read_only, can_be_read_only, "read-only flag");
                assert!(req.timeout_ms > 0);
                self.connect_seen = Some((req.session_id, req.passwd.to_vec()));
                continue;
            }
            let (header, rest) = parse_request(body)
                .unwrap_or_else(|e| panic!("the client sent a bad request header: {e}"));
            match header.xid {
                -2 => {
                    assert_eq!(header.op, OpCode::Ping);
                    assert!(rest.is_empty(), "ping with a body");
                }
                -4 => {
                    assert_eq!(header.op, OpCode::Auth);
                    AuthPacket::decode_exact(rest).expect("an auth packet that decodes");
                }
                -8 if self.seen_ordinary => {
                    panic!("SetWatches after an ordinary request on the same connection")
                }
                -8 => match header.op {
                    OpCode::SetWatches => {
                        SetWatches::decode_exact(rest).expect("SetWatches that decodes");
                    }
                    OpCode::SetWatches2 => {
                        SetWatches2::decode_exact(rest).expect("SetWatches2 that decodes");
                    }
                    other => panic!("xid -8 with opcode {other}"),
                },
                xid if xid > 0 => {
                    assert!(
                        xid > self.last_xid,
                        "xid {xid} reused or out of order (last was {})",
                        self.last_xid
                    );
                    self.last_xid = xid;
                    self.seen_ordinary = true;
                    assert!(
                        !matches!(
                            header.op,
                            OpCode::Ping | OpCode::Auth | OpCode::SetWatches | OpCode::SetWatches2
                        ),
                        "opcode {} with an ordinary xid",
                        header.op
                    );
                }
                xid => panic!("the client sent xid {xid} (opcode {})", header.op),
            }
            assert!(
                self.connect_seen.is_some(),
                "a request before the ConnectRequest"
            );
            self.queue.push_back((header.xid, header.op));
        }
    }
}

fn reply_frame(xid: i32, zxid: i64, err: ErrorCode, body: &[u8]) -> BytesMut {
    let mut buf = BytesMut::new();
    write_frame(&mut buf, |buf| {
        ReplyHeader { xid, zxid, err }.encode(buf);
        buf.extend_from_slice(body);
    });
    buf
}

/// A reply body that decodes as `op`'s reply record.
fn valid_body(op: OpCode) -> BytesMut {
    let stat = Stat {
        version: 1,
        ..Stat::default()
    };
    match op {
        OpCode::Create => PathRecord { path: "/a" }.to_bytes(),
        OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTtl => {
            Create2Response { path: "/a", stat }.to_bytes()
        }
        OpCode::Exists | OpCode::SetData | OpCode::SetAcl => StatResponse { stat }.to_bytes(),
        OpCode::GetData | OpCode::Reconfig => GetDataResponse {
            data: Some(b"data"),
            stat,
        }
        .to_bytes(),
        OpCode::GetAcl => GetAclResponse {
            acl: List::Slice(Acl::OPEN_ACL_UNSAFE),
            stat,
        }
        .to_bytes(),
        OpCode::GetChildren => GetChildrenResponse {
            children: List::Slice(&["x", "y"]),
        }
        .to_bytes(),
        OpCode::GetChildren2 => GetChildren2Response {
            children: List::Slice(&["x"]),
            stat,
        }
        .to_bytes(),
        OpCode::Sync => PathRecord { path: "/" }.to_bytes(),
        OpCode::Multi | OpCode::MultiRead => MultiResponse {
            results: MultiList::Slice(&[]),
        }
        .to_bytes(),
        OpCode::GetEphemerals => GetEphemeralsResponse {
            ephemerals: List::Slice(&["/e"]),
        }
        .to_bytes(),
        OpCode::GetAllChildrenNumber => GetAllChildrenNumberResponse { total_number: 3 }.to_bytes(),
        OpCode::WhoAmI => WhoAmIResponse {
            client_info: List::Slice(&[]),
        }
        .to_bytes(),
        _ => BytesMut::new(),
    }
}

const ERRORS: [ErrorCode; 8] = [
    ErrorCode::NoNode,
    ErrorCode::NodeExists,
    ErrorCode::NoAuth,
    ErrorCode::BadVersion,
    ErrorCode::SessionExpired,
    ErrorCode::NoWatcher,
    ErrorCode::AuthFailed,
    ErrorCode::Unknown(-999),
];

const EVENT_TYPES: [EventType; 8] = [
    EventType::NodeCreated,
    EventType::NodeDeleted,
    EventType::NodeDataChanged,
    EventType::NodeChildrenChanged,
    EventType::None,
    EventType::DataWatchRemoved,
    EventType::PersistentWatchRemoved,
    EventType::Unknown(42),
];

struct Harness<'a> {
    input: Input<'a>,
    s: Session<u32>,
    t0: Instant,
    now: Instant,
    cfg_can_be_read_only: bool,
    host_count: usize,
    /// The driver's read buffer.
    rx: BytesMut,
    server: Server,
    /// The driver does not write (a full socket buffer).
    stalled: bool,

    next_token: u32,
    next_watcher: WatcherId,
    /// Tokens handed in and not answered yet.
    outstanding: HashSet<u32>,
    /// Of those, the ones of `submit` calls.
    outstanding_submits: HashSet<u32>,
    /// Requests the core may send by itself (each close / forget_watcher call may add one).
    internal_sends: usize,
    /// Watchers handed in with a request: whether one-shot.
    watchers: Vec<(WatcherId, bool)>,
    fired_one_shot: HashSet<WatcherId>,
    unused: HashSet<WatcherId>,
    closed: bool,
    /// Tokens and watchers handed in after `Closed` (their immediate answers are allowed).
    after_close_tokens: HashSet<u32>,
    after_close_watchers: HashSet<WatcherId>,
    connect_outstanding: bool,
    session_id: i64,
    lost: HashSet<i64>,
    /// The bytes being fed are a connect response made by the server model (whose session
    /// ids are never ones reported lost, unless the client asked to resume one).
    model_connect_response: bool,
    /// A second Connect in a row is tolerated (see [`KnownBugs::read_write_found`]).
    double_connect_ok: bool,
    /// The opcode of each `submit` token.
    token_ops: HashMap<u32, OpCode>,
    /// Watchers that got at least one watch event.
    notified: HashSet<WatcherId>,
    /// Watchers handed to `forget_watcher`.
    forgotten: HashSet<WatcherId>,
    /// The last state reported.
    state: ConnectionState,
    /// The known bugs looked past.
    tolerate: KnownBugs,
    /// Tokens of closeSession requests handed to `submit`.
    close_session_tokens: Vec<u32>,
    /// What happened, step by step (only for [`session_trace`]).
    trace: Option<Vec<String>>,
    /// Whether action 13 with bit 0x20 changes the host list, and with 0x40 detaches
    /// (only for [`session_with_host_updates`]: the committed corpus keeps its meaning).
    host_updates: bool,
}

impl<'a> Harness<'a> {
    fn new(data: &'a [u8], tolerate: KnownBugs) -> Harness<'a> {
        let mut input = Input(data);
        let flags = input.byte();
        let host_count = 1 + (flags & 3) as usize;
        let timeout = Duration::from_millis(100 * (u64::from(input.byte()) + 1));
        let mut cfg = SessionConfig::new(host_count, timeout);
        cfg.can_be_read_only = flags & 4 != 0;
        if flags & 8 != 0 {
            cfg.auth.push(("digest".into(), b"user:pw".to_vec()));
        }
        if flags & 16 != 0 {
            cfg.set_watches_batch_bytes = 8;
        }
        if flags & 32 != 0 {
            cfg.max_frame_len = 64;
        }
        cfg.seed = u64::from(input.byte());
        let now = Instant::now();
        let mut h = Harness {
            input,
            s: Session::new(cfg.clone(), now),
            t0: now,
            now,
            cfg_can_be_read_only: cfg.can_be_read_only,
            host_count,
            rx: BytesMut::new(),
            server: Server {
                next_session: 0x100,
                ..Server::default()
            },
            stalled: false,
            next_token: 1,
            next_watcher: 1,
            outstanding: HashSet::new(),
            outstanding_submits: HashSet::new(),
            internal_sends: 0,
            watchers: Vec::new(),
            fired_one_shot: HashSet::new(),
            unused: HashSet::new(),
            closed: false,
            after_close_tokens: HashSet::new(),
            after_close_watchers: HashSet::new(),
            connect_outstanding: false,
            session_id: 0,
            lost: HashSet::new(),
            model_connect_response: false,
            double_connect_ok: false,
            token_ops: HashMap::new(),
            notified: HashSet::new(),
            forgotten: HashSet::new(),
            state: ConnectionState::Connecting,
            tolerate,
            close_session_tokens: Vec::new(),
            trace: None,
            host_updates: false,
        };
        h.after_step();
        h
    }

    fn token(&mut self) -> u32 {
        let t = self.next_token;
        self.next_token += 1;
        self.outstanding.insert(t);
        if self.closed {
            self.after_close_tokens.insert(t);
        }
        t
    }

    fn watcher(&mut self, one_shot: bool) -> WatcherId {
        let w = self.next_watcher;
        self.next_watcher += 1;
        self.watchers.push((w, one_shot));
        if self.closed {
            self.after_close_watchers.insert(w);
        }
        w
    }

    /// Drains events, checks invariants, and moves the client's bytes to the server.
    fn after_step(&mut self) {
        while let Some(event) = self.s.poll_event() {
            self.check_event(event);
        }
        assert!(
            self.s.in_flight() <= self.outstanding_submits.len() + self.internal_sends,
            "in_flight() = {} with {} requests unanswered and {} sent by the core",
            self.s.in_flight(),
            self.outstanding_submits.len(),
            self.internal_sends
        );
        if !self.stalled {
            let n = self.s.transmit().len();
            self.transmit(n);
        }
    }

    fn transmit(&mut self, n: usize) {
        let n = n.min(self.s.transmit().len());
        self.server.rx.extend_from_slice(&self.s.transmit()[..n]);
        self.s.advance_transmit(n);
        self.server.parse(self.cfg_can_be_read_only);
    }

    fn check_event(&mut self, event: Event<u32>) {
        if let Some(trace) = &mut self.trace {
            trace.push(format!("    {event:?}"));
        }
        if self.closed {
            let allowed = match &event {
                Event::Reply { token, .. } => self.after_close_tokens.contains(token),
                Event::WatcherUnused(w) => self.after_close_watchers.contains(w),
                _ => false,
            };
            assert!(allowed, "{event:?} after Event::Closed");
        }
        match event {
            Event::Connect { host, timeout, .. } => {
                assert!(host < self.host_count, "Connect to host {host}");
                assert!(!timeout.is_zero(), "Connect with no time to do it");
                assert!(
                    !self.connect_outstanding || self.double_connect_ok,
                    "Connect while the previous connection was not ended by a Disconnect"
                );
                self.connect_outstanding = true;
            }
            Event::Disconnect => {
                self.connect_outstanding = false;
                self.rx.clear();
                self.server.reset_connection(false);
            }
            Event::ProbeReadWrite { host } => {
                assert!(host < self.host_count, "ProbeReadWrite of host {host}");
            }
            Event::Reply { token, result } => {
                assert!(
                    self.outstanding.remove(&token),
                    "token {token} answered twice"
                );
                self.outstanding_submits.remove(&token);
                if let (Some(&op), Ok(reply)) = (self.token_ops.get(&token), &result) {
                    if let Err(e) = super::check_reply(op, &reply.body) {
                        panic!("a successful {op} reply whose body does not decode: {e}");
                    }
                }
            }
            Event::Watch { watcher, event } => {
                assert!(
                    !self.unused.contains(&watcher),
                    "watcher {watcher} fired after WatcherUnused"
                );
                let one_shot = self
                    .watchers
                    .iter()
                    .find(|(w, _)| *w == watcher)
                    .map(|&(_, one_shot)| one_shot);
                assert!(one_shot.is_some(), "unknown watcher {watcher}");
                self.notified.insert(watcher);
                if one_shot == Some(true) {
                    assert!(
                        self.fired_one_shot.insert(watcher),
                        "one-shot watcher {watcher} fired twice (second: {event:?})"
                    );
                }
            }
            Event::WatcherUnused(watcher) => {
                assert!(
                    self.unused.insert(watcher),
                    "WatcherUnused({watcher}) twice"
                );
                assert!(
                    !self.fired_one_shot.contains(&watcher),
                    "WatcherUnused({watcher}) after it fired"
                );
            }
            Event::State(change) => {
                use ConnectionState::*;
                let from = self.state;
                let allowed = match change.state {
                    Connected => matches!(from, Connecting | Lost),
                    ReadOnly => matches!(from, Connecting | Suspended | Lost),
                    Reconnected => matches!(from, Suspended | Lost),
                    Suspended => matches!(from, Connected | Reconnected | ReadOnly),
                    Lost => matches!(from, Connecting | Suspended),
                    // Only with SASL, before the session opens on a connection.
                    AuthFailed => matches!(from, Connecting | Suspended | Lost),
                    Closed => true,
                    Connecting => false,
                };
                assert!(allowed, "state {from:?} -> {:?}", change.state);
                self.state = change.state;
                match change.state {
                    Lost if self.session_id != 0 => {
                        self.lost.insert(self.session_id);
                    }
                    // A session id handed out by bytes the model did not write (raw bytes read
                    // with a response) is the script's to reuse: later connections may ask to
                    // resume it, and the model then does.
                    Connected | Reconnected | ReadOnly if !self.model_connect_response => {
                        self.lost.remove(&change.session_id);
                    }
                    Connected | Reconnected | ReadOnly => {
                        assert!(
                            !self.lost.contains(&change.session_id),
                            "session {:#x} reported Lost, then {:?} again",
                            change.session_id,
                            change.state
                        );
                    }
                    _ => {}
                }
                self.session_id = change.session_id;
            }
            Event::Closed => {
                assert!(!self.closed, "Closed twice");
                self.closed = true;
                self.connect_outstanding = false;
            }
        }
    }

    /// Feeds server bytes to the core, as the driver does.
    fn feed(&mut self, bytes: &[u8]) {
        self.rx.extend_from_slice(bytes);
        let mut rx = std::mem::take(&mut self.rx);
        self.s.handle_read(&mut rx, self.now);
        // A Disconnect event (still queued) clears the buffer in `after_step`.
        self.rx = rx;
    }

    fn submit(&mut self) {
        let b = self.input.byte();
        let path = PATHS[usize::from(self.input.byte()) % PATHS.len()];
        let watch = b & 0x10 != 0;
        let mut frame = BytesMut::new();
        let read_watch = |kind| (watch, kind);
        let (op, reg): (OpCode, Option<(bool, WatchKind)>) = match b % 16 {
            0 => (OpCode::GetData, Some(read_watch(WatchKind::Data))),
            1 => (OpCode::Exists, Some(read_watch(WatchKind::Exist))),
            2 => (OpCode::GetChildren, Some(read_watch(WatchKind::Child))),
            3 => (OpCode::GetChildren2, Some(read_watch(WatchKind::Child))),
            4 => (OpCode::AddWatch, Some((true, WatchKind::Persistent))),
            5 => (
                OpCode::AddWatch,
                Some((true, WatchKind::PersistentRecursive)),
            ),
            6 => (OpCode::Create, None),
            7 => (OpCode::Create2, None),
            8 => (OpCode::Delete, None),
            9 => (OpCode::SetData, None),
            10 => (OpCode::Sync, None),
            11 => (OpCode::RemoveWatches, None),
            12 => (OpCode::Multi, None),
            13 => (OpCode::GetAcl, None),
            14 => (OpCode::WhoAmI, None),
            _ => match b >> 5 {
                0 => (OpCode::GetAllChildrenNumber, None),
                1 => (OpCode::GetEphemerals, None),
                2 => (OpCode::CheckWatches, None),
                _ => (OpCode::CloseSession, None),
            },
        };
        let watcher_type = [
            WatcherType::Children,
            WatcherType::Data,
            WatcherType::Any,
            WatcherType::Persistent,
            WatcherType::PersistentRecursive,
        ][usize::from(b >> 5) % 5];
        match op {
            OpCode::GetData | OpCode::Exists | OpCode::GetChildren | OpCode::GetChildren2 => {
                encode_request(&mut frame, 0, op, &PathWatchRequest { path, watch });
            }
            OpCode::AddWatch => {
                let mode = match reg {
                    Some((_, WatchKind::Persistent)) => AddWatchMode::Persistent,
                    _ => AddWatchMode::PersistentRecursive,
                };
                encode_request(&mut frame, 0, op, &AddWatchRequest { path, mode });
            }
            OpCode::Create | OpCode::Create2 => encode_request(
                &mut frame,
                0,
                op,
                &CreateRequest {
                    path,
                    data: Some(b"x"),
                    acl: List::Slice(Acl::OPEN_ACL_UNSAFE),
                    mode: CreateMode::Persistent,
                },
            ),
            OpCode::Delete => {
                encode_request(&mut frame, 0, op, &PathVersionRequest { path, version: -1 })
            }
            OpCode::SetData => encode_request(
                &mut frame,
                0,
                op,
                &SetDataRequest {
                    path,
                    data: Some(b"y"),
                    version: -1,
                },
            ),
            OpCode::RemoveWatches | OpCode::CheckWatches => {
                encode_request(&mut frame, 0, op, &WatchesRequest { path, watcher_type })
            }
            OpCode::Multi => encode_request(
                &mut frame,
                0,
                op,
                &MultiRequest {
                    ops: MultiList::Slice(&[]),
                },
            ),
            OpCode::WhoAmI | OpCode::CloseSession => encode_header_only(&mut frame, 0, op),
            _ => encode_request(&mut frame, 0, op, &PathRecord { path }),
        }
        let watch_op = match (op, reg) {
            (_, Some((true, kind))) => {
                let one_shot =
                    !matches!(kind, WatchKind::Persistent | WatchKind::PersistentRecursive);
                Some(WatchOp::Register {
                    kind,
                    path: path.to_string(),
                    watcher: self.watcher(one_shot),
                })
            }
            (OpCode::RemoveWatches, _) => Some(WatchOp::Remove {
                path: path.to_string(),
                watcher_type,
            }),
            _ => None,
        };
        let token = self.token();
        self.outstanding_submits.insert(token);
        if op == OpCode::CloseSession {
            self.close_session_tokens.push(token);
        }
        self.token_ops.insert(token, op);
        self.s.submit(
            Request {
                frame,
                op,
                token,
                watch: watch_op,
            },
            self.now,
        );
    }

    /// The server answers the oldest request it got (or, with none, some xid).
    fn server_reply(&mut self, split: Option<usize>) {
        let mode = self.input.byte();
        let (xid, op) = match self.server.queue.pop_front() {
            Some(front) => front,
            None => (i32::from(self.input.byte() as i8), OpCode::GetData),
        };
        let zxid = match mode >> 6 {
            0 => {
                self.server.zxid += 1;
                self.server.zxid
            }
            1 => 0,
            2 => -1,
            _ => {
                self.server.zxid += 1000;
                self.server.zxid
            }
        };
        let (err, body) = match op {
            OpCode::Ping | OpCode::SetWatches | OpCode::SetWatches2 => {
                (ErrorCode::Ok, BytesMut::new())
            }
            OpCode::Auth if mode & 1 == 0 => (ErrorCode::Ok, BytesMut::new()),
            OpCode::Auth => (ErrorCode::AuthFailed, BytesMut::new()),
            _ => match mode & 0xf {
                0..=7 => (ErrorCode::Ok, valid_body(op)),
                8 | 9 => (ErrorCode::NoNode, BytesMut::new()),
                10 => (
                    ERRORS[usize::from(self.input.byte()) % ERRORS.len()],
                    BytesMut::new(),
                ),
                11 => {
                    let n = usize::from(self.input.byte() % 32);
                    (ErrorCode::Ok, BytesMut::from(self.input.bytes(n)))
                }
                12 => {
                    let mut body = valid_body(op);
                    let keep = usize::from(self.input.byte()) % (body.len() + 1);
                    body.truncate(keep);
                    (ErrorCode::Ok, body)
                }
                _ => {
                    let mut body = valid_body(op);
                    body.extend_from_slice(b"extra");
                    (ErrorCode::Ok, body)
                }
            },
        };
        let frame = reply_frame(xid, zxid, err, &body);
        match split {
            Some(at) => {
                let at = at % (frame.len() + 1);
                self.feed(&frame[..at]);
                self.feed(&frame[at..]);
            }
            None => self.feed(&frame),
        }
    }

    fn server_connect_response(&mut self) {
        let f = self.input.byte();
        let timeout_ms: i32 = match f & 7 {
            0 => 0,
            1 => 1,
            2 => 100,
            3 => 2000,
            4 => 6000,
            5 => 30_000,
            6 => -5,
            _ => i32::from(self.input.u16()),
        };
        let (session_id, passwd) = match (&self.server.connect_seen, f & 0x18) {
            // A real server resumes the session asked for.
            (Some((id, passwd)), 0 | 8) if *id != 0 => (*id, passwd.clone()),
            (_, 0x10) => (0, vec![0; 16]),
            _ => {
                self.server.next_session += 1;
                while self.lost.contains(&self.server.next_session) {
                    self.server.next_session += 1;
                }
                (self.server.next_session, vec![0x5a; 16])
            }
        };
        let mut frame = BytesMut::new();
        write_frame(&mut frame, |buf| {
            jute::put_i32(buf, 0);
            jute::put_i32(buf, timeout_ms);
            jute::put_i64(buf, session_id);
            jute::put_buffer(buf, &passwd);
            if f & 0x20 == 0 {
                jute::put_bool(buf, f & 0x40 != 0);
            }
        });
        if f & 0x80 != 0 {
            // Truncated: the length prefix says so too.
            let keep = 4 + usize::from(self.input.byte()) % (frame.len() - 4);
            frame.truncate(keep);
            let len = (keep - 4) as i32;
            frame[..4].copy_from_slice(&len.to_be_bytes());
        }
        // Found by the fuzzer (a "lost" session resumed): after raw bytes the client reads a
        // frame made of them and this response, whose session id the model did not choose.
        self.model_connect_response = !self.server.raw_bytes;
        self.feed(&frame);
        self.after_step();
        self.model_connect_response = false;
    }

    fn server_notification(&mut self) {
        let b = self.input.byte();
        let event = WatcherEvent {
            event_type: EVENT_TYPES[usize::from(b) % EVENT_TYPES.len()],
            state: if b & 0x80 == 0 {
                KeeperState::SyncConnected
            } else {
                KeeperState::Disconnected
            },
            path: Some(PATHS[usize::from(b >> 3) % PATHS.len()]),
        };
        let frame = reply_frame(-1, -1, ErrorCode::Ok, &event.to_bytes());
        self.feed(&frame);
    }

    fn advance_time(&mut self) {
        let b = self.input.byte();
        let ms = u64::from(b & 63);
        let step = match b >> 6 {
            0 => Duration::from_millis(ms),
            1 => Duration::from_millis(ms * 50),
            2 => Duration::from_millis(ms * 1000),
            // Exactly to the next deadline.
            _ => self
                .s
                .poll_timeout()
                .map_or(Duration::ZERO, |t| t.saturating_duration_since(self.now)),
        };
        self.now += step;
        // What the driver does: wake up at poll_timeout, call handle_timeout.
        if self.s.poll_timeout().is_some_and(|t| t <= self.now) {
            self.s.handle_timeout(self.now);
            let spin_ok = self.tolerate.session_id_zero_spin
                && self.s.session_id == 0
                && self.s.disconnected_since.is_some();
            if let Some(next) = self.s.poll_timeout().filter(|_| !spin_ok) {
                assert!(
                    next > self.now,
                    "busy loop: poll_timeout() is {:?} in the past after handle_timeout",
                    self.now - next
                );
            }
        }
    }

    fn step(&mut self) {
        let action = self.input.byte();
        if let Some(trace) = &mut self.trace {
            trace.push(format!(
                "{:>9.3?} action {action:#04x} ({}), next bytes {:02x?}",
                self.now - self.t0,
                ACTIONS[usize::from(action % 16)],
                &self.input.0[..self.input.0.len().min(4)]
            ));
        }
        match action % 16 {
            0 => self.submit(),
            1 => {
                let n = usize::from(self.input.byte() % 64);
                let bytes = self.input.bytes(n);
                // What the client reads next is no longer the modelled server's reply.
                self.server.raw_bytes = self.server.raw_bytes || n > 0;
                self.feed(bytes);
            }
            2 => self.server_reply(None),
            3 => self.server_connect_response(),
            4 => self.server_notification(),
            5 => self.advance_time(),
            6 => self.s.handle_timeout(self.now),
            7 => {
                let was_connecting = matches!(self.s.conn, Conn::Connecting { .. });
                self.s.handle_connected(self.now);
                if was_connecting {
                    self.rx.clear();
                    self.server.reset_connection(true);
                }
            }
            8 => self.s.handle_connect_failed(self.now),
            9 => self.s.handle_disconnected(self.now),
            10 => {
                let token = (action & 0x10 != 0).then(|| self.token());
                self.internal_sends += 1;
                self.s.close(token, self.now);
            }
            11 => {
                if !self.watchers.is_empty() {
                    let i = usize::from(self.input.byte()) % self.watchers.len();
                    let watcher = self.watchers[i].0;
                    self.forgotten.insert(watcher);
                    self.internal_sends += 1;
                    self.s.forget_watcher(watcher, self.now);
                }
            }
            12 => {
                let token = (action & 0x10 != 0).then(|| self.token());
                self.s
                    .add_auth("digest".into(), b"other:pw".to_vec(), token, self.now);
            }
            13 if self.host_updates && action & 0x20 != 0 => self.update_hosts(),
            13 if self.host_updates && action & 0x40 != 0 => self.s.detach(self.now),
            13 => {
                let host = usize::from(self.input.byte()) % self.host_count;
                if !(self.tolerate.read_write_found && self.s.closing.is_some()) {
                    self.s.handle_read_write_found(host, self.now);
                    // Its events are checked now, while the double Connect is tolerated.
                    self.double_connect_ok = self.tolerate.read_write_found;
                    self.after_step();
                    self.double_connect_ok = false;
                }
            }
            14 => {
                if self.stalled {
                    let n = usize::from(self.input.u16());
                    self.transmit(n);
                }
                self.stalled = !self.stalled;
            }
            _ => {
                let at = usize::from(self.input.byte());
                self.server_reply(Some(at));
            }
        }
        self.after_step();
    }

    /// A new host list of 1 to 4 hosts, each either one of the current hosts (at most once)
    /// or a new one.
    fn update_hosts(&mut self) {
        let count = 1 + usize::from(self.input.byte() % 4);
        let mut used = HashSet::new();
        let kept: Vec<Option<usize>> = (0..count)
            .map(|_| {
                let old = usize::from(self.input.byte()) % (self.host_count + 1);
                (old < self.host_count && used.insert(old)).then_some(old)
            })
            .collect();
        let names = (0..count).map(|i| format!("host-{i}")).collect();
        self.s.update_hosts(&kept, names, self.now);
        // Checked against the new list from now on (events are drained after the step).
        self.host_count = count;
    }

    /// Closes the session and lets every timer run out: every token must be answered.
    fn finish(&mut self) {
        if let Some(trace) = &mut self.trace {
            trace.push("end of script: close(), then 30 days pass".into());
        }
        self.stalled = false;
        let token = self.token();
        self.internal_sends += 1;
        self.s.close(Some(token), self.now);
        self.after_step();
        self.now += Duration::from_secs(60 * 60 * 24 * 30);
        self.s.handle_timeout(self.now);
        self.after_step();
        self.s.handle_disconnected(self.now);
        self.after_step();
        assert!(self.closed, "close() and a month did not close the session");
        assert_eq!(self.s.poll_timeout(), None, "a timer after Closed");
        if self.tolerate.add_auth_token_leak {
            for (_, token) in &self.s.pending_auth_later {
                self.outstanding.remove(token);
            }
        }
        if self.tolerate.submitted_close_session_token_leak {
            for token in &self.close_session_tokens {
                self.outstanding.remove(token);
            }
        }
        let mut left: Vec<_> = self.outstanding.iter().copied().collect();
        left.sort_unstable();
        assert!(left.is_empty(), "tokens never answered: {left:?}");
        // Every watcher ends: unused, or told something (at worst that the session closed).
        for &(w, _) in &self.watchers {
            assert!(
                self.forgotten.contains(&w)
                    || self.unused.contains(&w)
                    || self.notified.contains(&w),
                "watcher {w} was neither used nor released"
            );
        }
    }
}

/// The `session` fuzz target: see the module documentation.
pub fn session(data: &[u8]) {
    run(data, KNOWN_BUGS, None);
}

/// [`session`] without looking past any known bug (see [`KnownBugs`]).
pub fn session_strict(data: &[u8]) {
    run(data, STRICT, None);
}

/// Runs [`session_strict`] and returns what happened, one line per action and event (to read
/// a reproducer). Panics like it does; the lines up to then are printed first.
pub fn session_trace(data: &[u8]) -> Vec<String> {
    run(data, STRICT, Some(Vec::new())).unwrap_or_default()
}

const ACTIONS: [&str; 16] = [
    "submit",
    "raw server bytes",
    "server reply",
    "server connect response",
    "server notification",
    "time passes",
    "handle_timeout",
    "handle_connected",
    "handle_connect_failed",
    "handle_disconnected",
    "close",
    "forget_watcher",
    "add_auth",
    "handle_read_write_found",
    "stall / partial write",
    "server reply in two reads",
];

fn run(data: &[u8], tolerate: KnownBugs, trace: Option<Vec<String>>) -> Option<Vec<String>> {
    let mut h = Harness::new(data, tolerate);
    let script = |h: &mut Harness<'_>| {
        let mut steps = 0;
        while !h.input.is_empty() && steps < 4096 {
            h.step();
            steps += 1;
        }
        h.finish();
    };
    if trace.is_none() {
        script(&mut h);
        return None;
    }
    h.trace = trace;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| script(&mut h)));
    if let Err(panic) = outcome {
        for line in h.trace.iter().flatten() {
            eprintln!("{line}");
        }
        std::panic::resume_unwind(panic);
    }
    h.trace.take()
}
