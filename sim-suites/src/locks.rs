//! The lock suites (`mutex`, `semaphore`, `read_write`), as the real-server fault suite
//! `recipes/tests/invariants_mutex.rs` runs them: 4 participants on their own sessions loop
//! acquire (2 s timeout), believe while the guard holds (ending at its lost signal), release.
//! The odd participants follow the session-deadline policy (they keep believing through a
//! suspension until their session's deadline), the even ones the standard policy.
//! Violations: more believers at once than the recipe allows (so: a session-deadline holder
//! that still believes once the server expired its session and another took over), a
//! session-deadline holder told "lost" before its deadline, a step past its deadline, and a
//! participant that cannot acquire within 20 s once the faults have healed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{Client, ConnectionState, CreateMode};
use zkrs_recipes::framework::ConnectionStatePolicy;
use zkrs_recipes::lock::{InterProcessMutex, InterProcessReadWriteLock, InterProcessSemaphoreV2};

use crate::participant::{connect, settle, STEP_DEADLINE};
use zkrs_sim::check::Beliefs;
use zkrs_sim::World;

/// Participants, each on its own session.
pub const PARTICIPANTS: usize = 4;
/// How long one acquire waits before giving up and trying again.
pub const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);
/// A writer's weight in the read/write suite: as much as every participant reading at once,
/// so the limit (`PARTICIPANTS`) allows all readers or one writer alone.
pub const WRITER: usize = PARTICIPANTS;

/// Which lock a suite runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// `InterProcessMutex`, limit 1.
    Mutex,
    /// `InterProcessSemaphoreV2` with 2 leases, limit 2.
    Semaphore,
    /// `InterProcessReadWriteLock`, one round in three a write.
    ReadWrite,
}

impl LockKind {
    /// The suite's name, and the last part of its lock's path (`/inv/<name>`).
    pub fn name(self) -> &'static str {
        match self {
            LockKind::Mutex => "mutex",
            LockKind::Semaphore => "semaphore",
            LockKind::ReadWrite => "read_write",
        }
    }

    /// How many may believe they hold it at once (by weight).
    pub fn limit(self) -> usize {
        match self {
            LockKind::Mutex => 1,
            LockKind::Semaphore => 2,
            LockKind::ReadWrite => PARTICIPANTS,
        }
    }

    /// The recipe at `/inv/<name>` on `client`, under `policy`.
    pub fn make(self, client: &Client, policy: ConnectionStatePolicy) -> Recipe {
        let path = format!("/inv/{}", self.name());
        match self {
            LockKind::Mutex => Recipe::Mutex(
                InterProcessMutex::builder(client, &path)
                    .policy(policy)
                    .build()
                    .expect("a valid path"),
            ),
            LockKind::Semaphore => Recipe::Semaphore(
                InterProcessSemaphoreV2::builder(client, &path, 2)
                    .policy(policy)
                    .build()
                    .expect("a valid path"),
            ),
            LockKind::ReadWrite => Recipe::ReadWrite(
                InterProcessReadWriteLock::builder(client, &path)
                    .policy(policy)
                    .build()
                    .expect("a valid path"),
                AtomicU64::new(0),
            ),
        }
    }
}

/// Each recipe, behind one acquire.
pub enum Recipe {
    /// A mutex.
    Mutex(InterProcessMutex),
    /// A semaphore.
    Semaphore(InterProcessSemaphoreV2),
    /// The lock, and the rounds so far (every third one writes).
    ReadWrite(InterProcessReadWriteLock, AtomicU64),
}

/// A held lock or lease.
pub enum Held {
    /// A lock's guard.
    Guard(zkrs_recipes::lock::LockGuard),
    /// A semaphore's lease.
    Lease(zkrs_recipes::lock::Lease),
}

impl Held {
    /// Whether the guard or lease says it is held.
    pub fn is_held(&self) -> bool {
        match self {
            Held::Guard(g) => g.is_held(),
            Held::Lease(l) => l.is_held(),
        }
    }
    /// The session it was acquired on.
    pub fn session_id(&self) -> i64 {
        match self {
            Held::Guard(g) => g.session_id(),
            Held::Lease(l) => l.session_id(),
        }
    }
    /// Resolves when it is no longer held.
    pub async fn lost(&self) {
        match self {
            Held::Guard(g) => g.lost().await,
            Held::Lease(l) => l.lost().await,
        }
    }
    /// Releases it.
    pub async fn release(self) -> zkrs_client::Result<()> {
        match self {
            Held::Guard(g) => g.release().await,
            Held::Lease(l) => l.release().await,
        }
    }
}

