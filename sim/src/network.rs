//! The simulated network and ensemble: every client connection is an in-memory link
//! (`zkrs_client::__private::memory_link`) whose bytes this module carries to and from the
//! ensemble model (`zkrs_model::WireEnsemble`) after a latency, through the faults of the
//! plan. One task drives it ([`pump`]), on the runtime's virtual time; everything it does is
//! a function of the seed and of what the clients wrote, and each step is a trace line.

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::Notify;
use tokio::time::Instant;
use zkrs_client::__private::{memory_link, DialFuture, Dialer, LinkPeer};
use zkrs_model::{ConnectionId, ServerConfig, WireEnsemble};

use crate::faults::{Direction, Fault, FaultKind};
use crate::frames::FrameReader;
use crate::rng::SimRng;
use crate::trace::{digest, Trace};
use crate::world::Violation;

/// How soon the model is asked again about a deadline it could not act on.
const MODEL_RETRY: Duration = Duration::from_millis(10);

/// Steps within [`PROGRESS`] of virtual time after which the network is stuck: time must
/// move, and not by microseconds (a run crawling a microsecond a step takes hours).
const STUCK_STEPS: u64 = 1_000_000;
const PROGRESS: Duration = Duration::from_millis(1);

/// The port every member listens on.
pub const PORT: u16 = 2181;

/// A member's host name: `zk1`, `zk2`, ...
pub fn host_name(member: usize) -> String {
    format!("zk{}", member + 1)
}

/// What happens at a virtual instant.
#[derive(Debug)]
enum Event {
    /// Client bytes reach the member.
    ToServer {
        conn: u64,
        data: Bytes,
    },
    /// The client closed its end; the member learns it after the bytes before.
    ClientGone {
        conn: u64,
    },
    /// Member bytes reach the client; `close` ends the stream after them.
    ToClient {
        conn: u64,
        data: Bytes,
        close: bool,
    },
    /// The connection is reset at both ends.
    Reset {
        conn: u64,
    },
    FaultStart(Fault),
    FaultEnd(Fault),
    /// A lagging member applies a few log entries.
    LagStep {
        member: usize,
        fault: usize,
    },
}

/// One client connection.
#[derive(Debug)]
struct Conn {
    member: usize,
    /// The client that dialed it (numbered by [`Network::add_client`]).
    client: usize,
    model: ConnectionId,
    peer: LinkPeer,
    /// One-way latency, each direction.
    latency: Duration,
    /// The last delivery scheduled each way: a stream never overtakes itself.
    last_to_server: Duration,
    last_to_client: Duration,
    /// A black hole swallowed some of its bytes: it is reset when the hole heals.
    lost_bytes: bool,
    /// The member's handshake answer was sent: every later frame starts with a reply header.
    answered_handshake: bool,
    /// The client's end is gone and the member told.
    client_gone: bool,
    /// Closed or reset: nothing more crosses.
    ended: bool,
    /// Reads its frames for the trace.
    frames: FrameReader,
    /// The participant and incarnation that made it ([`Owner`]), if a participant did.
    owner: Option<Owner>,
}

/// A participant's incarnation: its id, and how many times it restarted. A connection a
/// crashed incarnation made is reset at the crash, and that incarnation can never dial
/// again (a driver left running would otherwise close or resume the dead one's session).
pub(crate) type Owner = (usize, u64);

/// What the faults do to one member's traffic now.
#[derive(Debug, Default, Clone)]
struct MemberNet {
    crashed: bool,
    hole_requests: bool,
    hole_replies: bool,
    extra_latency: Duration,
    /// The lag fault in force, and its own random stream (its steps).
    lag: Option<(usize, SimRng)>,
    cut_next: bool,
    /// Replies to requests still to leave out (a skipped-reply fault).
    skip_replies: u32,
}

