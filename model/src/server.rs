//! The model server: connections in, bytes out, on explicit time. This file holds the public
//! surface, the handshake, sessions' lifetimes (close, expiry) and the container reaper; the
//! operations are in `requests.rs`, multi in `multi.rs`, watch delivery in `notify.rs`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use zkrs_codec::{
    check_frame, decode_connect_request, jute::put_bool, write_frame, ConnectResponse, Encode,
    ErrorCode, ReplyHeader,
};

use crate::acl::AuthId;
use crate::config::ServerConfig;
use crate::connection_id::ConnectionId;
use crate::membership::Membership;
use crate::sessions::SessionTable;
use crate::tree::{DataTree, OwnerKind};
use crate::watch_manager::WatchManager;
use crate::write::{self, Change};

/// Bytes for one connection, from [`Server::poll_transmit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The connection.
    pub connection: ConnectionId,
    /// Bytes to write, in order (may be empty when only `close` is set).
    pub data: Bytes,
    /// Close the connection once `data` is written: the server is done with it.
    pub close: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Waiting for the `ConnectRequest`.
    Handshake,
    /// A session is attached.
    Open,
    /// The server closed it; the last bytes are still to be sent.
    Closing,
}

#[derive(Debug)]
pub(crate) struct Connection {
    pub(crate) input: BytesMut,
    pub(crate) output: BytesMut,
    pub(crate) phase: Phase,
    pub(crate) session: i64,
    pub(crate) auth: Vec<AuthId>,
    /// Packets received and sent (`recved`, `sent` in `stat`'s list of clients).
    pub(crate) received: u64,
    pub(crate) sent: u64,
    /// The client's address, when the driver gave it (`stat`'s list of clients).
    pub(crate) peer: Option<SocketAddr>,
    /// It asked a four-letter word: its answer is plain text, not frames.
    pub(crate) word: bool,
}

/// A ZooKeeper 3.8 standalone server as a deterministic state machine.
///
/// Drive it with [`accept`](Self::accept), [`handle_input`](Self::handle_input),
/// [`handle_disconnect`](Self::handle_disconnect) and [`handle_timeout`](Self::handle_timeout),
/// each given the current time (`now`, last, as `zkrs-session`'s core takes it); read what
/// to send with [`poll_transmit`](Self::poll_transmit) and when to wake with
/// [`poll_timeout`](Self::poll_timeout). Times before the server's start count as its start.
#[derive(Debug)]
pub struct Server {
    pub(crate) config: ServerConfig,
    pub(crate) tree: DataTree,
    pub(crate) data_watches: WatchManager,
    pub(crate) child_watches: WatchManager,
    pub(crate) sessions: SessionTable,
    pub(crate) connections: BTreeMap<ConnectionId, Connection>,
    dirty: VecDeque<ConnectionId>,
    pub(crate) next_connection: u64,
    /// When the server started: every time below is measured from it.
    pub(crate) start: Instant,
    /// The time since `start` (the latest `now` seen).
    pub(crate) now: Duration,
    next_container_check: Duration,
    /// Set when this server is a member of an [`crate::WireEnsemble`].
    pub(crate) membership: Option<Membership>,
    /// The port its driver listens on (`clientPort` in `conf`; 0 when not told).
    pub(crate) client_port: u16,
    /// Packets received and sent, every connection counted (`srvr`, `mntr`).
    pub(crate) packets_received: u64,
    pub(crate) packets_sent: u64,
}

impl Server {
    /// A fresh server started at `now`: the initial tree, no session.
    pub fn new(config: ServerConfig, now: Instant) -> Self {
        Server {
            tree: DataTree::new(config.extended_types),
            data_watches: WatchManager::default(),
            child_watches: WatchManager::default(),
            sessions: SessionTable::new(
                config.server_id,
                config.epoch_ms,
                config.tick_time,
                config.randomness,
            ),
            connections: BTreeMap::new(),
            dirty: VecDeque::new(),
            next_connection: 1,
            start: now,
            now: Duration::ZERO,
            next_container_check: config.container_check_interval,
            membership: None,
            client_port: 0,
            packets_received: 0,
            packets_sent: 0,
            config,
        }
    }

    /// The data tree, to inspect.
    pub fn tree(&self) -> &DataTree {
        &self.tree
    }

    /// The live sessions' ids.
    pub fn session_ids(&self) -> Vec<i64> {
        self.sessions.sessions.keys().copied().collect()
    }

