//! The faults a run injects, drawn from its seed before it starts: a plan of numbered
//! faults, each with a start, a length and a target, so a violation can be shrunk by
//! replaying the same seed with some faults left out.

use std::fmt;
use std::time::Duration;

use crate::rng::SimRng;

/// Which way a network fault acts, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client to server.
    Requests,
    /// Server to client.
    Replies,
    /// Both.
    Both,
}

/// One fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultKind {
    /// The member crashes (its state is gone) and restarts at the end.
    Crash,
    /// The member is cut off from the ensemble: it closes its clients' connections and
    /// serves nobody until the end (a leader is replaced).
    Isolate,
    /// The member stops applying the log and serves stale reads; it applies a few entries
    /// now and then, and catches up at the end.
    Lag,
    /// Bytes between clients and the member are dropped silently in `Direction`; new
    /// connections to it hang. When it heals, a connection that lost bytes is reset (TCP
    /// never resumes a stream with a gap).
    BlackHole(Direction),
    /// Every connection to the member is reset (instant).
    Reset,
    /// The member's next reply is cut halfway and the connection reset (instant).
    Cut,
    /// Every byte to and from the member takes `extra_ms` longer.
    Latency {
        /// Added to each delivery, in ms.
        extra_ms: u64,
    },
    /// The member's next `replies` replies to requests (not watch events, not pings) are
    /// never sent, while their connections stay up and later bytes flow (instant): a buggy
    /// server or proxy. Only a client that notices the gap (a later reply, or a ping
    /// answered, while the request is pending) can fail the request.
    SkipReply {
        /// How many replies go missing (1 to 3).
        replies: u32,
    },
    /// No member can be reached from any client until the end (`member` is ignored): the
    /// clients' network is down, bytes are dropped both ways and new connections hang, while
    /// the ensemble keeps its quorum and expires the sessions. A connection that lost bytes
    /// is reset at the end. Drawn only when [`FaultConfig::outages`] is set.
    Outage,
    /// A participant of the service under test crashes (`member` is the participant's id,
    /// as given to [`World::spawn_participant`](crate::World::spawn_participant)): its task
    /// is dropped wherever it awaits, its connections are reset with nothing more sent (no
    /// close: its sessions live on until the ensemble expires them), and at the end it
    /// starts again, as a new process would. Drawn only when
    /// [`FaultConfig::participant_crashes`] is set.
    ParticipantCrash,
    /// One client is cut off from every member until the end (`member` is ignored): its
    /// bytes are dropped both ways and its new connections hang, while the other clients
    /// and the ensemble go on (a leader's session expires while it still runs). A
    /// connection that lost bytes is reset at the end. Drawn only when
    /// [`FaultConfig::client_faults`] is set.
    IsolateClient {
        /// The client, numbered in the order the world built them
        /// ([`World::client_builder`](crate::World::client_builder)), from 0.
        client: usize,
    },
    /// One client's connections are paused until the end (`member` is ignored): every byte
    /// to or from it, and its closing of a connection, is held and then delivered, in
    /// order, when it resumes; its new connections hang meanwhile. A stopped process (a long
    /// GC pause) as the network sees it; the client's own timers still run. Drawn only when
    /// [`FaultConfig::client_faults`] is set.
    PauseClient {
        /// The client, numbered as for [`FaultKind::IsolateClient`].
        client: usize,
    },
}

impl FaultKind {
    /// The client a single-client fault hits, if it is one.
    pub fn client(&self) -> Option<usize> {
        match *self {
            FaultKind::IsolateClient { client } | FaultKind::PauseClient { client } => Some(client),
            _ => None,
        }
    }
}

/// A planned fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// Its number in the plan (stable when others are left out).
    pub id: usize,
    /// When it starts (virtual time since the run began).
    pub at: Duration,
    /// How long it lasts (zero for instant ones).
    pub length: Duration,
    /// Which member it hits.
    pub member: usize,
    /// What it does.
    pub kind: FaultKind,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fault #{} {:?} on {} at {} ms for {} ms",
            self.id,
            self.kind,
            match self.kind {
                FaultKind::Outage => "every member".to_string(),
                FaultKind::ParticipantCrash => format!("participant {}", self.member),
                _ if self.kind.client().is_some() => "one client".to_string(),
                _ => format!("member {}", self.member),
            },
            self.at.as_millis(),
            self.length.as_millis()
        )
    }
}