/// What the single-client faults do to one client's traffic now.
#[derive(Debug, Default)]
struct ClientNet {
    /// Cut off: its bytes are dropped, its dials hang.
    isolated: bool,
    /// Paused: what reaches it or leaves it waits here, in order, until it resumes.
    parked: Option<Vec<Event>>,
}

/// The network, the ensemble, and the trace.
#[derive(Debug)]
pub(crate) struct Network {
    pub(crate) ensemble: WireEnsemble,
    /// The instant the run began: the ensemble's clock is `origin + now`.
    origin: std::time::Instant,
    members: Vec<MemberNet>,
    conns: BTreeMap<u64, Conn>,
    by_model: BTreeMap<(usize, ConnectionId), u64>,
    events: BTreeMap<(Duration, u64), Event>,
    next_seq: u64,
    next_conn: u64,
    rng: SimRng,
    pub(crate) trace: Trace,
    /// Faults started and not yet ended.
    active: usize,
    /// An outage is on: no member can be reached.
    outage: bool,
    /// The clients a single-client fault hits now.
    clients: BTreeMap<usize, ClientNet>,
    /// Clients built so far.
    next_client: usize,
    /// When the last planned fault ends.
    pub(crate) plan_ends: Duration,
    pub(crate) faults_injected: u64,
    /// Each crashed participant's incarnation now, and whether it is down.
    participants: BTreeMap<usize, (u64, bool)>,
}

impl Network {
    pub(crate) fn new(
        members: usize,
        config: ServerConfig,
        rng: SimRng,
        plan: &[Fault],
        keep_trace: bool,
        origin: std::time::Instant,
    ) -> Network {
        let mut net = Network {
            ensemble: WireEnsemble::new(members, config, origin),
            origin,
            members: vec![MemberNet::default(); members],
            conns: BTreeMap::new(),
            by_model: BTreeMap::new(),
            events: BTreeMap::new(),
            next_seq: 0,
            next_conn: 1,
            rng,
            trace: Trace::new(keep_trace),
            active: 0,
            outage: false,
            clients: BTreeMap::new(),
            next_client: 0,
            plan_ends: Duration::ZERO,
            faults_injected: 0,
            participants: BTreeMap::new(),
        };
        for f in plan {
            net.schedule(f.at, Event::FaultStart(*f));
            net.plan_ends = net.plan_ends.max(f.at + f.length);
        }
        net
    }

    fn schedule(&mut self, at: Duration, event: Event) {
        self.next_seq += 1;
        self.events.insert((at, self.next_seq), event);
    }

    /// A number for a new client: its connections carry it, and single-client faults name it.
    pub(crate) fn add_client(&mut self) -> usize {
        self.next_client += 1;
        self.next_client - 1
    }

    /// Whether `client` is cut off now.
    fn isolated(&self, client: usize) -> bool {
        self.clients.get(&client).is_some_and(|c| c.isolated)
    }

    /// Whether faults are over: every planned one started and ended.
    pub(crate) fn healed(&self, now: Duration) -> bool {
        now >= self.plan_ends && self.active == 0
    }

