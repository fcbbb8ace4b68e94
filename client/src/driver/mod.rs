//! The tokio task that owns the TCP connection and drives the session core.
//!
//! It does only I/O and sleeping: every decision is the core's. Client handles talk to it over
//! an unbounded channel; commands that arrive together are handled together, so their frames
//! leave in one write (pipelining without extra syscalls).
//!
//! During a move of the session to another host (`zkrs_session`'s `moving.rs`: make before
//! break) it holds up to two connections: the spare, opened while the session goes on over
//! the current one, and, after the switch, the old one, only read (its notifications) until
//! the core says to close it or to go back to it. Which bytes go where is the core's call
//! (`Event::UseSpare`, `Event::DropRetiring`, `Event::RestoreRetiring`).

mod events;
mod link;
mod move_links;
mod probe;
mod provider_ask;
mod timer;

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tokio::sync::mpsc;

use crate::connect_diagnosis::ConnectDiagnosis;
use crate::history::{Answer, Recorded, Recorder};
use crate::host_provider::SharedProvider;
use crate::metrics::Metrics;
use crate::path::Chroot;
use crate::protocol::{Command, ReplyTx, Shared, WatchSink};
use crate::session::{
    ConnId, ConnectionState, Event, HostChange, Reply, Request, Session, StateChange, WatchedEvent,
    WatcherId,
};
use crate::transport::Connector;
use link::{Attempted, ConnectFuture, Link};
use move_links::MoveLinks;
use probe::{is_read_write, Probe};
use provider_ask::ProviderAsk;
use timer::Timer;

pub(crate) struct Driver {
    session: Session<ReplyTx>,
    hosts: Vec<(String, u16)>,
    chroot: Chroot,
    commands: mpsc::UnboundedReceiver<Command>,
    shared: Arc<Mutex<Shared>>,
    /// Makes connections (plain or TLS).
    connector: Connector,
    transport: Option<Link>,
    connecting: Option<ConnectFuture>,
    /// A move's other connections: the spare, then the old one.
    moving: MoveLinks,
    /// The read-write probes' answers.
    probe: Probe,
    read_buf: BytesMut,
    /// Where each watcher the core holds sends its events.
    sinks: HashMap<WatcherId, WatchSink>,
    /// The host of the current (or last) connection attempt, for the logs.
    host: usize,
    /// The last session id, for the logs (a `Lost` change carries 0).
    last_session: i64,
    handles_gone: bool,
    /// The core's deadline, as a tokio timer.
    timer: Timer,
    /// Callers of `Client::detach`, told (by the drop) when the driver is gone.
    detached: Vec<tokio::sync::oneshot::Sender<()>>,
    /// The host provider, asked for the hosts before every connection attempt, if set.
    provider: ProviderAsk,
    /// The client's figures: bytes, connections, expiries, watch events.
    metrics: Arc<Metrics>,
    /// The core's `last_heard` as last told to the handles.
    heard: Option<Instant>,
    /// A simulation's history of what the application saw, and the last request number.
    recorder: Option<(Arc<dyn Recorder>, u64)>,
}

/// Watch sinks kept allocated across connections (as the core keeps its watchers).
const KEEP_SINKS: usize = 64;

/// Smallest free space kept in the read buffer before a read.
const READ_RESERVE: usize = 64 * 1024;

impl Driver {
    pub(crate) fn new(
        session: Session<ReplyTx>,
        hosts: Vec<(String, u16)>,
        chroot: Chroot,
        commands: mpsc::UnboundedReceiver<Command>,
        shared: Arc<Mutex<Shared>>,
        connector: Connector,
        provider: Option<SharedProvider>,
    ) -> Driver {
        Driver {
            session,
            hosts,
            chroot,
            commands,
            shared,
            connector,
            transport: None,
            connecting: None,
            moving: MoveLinks::default(),
            probe: Probe::new(),
            read_buf: BytesMut::with_capacity(READ_RESERVE),
            sinks: HashMap::new(),
            host: 0,
            last_session: 0,
            handles_gone: false,
            timer: Timer::new(),
            detached: Vec::new(),
            provider: ProviderAsk::new(provider),
            metrics: Arc::new(Metrics::new()),
            heard: None,
            recorder: None,
        }
    }

