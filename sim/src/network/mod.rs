//! The simulated network and ensemble: every client connection is an in-memory link
//! (`zkrs_client::__private::memory_link`) whose bytes this module carries to and from the
//! ensemble model (`zkrs_model::WireEnsemble`) after a latency, through the faults of the
//! plan. One task drives it ([`pump()`]), on the runtime's virtual time; everything it does is
//! a function of the seed and of what the clients wrote, and each step is a trace line.
//!
//! Here: the connections and their deliveries. What each fault does as it starts and ends is
//! in `fault_effects`; the pump and the handle the tasks share in `pump`; dialing in `dialer`.

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::Notify;
use zkrs_client::__private::{memory_link, LinkPeer};
use zkrs_model::{ConnectionId, ServerConfig, WireEnsemble};

use crate::faults::Fault;
use crate::frames::FrameReader;
use crate::rng::SimRng;
use crate::trace::{digest, Trace};

mod dialer;
mod fault_effects;
mod pump;

pub(crate) use dialer::ClientDialer;
pub(crate) use pump::{pump, SharedNetwork};

/// How soon the model is asked again about a deadline it could not act on.
const MODEL_RETRY: Duration = Duration::from_millis(10);

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
