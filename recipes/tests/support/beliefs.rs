//! The invariant suites' checker: what every participant believed (it holds a lock, a
//! lease, leadership) and when, as intervals on one monotonic clock, and the instants where
//! more participants believed at once than the recipe allows. A belief weighs 1 unless
//! begun with a weight (a write lock weighs as much as every reader together, so one writer
//! with anyone else is over the limit).
#![allow(dead_code)] // each suite uses some of these

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::watch;

/// One belief: participant `who` believed from `from` to `to`.
#[derive(Debug, Clone)]
pub struct Interval {
    pub who: usize,
    pub from: Instant,
    pub to: Instant,
    /// The session it believed on.
    pub session: i64,
    /// Why the belief ended ("released", "suspended", "lost", "latch", ...).
    pub ended_by: &'static str,
    /// What it counts for against the limit.
    pub weight: usize,
}

#[derive(Debug, Default)]
struct State {
    /// Who believes now: since when, on which session, with what weight.
    open: BTreeMap<usize, (Instant, i64, usize)>,
    closed: Vec<Interval>,
}

/// Beliefs of all participants, on the clock that starts at `epoch`.
#[derive(Debug)]
pub struct Beliefs {
    epoch: Instant,
    state: Mutex<State>,
    /// How many believe now (to wait on).
    believers: watch::Sender<usize>,
}

impl Default for Beliefs {
    fn default() -> Self {
        Beliefs::new()
    }
}