    /// Counts into `metrics` (the handles' own), instead of figures nobody reads.
    pub(crate) fn with_metrics(mut self, metrics: Arc<Metrics>) -> Driver {
        self.metrics = metrics;
        self
    }

    /// Tells `recorder` (a simulation's) what the application sees.
    pub(crate) fn with_recorder(mut self, recorder: Option<Arc<dyn Recorder>>) -> Driver {
        self.recorder = recorder.map(|r| (r, 0));
        self
    }

    /// Numbers a request the driver takes and records it, in a simulation.
    fn record_submitted(&mut self, request: &mut Request<ReplyTx>, watcher: Option<WatcherId>) {
        let Some((recorder, last)) = &mut self.recorder else {
            return;
        };
        *last += 1;
        request.token.recorded = Some(*last);
        recorder.record(Recorded::Submitted {
            id: *last,
            op: request.op,
            path: crate::history::request_path(request.op, &request.frame),
            watcher: watcher.map(WatcherId::get),
        });
    }

    /// Runs until the session is closed (explicitly, or when every handle is gone).
    pub(crate) async fn run(mut self) {
        loop {
            if self.process_events() {
                return;
            }
            if let Err(e) = self.flush() {
                crate::__log!(warn, error = %e, "writing to the server failed");
                self.transport_failed(e);
                continue;
            }
            if self.timers_overdue() {
                continue;
            }
            self.timer.arm(self.session.poll_timeout());
            let want_write = !self.session.poll_transmit().is_empty()
                || self
                    .transport
                    .as_ref()
                    .is_some_and(|l| l.transport.wants_write());
            // Biased, in this order, so that what runs depends only on what is ready (a
            // simulation replays a seed exactly; tokio's random start would not): replies
            // first, as they free places in flight and carry the watch events, then the
            // socket, connection attempts, the probe, the core's timer, and new commands,
            // which wait at most for what the socket already holds.
            tokio::select! {
                biased;
                readable = readable(&self.transport) => {
                    self.timer.count_read();
                    match readable {
                        Ok(()) => self.read(),
                        Err(e) => self.transport_failed(e),
                    }
                }
                writable = writable(&self.transport), if want_write => {
                    if let Err(e) = writable {
                        self.transport_failed(e);
                    }
                }
                attempted = connecting(&mut self.connecting) => {
                    self.connecting = None;
                    self.attempted(attempted);
                }
                // A move's old connection, after the switch: its notifications.
                readable = readable(&self.moving.retiring) => match readable {
                    Ok(()) => self.read_retiring(),
                    Err(_) => self.retiring_closed(),
                },
                // A move's spare connection: opened, or not.
                attempted = connecting(&mut self.moving.spare_connecting) => {
                    self.moving.spare_connecting = None;
                    self.spare_attempted(attempted);
                }
                readable = readable(&self.moving.spare) => self.spare_readable(readable),
                Some(host) = self.probe.rx.recv() => {
                    self.session.handle_read_write_found(host, crate::clock::now());
                }
                () = &mut self.timer.sleep, if self.timer.is_armed() => {
                    self.timer.fired();
                    self.session.handle_timeout(crate::clock::now());
                }
                command = self.commands.recv(), if !self.handles_gone => self.commands_arrived(command),
            }
        }
    }

    /// After [`timer::READS_BEFORE_TIMERS`] reads in a row, gives the core's timers their
    /// turn; true if they were due (and ran).
    fn timers_overdue(&mut self) -> bool {
        if !self.timer.timers_turn() {
            return false;
        }
        let now = crate::clock::now();
        if self.session.poll_timeout().is_some_and(|d| d <= now) {
            self.session.handle_timeout(now);
            return true;
        }
        false
    }