impl Recipe {
    /// What was acquired, and its weight against the suite's limit.
    pub async fn try_acquire(
        &self,
        timeout: Duration,
    ) -> zkrs_client::Result<Option<(Held, usize)>> {
        Ok(match self {
            Recipe::Mutex(m) => m.try_acquire(timeout).await?.map(|g| (Held::Guard(g), 1)),
            Recipe::Semaphore(s) => s
                .try_acquire_one(timeout)
                .await?
                .map(|l| (Held::Lease(l), 1)),
            Recipe::ReadWrite(lock, rounds) => {
                if rounds.fetch_add(1, Ordering::Relaxed) % 3 == 0 {
                    let guard = lock.write_lock().try_acquire(timeout).await?;
                    guard.map(|g| (Held::Guard(g.into_guard()), WRITER))
                } else {
                    let guard = lock.read_lock().try_acquire(timeout).await?;
                    guard.map(|g| (Held::Guard(g), 1))
                }
            }
        })
    }
}

/// Participant `who`'s policy: session-deadline for the odd ones, standard for the even.
pub fn policy_of(who: usize) -> ConnectionStatePolicy {
    if who % 2 == 1 {
        ConnectionStatePolicy::SessionDeadline
    } else {
        ConnectionStatePolicy::Standard
    }
}

/// The session's deadline under the session-deadline policy, as the library computes it (the
/// last request answered, plus the session timeout, less a tenth of it).
pub fn session_deadline(client: &Client) -> Option<std::time::Instant> {
    let timeout = client.session_timeout();
    Some(client.last_heard()? + timeout - timeout / 10)
}

/// What the participants share.
struct Shared {
    world: World,
    beliefs: Beliefs,
    problems: Mutex<Vec<String>>,
    acquired: AtomicU64,
    attempts: AtomicU64,
}

impl Shared {
    fn problem(&self, text: String) {
        self.world.trace(&format!("violation: {text}"));
        self.problems.lock().unwrap().push(text);
    }
}

/// One acquire, hold, release; `false` if a step hung past its deadline.
async fn one_round(
    who: usize,
    client: &Client,
    recipe: &Recipe,
    shared: &Shared,
    hold: Duration,
) -> bool {
    shared.attempts.fetch_add(1, Ordering::Relaxed);
    let attempt = tokio::time::timeout(STEP_DEADLINE, recipe.try_acquire(ACQUIRE_TIMEOUT)).await;
    let (held, weight) = match attempt {
        Err(_) => {
            shared.problem(format!(
                "participant {who}: acquire (timeout {ACQUIRE_TIMEOUT:?}) still pending after {STEP_DEADLINE:?}"
            ));
            return false;
        }
        Ok(Ok(Some(acquired))) => acquired,
        Ok(Ok(None)) => return true,
        Ok(Err(e)) => {
            shared.world.trace(&format!("p{who} acquire failed: {e}"));
            settle(client).await;
            return true;
        }
    };
    shared.acquired.fetch_add(1, Ordering::Relaxed);
    if held.is_held() {
        let session = held.session_id();
        shared
            .world
            .trace(&format!("p{who} holds (session {session:x})"));
        shared
            .beliefs
            .begin_weighted(who, Instant::now(), session, weight);
        let deadline_policy = policy_of(who) == ConnectionStatePolicy::SessionDeadline;
        let mut changes = client.state_changes();
        let ended_by = tokio::select! {
            biased;
            _ = held.lost() => match client.state() {
                ConnectionState::Suspended if deadline_policy => "deadline",
                ConnectionState::Suspended => "suspended",
                _ => "lost",
            },
            _ = tokio::time::sleep(hold) => "released",
        };
        let mut suspended = false;
        while let Some(change) = changes.try_next() {
            suspended |= change.state == ConnectionState::Suspended;
        }
        if suspended && ended_by == "released" {
            // Counted in the trace: the suspensions the session-deadline policy rode out.
            shared
                .world
                .trace(&format!("p{who} held through a suspension"));
        }
        if ended_by == "deadline" {
            let now = Instant::now().into_std();
            match session_deadline(client) {
                Some(deadline) if now < deadline => shared.problem(format!(
                    "participant {who}: told lost {:?} before its session's deadline",
                    deadline - now
                )),
                _ => {}
            }
        }
        shared.beliefs.end(who, Instant::now(), ended_by);
        shared
            .world
            .trace(&format!("p{who} stops holding ({ended_by})"));
    }
    match tokio::time::timeout(STEP_DEADLINE, held.release()).await {
        Err(_) => {
            shared.problem(format!(
                "participant {who}: release still pending after {STEP_DEADLINE:?}"
            ));
            false
        }
        Ok(Ok(())) => true,
        Ok(Err(e)) => {
            shared.world.trace(&format!("p{who} release failed: {e}"));
            settle(client).await;
            true
        }
    }
}

