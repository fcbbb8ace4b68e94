//! The `barriers` suite: 4 participants, each on its own session, go through rounds of a
//! `DistributedDoubleBarrier` (enter, hold 5-80 ms, leave) through the faults, with an
//! outage of every member in half the runs and single-client faults on the participants
//! (so a member's session expires while it is in the barrier). Round `r` is a barrier of its
//! own at `/inv-b/r<r>` (a new member each round, as the recipe's example does for a phase),
//! entered until 4 s after the round's first `enter` started, left with a 4 s timeout; a
//! participant whose round failed goes on to the next round, or to the highest one another
//! participant has started (so the four meet again).
//!
//! Invariants, on what the recipe acknowledged (each participant records that it starts
//! entering or leaving round `r` before it calls `enter` or `leave`):
//! - No `enter` of round `r` returns `true` before all 4 have started entering `r`.
//! - If two participants' `enter` and `leave` of round `r` all returned `true`, neither
//!   `leave` returned before the other had started leaving `r`. A member told `true` by both
//!   was there from the barrier's opening to its end. The weaker promise under faults: a
//!   member whose session ends while it is in the barrier (its ephemeral node goes with the
//!   session) is not waited for by the others, whose `leave` returns once the remaining nodes
//!   are gone; that member must then be told (an error, or `false`), never `true`.
//! - Once healed, every participant gets through a whole round (`true` from both) within
//!   20 s, and 12 s after they stopped no member node is left under `/inv-b`, nor a `ready`
//!   of a round some `enter` returned `true` in (a `ready` left would let a later `enter` at
//!   its path straight in). The weaker promise: a `ready` whose creation was in doubt, that
//!   no member was let in on, may stay (the trace counts those).
//! - No step takes longer than 30 s.
//!
//! Not drawn: a participant retrying `enter` or `leave` on the same member after a failure
//! (the recipe deletes the member's node in the background then, which could take the
//! retry's node).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use zkrs_client::Client;
use zkrs_recipes::barrier::{DistributedDoubleBarrier, READY_NODE};

use crate::data::{make_node, settle_briefly, Problems};
use crate::participant::{connect, STEP_DEADLINE};
use zkrs_sim::{SimRng, World};

/// How many members each round's barrier waits for (one per participant).
pub const PARTICIPANTS: usize = 4;
const ROOT: &str = "/inv-b";
/// The timeout of each `enter` and `leave`.
const WAIT: Duration = Duration::from_secs(4);
/// How long after healing every participant has to get through a whole round.
const LIVENESS: Duration = Duration::from_secs(20);
/// How long after the participants stopped their member nodes may take to go.
const CLEANUP: Duration = Duration::from_secs(12);

/// What a participant did in one round, in the order it happened.
#[derive(Default)]
struct Round {
    /// When every `enter` of the round times out: its first `enter`'s start, plus [`WAIT`].
    deadline: Option<Instant>,
    /// Who started entering.
    entering: BTreeSet<usize>,
    /// Who started leaving.
    leaving: BTreeSet<usize>,
    /// Who was told `true` by `enter`.
    entered: BTreeSet<usize>,
    /// Who was told `true` by `leave`, with who had started leaving when it was.
    left: BTreeMap<usize, BTreeSet<usize>>,
}

/// The rounds, and how far the participants are.
#[derive(Default)]
struct Rounds {
    rounds: BTreeMap<u64, Round>,
    /// The highest round any participant has started.
    highest: u64,
    /// Who got through a whole round that started after healing.
    through_after_healing: BTreeSet<usize>,
}

/// What every participant shares.
struct Shared {
    rounds: Mutex<Rounds>,
    problems: Arc<Problems>,
    /// The first round that starts after healing (0 until healed).
    first_healed_round: AtomicU64,
    /// Set once every participant got through a round after healing: they stop.
    done: watch::Sender<bool>,
}

impl Shared {
    fn round<T>(&self, r: u64, f: impl FnOnce(&mut Round) -> T) -> T {
        f(self.rounds.lock().unwrap().rounds.entry(r).or_default())
    }
}

fn round_path(r: u64) -> String {
    format!("{ROOT}/r{r}")
}