    /// A new connection to `member` at `now`, or why not. `None`: the attempt hangs (the
    /// SYN went into a black hole), as TCP's would until the client's timeout.
    fn connect(
        &mut self,
        member: usize,
        client: usize,
        owner: Option<Owner>,
        now: Duration,
        notify: &Arc<Notify>,
    ) -> Option<io::Result<zkrs_client::__private::LinkEnd>> {
        if let Some((p, incarnation)) = owner {
            if self
                .participants
                .get(&p)
                .is_some_and(|&(now_is, down)| down || incarnation < now_is)
            {
                self.trace.record(
                    now,
                    &format!("dial m{member} by crashed participant {p}: refused"),
                );
                return Some(Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    "connection refused (the participant crashed)",
                )));
            }
        }
        let m = &self.members[member];
        if m.crashed {
            self.trace.record(now, &format!("dial m{member}: refused"));
            return Some(Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                "connection refused (member down)",
            )));
        }
        if m.hole_requests || m.hole_replies || self.outage {
            self.trace
                .record(now, &format!("dial m{member}: no answer"));
            return None;
        }
        if self.clients.contains_key(&client) {
            self.trace.record(
                now,
                &format!("dial m{member} by client {client}: no answer (cut off or paused)"),
            );
            return None;
        }
        let (end, peer) = memory_link(notify.clone());
        let id = self.next_conn;
        self.next_conn += 1;
        let model = self.ensemble.accept(
            member,
            &format!("10.0.0.{}", 100 + id % 100),
            self.origin + now,
        );
        // Drawn from the connection's own stream: leaving a fault out of the plan does not
        // change the latencies of the connections that remain.
        let latency = Duration::from_micros(self.rng.fork(id).between(100, 2_000));
        self.conns.insert(
            id,
            Conn {
                member,
                client,
                model,
                peer,
                latency,
                last_to_server: now,
                last_to_client: now,
                lost_bytes: false,
                answered_handshake: false,
                client_gone: false,
                ended: false,
                frames: FrameReader::default(),
                owner,
            },
        );
        self.by_model.insert((member, model), id);
        self.trace.record(
            now,
            &format!("dial m{member}: c{id} ({} us)", latency.as_micros()),
        );
        Some(Ok(end))
    }

    /// Does everything due at `now`; returns when something is next due.
    pub(crate) fn step(&mut self, now: Duration) -> Option<Duration> {
        self.take_outgoing(now);
        while let Some(entry) = self.events.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let event = entry.remove();
            self.apply(event, now);
            self.take_transmits(now);
        }
        if self.model_timeout().is_some_and(|t| t <= now) {
            self.ensemble.handle_timeout(self.origin + now);
            self.take_transmits(now);
        }
        let next_event = self.events.keys().next().map(|k| k.0);
        // A deadline the model could not act on (no quorum to expire sessions with) stays
        // in the past: look again a tick later rather than spin at this instant.
        let model = self
            .model_timeout()
            .map(|t| if t <= now { now + MODEL_RETRY } else { t });
        match (next_event, model) {
            (Some(a), Some(b)) => Some(a.min(b).max(now)),
            (a, b) => a.or(b).map(|t| t.max(now)),
        }
    }

    /// When the ensemble's next deadline is, as time since the run began.
    fn model_timeout(&self) -> Option<Duration> {
        self.ensemble
            .poll_timeout()
            .map(|t| t.saturating_duration_since(self.origin))
    }

    /// Moves what clients wrote onto the wire (or into a black hole).
    fn take_outgoing(&mut self, now: Duration) {
        let ids: Vec<u64> = self.conns.keys().copied().collect();
        for id in ids {
            let conn = &self.conns[&id];
            let data = conn.peer.take_outgoing();
            let gone = conn.peer.client_gone() && !conn.client_gone;
            let net = &self.members[conn.member];
            let at = (now + conn.latency + net.extra_latency).max(conn.last_to_server);
            let hole = net.hole_requests || self.outage || self.isolated(conn.client);
            if !data.is_empty() && !conn.ended {
                if hole {
                    self.trace
                        .record(now, &format!("c{id}>m{} {}B lost", conn.member, data.len()));
                    self.conns.get_mut(&id).unwrap().lost_bytes = true;
                } else {
                    self.conns.get_mut(&id).unwrap().last_to_server = at;
                    self.schedule(at, Event::ToServer { conn: id, data });
                }
            }
            if gone {
                self.conns.get_mut(&id).unwrap().client_gone = true;
                self.schedule(at, Event::ClientGone { conn: id });
            }
        }
    }

    /// Moves what the ensemble wrote onto the wire (or into a black hole).
    fn take_transmits(&mut self, now: Duration) {
        while let Some((member, t)) = self.ensemble.poll_transmit() {
            let Some(&id) = self.by_model.get(&(member, t.connection)) else {
                continue;
            };
            let net = self.members[member].clone();
            let isolated = self.isolated(self.conns[&id].client);
            let conn = self.conns.get_mut(&id).unwrap();
            if conn.ended {
                continue;
            }
            if net.hole_replies || self.outage || isolated {
                conn.lost_bytes = true;
                self.trace
                    .record(now, &format!("c{id}<m{member} {}B lost", t.data.len()));
                continue;
            }
            let at = (now + conn.latency + net.extra_latency).max(conn.last_to_client);
            conn.last_to_client = at;
            let mut data = t.data;
            // A budget not used up by the end of the planned faults is dropped: after healing
            // the world has no faults (a member that served nobody meanwhile kept it, and
            // skipped the checks' own reads after healing: master seed 5009013).
            if net.skip_replies > 0 && now < self.plan_ends {
                let (kept, skipped) =
                    skip_replies(&data, &mut conn.answered_handshake, net.skip_replies);
                if !skipped.is_empty() {
                    self.members[member].skip_replies -= skipped.len() as u32;
                    let xids: Vec<String> = skipped.iter().map(i32::to_string).collect();
                    self.trace.record(
                        now,
                        &format!(
                            "c{id}<m{member} reply xid {} skipped (the connection stays up)",
                            xids.join(", ")
                        ),
                    );
                    data = kept;
                }
            } else if !conn.answered_handshake && !data.is_empty() {
                conn.answered_handshake = true;
            }
            if data.is_empty() && !t.close {
                continue;
            }
            if net.cut_next && data.len() > 1 {
                self.members[member].cut_next = false;
                let half = data.slice(..data.len() / 2);
                self.schedule(
                    at,
                    Event::ToClient {
                        conn: id,
                        data: half,
                        close: false,
                    },
                );
                self.schedule(at, Event::Reset { conn: id });
                continue;
            }
            self.schedule(
                at,
                Event::ToClient {
                    conn: id,
                    data,
                    close: t.close,
                },
            );
        }
    }

    fn apply(&mut self, event: Event, now: Duration) {
        let event = match self.park(event) {
            Some(event) => event,
            None => return,
        };
        match event {
            Event::ToServer { conn: id, data } => {
                let Some(conn) = self.conns.get_mut(&id) else {
                    return;
                };
                if conn.ended {
                    return;
                }
                let (member, model) = (conn.member, conn.model);
                let said = conn.frames.requests(&data);
                self.trace.record_args(
                    now,
                    format_args!(
                        "c{id}>m{member} {}B #{:08x}{said}",
                        data.len(),
                        digest(&data)
                    ),
                );
                self.ensemble
                    .handle_input(member, model, &data, self.origin + now);
            }
            Event::ClientGone { conn: id } => {
                if let Some(conn) = self.conns.remove(&id) {
                    self.by_model.remove(&(conn.member, conn.model));
                    self.trace
                        .record(now, &format!("c{id} closed by the client"));
                    if !conn.ended {
                        self.ensemble
                            .handle_disconnect(conn.member, conn.model, self.origin + now);
                    }
                }
            }
            Event::ToClient {
                conn: id,
                data,
                close,
            } => {
                let Some(conn) = self.conns.get_mut(&id) else {
                    return;
                };
                if conn.ended {
                    return;
                }
                if !data.is_empty() {
                    conn.peer.deliver(&data);
                }
                if close {
                    conn.ended = true;
                    conn.peer.close();
                }
                let member = conn.member;
                let said = conn.frames.replies(&data);
                self.trace.record_args(
                    now,
                    format_args!(
                        "c{id}<m{member} {}B #{:08x}{said}{}",
                        data.len(),
                        digest(&data),
                        if close { " close" } else { "" }
                    ),
                );
            }
            Event::Reset { conn: id } => self.reset(id, now),
            Event::FaultStart(f) => self.start_fault(f, now),
            Event::FaultEnd(f) => self.end_fault(f, now),
            Event::LagStep { member, fault } => {
                let Some((current, rng)) = &mut self.members[member].lag else {
                    return;
                };
                if *current != fault {
                    return;
                }
                let n = rng.below(4) as usize;
                let next = now + Duration::from_millis(rng.between(50, 800));
                self.trace
                    .record(now, &format!("m{member} applies {n} more entries"));
                self.ensemble.replicate(member, n);
                self.schedule(next, Event::LagStep { member, fault });
            }
        }
    }

    /// Holds `event` back if it crosses a paused client's connection (`None`), else gives
    /// it back.
    fn park(&mut self, event: Event) -> Option<Event> {
        let (Event::ToServer { conn, .. }
        | Event::ClientGone { conn }
        | Event::ToClient { conn, .. }) = &event
        else {
            return Some(event);
        };
        let Some(client) = self.conns.get(conn).map(|c| c.client) else {
            return Some(event);
        };
        match self
            .clients
            .get_mut(&client)
            .and_then(|c| c.parked.as_mut())
        {
            Some(parked) => {
                parked.push(event);
                None
            }
            None => Some(event),
        }
    }

    /// Whether connection `id` lost bytes and nothing cuts it off still (a black hole on its
    /// member, an outage, its client's isolation): it is reset as the last of them heals.
    fn lost_and_healed(&self, id: u64) -> bool {
        let c = &self.conns[&id];
        let net = &self.members[c.member];
        c.lost_bytes
            && !c.ended
            && !(net.hole_requests || net.hole_replies || self.outage || self.isolated(c.client))
    }

    fn reset(&mut self, id: u64, now: Duration) {
        let Some(conn) = self.conns.get_mut(&id) else {
            return;
        };
        if conn.ended {
            return;
        }
        conn.ended = true;
        conn.peer.reset();
        let (member, model) = (conn.member, conn.model);
        self.trace.record(now, &format!("c{id} reset"));
        self.ensemble
            .handle_disconnect(member, model, self.origin + now);
    }

    fn conns_of(&self, member: usize) -> Vec<u64> {
        self.conns
            .iter()
            .filter(|(_, c)| c.member == member && !c.ended)
            .map(|(&id, _)| id)
            .collect()
    }

    fn start_fault(&mut self, f: Fault, now: Duration) {
        self.trace.record(now, &format!("start {f}"));
        self.faults_injected += 1;
        let m = f.member;
        match f.kind {
            FaultKind::Crash => {
                self.members[m].crashed = true;
                self.ensemble.crash(m);
            }
            FaultKind::Isolate => self.ensemble.partition(m),
            FaultKind::Lag => {
                let mut rng = self.rng.fork(1 << 32 | f.id as u64);
                let next = now + Duration::from_millis(rng.between(50, 800));
                self.members[m].lag = Some((f.id, rng));
                self.ensemble.hold(m);
                self.schedule(
                    next,
                    Event::LagStep {
                        member: m,
                        fault: f.id,
                    },
                );
            }
            FaultKind::BlackHole(d) => {
                let net = &mut self.members[m];
                net.hole_requests |= matches!(d, Direction::Requests | Direction::Both);
                net.hole_replies |= matches!(d, Direction::Replies | Direction::Both);
            }
            FaultKind::Reset => {
                for id in self.conns_of(m) {
                    self.reset(id, now);
                }
            }
            FaultKind::Cut => self.members[m].cut_next = true,
            FaultKind::Latency { extra_ms } => {
                self.members[m].extra_latency = Duration::from_millis(extra_ms);
            }
            FaultKind::SkipReply { replies } => self.members[m].skip_replies += replies,
            FaultKind::Outage => self.outage = true,
            FaultKind::ParticipantCrash => {
                // Down, and every connection of its incarnation reset: nothing it had
                // written and not sent, a close included, reaches the ensemble.
                self.participants.entry(m).or_insert((0, false)).1 = true;
                let ids: Vec<u64> = self
                    .conns
                    .iter()
                    .filter(|(_, c)| c.owner.is_some_and(|(p, _)| p == m) && !c.ended)
                    .map(|(&id, _)| id)
                    .collect();
                for id in ids {
                    self.reset(id, now);
                }
            }
            FaultKind::IsolateClient { client } => {
                self.clients.entry(client).or_default().isolated = true;
            }
            FaultKind::PauseClient { client } => {
                self.clients.entry(client).or_default().parked = Some(Vec::new());
            }
        }
        if f.length > Duration::ZERO {
            self.active += 1;
            self.schedule(f.at + f.length, Event::FaultEnd(f));
        }
    }

    fn end_fault(&mut self, f: Fault, now: Duration) {
        self.trace.record(now, &format!("end {f}"));
        self.active -= 1;
        let m = f.member;
        match f.kind {
            FaultKind::Crash => {
                self.members[m].crashed = false;
                self.ensemble.restart(m);
            }
            FaultKind::Isolate => self.ensemble.heal(m),
            FaultKind::Lag => {
                self.members[m].lag = None;
                self.ensemble.release(m);
            }
            FaultKind::BlackHole(_) => {
                let net = &mut self.members[m];
                net.hole_requests = false;
                net.hole_replies = false;
                let lost: Vec<u64> = self
                    .conns_of(m)
                    .into_iter()
                    .filter(|&id| self.lost_and_healed(id))
                    .collect();
                for id in lost {
                    self.reset(id, now);
                }
            }
            FaultKind::Latency { .. } => self.members[m].extra_latency = Duration::ZERO,
            FaultKind::Outage => {
                self.outage = false;
                // As a black hole's end: a connection that lost bytes is reset, unless its
                // member is still in a hole of its own, or its client cut off (reset when
                // that one heals).
                let lost: Vec<u64> = self
                    .conns
                    .keys()
                    .copied()
                    .filter(|&id| self.lost_and_healed(id))
                    .collect();
                for id in lost {
                    self.reset(id, now);
                }
            }
            FaultKind::IsolateClient { client } => {
                self.clients.remove(&client);
                let lost: Vec<u64> = self
                    .conns
                    .iter()
                    .filter(|(_, c)| c.client == client)
                    .map(|(&id, _)| id)
                    .filter(|&id| self.lost_and_healed(id))
                    .collect();
                for id in lost {
                    self.reset(id, now);
                }
            }
            FaultKind::PauseClient { client } => {
                // What waited goes on now, in the order it came.
                let parked = self.clients.remove(&client).and_then(|c| c.parked);
                for event in parked.unwrap_or_default() {
                    self.schedule(now, event);
                }
            }
            // The participant's restart brings it back up (`revive`).
            FaultKind::Reset
            | FaultKind::Cut
            | FaultKind::SkipReply { .. }
            | FaultKind::ParticipantCrash => {}
        }
    }

    /// Participant `p` starts again after a crash: its new incarnation, which may dial.
    pub(crate) fn revive(&mut self, p: usize) -> u64 {
        let (incarnation, down) = self.participants.entry(p).or_insert((0, false));
        *incarnation += 1;
        *down = false;
        *incarnation
    }
}