    /// A connection attempt (or the host provider asked before it) ended.
    fn attempted(&mut self, attempted: Attempted) {
        let now = crate::clock::now();
        let (conn, connected) = match attempted {
            Attempted::Connected(conn, connected) => (conn, connected),
            Attempted::Hosts(hosts) => return self.provided(hosts, now),
        };
        match connected {
            Ok(transport) => {
                self.transport = Some(Link { conn, transport });
                self.read_buf.clear();
                self.session.handle_connected(conn, now);
                self.diagnose(|diagnosis| diagnosis.handshaking(now));
            }
            Err(e) => {
                crate::__log!(debug, error = %e, "connection attempt failed");
                let (name, port) = &self.hosts[self.host];
                let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
                shared
                    .diagnosis
                    .host_failed(format!("{name}:{port}"), e.to_string());
                drop(shared);
                self.note_tls_failure(&e);
                // Kept by the core as the reason, for connect()'s error.
                self.session.handle_closed(conn, Some(e), now)
            }
        }
    }

    /// The current connection failed.
    fn transport_failed(&mut self, e: io::Error) {
        if let Some(link) = &self.transport {
            self.session
                .handle_closed(link.conn, Some(e), crate::clock::now());
        }
    }

    /// A move's spare connection opened, or could not.
    fn spare_attempted(&mut self, attempted: Attempted) {
        let now = crate::clock::now();
        match attempted {
            Attempted::Connected(conn, Ok(transport)) => {
                self.moving.spare = Some(Link { conn, transport });
                self.session.handle_connected(conn, now);
            }
            Attempted::Connected(conn, Err(e)) => {
                crate::__log!(debug, error = %e, "could not open the connection to move the session to");
                self.session.handle_closed(conn, Some(e), now);
            }
            Attempted::Hosts(_) => {}
        }
    }

    /// The spare is readable before the switch: its end, an error, or bytes nobody asked
    /// for, each of which the core takes as the spare's failure; or nothing after all (with
    /// TLS, a record with no data, such as a session ticket).
    fn spare_readable(&mut self, readable: io::Result<()>) {
        let Some(spare) = &mut self.moving.spare else {
            return;
        };
        let conn = spare.conn;
        let mut scratch = BytesMut::with_capacity(64);
        let read = match readable {
            Ok(()) => spare.transport.try_read_buf(&mut scratch),
            Err(e) => Err(e),
        };
        let now = crate::clock::now();
        match read {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Ok(0) => {
                self.moving.spare = None;
                self.session
                    .handle_closed(conn, Some(closed_by_server()), now);
            }
            Ok(_) => {
                self.moving.spare = None;
                self.session.handle_read(conn, &mut scratch, now);
            }
            Err(e) => {
                self.moving.spare = None;
                self.session.handle_closed(conn, Some(e), now);
            }
        }
    }

    /// Commands from the handles: this one and every one already queued, for one write; or
    /// none, every handle being gone.
    fn commands_arrived(&mut self, command: Option<Command>) {
        match command {
            Some(command) => {
                let now = crate::clock::now();
                self.command(command, now);
                while let Ok(command) = self.commands.try_recv() {
                    self.command(command, now);
                }
            }
            None => {
                // Every handle is gone: close the session so its ephemeral nodes go now
                // rather than at expiry.
                self.handles_gone = true;
                self.session.close(None, crate::clock::now());
            }
        }
    }

    /// Hands a request to the core, bound to `session` if given.
    fn submit(&mut self, request: Request<ReplyTx>, session: Option<i64>, now: Instant) {
        match session {
            Some(id) => self.session.submit_in_session(request, id, now),
            None => self.session.submit(request, now),
        }
    }

