//! [`FaultSchedule`]: random faults drawn from a seed, injected one at a time into a
//! [`TestingCluster`] and the [`FaultyProxy`] in front of each member, on a thread of its own.

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::cluster::TestingCluster;
use crate::proxy::{Direction, FaultyProxy};

/// The environment variable that replays a schedule: its seed overrides the one given.
pub const FAULT_SEED_ENV: &str = "ZKR_FAULT_SEED";

/// The environment variable the invariant suites read their fault duration from (seconds).
pub const FAULT_SECS_ENV: &str = "ZKR_FAULT_SECS";

/// `ZKR_FAULT_SECS` as a duration, else `default`.
pub fn fault_duration_from_env(default: Duration) -> Duration {
    std::env::var(FAULT_SECS_ENV)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
        .unwrap_or(default)
}

/// A seed from the clock, for a schedule nobody asked to replay.
pub fn random_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    SplitMix64(nanos ^ u64::from(std::process::id()).rotate_left(32)).next_u64()
}

/// One [`FaultyProxy`] in front of each member of `cluster`, in member order.
///
/// # Errors
///
/// When a proxy's listening socket cannot be opened.
pub fn proxies_for(cluster: &TestingCluster) -> io::Result<Arc<[FaultyProxy]>> {
    (0..cluster.len())
        .map(|i| FaultyProxy::start(cluster.member_address(i)))
        .collect::<io::Result<Vec<_>>>()
        .map(Arc::from)
}

/// The connect string of `proxies`: `"127.0.0.1:P1,127.0.0.1:P2,..."`.
pub fn proxies_connect_string(proxies: &[FaultyProxy]) -> String {
    proxies
        .iter()
        .map(FaultyProxy::connect_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// splitmix64 (the codec's one definition): small, seeded, good enough to draw faults from.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        zkrs_codec::__private::splitmix64(&mut self.0)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// A duration in `[from, to)`.
    fn between(&mut self, from: Duration, to: Duration) -> Duration {
        let (a, b) = (from.as_millis() as u64, to.as_millis() as u64);
        Duration::from_millis(a + self.below(b.saturating_sub(a).max(1)))
    }

    fn direction(&mut self) -> Direction {
        [Direction::ToServer, Direction::ToClient, Direction::Both][self.below(3) as usize]
    }
}

/// A fault the schedule injected.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The member was killed (SIGKILL), then started again after `down`.
    KillRestart {
        /// The member.
        member: usize,
        /// How long it stayed down.
        down: Duration,
    },
    /// The leader was killed (SIGKILL), then started again after `down`.
    KillLeader {
        /// The member that led.
        member: usize,
        /// How long it stayed down.
        down: Duration,
    },
    /// The member was frozen (SIGSTOP) for `duration`, then thawed.
    Pause {
        /// The member.
        member: usize,
        /// How long.
        duration: Duration,
    },
    /// The proxy in front of the member dropped every byte going in `direction` for
    /// `duration`, connections left open; then it relayed again (same connections).
    BlackHole {
        /// The member whose proxy.
        member: usize,
        /// Which way.
        direction: Direction,
        /// How long.
        duration: Duration,
    },
    /// Every connection through the member's proxy was closed.
    Reset {
        /// The member whose proxy.
        member: usize,
    },
    /// Each connection through the member's proxy was closed after `bytes` more bytes in
    /// `direction` (often in the middle of a frame).
    CutAfter {
        /// The member whose proxy.
        member: usize,
        /// Which way.
        direction: Direction,
        /// After how many bytes.
        bytes: u64,
    },
    /// Every chunk through the member's proxy in `direction` was delayed by `delay`, for
    /// `duration`.
    Latency {
        /// The member whose proxy.
        member: usize,
        /// Which way.
        direction: Direction,
        /// The delay of each chunk.
        delay: Duration,
        /// How long.
        duration: Duration,
    },
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::KillRestart { member, down } => {
                write!(
                    f,
                    "kill+restart member {member} (down {}ms)",
                    down.as_millis()
                )
            }
            Fault::KillLeader { member, down } => {
                write!(
                    f,
                    "kill+restart leader {member} (down {}ms)",
                    down.as_millis()
                )
            }
            Fault::Pause { member, duration } => {
                write!(f, "pause member {member} {}ms", duration.as_millis())
            }
            Fault::BlackHole {
                member,
                direction,
                duration,
            } => write!(
                f,
                "black hole {direction:?} at member {member}'s proxy {}ms",
                duration.as_millis()
            ),
            Fault::Reset { member } => write!(f, "reset connections of member {member}'s proxy"),
            Fault::CutAfter {
                member,
                direction,
                bytes,
            } => write!(
                f,
                "cut connections of member {member}'s proxy after {bytes} bytes {direction:?}"
            ),
            Fault::Latency {
                member,
                direction,
                delay,
                duration,
            } => write!(
                f,
                "latency {}ms {direction:?} at member {member}'s proxy for {}ms",
                delay.as_millis(),
                duration.as_millis()
            ),
        }
    }
}

