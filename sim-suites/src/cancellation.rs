//! The `cancellation` suite: recipes whose futures are dropped half-way, at virtual times
//! drawn from the seed, through the faults. Five participants, each on a session of its own,
//! take turns with an `InterProcessMutex`, an `InterProcessSemaphoreV2` (2 leases), a
//! `LeaderLatch`, a `LeaderElection` and an ephemeral `PersistentNode`, all under `/inv-x`:
//! each turn is a way in (acquire, start and wait for leadership or the node), a hold, and a
//! way out (release, close, stop), each way bounded by a timeout drawn from the seed (most a
//! few milliseconds, some up to 2 s, one in three not cut short), and the handle dropped at
//! the end whatever happened.
//!
//! The recipes promise that a future dropped half-way leaves nothing behind: an acquire or
//! a create cut short deletes what it may have made, a close, stop or release cut short goes
//! on in the background, on the same session (recipes/tests/cancelled_close.rs, against a
//! real server). Violations: once the faults have healed and every participant has dropped
//! its handles, an ephemeral node under `/inv-x` still there `SETTLE` (12 s) later (an orphan, if
//! its session is one of the participants' live sessions: it would block every waiter behind
//! it for the session's life); a way in or out that was not cut short and still ran after
//! [`STEP_DEADLINE`]; a participant not done within [`STEP_DEADLINE`] of healing; an error a
//! participant does not expect.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{Client, CreateMode};
use zkrs_recipes::node::PersistentNode;
use zkrs_recipes::{
    leader::{CloseMode, LeaderElection, LeaderLatch},
    lock::{InterProcessMutex, InterProcessSemaphoreV2},
};

use crate::data::{healed_flag, make_node, trouble, Problems};
use crate::participant::{connect, STEP_DEADLINE};
use zkrs_sim::{SimRng, World};

/// Every recipe's node is under this.
const ROOT: &str = "/inv-x";
/// Participants, each on its own session.
const PARTICIPANTS: usize = 5;
/// The participants' session timeout ([`World::client_builder`]'s).
const SESSION: Duration = Duration::from_secs(2);
/// Once every handle is dropped after healing, how long its nodes may take to go: a
/// background delete needs the connection back; a lost session's nodes need its expiry.
const SETTLE: Duration = Duration::from_secs(SESSION.as_secs() + 10);
/// How long an acquire or a wait for leadership may wait when its future is not cut short.
const WAIT: Duration = Duration::from_secs(2);

/// The recipes a turn uses.
const KINDS: [&str; 5] = ["mutex", "semaphore", "latch", "election", "node"];

/// How long a way in or out may run before its future is dropped: `None` (one time in
/// three) for not cut short; else most a few milliseconds, some up to 2 s.
fn cut(rng: &mut SimRng) -> Option<Duration> {
    match rng.below(6) {
        0 | 1 => None,
        2 => Some(Duration::from_millis(rng.below(2000))),
        _ => Some(Duration::from_micros(rng.below(20_000))),
    }
}

/// Runs `step` bounded by `cut` (dropped when it runs out) or, if not cut short, by
/// [`STEP_DEADLINE`] (a violation when it runs out). `Some` with its output if it finished.
async fn bounded<F: std::future::Future>(
    problems: &Problems,
    who: usize,
    what: &str,
    cut: Option<Duration>,
    step: F,
) -> Option<F::Output> {
    match cut {
        Some(d) => match tokio::time::timeout(d, step).await {
            Ok(out) => Some(out),
            Err(_) => {
                problems.trace(&format!(
                    "p{who}: {what} dropped after {} us",
                    d.as_micros()
                ));
                None
            }
        },
        None => match tokio::time::timeout(STEP_DEADLINE, step).await {
            Ok(out) => Some(out),
            Err(_) => {
                problems.add(format!(
                    "p{who}: {what} (not cut short) still running after {STEP_DEADLINE:?}"
                ));
                None
            }
        },
    }
}

/// A way in or out, cut short at `cut`: whether it finished (with an error the suite
/// expects, or none).
async fn finished<T>(
    problems: &Problems,
    who: usize,
    what: &str,
    cut: Option<Duration>,
    step: impl std::future::Future<Output = zkrs_client::Result<T>>,
) -> bool {
    match bounded(problems, who, what, cut, step).await {
        Some(Ok(_)) => true,
        Some(Err(e)) => {
            expected(problems, who, what, &e);
            true
        }
        None => false,
    }
}

/// Traces an error a participant expects through the faults (connection trouble, or a way
/// out told the session is gone); any other is a violation.
fn expected(problems: &Problems, who: usize, what: &str, e: &zkrs_client::Error) {
    if trouble(e) {
        problems.trace(&format!("p{who}: {what} failed: {e}"));
    } else {
        problems.add(format!("p{who}: {what}: {e}"));
    }
}

/// Counts for the summary line.
#[derive(Debug, Default)]
struct Counts {
    turns: u64,
    ins_done: u64,
    outs_done: u64,
    cut_short: u64,
}