    fn command(&mut self, command: Command, now: Instant) {
        match command {
            Command::Request {
                mut request,
                sink,
                session,
            } => match sink {
                // Left through a watcher whose stream is already gone: nobody will read its
                // event, so its registration is forgotten as soon as it is made.
                Some((id, WatchSink::Group(tx))) if tx.is_closed() => {
                    self.record_submitted(&mut request, Some(id));
                    self.submit(request, session, now);
                    self.session.forget_watcher(id, now);
                }
                Some((id, sink)) => {
                    self.sinks.insert(id, sink);
                    self.record_submitted(&mut request, Some(id));
                    self.submit(request, session, now);
                    let sinks = &self.sinks;
                    let abandoned = |id| sinks.get(&id).is_some_and(WatchSink::is_abandoned);
                    for id in self.session.sweep_abandoned(abandoned, now) {
                        self.sinks.remove(&id);
                    }
                }
                None => {
                    self.record_submitted(&mut request, None);
                    self.submit(request, session, now)
                }
            },
            Command::AddAuth {
                scheme,
                auth,
                reply,
            } => self.session.add_auth(scheme, auth, Some(reply), now),
            Command::ForgetWatcher(id) => {
                self.sinks.remove(&id);
                self.session.forget_watcher(id, now);
            }
            Command::ForgetGroup(group) => {
                for id in self.session.forget_group(group, now) {
                    self.sinks.remove(&id);
                }
            }
            Command::Close(reply) => self.session.close(reply, now),
            Command::Detach(done) => {
                self.detached.push(done);
                self.session.detach();
            }
            Command::UpdateHosts {
                hosts,
                change,
                reply,
            } => {
                let _ = reply.send(self.update_hosts(hosts, change, now));
            }
            Command::CountOneShotWatches(reply) => {
                let _ = reply.send(crate::session::__private::one_shot_watchers(&self.session));
            }
        }
    }

    /// Connects to host `host`: its name resolved now, every address a candidate.
    fn start_connect(&mut self, conn: ConnId, host: usize, timeout: Duration, shuffle: u64) {
        let (name, port) = self.hosts[host].clone();
        crate::__log!(debug, host = %format_args!("{name}:{port}"), timeout_ms = timeout.as_millis() as u64, "connecting");
        self.host = host;
        let now = crate::clock::now();
        self.diagnose(|diagnosis| diagnosis.attempt_started(format!("{name}:{port}"), now));
        let connector = self.connector.clone();
        self.connecting = Some(Box::pin(async move {
            Attempted::Connected(
                conn,
                crate::resolve::connect_host(&connector, &name, port, timeout, shuffle).await,
            )
        }));
    }

    /// The host provider answered before an attempt: a new list is taken as
    /// `Client::update_hosts` takes one; then the attempt goes on (unless the client moves,
    /// in which case the core starts a new one at once).
    fn provided(&mut self, hosts: Result<Vec<(String, u16)>, String>, now: Instant) {
        let Some((conn, timeout, shuffle)) = self.provider.pending.take() else {
            return;
        };
        match hosts {
            Ok(hosts) if hosts != self.hosts => {
                crate::__log!(info, hosts = ?hosts, "the host provider changed the hosts");
                if self.update_hosts(hosts, HostChange::Rebalance, now) {
                    // The core dropped this attempt and connects to the new host at once.
                    self.provider.fresh = true;
                    return;
                }
            }
            Ok(_) => {}
            Err(why) => {
                crate::__log!(warn, error = %why, "the host provider failed; using the last hosts");
                self.shared
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .diagnosis
                    .host_failed("host provider".into(), why);
            }
        }
        match self.session.current_host() {
            Some(host) => self.start_connect(conn, host, timeout, shuffle),
            None => self.provider.fresh = false,
        }
    }

