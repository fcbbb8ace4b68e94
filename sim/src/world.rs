//! A simulated run: [`Simulation`] sets it up from a seed, [`World`] is what the code under
//! test sees (clients that connect to the simulated ensemble, virtual time, the trace).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use zkrs_client::ClientBuilder;
use zkrs_model::{Randomness, ServerConfig};

use crate::check::guarantees;
use crate::check::history::HistoryLog;
use crate::faults::{plan, Fault, FaultConfig, FaultKind};
use crate::finding::Finding;
use crate::network::{host_name, pump, ClientDialer, Network, Owner, SharedNetwork, PORT};
use crate::rng::SimRng;
use crate::violation::Violation;

/// Findings of each broken guarantee reported, at most.
const GUARANTEE_FINDINGS: usize = 3;

/// The wall clock a simulated run starts at (2026-01-01T00:00:00Z): node names and
/// registration times that hold the time repeat with the seed.
const EPOCH_MS: u64 = 1_767_225_600_000;

/// [`Simulation::real_limit`]'s default: far over any run's real time (a second or two in
/// release builds), far under the hours a crawling run would take.
const DEFAULT_REAL_LIMIT: Duration = Duration::from_secs(300);

/// How one run ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Report {
    /// The seed.
    pub seed: u64,
    /// The hash of the whole trace: the same seed (and plan) gives the same hash.
    pub trace_hash: u64,
    /// Lines in the trace.
    pub trace_lines: u64,
    /// Virtual time the run took.
    pub simulated: Duration,
    /// Faults injected.
    pub faults: u64,
    /// What the test found wrong, if anything (its own words, or a hang).
    pub violation: Option<Violation>,
    /// The last lines of the trace (every line with [`Simulation::keep_trace`]).
    pub trace: Vec<String>,
}

impl Report {
    /// Whether the run found nothing wrong.
    pub fn passed(&self) -> bool {
        self.violation.is_none()
    }
}

/// One simulated run, set up from a seed: an ensemble of model servers, a network, and a
/// plan of faults, all on virtual time.
///
/// ```
/// use std::time::Duration;
/// use zkrs_sim::{FaultConfig, Simulation};
///
/// let report = Simulation::new(7)
///     .faults(FaultConfig::for_duration(Duration::from_secs(20)))
///     .run(|world| async move {
///         let client = world.client_builder().connect().await.map_err(|e| e.to_string())?;
///         client.create("/x", b"1", zkrs_client::CreateMode::Persistent).await.ok();
///         world.healed().await;
///         Ok(())
///     });
/// assert!(report.passed(), "{report:?}");
/// ```
#[derive(Debug, Clone)]
pub struct Simulation {
    seed: u64,
    members: usize,
    faults: FaultConfig,
    server: ServerConfig,
    limit: Duration,
    real_limit: Duration,
    keep_trace: bool,
    skip: Vec<usize>,
}

impl Simulation {
    /// A run of `seed`: 3 members, 60 s of faults (see [`FaultConfig`]).
    pub fn new(seed: u64) -> Simulation {
        Simulation {
            seed,
            members: 3,
            faults: FaultConfig::default(),
            server: ServerConfig::default(),
            limit: Duration::from_secs(600),
            real_limit: DEFAULT_REAL_LIMIT,
            keep_trace: false,
            skip: Vec::new(),
        }
    }

    /// How many members the ensemble has.
    pub fn members(mut self, n: usize) -> Simulation {
        self.members = n;
        self
    }

    /// Which faults to draw.
    pub fn faults(mut self, faults: FaultConfig) -> Simulation {
        self.faults = faults;
        self
    }

    /// The members' configuration (tick time, session bounds).
    pub fn server_config(mut self, config: ServerConfig) -> Simulation {
        self.server = config;
        self
    }

    /// A run still going after this much virtual time is a hang (a violation).
    pub fn limit(mut self, limit: Duration) -> Simulation {
        self.limit = limit;
        self
    }

    /// A run still going after this much real time is stalled (a violation): it bounds a
    /// run whose virtual time crawls, which [`limit`](Self::limit) would end only hours
    /// later. Default 5 minutes.
    pub fn real_limit(mut self, limit: Duration) -> Simulation {
        self.real_limit = limit;
        self
    }

    /// The limit of real time ([`Simulation::real_limit`]).
    pub fn real_time_limit(&self) -> Duration {
        self.real_limit
    }

    /// Keep every trace line in the report, not only the last few thousand.
    pub fn keep_trace(mut self, keep: bool) -> Simulation {
        self.keep_trace = keep;
        self
    }

