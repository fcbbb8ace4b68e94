//! An ensemble on the wire: `n` member servers, each with its own clients, tree and watch
//! tables, and one committed log the leader orders. Members apply the log when the caller lets
//! them (`hold`, `release`, `replicate`), so a member can serve reads from the past while its
//! clients' writes wait for it to catch up, as a lagging follower does. Sessions belong to the
//! leader: it creates and expires them and checks a resume's password; a member cut off
//! (`partition`) or crashed (`crash`) closes its connections and serves nobody until it
//! comes back and replays the log.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;
use zkrs_codec::OpCode;

use crate::acl::AuthId;
use crate::config::ServerConfig;
use crate::connection_id::ConnectionId;
use crate::membership::{Forward, Role};
use crate::server::{Server, Transmit};
use crate::sessions::{first_session_id, Passwords, SessionTable};
use crate::tree::DataTree;

/// One entry of the committed log.
#[derive(Debug, Clone)]
struct Entry {
    zxid: i64,
    time: i64,
    /// The member and connection (and xid) that asked, to answer it there.
    origin: Option<(usize, ConnectionId, i32)>,
    kind: EntryKind,
}

#[derive(Debug, Clone)]
enum EntryKind {
    Write {
        op: OpCode,
        body: Bytes,
        session: i64,
        auth: Vec<AuthId>,
    },
    CreateSession {
        id: i64,
        passwd: [u8; 16],
        timeout_ms: i32,
    },
    CloseSession(i64),
    /// No transaction: a marker answered by the member that asked once it reaches it.
    Sync(String),
}

#[derive(Debug, Clone)]
struct LeaderSession {
    passwd: [u8; 16],
    timeout_ms: i32,
    expires_at: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Health {
    Serving,
    Partitioned,
    Crashed,
}

/// An ensemble of model [`Server`]s that clients reach through the wire protocol,
/// deterministic and sans-I/O like [`Server`]: connections are addressed by member and
/// [`ConnectionId`]. [`TcpEnsemble`](crate::TcpEnsemble) serves it on TCP; the simulation
/// drives it directly.
#[derive(Debug)]
pub struct WireEnsemble {
    config: ServerConfig,
    members: Vec<Server>,
    health: Vec<Health>,
    held: Vec<bool>,
    applied: Vec<usize>,
    generation: Vec<u64>,
    /// The log's length when each member last crashed: how much of the log a restart may
    /// take from the replica.
    crashed_at: Vec<usize>,
    /// A member that serves nobody and applies the log only when a restarted member needs
    /// it; that member takes the replica's tree and sessions instead of replaying every
    /// entry since the start (in a long simulated run, most of the model's time).
    replica: Server,
    replica_applied: usize,
    /// Per crashed member, the tree and sessions of the whole log as it was at the crash,
    /// copied from a member that had applied all of it: what a restart takes, with no
    /// replica applying every entry once more (a twentieth of a busy simulated run).
    at_crash: Vec<Option<(DataTree, SessionTable)>>,
    log: Vec<Entry>,
    pending: VecDeque<(usize, Forward)>,
    sessions: BTreeMap<i64, LeaderSession>,
    leader: usize,
    epoch: i64,
    counter: i64,
    next_session: i64,
    passwords: Passwords,
    /// When the ensemble started: every time below is measured from it.
    start: Instant,
    now: Duration,
    transmits: VecDeque<(usize, Transmit)>,
    next_poll: usize,
    /// The ports the driver listens on, per member (`conf`'s `clientPort`).
    client_ports: Vec<u16>,
}

impl WireEnsemble {
    /// `n` members started at `now`, all serving and applying the log as it grows; member 0
    /// leads.
    ///
    /// # Panics
    ///
    /// If `n` is 0.
    pub fn new(n: usize, config: ServerConfig, now: Instant) -> Self {
        assert!(n > 0, "an ensemble has members");
        let mut ensemble = WireEnsemble {
            members: (0..n)
                .map(|_| Server::new_member(config.clone(), 1, now))
                .collect(),
            health: vec![Health::Serving; n],
            held: vec![false; n],
            applied: vec![0; n],
            generation: vec![0; n],
            crashed_at: vec![0; n],
            replica: Server::new_member(config.clone(), 1, now),
            replica_applied: 0,
            at_crash: vec![None; n],
            log: Vec::new(),
            pending: VecDeque::new(),
            sessions: BTreeMap::new(),
            leader: 0,
            epoch: 1,
            counter: 0,
            next_session: first_session_id(config.server_id, config.epoch_ms),
            passwords: Passwords::new(config.randomness),
            start: now,
            now: Duration::ZERO,
            transmits: VecDeque::new(),
            next_poll: 0,
            client_ports: vec![0; n],
            config,
        };
        ensemble.update_roles();
        ensemble
    }