/// Leaves out of `data` (whole frames, as the model writes them) up to `budget` replies to
/// requests (xid > 0): not the handshake's answer, watch events (-1), pings (-2) or the other
/// negative xids. Returns what is left and the xids left out.
fn skip_replies(data: &Bytes, answered_handshake: &mut bool, budget: u32) -> (Bytes, Vec<i32>) {
    let mut kept = Vec::with_capacity(data.len());
    let mut skipped = Vec::new();
    let mut at = 0;
    while at + 4 <= data.len() {
        let len = i32::from_be_bytes(data[at..at + 4].try_into().unwrap()).max(0) as usize;
        let end = (at + 4 + len).min(data.len());
        let frame = &data[at..end];
        let xid = frame
            .get(4..8)
            .map(|b| i32::from_be_bytes(b.try_into().unwrap()));
        let first = !*answered_handshake;
        *answered_handshake = true;
        match xid {
            Some(xid) if !first && xid > 0 && (skipped.len() as u32) < budget => {
                skipped.push(xid);
            }
            _ => kept.extend_from_slice(frame),
        }
        at = end;
    }
    kept.extend_from_slice(&data[at..]);
    if skipped.is_empty() {
        return (data.clone(), skipped);
    }
    (Bytes::from(kept), skipped)
}