/// One injected fault and when: `started` when it was switched on, `ended` when it was
/// switched off (equal for instant faults such as a reset).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRecord {
    /// What was done.
    pub fault: Fault,
    /// When it began.
    pub started: Instant,
    /// When it was over (the member started again, thawed, the proxy relaying again).
    pub ended: Instant,
    /// Whether it lasted longer than the session timeout the schedule was given (sessions
    /// behind it may have expired).
    pub longer_than_session: bool,
}

/// What a schedule does between and around its faults.
#[derive(Debug, Clone)]
struct Plan {
    seed: u64,
    duration: Duration,
    session_timeout: Duration,
}

#[derive(Debug)]
struct Shared {
    stop: AtomicBool,
    /// Set on drop: end at once, without healing.
    abandon: AtomicBool,
    done_injecting: AtomicBool,
    log: Mutex<Vec<FaultRecord>>,
    started: Instant,
}

/// Random faults drawn from a seed, injected one at a time on a std thread into a 3-node
/// (or larger) [`TestingCluster`] and the [`FaultyProxy`] in front of each member (clients
/// connect through the proxies), for a given duration.
///
/// The faults: kill + restart of a member, kill + restart of the leader, pause + resume of
/// a member (shorter and longer than the session timeout), black holes at a member's proxy
/// in one direction or both (shorter and longer than the session timeout), connection
/// resets, cuts after a few bytes (mid-frame), latency spikes. Only one fault at a time:
/// after each one everything is healed, every member is waited for until it serves again
/// (so the ensemble keeps its quorum most of the time) and the schedule idles a little.
///
/// The seed is printed when the schedule starts (`fault schedule seed=... (replay with
/// ZKR_FAULT_SEED=...)`); [`FAULT_SEED_ENV`], when set, overrides the seed given, so a
/// failing run can be replayed (the faults and their durations repeat; their timing relative
/// to the clients' work does not exactly).
///
/// Every injected fault is recorded with its [`Instant`]s ([`log`](Self::log),
/// [`count`](Self::count)). [`stop`](Self::stop) ends the schedule, heals every proxy,
/// resumes and restarts whatever is down and waits for every member to serve and for a
/// leader. Dropping it without `stop` ends the thread quickly without healing.
///
/// ```no_run
/// use std::sync::Arc;
/// use std::time::Duration;
/// use zkrs_testkit::{faults, FaultSchedule, TestingCluster};
///
/// let cluster = Arc::new(TestingCluster::start(3)?);
/// let proxies = faults::proxies_for(&cluster)?;
/// // Clients connect to `faults::proxies_connect_string(&proxies)`, session timeout 2 s.
/// let schedule = FaultSchedule::builder(cluster.clone(), proxies.clone())
///     .seed(faults::random_seed()) // ZKR_FAULT_SEED, when set, wins
///     .duration(faults::fault_duration_from_env(Duration::from_secs(45)))
///     .session_timeout(Duration::from_secs(2))
///     .start();
/// // ... run the clients, record what they see ...
/// schedule.wait_done(Duration::from_secs(600));
/// let seed = schedule.seed();
/// let log = schedule.stop(); // healed: every member serves, there is a leader
/// println!("seed={seed} faults={}", log.len());
/// for record in &log {
///     println!("  {}", record.fault);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FaultSchedule {
    plan: Plan,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    cluster: Arc<TestingCluster>,
    proxies: Arc<[FaultyProxy]>,
}

/// Settings of a [`FaultSchedule`]; see [`FaultSchedule::builder`].
#[derive(Debug)]
#[must_use = "call start()"]
pub struct FaultScheduleBuilder {
    cluster: Arc<TestingCluster>,
    proxies: Arc<[FaultyProxy]>,
    seed: Option<u64>,
    duration: Duration,
    session_timeout: Duration,
}

impl FaultScheduleBuilder {
    /// The seed (default: [`random_seed`]). [`FAULT_SEED_ENV`], when set, overrides it.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// How long faults are injected (default 45 s). The last fault may end a little later.
    pub fn duration(mut self, duration: Duration) -> Self {
        self.duration = duration;
        self
    }

    /// The clients' session timeout (default 2 s): pauses and black holes are drawn both
    /// shorter and longer than it.
    pub fn session_timeout(mut self, timeout: Duration) -> Self {
        self.session_timeout = timeout;
        self
    }