/// Turns of participant `who` until the faults have healed; every handle is dropped by the
/// time it returns.
async fn participant(world: World, who: usize, client: Client, problems: Arc<Problems>) -> Counts {
    let healed = healed_flag(&world);
    let mut rng = world.rng(500 + who as u64);
    let mut counts = Counts::default();
    while !healed.load(Ordering::Relaxed) {
        counts.turns += 1;
        let kind = KINDS[rng.below(KINDS.len() as u64) as usize];
        let (cut_in, cut_out) = (cut(&mut rng), cut(&mut rng));
        let hold = Duration::from_millis(rng.below(200));
        problems.trace(&format!(
            "p{who}: {kind} turn (in {:?}, out {:?})",
            cut_in.map(|d| d.as_micros()),
            cut_out.map(|d| d.as_micros())
        ));
        let (came_in, went_out) = turn(&problems, who, &client, kind, cut_in, cut_out, hold).await;
        counts.ins_done += u64::from(came_in);
        counts.outs_done += u64::from(went_out);
        counts.cut_short +=
            u64::from(cut_in.is_some() && !came_in) + u64::from(cut_out.is_some() && !went_out);
        tokio::time::sleep(Duration::from_millis(rng.below(100))).await;
    }
    counts
}

/// One turn with recipe `kind`; whether the way in and the way out finished.
async fn turn(
    problems: &Problems,
    who: usize,
    client: &Client,
    kind: &str,
    cut_in: Option<Duration>,
    cut_out: Option<Duration>,
    hold: Duration,
) -> (bool, bool) {
    let path = format!("{ROOT}/{kind}");
    let (path, cuts) = (path.as_str(), (cut_in, cut_out));
    match kind {
        "mutex" => mutex_turn(problems, who, client, path, cuts, hold).await,
        "semaphore" => semaphore_turn(problems, who, client, path, cuts, hold).await,
        "latch" => latch_turn(problems, who, client, path, cuts, hold).await,
        "election" => election_turn(problems, who, client, path, cuts, hold).await,
        _ => node_turn(problems, who, client, path, cuts, hold).await,
    }
}

async fn mutex_turn(
    problems: &Problems,
    who: usize,
    client: &Client,
    path: &str,
    (cut_in, cut_out): (Option<Duration>, Option<Duration>),
    hold: Duration,
) -> (bool, bool) {
    let mutex = InterProcessMutex::builder(client, path)
        .build()
        .expect("a valid path");
    let acquire = mutex.try_acquire(WAIT);
    acquired_turn(problems, who, (cut_in, cut_out), hold, acquire, |guard| {
        guard.release()
    })
    .await
}

async fn semaphore_turn(
    problems: &Problems,
    who: usize,
    client: &Client,
    path: &str,
    (cut_in, cut_out): (Option<Duration>, Option<Duration>),
    hold: Duration,
) -> (bool, bool) {
    let semaphore = InterProcessSemaphoreV2::builder(client, path, 2)
        .build()
        .expect("a valid path");
    let acquire = semaphore.try_acquire_one(WAIT);
    acquired_turn(problems, who, (cut_in, cut_out), hold, acquire, |lease| {
        lease.release()
    })
    .await
}

/// A turn of a recipe that is acquired (maybe not, within `WAIT`), held for `hold`, then
/// released, each step cut short as the turn draws it: whether it came in and went out.
async fn acquired_turn<G, R>(
    problems: &Problems,
    who: usize,
    (cut_in, cut_out): (Option<Duration>, Option<Duration>),
    hold: Duration,
    acquire: impl std::future::Future<Output = zkrs_client::Result<Option<G>>>,
    release: impl FnOnce(G) -> R,
) -> (bool, bool)
where
    R: std::future::Future<Output = zkrs_client::Result<()>>,
{
    let held = match bounded(problems, who, "acquire", cut_in, acquire).await {
        Some(Ok(Some(held))) => held,
        Some(Ok(None)) => return (true, false),
        Some(Err(e)) => {
            expected(problems, who, "acquire", &e);
            return (true, false);
        }
        None => return (false, false),
    };
    tokio::time::sleep(hold).await;
    (
        true,
        finished(problems, who, "release", cut_out, release(held)).await,
    )
}

async fn latch_turn(
    problems: &Problems,
    who: usize,
    client: &Client,
    path: &str,
    (cut_in, cut_out): (Option<Duration>, Option<Duration>),
    hold: Duration,
) -> (bool, bool) {
    let latch = LeaderLatch::builder(client, path)
        .id(format!("p{who}"))
        .start()
        .expect("a valid path");
    let came_in = finished(
        problems,
        who,
        "await leadership",
        cut_in,
        latch.await_leadership_timeout(WAIT),
    )
    .await;
    tokio::time::sleep(hold).await;
    let went_out = finished(
        problems,
        who,
        "close",
        cut_out,
        latch.close_with(CloseMode::Silent),
    )
    .await;
    (came_in, went_out)
}