/// How often and how long faults are drawn.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FaultConfig {
    /// Mean gap between two faults' starts.
    pub mean_gap: Duration,
    /// The longest a lasting fault lasts.
    pub max_length: Duration,
    /// No fault starts after this (the run then heals and goes on).
    pub duration: Duration,
    /// At most this many members are hurt at once (a majority stays up when it is
    /// `(members - 1) / 2`; more lets quorum go too).
    pub max_concurrent: usize,
    /// Mean gap between two skipped-reply faults (drawn from a stream of their own, so the
    /// other faults of a seed are the same with or without them); `None`: none.
    pub skip_reply_gap: Option<Duration>,
    /// Whether a run may have one outage (every member unreachable at once, 10-20 s; half
    /// the runs): no suite's invariant but the sessions suite's allows for one.
    pub outages: bool,
    /// Crashes of the service's participants ([`FaultKind::ParticipantCrash`]): how many
    /// participants (ids `0..n`) and the mean gap between two crashes of one participant;
    /// `None`: none.
    pub participant_crashes: Option<(usize, Duration)>,
    /// Single-client faults ([`FaultKind::IsolateClient`], [`FaultKind::PauseClient`]) hit
    /// clients `0..client_faults` (in the order the world built them), one every 5 s on
    /// average, half of them long enough for the client's session to expire; 0: none.
    pub client_faults: usize,
}

impl Default for FaultConfig {
    fn default() -> Self {
        FaultConfig {
            mean_gap: Duration::from_millis(1500),
            max_length: Duration::from_secs(6),
            duration: Duration::from_secs(60),
            max_concurrent: 1,
            skip_reply_gap: Some(Duration::from_secs(8)),
            outages: false,
            participant_crashes: None,
            client_faults: 0,
        }
    }
}

impl FaultConfig {
    /// No faults at all.
    pub fn none() -> FaultConfig {
        FaultConfig {
            duration: Duration::ZERO,
            ..FaultConfig::default()
        }
    }

    /// Faults drawn for `duration`.
    pub fn for_duration(duration: Duration) -> FaultConfig {
        FaultConfig {
            duration,
            ..FaultConfig::default()
        }
    }

    /// Sets the mean gap between two faults' starts.
    pub fn mean_gap(mut self, gap: Duration) -> FaultConfig {
        self.mean_gap = gap;
        self
    }

    /// Sets the longest a lasting fault lasts.
    pub fn max_length(mut self, length: Duration) -> FaultConfig {
        self.max_length = length;
        self
    }

    /// Sets how many members may be hurt at once (2 of 3 loses the quorum).
    pub fn max_concurrent(mut self, members: usize) -> FaultConfig {
        self.max_concurrent = members;
        self
    }

    /// Sets the mean gap between two skipped-reply faults (`None`: none).
    pub fn skip_reply_gap(mut self, gap: Option<Duration>) -> FaultConfig {
        self.skip_reply_gap = gap;
        self
    }

    /// Lets a run have one outage of every member (see [`FaultKind::Outage`]).
    pub fn outages(mut self, on: bool) -> FaultConfig {
        self.outages = on;
        self
    }

    /// Crashes participants `0..participants` of the service (see
    /// [`FaultKind::ParticipantCrash`]), each about every `mean_gap`, down for 0.2-3 s.
    pub fn participant_crashes(mut self, participants: usize, mean_gap: Duration) -> FaultConfig {
        self.participant_crashes = Some((participants, mean_gap));
        self
    }

    /// Lets single-client faults hit clients `0..clients` (see
    /// [`FaultConfig::client_faults`]; 0: none).
    pub fn client_faults(mut self, clients: usize) -> FaultConfig {
        self.client_faults = clients;
        self
    }
}