    /// Prints the seed and starts injecting.
    ///
    /// # Panics
    ///
    /// If the thread cannot be spawned, or the proxies are not one per member.
    pub fn start(self) -> FaultSchedule {
        assert_eq!(
            self.proxies.len(),
            self.cluster.len(),
            "one proxy per ensemble member"
        );
        let from_env = std::env::var(FAULT_SEED_ENV)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        let seed = from_env.or(self.seed).unwrap_or_else(random_seed);
        println!("fault schedule seed={seed} (replay with {FAULT_SEED_ENV}={seed})");
        let plan = Plan {
            seed,
            duration: self.duration,
            session_timeout: self.session_timeout,
        };
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            abandon: AtomicBool::new(false),
            done_injecting: AtomicBool::new(false),
            log: Mutex::new(Vec::new()),
            started: Instant::now(),
        });
        let thread = {
            let (plan, shared) = (plan.clone(), shared.clone());
            let (cluster, proxies) = (self.cluster.clone(), self.proxies.clone());
            std::thread::Builder::new()
                .name("zkrs-testkit-faults".into())
                .spawn(move || inject(&plan, &shared, &cluster, &proxies))
                .expect("spawning the fault schedule's thread")
        };
        FaultSchedule {
            plan,
            shared,
            thread: Some(thread),
            cluster: self.cluster,
            proxies: self.proxies,
        }
    }
}

impl FaultSchedule {
    /// A schedule over `cluster` with `proxies[i]` in front of member `i`.
    pub fn builder(
        cluster: Arc<TestingCluster>,
        proxies: Arc<[FaultyProxy]>,
    ) -> FaultScheduleBuilder {
        FaultScheduleBuilder {
            cluster,
            proxies,
            seed: None,
            duration: Duration::from_secs(45),
            session_timeout: Duration::from_secs(2),
        }
    }

    /// The seed in use (the environment's, if set).
    pub fn seed(&self) -> u64 {
        self.plan.seed
    }

    /// When the schedule started.
    pub fn started(&self) -> Instant {
        self.shared.started
    }

    /// How many faults were injected so far (one being injected counts once it is over).
    pub fn count(&self) -> usize {
        self.lock_log().len()
    }

    /// Every fault injected so far, in order.
    pub fn log(&self) -> Vec<FaultRecord> {
        self.lock_log().clone()
    }

    /// Whether the duration is over and the last fault healed.
    pub fn is_done(&self) -> bool {
        self.shared.done_injecting.load(Ordering::SeqCst)
    }

    /// Blocks until [`is_done`](Self::is_done), at most `timeout`; whether it is.
    pub fn wait_done(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.is_done() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// Stops injecting (the fault under way is ended early), heals every proxy (without
    /// closing connections), resumes paused members, starts stopped ones, and waits (at most
    /// a minute each) for every member to serve and for a leader. Returns the log.
    pub fn stop(mut self) -> Vec<FaultRecord> {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        heal_all(&self.cluster, &self.proxies);
        for i in 0..self.cluster.len() {
            let _ = self.cluster.wait_serving(i, Duration::from_secs(60));
        }
        let _ = self.cluster.wait_for_leader(Duration::from_secs(60));
        self.log()
    }

    /// Describes the log, one fault a line, with offsets from the start.
    pub fn describe(&self) -> String {
        let started = self.shared.started;
        self.lock_log()
            .iter()
            .map(|r| {
                format!(
                    "{:7.2}s-{:7.2}s {}{}\n",
                    r.started.duration_since(started).as_secs_f64(),
                    r.ended.duration_since(started).as_secs_f64(),
                    r.fault,
                    if r.longer_than_session {
                        " (longer than the session timeout)"
                    } else {
                        ""
                    }
                )
            })
            .collect()
    }

    fn lock_log(&self) -> std::sync::MutexGuard<'_, Vec<FaultRecord>> {
        self.shared.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for FaultSchedule {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.shared.abandon.store(true, Ordering::SeqCst);
            self.shared.stop.store(true, Ordering::SeqCst);
            let _ = thread.join();
        }
    }
}

/// Every proxy relays normally; every member runs and is thawed.
fn heal_all(cluster: &TestingCluster, proxies: &[FaultyProxy]) {
    for proxy in proxies {
        proxy.clear();
    }
    for i in 0..cluster.len() {
        if cluster.is_paused(i) {
            let _ = cluster.resume(i);
        }
        if !cluster.is_running(i) {
            let _ = cluster.start_member(i);
        }
    }
}

/// Whether the schedule was told to stop.
fn stopping(shared: &Shared) -> bool {
    shared.stop.load(Ordering::SeqCst)
}

/// The schedule's own pacing (not a test's wait): `d`, or less if told to stop.
fn hold(shared: &Shared, d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until && !stopping(shared) {
        std::thread::sleep(Duration::from_millis(10).min(until - Instant::now()));
    }
}

