//! `zkrs-session`: the ZooKeeper session as a deterministic state machine with no sockets and
//! no clock (the quinn-proto model). `zkrs-client` drives it with a thin tokio task; another
//! runtime, a simulator or a fuzzer can drive it the same way.
//!
//! It is driven by `handle_*` calls (bytes received, connection opened or lost, time passed)
//! and by `submit`; it answers through [`Session::poll_event`] (replies, watch events, state
//! changes, and instructions to open or close a connection), [`Session::poll_transmit`] (the bytes
//! to write) and [`Session::poll_timeout`] (when to call [`Session::handle_timeout`]). Time is
//! always passed in, so tests run on virtual time and a fuzzer can feed it anything.
//!
//! The watch rules are the core's as well: which watchers an event reaches (a
//! [`WatcherGroup`] hears each notification once), when a watcher is done, and the sweep of
//! one-shot watches nobody waits for ([`Session::sweep_abandoned`]); the driver only routes
//! each [`Event::Watch`] to the receiver of its [`WatcherId`].
//!
//! Requests arrive already encoded (the caller's task encodes them, with xid 0); the core
//! writes the xid in when it sends them, and keeps a queue of what is in flight: ZooKeeper
//! answers in order, so each reply must match the oldest pending xid, or the connection is
//! dropped.

#![warn(missing_docs)]
// On docs.rs: label each item with the cargo feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod auth;
mod closing;
mod config;
mod conn_id;
mod error;
mod failure;
// The fuzz targets' bodies: for fuzz/ and the seed replays, no promise.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod host_update;
mod hosts;
mod lifecycle;
mod messages;
mod move_state;
mod moving;
mod rebalance;
mod receive;
mod reply_check;
mod requests;
mod sasl;
mod send;
mod state;
mod timers;
mod watch;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use zkrs_codec::{
    check_frame, decode_connect_response, encode_connect_request, encode_header_only,
    encode_request, parse_reply, put_str_vec, xid, AuthPacket, ConnectRequest, Decode, DecodeError,
    Encode, EventType, GetSaslRequest, KeeperState, OpCode, SetSaslResponse, WatcherEvent,
    WatcherType, WatchesRequest, REQUEST_XID_OFFSET,
};

use auth::Auth;
use closing::Closing;
pub use config::{SessionConfig, REPLY_ROOM};
pub use conn_id::ConnId;
use conn_id::{Connections, Role};
pub use error::{Error, ErrorCode, ErrorKind, Result};
pub use failure::ConnectionFailure;
pub use host_update::HostChange;
use hosts::{HostPicker, Rng};
pub use messages::{Event, Reply, Request, WatchOp};
pub(crate) use reply_check::check_reply;
use requests::{Pending, Requests, Waiting, KEEP_OUT};
pub use sasl::{SaslError, SaslExchange, SaslMechanism, SaslStep};
pub use state::{ConnectionState, StateChange};
use timers::Timers;
use watch::Watching;
pub use watch::{WatchKind, WatchedEvent, WatcherGroup, WatcherId};
/// The credentials and session passwords of [`SessionConfig`], printed redacted.
pub use zkrs_codec::Secret;

/// Entries each of a session's queues and maps keeps across connections.
const KEEP_QUEUED: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conn {
    /// No connection; the next attempt starts at `retry_at`.
    Idle { retry_at: Instant },
    /// The driver is opening a TCP connection.
    Connecting { host: usize, deadline: Instant },
    /// Connected; waiting for the ConnectResponse.
    Handshaking { host: usize, deadline: Instant },
    /// The session is established on this connection.
    Open { host: usize, read_only: bool },
    /// Closed for good.
    Closed,
}