/// The streams of the faults drawn apart from the main plan (forked from the plan's).
const SKIP_STREAM: u64 = 1;
const OUTAGE_STREAM: u64 = 2;
/// The participants' crashes (participant `p`'s: this stream's fork `p`).
const PARTICIPANT_STREAM: u64 = 4;
const CLIENT_STREAM: u64 = 3;

/// The mean gap between two single-client faults' starts.
const CLIENT_FAULT_GAP_MS: u64 = 5_000;

/// How long a client is left alone after its fault, and how far from the outage they keep.
const CLIENT_REST: Duration = Duration::from_secs(10);

/// Draws the plan for `members` members. Lasting faults on different members may overlap
/// up to `max_concurrent`; instant ones go anywhere. The skipped replies, the outage and
/// the single-client faults come from streams of their own and are numbered after the
/// rest, so the other faults of a seed are the same whether they are drawn or not.
pub fn plan(rng: &mut SimRng, members: usize, config: &FaultConfig) -> Vec<Fault> {
    let (mut skips, mut outage) = (rng.fork(SKIP_STREAM), rng.fork(OUTAGE_STREAM));
    let crashes = rng.fork(PARTICIPANT_STREAM);
    let mut clients = rng.fork(CLIENT_STREAM);
    let mut faults = main_plan(rng, members, config);
    if let Some(gap) = config.skip_reply_gap {
        let mean = gap.as_millis().max(1) as u64;
        let mut at = Duration::ZERO;
        loop {
            at += Duration::from_millis(skips.between(mean / 4, mean * 7 / 4));
            if at >= config.duration {
                break;
            }
            let member = skips.below(members as u64) as usize;
            let replies = skips.between(1, 3) as u32;
            faults.push(Fault {
                id: faults.len(),
                at,
                length: Duration::ZERO,
                member,
                kind: FaultKind::SkipReply { replies },
            });
        }
    }
    let total = config.duration.as_millis() as u64;
    if config.outages && total > 0 && outage.chance(0.5) {
        let at = Duration::from_millis(outage.between(total / 10, total * 3 / 4));
        let length = Duration::from_millis(outage.between(10_000, 20_000));
        faults.push(Fault {
            id: faults.len(),
            at,
            length,
            member: 0,
            kind: FaultKind::Outage,
        });
    }
    let outage = faults.iter().find(|f| f.kind == FaultKind::Outage).copied();
    client_plan(&mut clients, config, outage, &mut faults);
    if let Some((participants, gap)) = config.participant_crashes {
        let first = faults.len();
        faults.extend(participant_crashes(
            &crashes,
            participants,
            gap,
            config.duration,
        ));
        for (id, f) in faults.iter_mut().enumerate().skip(first) {
            f.id = id;
        }
    }
    faults
}

/// Each participant's crashes, from a stream of its own: one crash at a time, each over
/// before the faults end (so [`World::healed`](crate::World::healed) sees every participant
/// running again).
fn participant_crashes(
    rng: &SimRng,
    participants: usize,
    gap: Duration,
    duration: Duration,
) -> Vec<Fault> {
    let mean = gap.as_millis().max(1) as u64;
    let mut faults = Vec::new();
    for p in 0..participants {
        let mut rng = rng.fork(p as u64);
        let mut at = Duration::ZERO;
        loop {
            at += Duration::from_millis(rng.between(mean / 4, mean * 7 / 4));
            let length = Duration::from_millis(rng.between(200, 3_000));
            if at + length >= duration {
                break;
            }
            faults.push(Fault {
                id: 0,
                at,
                length,
                member: p,
                kind: FaultKind::ParticipantCrash,
            });
            at += length;
        }
    }
    faults
}