/// The schedule's thread.
fn inject(plan: &Plan, shared: &Shared, cluster: &TestingCluster, proxies: &[FaultyProxy]) {
    let mut rng = SplitMix64(plan.seed);
    let session = plan.session_timeout;
    let members = cluster.len() as u64;
    let target = Target {
        shared,
        cluster,
        proxies,
        session,
    };
    while !stopping(shared) && shared.started.elapsed() < plan.duration {
        // Heal and idle a little between faults.
        hold(
            shared,
            rng.between(Duration::from_millis(500), Duration::from_millis(2500)),
        );
        if stopping(shared) || shared.started.elapsed() >= plan.duration {
            break;
        }
        let member = rng.below(members) as usize;
        let started = Instant::now();
        let Some(fault) = one_fault(&mut rng, member, &target) else {
            continue;
        };
        let ended = Instant::now();
        shared
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(FaultRecord {
                fault,
                started,
                ended,
                longer_than_session: ended - started > session,
            });
        if shared.abandon.load(Ordering::SeqCst) {
            return;
        }
        // Back to a full ensemble before the next fault.
        heal_all(cluster, proxies);
        for i in 0..cluster.len() {
            if stopping(shared) {
                break;
            }
            let _ = cluster.wait_serving(i, Duration::from_secs(30));
        }
    }
    if !shared.abandon.load(Ordering::SeqCst) {
        heal_all(cluster, proxies);
    }
    shared.done_injecting.store(true, Ordering::SeqCst);
}

/// What a fault acts on: the ensemble, its proxies, and the schedule's state and session.
struct Target<'a> {
    shared: &'a Shared,
    cluster: &'a TestingCluster,
    proxies: &'a [FaultyProxy],
    session: Duration,
}

/// Draws one fault on `member` (or on the leader), injects it and holds it for its time,
/// then lifts it (a reset is over at once; a cut stays armed until the next heal). `None`
/// if it needs a leader and there is none.
fn one_fault(rng: &mut SplitMix64, member: usize, target: &Target<'_>) -> Option<Fault> {
    let Target {
        shared,
        cluster,
        proxies,
        session,
    } = *target;
    let fault = match rng.below(10) {
        0 => {
            let down = rng.between(Duration::from_millis(300), 2 * session);
            kill_restart(target, member, down);
            Fault::KillRestart { member, down }
        }
        1 => {
            let member = cluster.leader()?;
            let down = rng.between(Duration::from_millis(300), 2 * session);
            kill_restart(target, member, down);
            Fault::KillLeader { member, down }
        }
        2 => {
            let duration = rng.between(session / 5, session * 4 / 5);
            pause(target, member, duration);
            Fault::Pause { member, duration }
        }
        3 => {
            let duration = rng.between(session * 3 / 2, session * 3);
            pause(target, member, duration);
            Fault::Pause { member, duration }
        }
        4 => {
            let (direction, duration) =
                (rng.direction(), rng.between(session / 5, session * 4 / 5));
            black_hole(target, member, direction, duration)
        }
        5 => {
            let (direction, duration) =
                (rng.direction(), rng.between(session * 3 / 2, session * 3));
            black_hole(target, member, direction, duration)
        }
        6 => {
            proxies[member].reset();
            Fault::Reset { member }
        }
        7 => {
            let (direction, bytes) = (rng.direction(), 1 + rng.below(200));
            proxies[member].cut_after(direction, bytes);
            // Armed for the connections open now, until the next heal.
            hold(shared, rng.between(Duration::from_millis(500), session));
            Fault::CutAfter {
                member,
                direction,
                bytes,
            }
        }
        _ => {
            let direction = rng.direction();
            let delay = rng.between(Duration::from_millis(20), session / 4);
            let duration = rng.between(Duration::from_millis(500), session * 2);
            proxies[member].latency(direction, delay);
            hold(shared, duration);
            proxies[member].pass(direction);
            Fault::Latency {
                member,
                direction,
                delay,
                duration,
            }
        }
    };
    Some(fault)
}

/// Kills `member`, and starts it again after `down`.
fn kill_restart(target: &Target<'_>, member: usize, down: Duration) {
    let _ = target.cluster.kill(member);
    hold(target.shared, down);
    let _ = target.cluster.start_member(member);
}

/// Freezes `member` for `duration`.
fn pause(target: &Target<'_>, member: usize, duration: Duration) {
    let _ = target.cluster.pause(member);
    hold(target.shared, duration);
    let _ = target.cluster.resume(member);
}

/// Drops `member`'s traffic one way (or both) for `duration`.
fn black_hole(
    target: &Target<'_>,
    member: usize,
    direction: Direction,
    duration: Duration,
) -> Fault {
    target.proxies[member].black_hole(direction);
    hold(target.shared, duration);
    target.proxies[member].pass(direction);
    Fault::BlackHole {
        member,
        direction,
        duration,
    }
}