    /// The members' settings.
    pub(crate) fn server_config(&self) -> &ServerConfig {
        &self.config
    }

    /// Whether member `m`'s `conn` still waits for its handshake.
    pub(crate) fn is_handshaking(&self, m: usize, conn: ConnectionId) -> bool {
        self.members.get(m).is_some_and(|s| s.is_handshaking(conn))
    }

    /// The driver tells each member's client port (`conf`'s `clientPort`).
    pub(crate) fn set_client_ports(&mut self, ports: &[u16]) {
        self.client_ports = ports.to_vec();
        self.update_roles();
    }

    /// Tells each member its id, port and whether it leads (what its four-letter words
    /// report), after a change of leader, of health or of a member's state.
    fn update_roles(&mut self) {
        let serving = self.serving();
        for (m, member) in self.members.iter_mut().enumerate() {
            member.client_port = self.client_ports.get(m).copied().unwrap_or(0);
            if let Some(membership) = member.membership.as_mut() {
                membership.role = Role {
                    id: m + 1,
                    leading: (m == self.leader)
                        .then(|| (self.health.len() - 1, serving.saturating_sub(1))),
                };
            }
        }
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Always false: an ensemble has members.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The member leading now.
    pub fn leader(&self) -> usize {
        self.leader
    }

    /// A member's server, to inspect its tree.
    pub fn member(&self, m: usize) -> &Server {
        &self.members[m]
    }

    /// The last zxid member `m` applied.
    pub fn applied_zxid(&self, m: usize) -> i64 {
        self.members[m].tree.last_zxid
    }

    /// The zxid of the last committed transaction.
    pub fn committed_zxid(&self) -> i64 {
        self.log
            .iter()
            .rev()
            .find(|e| e.zxid > 0)
            .map_or(0, |e| e.zxid)
    }

    /// The live sessions (the leader's table).
    pub fn session_ids(&self) -> Vec<i64> {
        self.sessions.keys().copied().collect()
    }

    /// Moves the clocks to `now` (never backwards).
    fn advance_clock(&mut self, now: Instant) {
        self.now = self.now.max(now.saturating_duration_since(self.start));
        for m in &mut self.members {
            m.now = m.now.max(self.now);
        }
    }

    /// A client connected to member `m`. A member that is not serving closes it at once.
    pub fn accept(&mut self, m: usize, peer_ip: &str, now: Instant) -> ConnectionId {
        self.advance_clock(now);
        let conn = self.members[m].accept(peer_ip, now);
        if self.health[m] != Health::Serving {
            self.members[m].close_connection(conn);
        }
        conn
    }

    /// Bytes from a client of member `m`.
    pub fn handle_input(&mut self, m: usize, conn: ConnectionId, bytes: &[u8], now: Instant) {
        self.advance_clock(now);
        if self.health[m] != Health::Serving {
            return;
        }
        self.members[m].handle_input(conn, bytes, now);
        self.pump();
    }

    /// The driver tells the client's address of a connection of member `m`.
    pub(crate) fn set_peer(&mut self, m: usize, conn: ConnectionId, peer: std::net::SocketAddr) {
        self.members[m].set_peer(conn, peer);
    }

    /// A client of member `m` went away.
    pub fn handle_disconnect(&mut self, m: usize, conn: ConnectionId, now: Instant) {
        self.advance_clock(now);
        self.members[m].handle_disconnect(conn, now);
    }

    /// What to write next: (member, bytes for one of its connections).
    pub fn poll_transmit(&mut self) -> Option<(usize, Transmit)> {
        if let Some(t) = self.transmits.pop_front() {
            return Some(t);
        }
        let n = self.members.len();
        for i in 0..n {
            let m = (self.next_poll + i) % n;
            if let Some(t) = self.members[m].poll_transmit() {
                self.next_poll = (m + 1) % n;
                return Some((m, t));
            }
        }
        None
    }

    /// When the leader next expires a session.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.sessions
            .values()
            .map(|s| s.expires_at)
            .min()
            .map(|at| self.start + at)
    }