    /// Takes a new host list (see `Session::update_hosts`); returns whether the client
    /// moves. Hosts are the same when their name and port are (as given, not resolved).
    fn update_hosts(
        &mut self,
        hosts: Vec<(String, u16)>,
        change: HostChange,
        now: Instant,
    ) -> bool {
        let kept: Vec<Option<usize>> = hosts
            .iter()
            .map(|h| self.hosts.iter().position(|old| old == h))
            .collect();
        let names = hosts.iter().map(|(name, _)| name.clone()).collect();
        let moved = self.session.update_hosts(&kept, names, change, now);
        if let Some(host) = self.session.current_host() {
            self.host = host;
        } else {
            self.host = 0;
        }
        self.shared.lock().unwrap_or_else(|e| e.into_inner()).hosts =
            crate::host_list::host_strings(&hosts);
        self.hosts = hosts;
        // A read-write probe under way would answer with an index into the old list.
        self.probe = Probe::new();
        moved
    }

    /// At a disconnection: empties the read buffer and hands back what a burst made it and
    /// the sinks grow to (as the core does with its own queues), so a long-lived client does
    /// not keep its largest frame and its most watches allocated for good. Replies still
    /// sliced from the old buffer keep their bytes until dropped.
    fn release_burst_capacity(&mut self) {
        self.read_buf.clear();
        if self.read_buf.capacity() > 2 * READ_RESERVE {
            self.read_buf = BytesMut::with_capacity(READ_RESERVE);
        }
        self.sinks.shrink_to(KEEP_SINKS);
    }

