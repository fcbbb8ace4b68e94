//! The invariant suites' rig (a 3-node ensemble behind fault proxies) and helpers. The
//! checker itself, what every participant believed and when, is `zkrs_sim::check`'s
//! [`Beliefs`]: the simulation's suites check the same invariants with the same code.
#![allow(dead_code)] // each suite uses some of these

use std::fmt::Write as _;
use std::time::Duration;

use std::time::Instant;

#[allow(unused_imports)] // not every suite checks beliefs
pub use zkrs_sim::check::Beliefs;

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

    /// A session for the suite's own reads, once it made the persistent node `root`.
    pub async fn admin(&self, root: &str) -> zkrs_client::Client {
        let admin = self.client().await;
        let persistent = zkrs_client::CreateMode::Persistent;
        admin.create(root, b"", persistent).await.unwrap();
        admin
    }

    /// `n` new sessions through the proxies, one after another.
    pub async fn clients(&self, n: usize) -> Vec<zkrs_client::Client> {
        let mut clients = Vec::with_capacity(n);
        for _ in 0..n {
            clients.push(self.client().await);
        }
        clients
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
pub fn print_faults(injected: &[zkrs_testkit::FaultRecord], since: tokio::time::Instant) {
    for record in injected {
        println!(
            "  fault at {:.1}s for {:.1}s: {}",
            record
                .started
                .saturating_duration_since(since.into_std())
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

/// A session on `member` alone, not through its proxy: what that member has, whatever the
/// faults between it and the participants.
pub async fn direct_session(rig: &Rig, member: usize) -> zkrs_client::Result<zkrs_client::Client> {
    zkrs_client::ClientBuilder::new(rig.cluster.member_connect_string(member))
        .session_timeout(SESSION)
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
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
        let direct = direct_session(rig, member).await;
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
    // Which sessions each member tracks and which ephemerals it holds for them: tells an
    // orphan of a live session (ours to delete) from an ephemeral the server kept past its
    // session, or one only a diverged member has.
    for member in 0..rig.cluster.len() {
        let addr = rig.cluster.member_address(member);
        let dump = tokio::task::spawn_blocking(move || {
            zkrs_testkit::four_letter_word(addr, "dump", Duration::from_secs(5))
        })
        .await;
        let _ = match dump {
            Ok(Ok(dump)) => write!(
                out,
                "\n    member {member} dump:\n      {}",
                dump.trim_end().replace('\n', "\n      ")
            ),
            Ok(Err(e)) => write!(out, "\n    member {member} dump: {e}"),
            Err(e) => write!(out, "\n    member {member} dump: {e}"),
        };
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

/// Whether each member holds `path`, read on a direct session after a `sync` (so a member
/// that merely lags has caught up with the leader); `None` for a member that did not answer.
/// A node a majority of members lack is not in the ensemble's agreed state: a replica that
/// diverged from the others (a ZooKeeper defect; 3.8.0 has several in the resync after a
/// restart, ZOOKEEPER-4394, ZOOKEEPER-4646, ZOOKEEPER-4785), not something a client left.
pub async fn members_holding(rig: &Rig, path: &str) -> Vec<Option<bool>> {
    let parent = zkrs_recipes::framework::parent(path);
    let mut held = Vec::new();
    for member in 0..rig.cluster.len() {
        let direct = direct_session(rig, member).await;
        let Ok(direct) = direct else {
            held.push(None);
            continue;
        };
        let answer = match direct.sync(parent).await {
            Ok(()) => direct.exists(path).await.ok().map(|stat| stat.is_some()),
            Err(_) => None,
        };
        held.push(answer);
        let _ = direct.close().await;
    }
    held
}

/// Whether a majority of the members (read as [`members_holding`] does) lack `path`.
pub fn lacked_by_majority(held: &[Option<bool>]) -> bool {
    held.iter().filter(|h| **h == Some(false)).count() * 2 > held.len()
}

/// The number in environment variable `name`, or `default`.
pub fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
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