/// The single-client faults: one client at a time is cut off or paused, for 0.2-1.5 s (a
/// session rides it out) or 2.5-8 s (longer than the 2 s session timeout the suites use:
/// the server expires the session while the client may still believe it holds something).
/// A client is left alone for [`CLIENT_REST`] after its fault, and none starts within
/// [`CLIENT_REST`] of the outage: a client cut off again and again, or just before and
/// through an outage, could not finish any step within the suites' step deadline.
fn client_plan(
    rng: &mut SimRng,
    config: &FaultConfig,
    outage: Option<Fault>,
    faults: &mut Vec<Fault>,
) {
    if config.client_faults == 0 {
        return;
    }
    let mut at = Duration::ZERO;
    // When the last client fault ends, and when each client may be hit again.
    let mut free_at = Duration::ZERO;
    let mut rested_at = vec![Duration::ZERO; config.client_faults];
    loop {
        at += Duration::from_millis(
            rng.between(CLIENT_FAULT_GAP_MS / 4, CLIENT_FAULT_GAP_MS * 7 / 4),
        );
        if at >= config.duration {
            return;
        }
        let client = rng.below(config.client_faults as u64) as usize;
        let kind = if rng.chance(0.5) {
            FaultKind::IsolateClient { client }
        } else {
            FaultKind::PauseClient { client }
        };
        let length = if rng.chance(0.5) {
            Duration::from_millis(rng.between(200, 1_500))
        } else {
            Duration::from_millis(rng.between(2_500, 8_000))
        };
        // One client fault at a time: two clients cut off at once could be every contender.
        let near_outage = outage.is_some_and(|o| {
            at + length + CLIENT_REST > o.at && at < o.at + o.length + CLIENT_REST
        });
        if at < free_at || at < rested_at[client] || near_outage {
            continue;
        }
        free_at = at + length;
        rested_at[client] = at + length + CLIENT_REST;
        faults.push(Fault {
            id: faults.len(),
            at,
            length,
            member: 0,
            kind,
        });
    }
}

/// The crashes, isolations, lags, black holes, resets, cuts and latency spikes.
fn main_plan(rng: &mut SimRng, members: usize, config: &FaultConfig) -> Vec<Fault> {
    let mut faults = Vec::new();
    let mut at = Duration::ZERO;
    let mean = config.mean_gap.as_millis().max(1) as u64;
    // When each member is free again.
    let mut busy_until = vec![Duration::ZERO; members];
    loop {
        at += Duration::from_millis(rng.between(mean / 4, mean * 7 / 4));
        if at >= config.duration {
            return faults;
        }
        let member = rng.below(members as u64) as usize;
        let kind = match rng.below(16) {
            0..=2 => FaultKind::Crash,
            3..=4 => FaultKind::Isolate,
            5..=7 => FaultKind::Lag,
            8 => FaultKind::BlackHole(Direction::Requests),
            9 => FaultKind::BlackHole(Direction::Replies),
            10..=11 => FaultKind::BlackHole(Direction::Both),
            12 => FaultKind::Reset,
            13 => FaultKind::Cut,
            _ => FaultKind::Latency {
                extra_ms: rng.between(20, 1500),
            },
        };
        let instant = matches!(kind, FaultKind::Reset | FaultKind::Cut);
        // Lengths around the session timeout: shorter ones a session rides out, longer
        // ones expire it.
        let max = config.max_length.as_millis().max(2) as u64;
        let length = if instant {
            Duration::ZERO
        } else if rng.chance(0.5) {
            Duration::from_millis(rng.between(50, max / 3))
        } else {
            Duration::from_millis(rng.between(max / 3, max))
        };
        if !instant {
            let hurt = busy_until.iter().filter(|&&until| until > at).count();
            if busy_until[member] > at || hurt >= config.max_concurrent {
                continue;
            }
            busy_until[member] = at + length;
        }
        faults.push(Fault {
            id: faults.len(),
            at,
            length,
            member,
            kind,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_plans_the_same_faults_and_respects_the_bound() {
        let config = FaultConfig::default();
        let a = plan(&mut SimRng::new(9), 3, &config);
        let b = plan(&mut SimRng::new(9), 3, &config);
        assert_eq!(a, b);
        assert!(a.len() > 10, "{} faults", a.len());
        for f in &a {
            let lasting = |g: &&Fault| g.length > Duration::ZERO;
            let overlapping = a
                .iter()
                .filter(lasting)
                .filter(|g| g.at <= f.at && f.at < g.at + g.length)
                .count();
            assert!(overlapping <= config.max_concurrent, "{f}");
        }
    }
}