    /// Number of watches registered (data table, child table).
    pub fn watch_count(&self) -> (usize, usize) {
        (self.data_watches.len(), self.child_watches.len())
    }

    /// Whether `conn` is open and still waits for its `ConnectRequest` (or its answer).
    pub(crate) fn is_handshaking(&self, conn: ConnectionId) -> bool {
        self.connections
            .get(&conn)
            .is_some_and(|c| c.phase == Phase::Handshake)
    }

    /// Moves the server's clock to `now` (never backwards).
    fn advance(&mut self, now: Instant) {
        self.now = self.now.max(now.saturating_duration_since(self.start));
    }

    /// A client connected from `peer_ip` (its `ip` identity, as ZooKeeper adds one to every
    /// connection).
    pub fn accept(&mut self, peer_ip: &str, now: Instant) -> ConnectionId {
        self.advance(now);
        let id = ConnectionId(self.next_connection);
        self.next_connection += 1;
        self.connections.insert(
            id,
            Connection {
                input: BytesMut::new(),
                output: BytesMut::new(),
                phase: Phase::Handshake,
                session: 0,
                auth: vec![AuthId::new("ip", peer_ip)],
                received: 0,
                sent: 0,
                peer: None,
                word: false,
            },
        );
        id
    }

    /// The driver tells the client's address of `conn`, for `stat`'s list of clients.
    pub(crate) fn set_peer(&mut self, conn: ConnectionId, peer: SocketAddr) {
        if let Some(c) = self.connections.get_mut(&conn) {
            c.peer = Some(peer);
        }
    }

    /// Bytes arrived on a connection. Malformed framing closes it (see [`Transmit::close`]).
    ///
    /// A connection whose first four bytes are one of ZooKeeper's four-letter words (`ruok`,
    /// `srvr`, `stat`, `mntr`, `conf`, `isro`; the others answered as words left out of
    /// `4lw.commands.whitelist`) gets the answer in plain text and is closed, as ZooKeeper
    /// does before a session's handshake.
    pub fn handle_input(&mut self, conn: ConnectionId, bytes: &[u8], now: Instant) {
        self.advance(now);
        let max = self.config.max_frame_len;
        let Some(c) = self.connections.get_mut(&conn) else {
            return;
        };
        if c.phase == Phase::Closing {
            return;
        }
        c.input.extend_from_slice(bytes);
        // ZooKeeper reads the first four bytes of a connection as a frame length, unless they
        // spell a word it knows (`four_letter.rs`).
        if c.phase == Phase::Handshake && c.received == 0 && self.answered_word(conn) {
            return;
        }
        loop {
            let Some(c) = self.connections.get_mut(&conn) else {
                return;
            };
            if c.phase == Phase::Closing {
                return;
            }
            let len = match check_frame(&c.input, max) {
                Ok(Some(len)) => len,
                Ok(None) => return,
                Err(_) => {
                    self.close_connection(conn);
                    return;
                }
            };
            let frame = c.input.split_to(4 + len).freeze();
            c.received += 1;
            self.packets_received += 1;
            self.dispatch_frame(conn, frame);
        }
    }

    /// One whole frame (length prefix included) from a connection: the handshake or a
    /// request; an ensemble member holds it back while the connection waits on the log.
    pub(crate) fn dispatch_frame(&mut self, conn: ConnectionId, frame: Bytes) {
        if let Some(m) = self.membership.as_mut() {
            if m.waiting.contains(&conn) {
                m.queued.entry(conn).or_default().push_back(frame);
                self.touch_on_arrival(conn);
                return;
            }
        }
        let Some(c) = self.connections.get(&conn) else {
            return;
        };
        let body = &frame[4..];
        match c.phase {
            Phase::Handshake => self.handle_connect(conn, body),
            Phase::Open => self.handle_request(conn, body),
            Phase::Closing => {}
        }
    }

    /// The client went away (socket closed or broken): its watches go, its session stays
    /// until it expires.
    pub fn handle_disconnect(&mut self, conn: ConnectionId, now: Instant) {
        self.advance(now);
        self.detach(conn);
        self.connections.remove(&conn);
    }