/// One round of participant `who`: `true` if both `enter` and `leave` returned `true`;
/// `None` if it was stopped (every participant is through) while it waited to enter.
async fn round(
    who: usize,
    r: u64,
    client: &Client,
    rng: &mut SimRng,
    shared: &Shared,
) -> Option<bool> {
    let path = round_path(r);
    let barrier = DistributedDoubleBarrier::builder(client, &path, PARTICIPANTS)
        .build()
        .expect("a valid path");
    // One deadline for every `enter` of the round: with a timeout of their own, from
    // different starts, the participants could give up on a round in turn, each just before
    // the last one came, and never meet again.
    let now = Instant::now();
    let deadline = shared.round(r, |round| *round.deadline.get_or_insert(now + WAIT));
    if deadline <= now {
        return Some(false);
    }
    shared.round(r, |round| round.entering.insert(who));
    let mut done = shared.done.subscribe();
    let wait = deadline - now;
    // Dropped (its node deleted, as the recipe promises) once everyone is through.
    let entered = tokio::select! {
        entered = tokio::time::timeout(STEP_DEADLINE, barrier.enter(Some(wait))) => entered,
        _ = done.wait_for(|done| *done) => return None,
    };
    match entered {
        Err(_) => {
            shared.problems.add(format!(
                "p{who}: entering round {r} still pending after {STEP_DEADLINE:?}"
            ));
            return Some(false);
        }
        Ok(Ok(true)) => {
            let entering = shared.round(r, |round| {
                round.entered.insert(who);
                round.entering.clone()
            });
            if entering.len() < PARTICIPANTS {
                shared.problems.add(format!(
                    "p{who} entered round {r} when only {entering:?} had started entering"
                ));
            }
        }
        Ok(Ok(false)) => {
            shared
                .problems
                .trace(&format!("p{who}: entering round {r} timed out"));
            return Some(false);
        }
        Ok(Err(e)) => {
            shared
                .problems
                .trace(&format!("p{who}: entering round {r} failed: {e}"));
            settle_briefly(client).await;
            return Some(false);
        }
    }
    tokio::time::sleep(Duration::from_millis(rng.between(5, 80))).await;
    shared.round(r, |round| round.leaving.insert(who));
    match tokio::time::timeout(STEP_DEADLINE, barrier.leave(Some(WAIT))).await {
        Err(_) => {
            shared.problems.add(format!(
                "p{who}: leaving round {r} still pending after {STEP_DEADLINE:?}"
            ));
            Some(false)
        }
        Ok(Ok(true)) => {
            shared.round(r, |round| {
                let leaving = round.leaving.clone();
                round.left.insert(who, leaving);
            });
            Some(true)
        }
        Ok(Ok(false)) => {
            shared
                .problems
                .trace(&format!("p{who}: leaving round {r} timed out"));
            Some(false)
        }
        Ok(Err(e)) => {
            shared
                .problems
                .trace(&format!("p{who}: leaving round {r} failed: {e}"));
            settle_briefly(client).await;
            Some(false)
        }
    }
}

/// One participant: rounds until every participant got through one after healing.
async fn participant(who: usize, client: Client, mut rng: SimRng, shared: Arc<Shared>) {
    let mut r = 0;
    while !*shared.done.borrow() {
        {
            let mut rounds = shared.rounds.lock().unwrap();
            // The next round, or the highest another participant has started: a
            // participant whose rounds failed catches up with the others.
            r = (r + 1).max(rounds.highest);
            rounds.highest = r;
        }
        let first_healed = shared.first_healed_round.load(Ordering::Relaxed);
        match round(who, r, &client, &mut rng, &shared).await {
            None => break,
            Some(true) if first_healed != 0 && r >= first_healed => {
                let mut rounds = shared.rounds.lock().unwrap();
                rounds.through_after_healing.insert(who);
                if rounds.through_after_healing.len() == PARTICIPANTS {
                    shared.done.send_replace(true);
                }
            }
            Some(_) => {}
        }
    }
}

/// What is left under the rounds' barriers.
struct Leftovers {
    /// Member nodes.
    members: Vec<String>,
    /// The rounds whose `ready` is there.
    ready: Vec<u64>,
}

/// The nodes left under the rounds' barriers: `None` if they could not be listed.
async fn leftovers(admin: &Client, rounds: u64) -> Option<Leftovers> {
    let mut left = Leftovers {
        members: Vec::new(),
        ready: Vec::new(),
    };
    for r in 1..=rounds {
        let path = round_path(r);
        let children = match admin.get_children(&path).await {
            Ok(children) => children,
            Err(e) if e.code() == Some(zkrs_client::ErrorCode::NoNode) => continue,
            Err(_) => return None,
        };
        for child in children.iter() {
            if child == READY_NODE {
                left.ready.push(r);
            } else {
                left.members.push(format!("{path}/{child}"));
            }
        }
    }
    Some(left)
}

