//! [`Harness`]: the session under test on virtual time, the fake server, and what the
//! invariants remember; the basic moves (tokens, watchers, feeding server bytes).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use zkrs_codec::{EventType, KeeperState, OpCode};

use crate::{ConnId, ConnectionState, Session, SessionConfig, WatcherId};

use super::input::Input;
use super::known_bugs::KnownBugs;
use super::server::Server;

pub(super) struct Harness<'a> {
    pub(super) input: Input<'a>,
    pub(super) s: Session<u32>,
    pub(super) t0: Instant,
    pub(super) now: Instant,
    pub(super) cfg_can_be_read_only: bool,
    pub(super) host_count: usize,
    /// The driver's read buffer.
    pub(super) rx: BytesMut,
    pub(super) server: Server,
    /// The driver does not write (a full socket buffer).
    pub(super) stalled: bool,

    next_token: u32,
    next_watcher: u64,
    /// Tokens handed in and not answered yet.
    pub(super) outstanding: HashSet<u32>,
    /// Of those, the ones of `submit` calls.
    pub(super) outstanding_submits: HashSet<u32>,
    /// Requests the core may send by itself (each close / forget_watcher call may add one).
    pub(super) internal_sends: usize,
    /// Watchers handed in with a request: whether one-shot.
    pub(super) watchers: Vec<(WatcherId, bool)>,
    pub(super) fired_one_shot: HashSet<WatcherId>,
    pub(super) unused: HashSet<WatcherId>,
    pub(super) closed: bool,
    /// Tokens and watchers handed in after `Closed` (their immediate answers are allowed).
    pub(super) after_close_tokens: HashSet<u32>,
    pub(super) after_close_watchers: HashSet<WatcherId>,
    pub(super) connect_outstanding: bool,
    pub(super) session_id: i64,
    pub(super) lost: HashSet<i64>,
    /// The bytes being fed are a connect response made by the server model (whose session
    /// ids are never ones reported lost, unless the client asked to resume one).
    pub(super) model_connect_response: bool,
    /// A second Connect in a row is tolerated (see [`KnownBugs::read_write_found`]).
    pub(super) double_connect_ok: bool,
    /// The opcode of each `submit` token.
    pub(super) token_ops: HashMap<u32, OpCode>,
    /// Watchers that got at least one watch event.
    pub(super) notified: HashSet<WatcherId>,
    /// Watchers handed to `forget_watcher`.
    pub(super) forgotten: HashSet<WatcherId>,
    /// Watchers registered through the one group (see `submit`).
    pub(super) grouped: HashSet<WatcherId>,
    /// The current run of equal watch events (nothing else between them: one notification),
    /// and whether the group has heard it.
    pub(super) group_run: Option<(EventType, KeeperState, String)>,
    pub(super) group_heard: bool,
    /// The last state reported.
    pub(super) state: ConnectionState,
    /// The known bugs looked past.
    pub(super) tolerate: KnownBugs,
    /// Tokens of closeSession requests handed to `submit`.
    pub(super) close_session_tokens: Vec<u32>,
    /// What happened, step by step (only for [`session_trace`]).
    pub(super) trace: Option<Vec<String>>,
    /// A spare connection asked for (a move) and not dropped or used yet.
    pub(super) spare_outstanding: bool,
    /// The old connection since a move's switch: its server side and the client's unread
    /// bytes, for a fallback (`RestoreRetiring`).
    pub(super) retiring: Option<(Server, BytesMut)>,
    /// The connections the core named (as a driver keeps them): the current one, a move's
    /// spare, and its old one after the switch. Before the core names one, a name it never
    /// gave, which it must ignore.
    pub(super) current_conn: ConnId,
    pub(super) spare_conn: ConnId,
    pub(super) retiring_conn: ConnId,
    /// Whether action 13 with bit 0x20 changes the host list, and with 0x40 detaches
    /// (only for [`session_with_host_updates`]: the committed corpus keeps its meaning).
    pub(super) host_updates: bool,
}

impl<'a> Harness<'a> {
    pub(super) fn new(data: &'a [u8], tolerate: KnownBugs) -> Harness<'a> {
        let mut input = Input(data);
        let flags = input.byte();
        let host_count = 1 + (flags & 3) as usize;
        let timeout = Duration::from_millis(100 * (u64::from(input.byte()) + 1));
        let mut cfg = SessionConfig::new(host_count, timeout);
        cfg.can_be_read_only = flags & 4 != 0;
        if flags & 8 != 0 {
            cfg.auth.push(("digest".into(), b"user:pw".into()));
        }
        if flags & 16 != 0 {
            cfg.set_watches_batch_bytes = 8;
        }
        if flags & 32 != 0 {
            cfg.max_reply_len = 64;
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
            grouped: HashSet::new(),
            group_run: None,
            group_heard: false,
            state: ConnectionState::Connecting,
            tolerate,
            close_session_tokens: Vec::new(),
            trace: None,
            spare_outstanding: false,
            retiring: None,
            current_conn: ConnId::UNUSED,
            spare_conn: ConnId::UNUSED,
            retiring_conn: ConnId::UNUSED,
            host_updates: false,
        };
        h.after_step();
        h
    }

    pub(super) fn token(&mut self) -> u32 {
        let t = self.next_token;
        self.next_token += 1;
        self.outstanding.insert(t);
        if self.closed {
            self.after_close_tokens.insert(t);
        }
        t
    }

    pub(super) fn watcher(&mut self, one_shot: bool) -> WatcherId {
        let w = WatcherId::new(self.next_watcher);
        self.next_watcher += 1;
        self.watchers.push((w, one_shot));
        if self.closed {
            self.after_close_watchers.insert(w);
        }
        w
    }

    /// Feeds server bytes to the core, as the driver does.
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        self.rx.extend_from_slice(bytes);
        let mut rx = std::mem::take(&mut self.rx);
        self.s.handle_read(self.current_conn, &mut rx, self.now);
        // A Disconnect event (still queued) clears the buffer in `after_step`.
        self.rx = rx;
    }
}