    /// Leaves out the planned faults with these numbers (to shrink a violation).
    pub fn skip_faults(mut self, ids: Vec<usize>) -> Simulation {
        self.skip = ids;
        self
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The faults left out ([`Simulation::skip_faults`]).
    pub(crate) fn skipped(&self) -> &[usize] {
        &self.skip
    }

    /// The faults this run will inject.
    pub fn plan(&self) -> Vec<Fault> {
        let mut rng = SimRng::new(self.seed).fork(1);
        plan(&mut rng, self.members, &self.faults)
            .into_iter()
            .filter(|f| !self.skip.contains(&f.id))
            .collect()
    }

    /// Runs `test` in the simulated world until it returns, on a fresh current-thread
    /// runtime with a paused clock (time jumps to the next timer whenever every task
    /// waits). `test` returns `Err` with what it found wrong (a [`Finding`]; `?` turns a
    /// `String` into one); running longer than the limit is a hang. Then ZooKeeper's
    /// guarantees are checked over the history of every client the world made
    /// ([`check::guarantees`](crate::check::guarantees)): a broken one is a violation too,
    /// whatever the test found.
    pub fn run<F, Fut>(&self, test: F) -> Report
    where
        F: FnOnce(World) -> Fut,
        Fut: Future<Output = Result<(), Finding>> + Send + 'static,
    {
        let root = SimRng::new(self.seed);
        let mut builder = tokio::runtime::Builder::new_current_thread();
        builder.enable_time().start_paused(true);
        // tokio's own draws (a watch channel's notifier per waiter, select!'s start) from the
        // seed too; tokio offers the seed only under `--cfg tokio_unstable` (this workspace's
        // `.cargo/config.toml` sets it; without it, runs of a seed may differ where several
        // tasks wait on one watch channel).
        #[cfg(tokio_unstable)]
        builder.rng_seed(tokio::runtime::RngSeed::from_bytes(
            &root.fork(5).next_u64().to_le_bytes(),
        ));
        let runtime = builder.build().expect("a current-thread runtime");
        // The library's own draws (host shuffles, UUIDs, jitter) come from the seed too.
        zkrs_client::__private::seed_thread_randomness(Some(root.fork(2).next_u64()));
        let plan = self.plan();
        let outcome = runtime.block_on(async {
            zkrs_client::__private::set_thread_wall_clock(Some(EPOCH_MS));
            let start = tokio::time::Instant::now();
            let mut server = self.server.clone();
            // The model's passwords from the seed too: a run is a function of its seed.
            if server.randomness == Randomness::Os {
                server.randomness = Randomness::Seeded(root.fork(6).next_u64());
            }
            let net = Network::new(
                self.members,
                server,
                root.fork(3),
                &plan,
                self.keep_trace,
                start.into_std(),
            );
            let net = SharedNetwork::new(net, start);
            let history = HistoryLog::new(start);
            let real_deadline = std::time::Instant::now() + self.real_limit;
            let mut pump_task = tokio::spawn(pump(net.clone(), real_deadline));
            // The pump checks the deadline at each step; this wakes it at the deadline when
            // nothing else does (the test crawls on its own timers).
            let watchdog = watchdog(net.clone(), self.real_limit);
            let world = World {
                net: net.clone(),
                members: self.members,
                rng: root.fork(4),
                owner: None,
                crashes: Arc::new(
                    plan.iter()
                        .filter(|f| f.kind == FaultKind::ParticipantCrash)
                        .copied()
                        .collect(),
                ),
                history: history.clone(),
            };
            let verdict = tokio::select! {
                biased;
                stuck = &mut pump_task => Some(stuck.unwrap_or_else(|e| Violation::NetworkFailed(e.to_string()))),
                outcome = tokio::time::timeout(self.limit, test(world)) => match outcome {
                    Ok(result) => result.err().map(Violation::Found),
                    Err(_) => Some(Violation::Hang { limit: self.limit }),
                },
            };
            pump_task.abort();
            drop(watchdog);
            let simulated = net.now();
            (verdict, simulated, net, history)
        });
        let (verdict, simulated, net, history) = outcome;
        let violation = with_guarantees(verdict, &history.take());
        // Tasks still running (drivers of clients the test kept) go with the runtime.
        drop(runtime);
        zkrs_client::__private::seed_thread_randomness(None);
        zkrs_client::__private::set_thread_wall_clock(None);
        let net = net.lock();
        Report {
            seed: self.seed,
            trace_hash: net.trace.hash(),
            trace_lines: net.trace.len(),
            simulated,
            faults: net.faults_injected,
            violation,
            trace: net.trace.lines(),
        }
    }
}

/// A thread that wakes the network's pump once `limit` of real time has passed, unless the
/// returned sender is dropped first (the run ended).
fn watchdog(net: SharedNetwork, limit: Duration) -> std::sync::mpsc::Sender<()> {
    let (done, ended) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = ended.recv_timeout(limit) {
            net.notify.notify_one();
        }
    });
    done
}