async fn election_turn(
    problems: &Problems,
    who: usize,
    client: &Client,
    path: &str,
    (cut_in, cut_out): (Option<Duration>, Option<Duration>),
    hold: Duration,
) -> (bool, bool) {
    let election = LeaderElection::builder(client, path)
        .id(format!("p{who}"))
        .start()
        .expect("a valid path");
    let came_in = finished(
        problems,
        who,
        "await leadership",
        cut_in,
        election.await_leadership_timeout(WAIT),
    )
    .await;
    tokio::time::sleep(hold).await;
    // Closing drops the election at the end, or where the cut leaves it.
    let went_out = finished(problems, who, "stop", cut_out, election.close()).await;
    (came_in, went_out)
}

async fn node_turn(
    problems: &Problems,
    who: usize,
    client: &Client,
    path: &str,
    (cut_in, cut_out): (Option<Duration>, Option<Duration>),
    hold: Duration,
) -> (bool, bool) {
    let started = PersistentNode::builder(client, &format!("{path}/p{who}"), CreateMode::Ephemeral)
        .data(b"x")
        .start();
    let node = match started {
        Ok(node) => node,
        Err(e) => {
            problems.add(format!("p{who}: node start: {e}"));
            return (false, false);
        }
    };
    let came_in = finished(
        problems,
        who,
        "wait for the node",
        cut_in,
        node.wait_for_initial_create(WAIT),
    )
    .await;
    tokio::time::sleep(hold).await;
    let went_out = finished(problems, who, "close", cut_out, node.close()).await;
    (came_in, went_out)
}

/// Every ephemeral node under `path` on the leading member (path -> owner).
fn ephemerals(world: &World, path: &str, found: &mut BTreeMap<String, i64>) {
    let leader = world.leader();
    let Some(children) = world.children_on(leader, path) else {
        return;
    };
    for (name, owner) in children {
        let child = format!("{path}/{name}");
        // 0: persistent; i64::MIN: a container (ZooKeeper's mark, not a session).
        if owner == 0 || owner == i64::MIN {
            ephemerals(world, &child, found);
        } else {
            found.insert(child, owner);
        }
    }
}

/// Runs the suite in `world`; `Err` lists every violation.
pub async fn run(world: World) -> Result<(), String> {
    let problems = Arc::new(Problems::new(&world));
    let admin = connect(&world).await?;
    make_node(&admin, ROOT, b"").await?;
    make_node(&admin, &format!("{ROOT}/node"), b"").await?;
    let mut clients = Vec::new();
    let mut tasks = Vec::new();
    for who in 0..PARTICIPANTS {
        let client = connect(&world).await?;
        clients.push(client.clone());
        tasks.push(tokio::spawn(participant(
            world.clone(),
            who,
            client,
            problems.clone(),
        )));
    }
    world.healed().await;
    let healed = Instant::now();
    let mut counts = Counts::default();
    for (who, task) in tasks.into_iter().enumerate() {
        let left = STEP_DEADLINE.saturating_sub(healed.elapsed());
        match tokio::time::timeout(left, task).await {
            Ok(Ok(c)) => {
                counts.turns += c.turns;
                counts.ins_done += c.ins_done;
                counts.outs_done += c.outs_done;
                counts.cut_short += c.cut_short;
            }
            Ok(Err(e)) => problems.add(format!("p{who} failed: {e}")),
            Err(_) => problems.add(format!(
                "p{who}: not done {STEP_DEADLINE:?} after the faults healed"
            )),
        }
    }
    world.trace("every participant has dropped its handles");

    // Every handle is dropped: every ephemeral node under ROOT must go within SETTLE.
    let dropped = Instant::now();
    let mut left = BTreeMap::new();
    while dropped.elapsed() <= SETTLE {
        left.clear();
        ephemerals(&world, ROOT, &mut left);
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let live: Vec<(usize, i64)> = clients
        .iter()
        .enumerate()
        .map(|(who, c)| (who, c.session_id()))
        .collect();
    for (path, owner) in &left {
        match live.iter().find(|(_, s)| s == owner) {
            Some((who, _)) => problems.add(format!(
                "orphan: {path} of p{who}'s live session {owner:x}, {SETTLE:?} after every handle was dropped"
            )),
            None => problems.add(format!(
                "{path} of session {owner:x} (no participant's now) still there {SETTLE:?} after every handle was dropped"
            )),
        }
    }
    if left.is_empty() {
        world.trace(&format!(
            "no ephemeral node left after {} ms",
            dropped.elapsed().as_millis()
        ));
    }
    world.trace(&format!(
        "cancellation: turns {}, ways in done {}, ways out done {}, cut short {}, violations {}",
        counts.turns,
        counts.ins_done,
        counts.outs_done,
        counts.cut_short,
        problems.len()
    ));
    for c in clients.into_iter().chain([admin]) {
        let _ = c.close().await;
    }
    problems.verdict()
}