/// The network shared by the pump, the dialer and the world's handle.
#[derive(Debug, Clone)]
pub(crate) struct SharedNetwork {
    inner: Arc<Mutex<Network>>,
    /// Woken when a client writes, closes, or dials.
    pub(crate) notify: Arc<Notify>,
    pub(crate) start: Instant,
}

impl SharedNetwork {
    pub(crate) fn new(net: Network, start: Instant) -> SharedNetwork {
        SharedNetwork {
            inner: Arc::new(Mutex::new(net)),
            notify: Arc::new(Notify::new()),
            start,
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Network> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Virtual time since the run began.
    pub(crate) fn now(&self) -> Duration {
        Instant::now().saturating_duration_since(self.start)
    }
}

/// Runs the network until the runtime stops: every step at its virtual instant. Returns
/// only if it is stuck: woken again and again without time moving (a livelock in the
/// simulated world, which virtual time would otherwise never end).
pub(crate) async fn pump(net: SharedNetwork, real_deadline: std::time::Instant) -> Violation {
    let started = std::time::Instant::now();
    // Where the current window of steps began, and its steps.
    let mut window: Option<(Duration, u64)> = None;
    loop {
        let now = net.now();
        match &mut window {
            Some((from, steps)) if now.saturating_sub(*from) < PROGRESS => {
                *steps += 1;
                if *steps >= STUCK_STEPS {
                    return Violation::Stuck {
                        steps: STUCK_STEPS,
                        at: now,
                    };
                }
            }
            _ => window = Some((now, 0)),
        }
        if std::time::Instant::now() >= real_deadline {
            let real = started.elapsed();
            return Violation::Stalled { real, at: now };
        }
        let next = net.lock().step(now);
        match next {
            Some(at) => {
                tokio::select! {
                    biased;
                    () = net.notify.notified() => {}
                    () = tokio::time::sleep_until(net.start + at) => {}
                }
            }
            None => net.notify.notified().await,
        }
    }
}

/// One client's way onto the network: its connections carry its number.
#[derive(Debug, Clone)]
pub(crate) struct ClientDialer {
    pub(crate) net: SharedNetwork,
    pub(crate) client: usize,
    /// The participant incarnation the client belongs to, if any: refused once it crashed.
    pub(crate) owner: Option<Owner>,
}

impl Dialer for ClientDialer {
    fn dial(&self, host: &str, port: u16) -> DialFuture {
        let (net, client, owner) = (self.net.clone(), self.client, self.owner);
        let member = host
            .strip_prefix("zk")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n >= 1 && n <= net.lock().members.len() && port == PORT)
            .map(|n| n - 1);
        Box::pin(async move {
            let Some(member) = member else {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "failed to resolve: no such simulated member",
                ));
            };
            // The handshake's round trip.
            tokio::time::sleep(Duration::from_micros(300)).await;
            let made = {
                let now = net.now();
                net.lock().connect(member, client, owner, now, &net.notify)
            };
            net.notify.notify_one();
            match made {
                Some(result) => result,
                None => std::future::pending().await,
            }
        })
    }
}