/// The test's verdict and ZooKeeper's guarantees checked over the run's history
/// ([`guarantees`]): a broken guarantee is a violation of every run, whatever the test
/// checked (reported after the test's own findings).
fn with_guarantees(
    verdict: Option<Violation>,
    history: &crate::check::history::History,
) -> Option<Violation> {
    let broken = guarantees::violations(history, GUARANTEE_FINDINGS);
    if broken.is_empty() {
        return verdict;
    }
    let lines: Vec<String> = broken.iter().map(ToString::to_string).collect();
    let lines = lines.join("\n");
    match verdict {
        None => Some(Violation::Found(Finding::safety(lines))),
        Some(Violation::Found(found)) => Some(Violation::Found(Finding::new(
            found.kind(),
            format!("{}\n{lines}", found.detail()),
        ))),
        Some(other) => Some(other),
    }
}

/// What a simulated test sees: clients for the ensemble, virtual time, the trace.
#[derive(Debug, Clone)]
pub struct World {
    pub(crate) net: SharedNetwork,
    members: usize,
    rng: SimRng,
    /// The participant incarnation whose clients this world makes, if any.
    pub(crate) owner: Option<Owner>,
    /// The plan's participant crashes ([`World::spawn_participant`]).
    pub(crate) crashes: Arc<Vec<Fault>>,
    history: HistoryLog,
}

impl World {
    /// The connect string of the simulated ensemble (`zk1:2181,zk2:2181,...`).
    pub fn connect_string(&self) -> String {
        (0..self.members)
            .map(|m| format!("{}:{PORT}", host_name(m)))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// A client builder for the ensemble whose connections go over the simulated network
    /// (session timeout 2 s; change it as for any client).
    ///
    /// Each call makes a new client, numbered from 0 in the order of the calls: the number
    /// single-client faults name ([`FaultKind::IsolateClient`](crate::FaultKind::IsolateClient),
    /// [`FaultKind::PauseClient`](crate::FaultKind::PauseClient)). Every connection made
    /// with this builder (or a clone of it) is that client's.
    ///
    /// Its client's operations and watch events go into the run's history, whose guarantees
    /// are checked at the end.
    pub fn client_builder(&self) -> ClientBuilder {
        let client = self.net.lock().add_client();
        let builder = ClientBuilder::new(self.connect_string())
            .session_timeout(Duration::from_secs(2))
            .connect_timeout(Duration::from_secs(2));
        let dialer = ClientDialer {
            net: self.net.clone(),
            client,
            owner: self.owner,
        };
        let builder = zkrs_client::__private::with_dialer(builder, Arc::new(dialer));
        // Every client's history, for the check of ZooKeeper's guarantees after the run.
        zkrs_client::__private::with_recorder(builder, self.history.recorder())
    }

    /// Virtual time since the run began.
    pub fn now(&self) -> Duration {
        self.net.now()
    }

    /// Adds a line to the trace (a checker's observation).
    pub fn trace(&self, line: &str) {
        let now = self.now();
        self.net.lock().trace.record(now, line);
    }

    /// A random stream of the run's seed for participant or purpose `stream`.
    pub fn rng(&self, stream: u64) -> SimRng {
        self.rng.fork(stream)
    }

    /// How many members the ensemble has.
    pub fn members(&self) -> usize {
        self.members
    }

    /// Waits until every planned fault has started and ended.
    pub async fn healed(&self) {
        loop {
            let (healed, ends) = {
                let now = self.now();
                let net = self.net.lock();
                (net.healed(now), net.plan_ends)
            };
            if healed {
                return;
            }
            let wait = ends
                .saturating_sub(self.now())
                .max(Duration::from_millis(100));
            tokio::time::sleep(wait).await;
        }
    }

    /// Member `member`'s children of `path` with each one's ephemeral owner (0 for a
    /// persistent node), as its own tree has them (a member that lags shows what it has
    /// applied); `None` if it has no such node.
    pub fn children_on(&self, member: usize, path: &str) -> Option<Vec<(String, i64)>> {
        let net = self.net.lock();
        let tree = net.ensemble.member(member).tree();
        let node = tree.get(path)?;
        let base = path.trim_end_matches('/');
        Some(
            node.children
                .iter()
                .map(|name| {
                    let owner = tree
                        .get(&format!("{base}/{name}"))
                        .map_or(0, |n| n.stat.ephemeral_owner);
                    (name.clone(), owner)
                })
                .collect(),
        )
    }

    /// The member leading now.
    pub fn leader(&self) -> usize {
        self.net.lock().ensemble.leader()
    }
}