    /// Time passed: the leader expires sessions silent for their timeout (with a quorum).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance_clock(now);
        if !self.has_quorum() {
            return;
        }
        let due: Vec<i64> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.expires_at <= self.now)
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            self.sessions.remove(&id);
            self.append(None, EntryKind::CloseSession(id));
        }
        self.pump();
    }

    /// Member `m` stops applying the log (it lags from now on); its clients' writes and
    /// syncs wait until it applies them.
    pub fn hold(&mut self, m: usize) {
        self.held[m] = true;
    }

    /// Member `m` applies up to `count` more entries of the log (still held afterwards).
    pub fn replicate(&mut self, m: usize, count: usize) {
        for _ in 0..count {
            if !self.apply_next(m) {
                break;
            }
        }
        self.pump();
    }

    /// Member `m` catches up and keeps up again.
    pub fn release(&mut self, m: usize) {
        self.held[m] = false;
        self.pump();
    }

    /// Member `m` is cut off: it closes its connections and serves nobody; without it a
    /// quorum may be lost (writes then wait). If it led, another member leads in a new epoch.
    pub fn partition(&mut self, m: usize) {
        self.health[m] = Health::Partitioned;
        self.members[m].close_all();
        self.elect();
    }

    /// The partition heals: member `m` catches up from the log and serves again.
    pub fn heal(&mut self, m: usize) {
        if self.health[m] == Health::Partitioned {
            self.health[m] = Health::Serving;
        }
        self.elect();
        self.pump();
    }

    /// Member `m` crashes: its connections drop and its state is gone.
    pub fn crash(&mut self, m: usize) {
        // The state of the whole log now, from the member itself or any other that has it
        // (every entry applied; a member's tree and sessions are those of the entries it
        // applied, whichever member it is), for the restart.
        let whole = self.log.len();
        self.at_crash[m] = std::iter::once(m)
            .chain(0..self.members.len())
            .find(|&k| self.applied[k] == whole && (k == m || self.health[k] != Health::Crashed))
            .map(|k| {
                let mut sessions = self.members[k].sessions.clone();
                sessions.forget_connections();
                (self.members[k].tree.clone(), sessions)
            });
        self.members[m].close_all();
        while let Some(t) = self.members[m].poll_transmit() {
            self.transmits.push_back((m, t));
        }
        self.health[m] = Health::Crashed;
        self.generation[m] += 1;
        let first_id = self.generation[m] << 32;
        self.members[m] = Server::new_member(self.config.clone(), first_id, self.start);
        self.members[m].now = self.now;
        self.applied[m] = 0;
        self.crashed_at[m] = self.log.len();
        self.elect();
    }

    /// Member `m` restarts and replays the committed log.
    pub fn restart(&mut self, m: usize) {
        self.health[m] = Health::Serving;
        self.elect();
        self.pump();
    }

    fn serving(&self) -> usize {
        self.health
            .iter()
            .filter(|h| **h == Health::Serving)
            .count()
    }

    fn has_quorum(&self) -> bool {
        self.serving() * 2 > self.members.len() && self.health[self.leader] == Health::Serving
    }

    /// A leader that stopped serving is replaced by a serving member (the committed log is
    /// on a quorum, so the new one has it all), in a new epoch.
    fn elect(&mut self) {
        if self.health[self.leader] != Health::Serving && self.serving() * 2 > self.members.len() {
            if let Some(next) = (0..self.members.len()).find(|m| self.health[*m] == Health::Serving)
            {
                self.leader = next;
                self.epoch += 1;
                self.counter = 0;
            }
        }
        self.update_roles();
    }

    fn append(&mut self, origin: Option<(usize, ConnectionId, i32)>, kind: EntryKind) {
        let zxid = if matches!(kind, EntryKind::Sync(_)) {
            0
        } else {
            self.counter += 1;
            (self.epoch << 32) | self.counter
        };
        let time = self.config.epoch_ms + self.now.as_millis() as i64;
        self.log.push(Entry {
            zxid,
            time,
            origin,
            kind,
        });
    }

    /// Moves forwards into the log and the log into the members, until nothing moves.
    fn pump(&mut self) {
        loop {
            let mut moved = false;
            for m in 0..self.members.len() {
                for f in self.members[m].take_forwards() {
                    self.pending.push_back((m, f));
                    moved = true;
                }
            }
            while self.has_quorum() {
                let Some((m, f)) = self.pending.pop_front() else {
                    break;
                };
                self.order(m, f);
                moved = true;
            }
            for m in 0..self.members.len() {
                if self.health[m] == Health::Serving && !self.held[m] {
                    if self.restore(m) {
                        moved = true;
                    }
                    while self.apply_next(m) {
                        moved = true;
                    }
                }
            }
            if !moved {
                return;
            }
        }
    }

    fn touch(&mut self, session: i64) {
        let tick = self.config.tick_time.as_millis().max(1) as u64;
        if let Some(s) = self.sessions.get_mut(&session) {
            let at = self.now.as_millis() as u64 + s.timeout_ms.max(0) as u64;
            s.expires_at = Duration::from_millis((at / tick + 1) * tick);
        }
    }

    /// The leader handles what a member forwarded.
    fn order(&mut self, m: usize, f: Forward) {
        match f {
            Forward::Touch(session) => self.touch(session),
            Forward::Write {
                conn,
                xid,
                op,
                body,
                session,
                auth,
            } => {
                self.touch(session);
                self.append(
                    Some((m, conn, xid)),
                    EntryKind::Write {
                        op,
                        body,
                        session,
                        auth,
                    },
                );
            }
            Forward::CreateSession { conn, timeout_ms } => {
                let id = self.next_session;
                self.next_session += 1;
                let passwd = self.passwords.next();
                self.sessions.insert(
                    id,
                    LeaderSession {
                        passwd,
                        timeout_ms,
                        expires_at: self.now,
                    },
                );
                self.touch(id);
                self.append(
                    Some((m, conn, 0)),
                    EntryKind::CreateSession {
                        id,
                        passwd,
                        timeout_ms,
                    },
                );
            }
            Forward::Resume {
                conn,
                session,
                passwd,
                timeout_ms,
            } => {
                let valid = self.sessions.get_mut(&session).and_then(|s| {
                    (s.passwd[..] == passwd[..]).then(|| {
                        s.timeout_ms = timeout_ms;
                        s.passwd
                    })
                });
                // The session's other connections, on any member, are closed.
                for (k, member) in self.members.iter_mut().enumerate() {
                    member.close_session_connections(session, (k == m).then_some(conn));
                }
                if valid.is_some() {
                    self.touch(session);
                }
                let answer = valid.map(|p| (session, p, timeout_ms));
                self.members[m].finish_connect(conn, answer);
            }
            Forward::CloseSession { conn, xid, session } => {
                self.sessions.remove(&session);
                self.append(Some((m, conn, xid)), EntryKind::CloseSession(session));
            }
            Forward::Sync { conn, xid, path } => {
                self.append(Some((m, conn, xid)), EntryKind::Sync(path));
            }
        }
    }

    /// A crashed member that restarts with nothing applied takes the tree and sessions kept
    /// at its crash, if a member had the whole log then; else the replica's tree and
    /// sessions as of the log it had when it crashed: the state replaying those entries now
    /// would give (the replay answers nobody, its connections being gone, and a session's
    /// expiry counts from when it is applied, now). False if it cannot (nothing to take, or
    /// the replica is already past that point); the entries left are applied one by one.
    fn restore(&mut self, m: usize) -> bool {
        let upto = self.crashed_at[m].min(self.log.len());
        if self.applied[m] != 0 || self.generation[m] == 0 || upto == 0 {
            return false;
        }
        if let Some((tree, sessions)) = self.at_crash[m].take() {
            let member = &mut self.members[m];
            member.tree = tree;
            member.sessions = sessions;
            member.sessions.added_again_at(member.now);
            self.applied[m] = upto;
            return true;
        }
        if self.replica_applied > upto {
            return false;
        }
        while self.replica_applied < upto {
            apply_entry(&mut self.replica, None, &self.log[self.replica_applied]);
            self.replica_applied += 1;
        }
        let member = &mut self.members[m];
        member.tree = self.replica.tree.clone();
        member.sessions = self.replica.sessions.clone();
        member.sessions.added_again_at(member.now);
        self.applied[m] = upto;
        true
    }

    /// Member `m` applies its next log entry; false when it is up to date.
    fn apply_next(&mut self, m: usize) -> bool {
        // Borrowed, not cloned: every member applies every entry, and a clone (the body's
        // bytes, the auth list's strings) per member per write was a measurable part of a
        // simulated run.
        let Some(entry) = self.log.get(self.applied[m]) else {
            return false;
        };
        self.applied[m] += 1;
        let here = entry
            .origin
            .filter(|(k, _, _)| *k == m)
            .map(|(_, c, x)| (c, x));
        apply_entry(&mut self.members[m], here, entry);
        true
    }
}

/// `member` applies `entry`, answering it on `here` (its connection and xid), if given.
fn apply_entry(member: &mut Server, here: Option<(ConnectionId, i32)>, entry: &Entry) {
    match &entry.kind {
        EntryKind::Write {
            op,
            body,
            session,
            auth,
        } => member.apply_write(here, (*op, body, *session, auth, entry.zxid, entry.time)),
        EntryKind::CreateSession {
            id,
            passwd,
            timeout_ms,
        } => member.apply_create_session(
            here.map(|(c, _)| c),
            (*id, *passwd, *timeout_ms),
            entry.zxid,
        ),
        EntryKind::CloseSession(session) => member.apply_close_session(here, *session, entry.zxid),
        EntryKind::Sync(path) => {
            if let Some((conn, xid)) = here {
                member.apply_sync(conn, xid, path);
            }
        }
    }
}