impl Beliefs {
    pub fn new() -> Beliefs {
        Beliefs {
            epoch: Instant::now(),
            state: Mutex::default(),
            believers: watch::channel(0).0,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `who` believes from `at` (no-op if it already does).
    pub fn begin(&self, who: usize, at: Instant, session: i64) {
        self.begin_weighted(who, at, session, 1);
    }

    /// `who` believes from `at`, counting `weight` against the limit (no-op if it already
    /// believes).
    pub fn begin_weighted(&self, who: usize, at: Instant, session: i64, weight: usize) {
        let mut state = self.state();
        state.open.entry(who).or_insert((at, session, weight));
        self.believers.send_replace(state.open.len());
    }

    /// `who` stops believing at `at` (no-op if it did not).
    pub fn end(&self, who: usize, at: Instant, ended_by: &'static str) {
        let mut state = self.state();
        if let Some((from, session, weight)) = state.open.remove(&who) {
            state.closed.push(Interval {
                who,
                from,
                to: at,
                session,
                ended_by,
                weight,
            });
        }
        self.believers.send_replace(state.open.len());
    }

    /// Whether `who` believes now.
    pub fn believes(&self, who: usize) -> bool {
        self.state().open.contains_key(&who)
    }

    /// Who believes now.
    pub fn believers(&self) -> Vec<usize> {
        self.state().open.keys().copied().collect()
    }

    /// Waits until exactly `n` believe, at most `timeout`; how long it took, or `None`.
    pub async fn wait_for_believers(&self, n: usize, timeout: Duration) -> Option<Duration> {
        let started = Instant::now();
        let mut count = self.believers.subscribe();
        tokio::time::timeout(timeout, count.wait_for(|&c| c == n))
            .await
            .ok()
            .map(|_| started.elapsed())
    }

    /// Every interval, closed ones and (ended at `now`) open ones, by start.
    pub fn intervals(&self, now: Instant) -> Vec<Interval> {
        let state = self.state();
        let mut all = state.closed.clone();
        all.extend(
            state
                .open
                .iter()
                .map(|(&who, &(from, session, weight))| Interval {
                    who,
                    from,
                    to: now,
                    session,
                    ended_by: "(still believing)",
                    weight,
                }),
        );
        all.sort_by_key(|i| i.from);
        all
    }

    /// Milliseconds since the epoch, for printing.
    pub fn ms(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.epoch).as_secs_f64() * 1000.0
    }

    pub fn show(&self, i: &Interval) -> String {
        format!(
            "participant {} (weight {}) session 0x{:x} [{:.3} ms, {:.3} ms] ({:.3} ms, ended by {})",
            i.who,
            i.weight,
            i.session,
            self.ms(i.from),
            self.ms(i.to),
            (i.to - i.from).as_secs_f64() * 1000.0,
            i.ended_by
        )
    }

    /// The violations: each instant where the beliefs held at once weighed more than `limit`
    /// (more than `limit` participants, when every weight is 1; intervals are closed,
    /// [from, to]; at equal instants an end counts before a begin), with the intervals
    /// involved. One entry per maximal overlap episode.
    pub fn violations(&self, limit: usize, now: Instant) -> Vec<String> {
        let intervals = self.intervals(now);
        // (time, 0 = end / 1 = begin, index)
        let mut events: Vec<(Instant, u8, usize)> = Vec::new();
        for (k, i) in intervals.iter().enumerate() {
            events.push((i.from, 1, k));
            events.push((i.to, 0, k));
        }
        events.sort();
        let mut active: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        let mut episode: Option<(Instant, Vec<usize>)> = None;
        for (at, kind, k) in events {
            if kind == 1 {
                active.push(k);
            } else {
                active.retain(|&a| a != k);
            }
            let weight: usize = active.iter().map(|&a| intervals[a].weight).sum();
            if weight > limit {
                let e = episode.get_or_insert((at, Vec::new()));
                for &a in &active {
                    if !e.1.contains(&a) {
                        e.1.push(a);
                    }
                }
            } else if let Some((from, members)) = episode.take() {
                let mut text = format!(
                    "beliefs over the limit of {limit} at once from {:.3} ms to {:.3} ms ({:.3} ms):",
                    self.ms(from),
                    self.ms(at),
                    (at - from).as_secs_f64() * 1000.0
                );
                for m in members {
                    let _ = write!(text, "\n    {}", self.show(&intervals[m]));
                }
                out.push(text);
            }
        }
        out
    }

    /// How many intervals were recorded (closed ones).
    pub fn count(&self) -> usize {
        self.state().closed.len()
    }
}

/// The participants' session timeout (the test kit's 200 ms tick allows 400 ms to 4 s).
pub const SESSION: Duration = Duration::from_secs(2);

/// No single step of a participant (an acquire with its own timeout, a release) may take
/// longer; one that does is a violation (a hang).
pub const STEP_DEADLINE: Duration = Duration::from_secs(30);

/// A 3-node ensemble, a proxy per member, and clients connecting through the proxies.
pub struct Rig {
    pub cluster: std::sync::Arc<zkrs_testkit::TestingCluster>,
    pub proxies: std::sync::Arc<[zkrs_testkit::FaultyProxy]>,
}

impl Rig {
    pub async fn start() -> Rig {
        Rig::start_with(zkrs_testkit::ServerOptions::new()).await
    }

    /// [`Rig::start`] with the members' settings (a larger heap, say).
    pub async fn start_with(options: zkrs_testkit::ServerOptions) -> Rig {
        let cluster = std::sync::Arc::new(
            tokio::task::block_in_place(|| zkrs_testkit::TestingCluster::start_with(3, options))
                .expect("a 3-node ensemble"),
        );
        let proxies = zkrs_testkit::faults::proxies_for(&cluster).expect("proxies");
        Rig { cluster, proxies }
    }

    /// A new session through the proxies.
    pub async fn client(&self) -> zkrs_client::Client {
        zkrs_client::ClientBuilder::new(zkrs_testkit::faults::proxies_connect_string(&self.proxies))
            .session_timeout(SESSION)
            .connect_timeout(Duration::from_secs(20))
            .connect()
            .await
            .expect("a session through the proxies")
    }