/// The session state machine. `T` is the caller's reply token (a oneshot sender in the tokio
/// driver, anything in tests).
pub struct Session<T> {
    cfg: SessionConfig,
    rng: Rng,
    /// The address shuffles' own stream (see [`Event::Connect`]'s `shuffle`).
    shuffle_rng: Rng,
    hosts: HostPicker,
    conn: Conn,
    /// The connections handed out, by what each is for.
    connections: Connections,
    state: ConnectionState,
    // The session.
    session_id: i64,
    passwd: Secret,
    negotiated: Duration,
    last_zxid: i64,
    ever_connected: bool,
    /// Whether a read-write server ever accepted this client. Until one has, the session
    /// (if any) was made by a read-only server, is local to it, and is not presented to
    /// another server (the Java client's `seenRwServerBefore` rule).
    seen_read_write: bool,
    /// The connection's timers.
    timers: Timers,
    /// See [`Session::last_heard`].
    last_heard: Option<Instant>,
    /// The requests: waiting, written, in flight, answered.
    requests: Requests<T>,
    /// Identities and SASL.
    auth: Auth<T>,
    /// When the open connection was opened: it resets the reconnect back-off only once it
    /// has lived as long as the longest wait (see `connection_lost`).
    opened_at: Option<Instant>,
    /// A close under way.
    closing: Closing<T>,
    /// Why the connection is being dropped, for the errors of the requests in flight.
    loss_reason: Option<ConnectionFailure>,
    /// Why the last connection (or connection attempt) ended, for the driver's reports.
    last_failure: Option<ConnectionFailure>,
    /// Registrations, watchers and their rules.
    watching: Watching,
    events: VecDeque<Event<T>>,
    /// A move to another host under way, without suspension (`moving.rs`).
    moving: Option<move_state::Move>,
    /// The connection's host has left the host list (`Conn`'s host is then a placeholder,
    /// the host being moved to).
    off_list: bool,
}

impl<T> Session<T> {
    /// A session that starts by connecting to the first (shuffled) host.
    pub fn new(cfg: SessionConfig, now: Instant) -> Session<T> {
        let mut rng = Rng::new(cfg.seed);
        let shuffle_rng = Rng::new(cfg.seed ^ 0x5EED_0FAD_D2E5_5E55);
        let hosts = HostPicker::new(cfg.host_count, &mut rng, cfg.backoff_base, cfg.backoff_max);
        let negotiated = cfg.session_timeout;
        let (session_id, passwd) = cfg.resume.clone().unwrap_or((0, Secret::new(vec![0; 16])));
        let resuming = session_id != 0;
        let mut session = Session {
            cfg,
            rng,
            shuffle_rng,
            hosts,
            conn: Conn::Idle { retry_at: now },
            connections: Connections::default(),
            state: ConnectionState::Connecting,
            session_id,
            passwd,
            negotiated,
            last_zxid: 0,
            ever_connected: false,
            // A session to resume is presented to the first server (it is taken to be a
            // global one, made by a read-write server).
            seen_read_write: resuming,
            timers: Timers::new(now, negotiated),
            last_heard: None,
            requests: Requests::new(),
            auth: Auth::new(),
            opened_at: None,
            closing: Closing::new(),
            loss_reason: None,
            last_failure: None,
            watching: Watching::default(),
            events: VecDeque::new(),
            moving: None,
            off_list: false,
        };
        session.start_connect(now);
        session
    }

    // ----- Queries -----

    /// The current connection state.
    pub fn state(&self) -> ConnectionState {
        self.state
    }

    /// The session id (0 before the first session).
    pub fn session_id(&self) -> i64 {
        self.session_id
    }

    /// The session password (to resume the session from another client).
    pub fn session_password(&self) -> &Secret {
        &self.passwd
    }

    /// The session timeout the server granted (the requested one before that).
    pub fn negotiated_timeout(&self) -> Duration {
        self.negotiated
    }

    /// The last zxid seen in a reply.
    pub fn last_zxid(&self) -> i64 {
        self.last_zxid
    }

    /// The latest instant the server is known to have heard from this session: the send
    /// time of the newest request, ping or handshake of the session whose reply arrived
    /// from a read-write server (`None` without a session).
    ///
    /// Why the send time: ZooKeeper touches a session when a request of it arrives
    /// (`ZooKeeperServer.submitRequest`), and its expiry queue then puts the session's end at
    /// the arrival plus the session timeout, rounded up to the next tick
    /// (`ExpiryQueue.update`); a reply proves the arrival happened, and the arrival came after
    /// the send. So the server cannot expire the session before `last_heard + timeout` on
    /// its clock. A reply's receive time would not do: the request may have waited in the
    /// network, so the server heard it earlier than that.
    pub fn last_heard(&self) -> Option<Instant> {
        self.last_heard
    }