    /// What to write next, one connection at a time.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        while let Some(conn) = self.dirty.pop_front() {
            let Some(c) = self.connections.get_mut(&conn) else {
                continue;
            };
            let data = c.output.split().freeze();
            let close = c.phase == Phase::Closing;
            let packets = if c.word {
                u64::from(!data.is_empty())
            } else {
                count_frames(&data)
            };
            c.sent += packets;
            self.packets_sent += packets;
            if close {
                self.connections.remove(&conn);
            }
            if data.is_empty() && !close {
                continue;
            }
            return Some(Transmit {
                connection: conn,
                data,
                close,
            });
        }
        None
    }

    /// When [`handle_timeout`](Self::handle_timeout) is next due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let container = Some(self.next_container_check);
        [self.sessions.next_expiry(), container]
            .into_iter()
            .flatten()
            .min()
            .map(|at| self.start + at)
    }

    /// Time passed: sessions without traffic for their timeout expire, and the container
    /// reaper runs when due.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance(now);
        if self.membership.is_some() {
            // In an ensemble the leader expires sessions and reaps containers.
            return;
        }
        for session in self.sessions.expired(self.now) {
            self.end_session(session, None);
        }
        if self.now >= self.next_container_check {
            self.reap_containers();
            let interval = self
                .config
                .container_check_interval
                .max(Duration::from_millis(1));
            while self.next_container_check <= self.now {
                self.next_container_check += interval;
            }
        }
    }

    /// Expires a session now, as the leader does when its timeout passes without traffic.
    pub fn expire_session(&mut self, session: i64, now: Instant) {
        self.advance(now);
        if self.sessions.sessions.contains_key(&session) {
            self.end_session(session, None);
        }
    }

    pub(crate) fn mark_dirty(&mut self, conn: ConnectionId) {
        if !self.dirty.contains(&conn) {
            self.dirty.push_back(conn);
        }
    }

    /// Writes a reply (header, and the body when `err` is `Ok`).
    pub(crate) fn reply(
        &mut self,
        conn: ConnectionId,
        xid: i32,
        zxid: i64,
        err: ErrorCode,
        body: impl FnOnce(&mut BytesMut),
    ) {
        let Some(c) = self.connections.get_mut(&conn) else {
            return;
        };
        write_frame(&mut c.output, |buf| {
            ReplyHeader { xid, zxid, err }.encode(buf);
            if err == ErrorCode::Ok {
                body(buf);
            }
        });
        self.mark_dirty(conn);
    }

    /// The server closes a connection: its watches go now, its last bytes are still sent.
    pub(crate) fn close_connection(&mut self, conn: ConnectionId) {
        self.detach(conn);
        if let Some(c) = self.connections.get_mut(&conn) {
            c.phase = Phase::Closing;
            c.input.clear();
        }
        self.mark_dirty(conn);
    }

    fn detach(&mut self, conn: ConnectionId) {
        self.data_watches.remove_connection(conn);
        self.child_watches.remove_connection(conn);
        if let Some(c) = self.connections.get(&conn) {
            if let Some(s) = self.sessions.sessions.get_mut(&c.session) {
                if s.connection == Some(conn) {
                    s.connection = None;
                }
            }
        }
    }

    pub(crate) fn next_zxid(&mut self) -> i64 {
        self.tree.last_zxid += 1;
        self.tree.last_zxid
    }

    pub(crate) fn wall_time(&self) -> i64 {
        self.config.epoch_ms + self.now.as_millis() as i64
    }

    fn handle_connect(&mut self, conn: ConnectionId, body: &[u8]) {
        let Ok((req, _read_only)) = decode_connect_request(body) else {
            self.close_connection(conn);
            return;
        };
        // A client that has seen a later zxid than this server must not go back in time.
        if req.last_zxid_seen > self.tree.last_zxid {
            self.close_connection(conn);
            return;
        }
        let timeout = self.config.negotiate_timeout_ms(req.timeout_ms);
        let now = self.now;
        if self.membership.is_some() {
            // The ensemble creates or checks the session (see `member.rs`).
            let passwd = req.passwd.to_vec();
            self.forward_connect(conn, req.session_id, passwd, timeout);
            return;
        }
        if req.session_id != 0 {
            // ZooKeeper closes the session's current connection (CLIENT_RECONNECT) before it
            // checks the password: a wrong password still cuts the rightful client off.
            let current: Vec<ConnectionId> = self
                .connections
                .iter()
                .filter(|(id, c)| {
                    **id != conn && c.phase == Phase::Open && c.session == req.session_id
                })
                .map(|(id, _)| *id)
                .collect();
            for old in current {
                self.close_connection(old);
            }
        }
        let (session, passwd, valid) = if req.session_id == 0 {
            // createSession is a transaction.
            self.next_zxid();
            let (id, passwd) = self.sessions.create(now, timeout);
            (id, passwd, true)
        } else {
            match self.sessions.sessions.get(&req.session_id) {
                Some(s) if s.passwd[..] == *req.passwd => (req.session_id, s.passwd, true),
                _ => (0, [0u8; 16], false),
            }
        };
        if valid {
            if let Some(s) = self.sessions.sessions.get_mut(&session) {
                s.timeout_ms = timeout;
                s.connection = Some(conn);
            }
            self.sessions.touch(session, now);
        }
        let Some(c) = self.connections.get_mut(&conn) else {
            return;
        };
        write_frame(&mut c.output, |buf| {
            ConnectResponse {
                protocol_version: 0,
                timeout_ms: if valid { timeout } else { 0 },
                session_id: session,
                passwd: &passwd,
            }
            .encode(buf);
            put_bool(buf, false);
        });
        if valid {
            c.phase = Phase::Open;
            c.session = session;
            self.mark_dirty(conn);
        } else {
            self.close_connection(conn);
        }
    }

    /// Ends a session (closeSession or expiry): a transaction deleting its ephemerals, whose
    /// watches fire; then its connection is closed. `reply` is the closeSession's xid when the
    /// client asked, answered before the connection closes.
    pub(crate) fn end_session(&mut self, session: i64, reply: Option<(ConnectionId, i32)>) {
        let zxid = self.next_zxid();
        self.close_session_at(session, zxid, reply);
    }

    /// The closeSession transaction `zxid` (see `end_session`).
    pub(crate) fn close_session_at(
        &mut self,
        session: i64,
        zxid: i64,
        reply: Option<(ConnectionId, i32)>,
    ) {
        self.tree.last_zxid = self.tree.last_zxid.max(zxid);
        let mut changes = Vec::new();
        write::kill_session(&mut self.tree, session, zxid, &mut changes);
        self.notify(changes);
        let entry = self.sessions.sessions.remove(&session);
        if let Some((conn, xid)) = reply {
            self.reply(conn, xid, zxid, ErrorCode::Ok, |_| {});
            self.close_connection(conn);
        }
        if let Some(conn) = entry.and_then(|e| e.connection) {
            self.close_connection(conn);
        }
        // Its connections here (an ensemble member may not have attached them).
        let others: Vec<ConnectionId> = self
            .connections
            .iter()
            .filter(|(_, c)| c.session == session && c.phase != Phase::Closing)
            .map(|(id, _)| *id)
            .collect();
        for conn in others {
            self.close_connection(conn);
        }
    }

    /// The container manager's pass: empty containers that once had a child (or never did,
    /// past `container_max_never_used`), and childless TTL nodes unmodified for their TTL.
    fn reap_containers(&mut self) {
        let wall = self.wall_time();
        let extended = self.tree.extended_types();
        let never_used = self.config.container_max_never_used;
        let mut candidates: BTreeSet<String> = BTreeSet::new();
        for path in self.tree.containers() {
            let Some(node) = self.tree.get(path) else {
                continue;
            };
            if !node.children.is_empty() {
                continue;
            }
            let elapsed = wall - node.stat.mtime;
            let unused_too_long =
                never_used.is_some_and(|d| d.as_millis() > 0 && elapsed > d.as_millis() as i64);
            if node.stat.cversion > 0 || unused_too_long {
                candidates.insert(path.to_owned());
            }
        }
        for path in self.tree.ttl_nodes() {
            let Some(node) = self.tree.get(path) else {
                continue;
            };
            if let OwnerKind::Ttl(ttl) = OwnerKind::of(node.stat.ephemeral_owner, extended) {
                if node.children.is_empty() && ttl != 0 && wall - node.stat.mtime > ttl {
                    candidates.insert(path.to_owned());
                }
            }
        }
        for path in candidates {
            let zxid = self.next_zxid();
            let mut changes: Vec<Change> = Vec::new();
            // A failed deleteContainer is still a transaction (an error txn).
            if write::delete_container(&mut self.tree, &path, zxid, &mut changes).is_ok() {
                self.notify(changes);
            }
        }
    }
}

/// Number of whole frames (4-byte length, then the body) in `data`.
fn count_frames(data: &[u8]) -> u64 {
    let mut count = 0;
    let mut rest = data;
    while let Some(prefix) = rest.get(..4) {
        let len = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
        rest = rest.get(4 + len..).unwrap_or_default();
        count += 1;
    }
    count
}