/// Checks the rounds' records: who left while another was still in the barrier.
fn check_leaving(rounds: &Rounds, problems: &Problems) {
    for (r, round) in &rounds.rounds {
        // The members told `true` both ways.
        let through: Vec<usize> = round
            .left
            .keys()
            .copied()
            .filter(|who| round.entered.contains(who))
            .collect();
        for (who, leaving) in &round.left {
            for other in &through {
                if !leaving.contains(other) {
                    problems.add(format!(
                        "p{who} left round {r} before p{other} started leaving, and both were told they were through"
                    ));
                }
            }
        }
    }
}

/// Checks, within [`CLEANUP`] of every participant's stop, that the rounds' nodes went;
/// what was left at the end (`None`: not listed).
async fn check_cleanup(admin: &Client, rounds: &Rounds, problems: &Problems) -> Option<Leftovers> {
    // The rounds' `ready` nodes that must go: someone was let in on them.
    let opened = |r: &u64| {
        rounds
            .rounds
            .get(r)
            .is_some_and(|round| !round.entered.is_empty())
    };
    // No member node left behind: a failed or dropped `enter` and a failed `leave` delete
    // theirs in the background, and a lost session's go with it; nor an opened `ready`.
    let deadline = Instant::now() + CLEANUP;
    let left = loop {
        let left = leftovers(admin, rounds.highest).await;
        let clean = left
            .as_ref()
            .is_some_and(|left| left.members.is_empty() && !left.ready.iter().any(opened));
        if clean || Instant::now() >= deadline {
            break left;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    match &left {
        None => problems.add("the rounds' nodes could not be listed after healing".into()),
        Some(left) => {
            if !left.members.is_empty() {
                problems.add(format!(
                    "{} member nodes left {CLEANUP:?} after the participants stopped: {:?}",
                    left.members.len(),
                    left.members
                ));
            }
            let opened: Vec<u64> = left.ready.iter().copied().filter(opened).collect();
            if !opened.is_empty() {
                problems.add(format!(
                    "the ready nodes of rounds {opened:?}, which let members in, left {CLEANUP:?} after the participants stopped"
                ));
            }
        }
    }
    left
}

/// Runs the suite in `world`; `Err` lists every violation.
pub async fn run(world: World) -> Result<(), String> {
    // The participants' clients first: the single-client faults hit clients 0..4.
    let mut clients = Vec::new();
    for _ in 0..PARTICIPANTS {
        clients.push(connect(&world).await?);
    }
    let admin = connect(&world).await?;
    make_node(&admin, ROOT, b"").await?;
    let shared = Arc::new(Shared {
        rounds: Mutex::new(Rounds::default()),
        problems: Arc::new(Problems::new(&world)),
        first_healed_round: AtomicU64::new(0),
        done: watch::channel(false).0,
    });
    let tasks: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(who, client)| {
            tokio::spawn(participant(
                who,
                client.clone(),
                world.rng(600 + who as u64),
                shared.clone(),
            ))
        })
        .collect();
    world.healed().await;
    world.trace("healed");
    let healed_round = shared.rounds.lock().unwrap().highest + 1;
    shared
        .first_healed_round
        .store(healed_round, Ordering::Relaxed);
    let mut done = shared.done.subscribe();
    if tokio::time::timeout(LIVENESS, done.wait_for(|done| *done))
        .await
        .is_err()
    {
        let through = shared.rounds.lock().unwrap().through_after_healing.clone();
        shared.problems.add(format!(
            "{LIVENESS:?} after healing only {through:?} got through a round (from round {healed_round})"
        ));
        shared.done.send_replace(true);
    }
    for (who, task) in tasks.into_iter().enumerate() {
        if tokio::time::timeout(STEP_DEADLINE, task).await.is_err() {
            shared
                .problems
                .add(format!("p{who} did not stop within {STEP_DEADLINE:?}"));
        }
    }
    let problems = shared.problems.clone();
    // Every participant has stopped: the records are complete.
    let rounds = std::mem::take(&mut *shared.rounds.lock().unwrap());
    check_leaving(&rounds, &problems);
    let left = check_cleanup(&admin, &rounds, &problems).await;
    world.trace(&format!(
        "barriers: {} rounds, ready nodes left in rounds {:?}",
        rounds.highest,
        left.map(|left| left.ready)
    ));
    for c in clients.into_iter().chain([admin]) {
        let _ = c.close().await;
    }
    problems.verdict()
}