    /// The fault schedule over this rig, for `ZKR_FAULT_SECS` (default `default_secs`).
    pub fn faults(&self, default_secs: u64) -> zkrs_testkit::FaultSchedule {
        zkrs_testkit::FaultSchedule::builder(self.cluster.clone(), self.proxies.clone())
            .seed(zkrs_testkit::faults::random_seed())
            .duration(zkrs_testkit::faults::fault_duration_from_env(
                Duration::from_secs(default_secs),
            ))
            .session_timeout(SESSION)
            .start()
    }
}

/// Prints each injected fault with its start and length, from `since` (to read a slow step or
/// a hang against the faults around it).
pub fn print_faults(injected: &[zkrs_testkit::FaultRecord], since: Instant) {
    for record in injected {
        println!(
            "  fault at {:.1}s for {:.1}s: {}",
            record
                .started
                .saturating_duration_since(since)
                .as_secs_f32(),
            (record.ended - record.started).as_secs_f32(),
            record.fault
        );
    }
}

/// Waits until the schedule is done (its duration over, the last fault healed), then stops
/// it: healed, every member serving, a leader. Returns the log.
pub async fn finish(schedule: zkrs_testkit::FaultSchedule) -> Vec<zkrs_testkit::FaultRecord> {
    let deadline = Instant::now()
        + zkrs_testkit::faults::fault_duration_from_env(Duration::from_secs(45))
        + Duration::from_secs(300);
    while !schedule.is_done() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::task::block_in_place(|| schedule.stop())
}

/// What a lock's directory holds, for a violation's report: each member's children of `dir`
/// (read on a direct session, so a member that lags shows), each child's owner (which
/// participant's session, or another), and each participant's own listing.
pub async fn lock_dir_report(rig: &Rig, clients: &[zkrs_client::Client], dir: &str) -> String {
    let sessions: Vec<i64> = clients.iter().map(|c| c.session_id()).collect();
    let owner = |session: i64| match sessions.iter().position(|&s| s == session) {
        Some(who) => format!("participant {who}"),
        None => format!("session 0x{session:x}, no participant's"),
    };
    let mut out = format!("    sessions: {:x?}", sessions);
    for member in 0..rig.cluster.len() {
        let direct = zkrs_client::ClientBuilder::new(rig.cluster.member_connect_string(member))
            .session_timeout(SESSION)
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await;
        let Ok(direct) = direct else {
            let _ = write!(out, "\n    member {member}: no session");
            continue;
        };
        match direct.get_children(dir).await {
            Ok(children) => {
                let _ = write!(out, "\n    member {member}: {} children", children.len());
                for name in children.iter() {
                    let path = format!("{dir}/{name}");
                    let stat = direct.exists(&path).await.ok().flatten();
                    let _ = match stat {
                        Some(s) => write!(
                            out,
                            "\n      {name} czxid 0x{:x} owner {}",
                            s.czxid,
                            owner(s.ephemeral_owner)
                        ),
                        None => write!(out, "\n      {name} (gone)"),
                    };
                }
            }
            Err(e) => {
                let _ = write!(out, "\n    member {member}: {e}");
            }
        }
        let _ = direct.close().await;
    }
    for (who, client) in clients.iter().enumerate() {
        let listing = match client.get_children(dir).await {
            Ok(children) => format!("{:?}", children.iter().collect::<Vec<_>>()),
            Err(e) => e.to_string(),
        };
        let _ = write!(
            out,
            "\n    participant {who} ({:?}) lists {listing}",
            client.state()
        );
    }
    out
}

/// Waits (at most 5 s) for `client` to be connected again after an error.
pub async fn settle(client: &zkrs_client::Client) {
    let mut states = client.state_changes();
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        while !client.state().is_connected() {
            if states.next().await.is_none() {
                return;
            }
        }
    })
    .await;
}

/// A small per-participant random sequence (hold times).
pub struct Jitter(pub u64);

impl Jitter {
    pub fn millis(&mut self, from: u64, to: u64) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        Duration::from_millis(from + self.0 % (to - from).max(1))
    }
}

/// One test at a time per test binary: each starts its own ensemble, and the machine is small.
pub static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