    /// The server heard from the session at `sent` or later (a reply arrived).
    pub(crate) fn heard(&mut self, sent: Instant) {
        if matches!(
            self.conn,
            Conn::Open {
                read_only: false,
                ..
            }
        ) {
            self.last_heard = Some(self.last_heard.map_or(sent, |t| t.max(sent)));
        }
    }

    /// Requests sent and not answered yet.
    pub fn in_flight(&self) -> usize {
        self.requests.pending.len()
    }

    /// Why the last connection, or connection attempt, ended (its `Display`: `could not
    /// connect: ...`, `no handshake reply within 2000 ms`, `the server sent a malformed
    /// frame: ...`, ...), or `None` if none has ended yet. Kept until the next one ends, so
    /// that a client that never gets a session can say why.
    pub fn last_connection_failure(&self) -> Option<&ConnectionFailure> {
        self.last_failure.as_ref()
    }

    /// Why authentication failed, once the session has reached
    /// [`ConnectionState::AuthFailed`]: the mechanism's refusal, or the server's.
    pub fn auth_failure(&self) -> Option<&SaslError> {
        self.auth.failure.as_ref()
    }

    /// The host of the current connection, if any (while a move is under way and the old
    /// host has left the host list, the host being moved to).
    pub fn current_host(&self) -> Option<usize> {
        match self.conn {
            Conn::Connecting { host, .. }
            | Conn::Handshaking { host, .. }
            | Conn::Open { host, .. } => Some(host),
            _ => None,
        }
    }

    // ----- Output -----

    /// The next thing the driver must act on.
    pub fn poll_event(&mut self) -> Option<Event<T>> {
        let event = self.events.pop_front()?;
        Some(self.watching.watchers.output(event))
    }

    /// Bytes waiting to be written to the connection (left in place until
    /// [`Session::advance_transmit`] says how many were written).
    pub fn poll_transmit(&self) -> &[u8] {
        &self.requests.out
    }

    /// `n` bytes of [`Session::poll_transmit`] were written.
    pub fn advance_transmit(&mut self, n: usize) {
        let _ = self.requests.out.split_to(n.min(self.requests.out.len()));
        if self.requests.out.is_empty() {
            // Reuse the allocation from its start.
            self.requests.out.clear();
        }
    }