    /// Writes what the core has to send, as far as the socket takes it without blocking.
    fn flush(&mut self) -> io::Result<()> {
        let Some(Link { transport, .. }) = &mut self.transport else {
            return Ok(());
        };
        while !self.session.poll_transmit().is_empty() {
            match transport.try_write(self.session.poll_transmit()) {
                Ok(n) => {
                    self.metrics.sent(n);
                    self.session.advance_transmit(n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        transport.flush()
    }

    /// Reads what the socket holds once it is readable, and hands it to the core.
    fn read(&mut self) {
        let Some(Link { conn, transport }) = &mut self.transport else {
            return;
        };
        let conn = *conn;
        // Make room now rather than before waiting: by then the replies sliced out of the
        // buffer have usually been dropped, so `reserve` reclaims the buffer in place.
        let room = read_room(&self.read_buf);
        if self.read_buf.capacity() - self.read_buf.len() < room / 2 {
            self.read_buf.reserve(room);
        }
        let now = crate::clock::now();
        match transport.try_read_buf(&mut self.read_buf) {
            Ok(0) => self
                .session
                .handle_closed(conn, Some(closed_by_server()), now),
            Ok(n) => {
                self.metrics.received(n);
                self.session.handle_read(conn, &mut self.read_buf, now);
                self.publish_heard();
            }
            // Readiness without bytes (or, with TLS, part of a record): wait again.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => {
                crate::__log!(warn, error = %e, "reading from the server failed");
                self.note_tls_failure(&e);
                self.session.handle_closed(conn, Some(e), now)
            }
        }
    }

    /// Keeps a TLS refusal for `connect()`'s error to carry as its matchable cause. It comes
    /// with the handshake, or, in TLS 1.3 (ZooKeeper 3.9 offers it by default), with the
    /// first read after it: the server checks our certificate after our side of the
    /// handshake has finished, and its alert is what the next record brings.
    fn note_tls_failure(&self, e: &io::Error) {
        #[cfg(feature = "tls")]
        if let Some(tls) = crate::tls::TlsError::find(e) {
            self.diagnose(|diagnosis| diagnosis.tls_refused(tls.clone()));
        }
        #[cfg(not(feature = "tls"))]
        let _ = e;
    }

    /// Reads the old connection of a move (after the switch) and hands its bytes to the core.
    fn read_retiring(&mut self) {
        let Some(Link { conn, transport }) = &mut self.moving.retiring else {
            return;
        };
        let conn = *conn;
        self.moving.retiring_buf.reserve(READ_RESERVE);
        match transport.try_read_buf(&mut self.moving.retiring_buf) {
            Ok(0) => self.retiring_closed(),
            Ok(n) => {
                self.metrics.received(n);
                let now = crate::clock::now();
                self.session
                    .handle_read(conn, &mut self.moving.retiring_buf, now);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(_) => self.retiring_closed(),
        }
    }

    /// The old connection of a move ended (the server closes it once the session moved).
    fn retiring_closed(&mut self) {
        let Some(Link { conn, .. }) = self.moving.retiring.take() else {
            return;
        };
        self.moving.retiring_buf.clear();
        self.session.handle_closed(conn, None, crate::clock::now());
    }

    /// Tells the handles when the server last heard from the session, if that moved (a
    /// reply arrived): one lock per read that brought replies, none otherwise.
    fn publish_heard(&mut self) {
        let heard = self.session.last_heard();
        if heard != self.heard {
            self.heard = heard;
            let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
            shared.last_heard = heard;
        }
    }

    /// Updates what the handles know of the connection attempts (for connect()'s error when
    /// no session comes). Only on connection events: never on the request path.
    fn diagnose(&self, update: impl FnOnce(&mut ConnectDiagnosis)) {
        let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        update(&mut shared.diagnosis);
    }

    /// Tells operators of a state change (with the `tracing` feature).
    fn log_state(&mut self, change: StateChange) {
        if change.session_id != 0 {
            self.last_session = change.session_id;
        }
        let (name, port) = &self.hosts[self.host];
        let host = format_args!("{name}:{port}");
        let session = format_args!("{:#x}", self.last_session);
        let timeout_ms = self.session.negotiated_timeout().as_millis() as u64;
        match change.state {
            ConnectionState::Connected | ConnectionState::Reconnected => {
                crate::__log!(info, %host, %session, timeout_ms, state = ?change.state, "session established")
            }
            ConnectionState::ReadOnly => {
                crate::__log!(warn, %host, %session, "connected to a read-only server")
            }
            ConnectionState::Suspended => {
                let error = self
                    .session
                    .last_connection_failure()
                    .map_or_else(|| "unknown".to_string(), ToString::to_string);
                crate::__log!(warn, %host, %session, %error, "connection lost; reconnecting");
                let _ = error;
            }
            ConnectionState::Lost => crate::__log!(warn, %session, "session lost (expired)"),
            ConnectionState::AuthFailed => {
                let why = self
                    .session
                    .last_connection_failure()
                    .map(ToString::to_string)
                    .unwrap_or_default();
                crate::__log!(warn, %host, %session, %why, "authentication failed; the client stops");
                let _ = why;
            }
            ConnectionState::Closed => crate::__log!(info, "client closed"),
            _ => {}
        }
        let _ = (host, session, timeout_ms);
    }
}

/// How much free space to make before a read: at least [`READ_RESERVE`], and room for the
/// frame under way, but never more than the bytes already received of it. A length prefix
/// alone (a hostile one says 1 GiB) only ever earns room in step with its bytes.
fn read_room(buf: &[u8]) -> usize {
    let frame = match buf.get(..4) {
        Some(p) => (i32::from_be_bytes([p[0], p[1], p[2], p[3]]).max(0) as usize) + 4,
        None => 0,
    };
    let missing = frame.saturating_sub(buf.len());
    READ_RESERVE.max(missing.min(buf.len()))
}

/// The end of a connection, as the core hears of it.
fn closed_by_server() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the server closed the connection",
    )
}

async fn readable(link: &Option<Link>) -> io::Result<()> {
    match link {
        Some(l) => l.transport.readable().await,
        None => std::future::pending().await,
    }
}

async fn writable(link: &Option<Link>) -> io::Result<()> {
    match link {
        Some(l) => l.transport.writable().await,
        None => std::future::pending().await,
    }
}

async fn connecting(attempt: &mut Option<ConnectFuture>) -> Attempted {
    match attempt {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}