/// Runs the suite for `kind` in `world`; `Err` lists every violation.
pub async fn run(world: World, kind: LockKind) -> Result<(), String> {
    let admin = connect(&world).await?;
    while let Err(e) = admin.create("/inv", b"", CreateMode::Persistent).await {
        if e.code() == Some(zkrs_client::ErrorCode::NodeExists) {
            break;
        }
        settle(&admin).await;
    }
    let shared = Arc::new(Shared {
        world: world.clone(),
        beliefs: Beliefs::new(),
        problems: Mutex::new(Vec::new()),
        acquired: AtomicU64::new(0),
        attempts: AtomicU64::new(0),
    });
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients = Vec::new();
    for _ in 0..PARTICIPANTS {
        clients.push(connect(&world).await?);
    }
    let mut tasks = Vec::new();
    for (who, client) in clients.iter().enumerate() {
        let (client, shared, stop) = (client.clone(), shared.clone(), stop.clone());
        let mut rng = world.rng(100 + who as u64);
        tasks.push(tokio::spawn(async move {
            let recipe = kind.make(&client, policy_of(who));
            while !stop.load(Ordering::Relaxed) {
                // Mostly a few ms; one hold in 8 outlasts the read timeout, so faults land
                // while a participant believes and the lost signal must end it.
                let hold = if rng.below(8) == 0 {
                    Duration::from_millis(rng.between(500, 3000))
                } else {
                    Duration::from_millis(rng.between(2, 25))
                };
                if !one_round(who, &client, &recipe, &shared, hold).await {
                    return;
                }
            }
        }));
    }
    world.healed().await;
    world.trace("healed");
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = tokio::time::timeout(STEP_DEADLINE * 2, task).await;
    }
    // Healed: every participant gets it once more, within a bound.
    for (who, client) in clients.iter().enumerate() {
        let recipe = kind.make(client, policy_of(who));
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut ok = false;
        while Instant::now() < deadline && !ok {
            let before = shared.acquired.load(Ordering::Relaxed);
            one_round(who, client, &recipe, &shared, Duration::from_millis(5)).await;
            ok = shared.acquired.load(Ordering::Relaxed) > before;
        }
        if !ok {
            let dir = format!("/inv/{}", kind.name());
            let listings: Vec<String> = (0..world.members())
                .map(|m| {
                    let children = world.children_on(m, &dir).unwrap_or_default();
                    let named: Vec<String> = children
                        .iter()
                        .map(|(name, owner)| format!("{name} (session {owner:x})"))
                        .collect();
                    format!("member {m}: [{}]", named.join(", "))
                })
                .collect();
            shared.problem(format!(
                "participant {who} (session {:x}): no acquire within 20 s after healing; {}",
                client.session_id(),
                listings.join("; ")
            ));
        }
    }
    let mut problems = shared.beliefs.violations(kind.limit(), Instant::now());
    problems.extend(shared.problems.lock().unwrap().iter().cloned());
    world.trace(&format!(
        "{}: {} attempts, {} acquired, {} beliefs",
        kind.name(),
        shared.attempts.load(Ordering::Relaxed),
        shared.acquired.load(Ordering::Relaxed),
        shared.beliefs.count()
    ));
    for c in clients {
        let _ = c.close().await;
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}