    /// When [`Session::handle_timeout`] must be called next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut at = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        match self.conn {
            Conn::Idle { retry_at } => at(retry_at),
            Conn::Connecting { deadline, .. } | Conn::Handshaking { deadline, .. } => at(deadline),
            Conn::Open { .. } => at(self.timers.open_deadline()),
            Conn::Closed => return None,
        }
        if let Some(deadline) = self.expiry_deadline() {
            at(deadline);
        }
        if let Some(deadline) = self.waiting_deadline() {
            at(deadline);
        }
        if let Some(deadline) = self.move_deadline() {
            at(deadline);
        }
        if let Some((_, deadline)) = &self.closing.under_way {
            at(*deadline);
        }
        next
    }

    // ----- Input from the application -----

    /// Queues a request: sent now if a session is open, else when one is; failed with
    /// `ConnectionLoss` if none is within the session timeout.
    pub fn submit(&mut self, request: Request<T>, now: Instant) {
        self.submit_bound(request, None, now);
    }

    /// [`Session::submit`], for a request that is sent on session `session_id` or not at
    /// all: if, when it would go out, the session is another one (that one was lost and a
    /// new one made, or is being made), it fails with `SessionExpired` instead. For a
    /// request whose meaning depends on its session: deleting the ephemeral node the
    /// session holds would, on the next session, delete whatever node another client made
    /// at that path since. Checked here, where the request meets the session it goes out
    /// on: a caller's own check before submitting cannot see a loss that comes while the
    /// request waits (for a place in flight, for a connection).
    pub fn submit_in_session(&mut self, request: Request<T>, session_id: i64, now: Instant) {
        self.submit_bound(request, Some(session_id), now);
    }

    fn submit_bound(&mut self, request: Request<T>, bound: Option<i64>, now: Instant) {
        if let Some(WatchOp::Register {
            kind,
            path,
            watcher,
            group,
        }) = &request.watch
        {
            self.watching.watchers.hold(*watcher, *kind, path, *group);
        }
        if self.conn == Conn::Closed || self.closing.under_way.is_some() {
            self.fail(Some(request.token), request.watch, Error::closed());
            return;
        }
        let waiting = Waiting {
            since: now,
            bound,
            request,
        };
        if matches!(self.conn, Conn::Open { .. })
            && self.requests.waiting.is_empty()
            && !self.draining()
        {
            self.send_waiting_one(waiting, now);
        } else if waiting.bound.is_some_and(|id| id != self.session_id) {
            // Its session is gone already: no need to wait for the next one to say so.
            self.refuse_unbound(waiting);
        } else {
            self.requests.waiting.push_back(waiting);
        }
    }

    /// Adds an identity to the session: sent now if connected, and again after every
    /// reconnect. `token` (if any) is answered when the server confirms.
    pub fn add_auth(&mut self, scheme: String, auth: Secret, token: Option<T>, now: Instant) {
        if self.conn == Conn::Closed || self.closing.under_way.is_some() {
            if let Some(token) = token {
                self.events.push_back(Event::Reply {
                    token,
                    result: Err(Error::closed()),
                });
            }
            return;
        }
        if matches!(self.conn, Conn::Open { .. }) {
            self.write_auth(&scheme, &auth, now);
            self.auth.pending.push_back(token);
        } else if let Some(token) = token {
            // Confirmed with the other auth packets once connected.
            self.auth.later.push((self.cfg.auth.len(), token));
        }
        self.cfg.auth.push((scheme, auth));
    }

    /// Stops without closing the session: the connection is dropped with no closeSession,
    /// so the session lives on the server until its timeout passes (its ephemeral nodes
    /// too), for another client to resume with its id and password
    /// ([`SessionConfig::resume`]). Requests in flight or waiting fail as at a close; the
    /// state becomes `Closed`.
    pub fn detach(&mut self) {
        self.finish_close();
    }

    /// Closes the session: sends closeSession if connected and finishes when it is answered
    /// (or after a read timeout). `token` is answered with an empty reply then.
    pub fn close(&mut self, token: Option<T>, now: Instant) {
        if self.conn == Conn::Closed {
            if let Some(token) = token {
                self.events.push_back(Event::Reply {
                    token,
                    result: Ok(Reply {
                        zxid: self.last_zxid,
                        body: Bytes::new(),
                    }),
                });
            }
            return;
        }
        if self.closing.under_way.is_some() {
            // Already closing: answer this one when the first finishes.
            if let Some(token) = token {
                self.closing.extra_tokens.push(token);
            }
            return;
        }
        self.fail_waiting(Error::closed);
        if matches!(self.conn, Conn::Open { .. }) {
            let xid = self.requests.take_xid();
            self.closing.xid = Some(xid);
            encode_header_only(&mut self.requests.out, xid, OpCode::CloseSession);
            self.timers.last_send = now;
            self.requests.pending.push_back(Pending {
                xid,
                op: OpCode::CloseSession,
                token: None,
                watch: None,
                sent: now,
            });
            self.closing.under_way = Some((token, now + self.timers.read_timeout));
        } else {
            self.closing.under_way = Some((token, now));
            self.finish_close();
        }
    }

    /// Forgets a persistent watcher (or one no longer held), and removes the server's watch
    /// when no other watcher needs it.
    fn forget_persistent(&mut self, watcher: WatcherId, now: Instant) {
        let Some((path, kind)) = self.watching.registry.forget(watcher) else {
            return;
        };
        if !matches!(kind, WatchKind::Persistent | WatchKind::PersistentRecursive) {
            // A one-shot watch ends by itself.
            return;
        }
        if !matches!(self.conn, Conn::Open { .. }) || self.watching.registry.has_any(&path) {
            // Not re-registered after reconnecting; or still needed by another kind.
            return;
        }
        // ZooKeeper 3.8 only knows Children/Data/Any: Any removes the persistent watch.
        let mut frame = BytesMut::new();
        encode_request(
            &mut frame,
            0,
            OpCode::RemoveWatches,
            &WatchesRequest {
                path: &path,
                watcher_type: WatcherType::Any,
            },
        );
        self.send_frame(&frame, OpCode::RemoveWatches, None, None, now);
    }

    /// Forgets a one-shot registration (its path and kind known): removes the server's watch
    /// of that kind when no other watcher needs it; one in flight is forgotten at its reply.
    pub(crate) fn forget_registration(
        &mut self,
        watcher: WatcherId,
        kind: WatchKind,
        path: &str,
        now: Instant,
    ) {
        let watcher_type = match self.watching.registry.forget_one_shot(kind, path, watcher) {
            // Not registered yet: its request is in flight (or about to fail).
            None => {
                self.watching.forgotten.insert(watcher);
                return;
            }
            Some(None) => return,
            Some(Some(watcher_type)) => watcher_type,
        };
        if !matches!(self.conn, Conn::Open { .. }) {
            // The server keeps watches per connection: a new one gets only what is registered.
            return;
        }
        let mut frame = BytesMut::new();
        encode_request(
            &mut frame,
            0,
            OpCode::RemoveWatches,
            &WatchesRequest { path, watcher_type },
        );
        self.send_frame(&frame, OpCode::RemoveWatches, None, None, now);
    }

    // ----- Input from the connection -----

    /// Connection `conn`, asked for by [`Event::Connect`] or [`Event::ConnectSpare`], is
    /// open.
    pub fn handle_connected(&mut self, conn: ConnId, now: Instant) {
        match self.connections.role(conn) {
            Some(Role::Current) => self.current_connected(now),
            Some(Role::Spare) => self.spare_connected(now),
            Some(Role::Retiring) | None => {}
        }
    }

    /// Bytes arrived on connection `conn`: every whole frame at the front of `buf` is
    /// consumed (a partial one is left for the next read), replies sliced out of it without
    /// copying.
    pub fn handle_read(&mut self, conn: ConnId, buf: &mut BytesMut, now: Instant) {
        match self.connections.role(conn) {
            Some(Role::Current) => self.current_read(buf, now),
            Some(Role::Retiring) => self.retiring_read(buf, now),
            Some(Role::Spare) if !buf.is_empty() => {
                // Before the switch the spare has nothing to say.
                buf.clear();
                let unasked = std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the server sent bytes before the handshake",
                );
                self.spare_failed(Some(unasked), now);
            }
            Some(Role::Spare) | None => buf.clear(),
        }
    }

    /// Connection `conn` could not be opened, or ended (closed by the peer, or failed with
    /// `error`, which the requests in flight on it then carry as the cause of their
    /// ConnectionLoss, and [`Session::last_connection_failure`] as the reason).
    pub fn handle_closed(&mut self, conn: ConnId, error: Option<std::io::Error>, now: Instant) {
        match self.connections.role(conn) {
            Some(Role::Current) => match error {
                Some(error) => self.current_failed(error, now),
                None if matches!(self.conn, Conn::Connecting { .. }) => {
                    self.loss_reason = Some(ConnectionFailure::CouldNotConnect(None));
                    self.connection_lost(now);
                }
                None => self.current_closed(now),
            },
            Some(Role::Spare) => self.spare_failed(error, now),
            Some(Role::Retiring) => self.retiring_closed(now),
            None => {}
        }
    }

    /// The TCP connection the core asked for is open: start the handshake.
    fn current_connected(&mut self, now: Instant) {
        let Conn::Connecting { host, deadline } = self.conn else {
            return;
        };
        self.conn = Conn::Handshaking { host, deadline };
        self.write_connect_request(now);
    }

    /// Writes the ConnectRequest that opens (or resumes) the session on a new connection.
    fn write_connect_request(&mut self, now: Instant) {
        self.requests.out.clear();
        self.requests.skip = 0;
        // Again here: the teardown's failed replies have been taken from the event queue.
        self.release_burst_capacity();
        // A session made by a read-only server is local to it: another server would refuse
        // or expire it, so ask for a new one until a read-write server has been seen.
        let (session_id, passwd): (i64, &[u8]) = if self.seen_read_write {
            (self.session_id, self.passwd.expose())
        } else {
            (0, &[0; 16])
        };
        let request = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: self.last_zxid,
            timeout_ms: self.cfg.session_timeout.as_millis().min(i32::MAX as u128) as i32,
            session_id,
            passwd,
        };
        encode_connect_request(&mut self.requests.out, &request, self.cfg.can_be_read_only);
        self.timers.last_send = now;
        self.timers.last_recv = now;
    }

    /// The current connection failed with an I/O error: the requests in flight get
    /// ConnectionLoss with this error as its cause (while the core waits for a TCP
    /// connection: the attempt failed, the error kept for
    /// [`Session::last_connection_failure`]).
    fn current_failed(&mut self, error: std::io::Error, now: Instant) {
        let connected = matches!(
            self.conn,
            Conn::Connecting { .. } | Conn::Handshaking { .. } | Conn::Open { .. }
        );
        if connected && self.loss_reason.is_none() {
            let error = std::sync::Arc::new(error);
            self.loss_reason = Some(if matches!(self.conn, Conn::Connecting { .. }) {
                ConnectionFailure::CouldNotConnect(Some(error))
            } else {
                ConnectionFailure::Io(error)
            });
        }
        self.current_closed(now);
    }

    /// The current connection was closed by the peer or failed.
    fn current_closed(&mut self, now: Instant) {
        if matches!(
            self.conn,
            Conn::Connecting { .. } | Conn::Handshaking { .. } | Conn::Open { .. }
        ) {
            self.connection_lost(now);
        }
    }

    /// Time passed: retries, connect timeouts, read timeouts, pings, session expiry.
    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some((_, deadline)) = &self.closing.under_way {
            if now >= *deadline {
                self.finish_close();
                return;
            }
        }
        match self.conn {
            Conn::Idle { retry_at } if now >= retry_at => self.start_connect(now),
            Conn::Connecting { deadline, .. } if now >= deadline => {
                self.loss_reason = Some(ConnectionFailure::ConnectTimeout(
                    self.timers.attempt_timeout,
                ));
                self.connection_lost(now)
            }
            Conn::Handshaking { deadline, .. } if now >= deadline => {
                self.loss_reason = Some(if self.auth.sasl.is_some() {
                    ConnectionFailure::SaslTimeout(self.timers.read_timeout)
                } else {
                    ConnectionFailure::HandshakeTimeout(self.timers.attempt_timeout)
                });
                self.connection_lost(now)
            }
            Conn::Open { host, .. } => {
                if now >= self.timers.last_recv + self.timers.read_timeout {
                    self.loss_reason =
                        Some(ConnectionFailure::ReadTimeout(self.timers.read_timeout));
                    self.connection_lost(now);
                } else {
                    if now >= self.timers.last_send + self.timers.ping_interval {
                        encode_header_only(&mut self.requests.out, xid::PING, OpCode::Ping);
                        self.requests
                            .pings
                            .push_back((self.requests.pending.back().map(|p| p.xid), now));
                        self.timers.last_send = now;
                    }
                    if let Some((probe_at, interval)) = self.timers.rw_probe {
                        if now >= probe_at {
                            let next = (interval * 2).min(Duration::from_secs(60));
                            self.timers.rw_probe = Some((now + next, next));
                            if self.hosts.host_count() > 1 {
                                let mut probe =
                                    self.rng.below(self.hosts.host_count() as u64) as usize;
                                if probe == host {
                                    probe = (probe + 1) % self.hosts.host_count();
                                }
                                self.events.push_back(Event::ProbeReadWrite { host: probe });
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        if matches!(self.conn, Conn::Open { .. }) {
            self.move_timeout(now);
            self.try_switch(now);
        }
        if let Some(deadline) = self.expiry_deadline() {
            if now >= deadline {
                // Curator's rule: suspended for longer than the session timeout means the
                // session is as good as gone, whether or not the server said so yet.
                self.lose_session();
                // A handshake under way sent a ConnectRequest for the old session. Were the
                // server to answer it (e.g. a server that was frozen and has not expired the
                // session yet), the client would be back in the session it just reported
                // Lost. Drop that attempt: the next handshake asks for a new session.
                if matches!(self.conn, Conn::Handshaking { .. }) {
                    self.loss_reason = Some(ConnectionFailure::ExpiredDuringHandshake);
                    self.connection_lost(now);
                }
            }
        }
        self.fail_stale_waiting(now);
    }

    /// While read-only, a read-write server was found at `host`: move there.
    pub fn handle_read_write_found(&mut self, host: usize, now: Instant) {
        if let Conn::Open {
            read_only: true, ..
        } = self.conn
        {
            // Only the read-write host: no attempt at the next host in line first.
            self.loss_reason = Some(ConnectionFailure::LeftReadOnly);
            if self.tear_down(now) {
                self.hosts.jump_to(host);
                self.schedule_connect(now, Duration::ZERO);
            }
        }
    }
}
