//! Leadership under faults (issue 11, invariant suites): a 3-node ensemble, a `FaultyProxy`
//! in front of each member, 4 participants each on its own session (2 s timeout) connecting
//! through the proxies, and the test kit's `FaultSchedule`.
//!
//! A participant's belief is the recipe's own word (standard policy): the suites never end a
//! belief because they saw the connection suspended, so a recipe that keeps leading through
//! a suspension fails them.
//!
//! - `latch`: 4 `LeaderLatch`es. A participant believes it leads from the moment the latch
//!   says so (`is_leader()`, looked at on each event and each connection change) until a
//!   "lost" event or `is_leader()` false. While the faults run, a leader steps down after
//!   0.2-3 s (closes its latch, joins again at the back), so leadership keeps moving through
//!   the faults.
//! - `election` (ZooKeeper's own `LeaderElectionSupport` recipe) and `master` (one ephemeral
//!   node): the same as `latch`, with `LeaderElection` (a belief ends at any event out of
//!   ELECTED) and `MasterElection`; a leader stops and starts again, or resigns and rejoins.
//! - `selector`: 4 `LeaderSelector`s with auto-requeue; a participant believes it leads while
//!   its leadership task runs (from its start, if the context says it leads, until its term
//!   ends, it sees the context cancelled, or its future is dropped). Terms last 20-300 ms,
//!   so leadership moves all the time.
//!
//! Violations: two participants believing they lead at one instant; and after the faults
//! stop (schedule stopped, everything healed), not exactly one leader within the session
//! timeout + 10 s (measured from the end of the healing; in the churn suites, latch,
//! election and master, it must also be the one the znodes say).
//!
//! `ZKR_FAULT_SECS` sets the fault duration (45 s by default), `ZKR_FAULT_SEED` replays.

#[path = "support/beliefs.rs"]
mod beliefs;
mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

use beliefs::{finish, Beliefs, Jitter, Rig, SERIAL, STEP_DEADLINE};
use zkrs_client::Client;
use zkrs_recipes::leader::{LeaderContext, LeaderSelector};
// The recipes behind one contender, shared with the simulation's leadership suites (which
// also restart a recipe in place; these suites only leave and join again).
use zkrs_sim_suites::leadership::{
    suspended, Contender, Election, Latch, Master, CONVERGENCE, PARTICIPANTS,
};

fn print_summary(
    suite: &str,
    seed: u64,
    started: Instant,
    log: &[zkrs_testkit::FaultRecord],
    beliefs: &Beliefs,
    extra: String,
    violations: &[String],
) {
    println!(
        "suite={suite} seed={seed} duration={:.0}s faults={} operations={} violations={} ({extra})",
        started.elapsed().as_secs_f64(),
        log.len(),
        beliefs.count(),
        violations.len()
    );
    for r in log {
        println!(
            "  fault {:9.0}-{:9.0} ms {}",
            beliefs.ms(r.started.into()),
            beliefs.ms(r.ended.into()),
            r.fault
        );
    }
    for v in violations {
        println!("  VIOLATION (seed {seed}): {v}");
    }
}

/// One participant of a churn suite: joins, believes it leads while the recipe says so
/// (looked at on each of its events and each connection change); while `churn` is set, a
/// leader leaves after 0.2-3 s and joins again.
async fn contend<C: Contender>(
    who: usize,
    client: Client,
    beliefs: Arc<Beliefs>,
    stop: Arc<AtomicBool>,
    churn: Arc<AtomicBool>,
    counts: Arc<[AtomicU64; 2]>,
    mut jitter: Jitter,
) {
    let [gained, ended_on_suspension] = &*counts;
    let ended = |why: &'static str| {
        if beliefs.believes(who) && suspended(client.state()) {
            ended_on_suspension.fetch_add(1, Ordering::Relaxed);
        }
        beliefs.end(who, Instant::now(), why);
    };
    let id = format!("p{who}");
    loop {
        let mut contender = C::join(&client, &id);
        let mut states = client.state_changes();
        // Leadership gained before the subscription has no event: look once.
        let mut check = true;
        let mut step_down_at = Instant::now();
        let stepped_down = loop {
            if stop.load(Ordering::Relaxed) {
                break false;
            }
            if check {
                check = false;
                if contender.leads() {
                    if !beliefs.believes(who) {
                        gained.fetch_add(1, Ordering::Relaxed);
                        step_down_at = Instant::now() + jitter.millis(200, 3000);
                    }
                    beliefs.begin(who, Instant::now(), client.session_id());
                } else {
                    ended("recipe: not leader");
                }
            }
            // While the faults run, a leader leaves after a while and joins again at the
            // back, so leadership keeps moving through the faults.
            let leading = beliefs.believes(who);
            if leading && churn.load(Ordering::Relaxed) && Instant::now() >= step_down_at {
                beliefs.end(who, Instant::now(), "stepped down");
                break true;
            }
            let wake = if leading {
                step_down_at.saturating_duration_since(Instant::now())
            } else {
                Duration::from_millis(200)
            };
            tokio::select! {
                change = contender.changed() => match change {
                    Some(true) => check = true,
                    Some(false) => ended("recipe: lost"),
                    None => break false,
                },
                // The connection's changes only make the participant look at the recipe
                // again (it may lead again without a new event): a belief ends on the
                // recipe's word.
                change = states.next() => match change {
                    Some(_) => check = true,
                    None => break false,
                },
                _ = tokio::time::sleep(wake.min(Duration::from_millis(200))) => {}
            }
        };
        beliefs.end(who, Instant::now(), "left");
        let _ = tokio::time::timeout(STEP_DEADLINE, contender.leave()).await;
        if !stepped_down {
            return;
        }
    }
}

/// A churn suite: 4 participants of recipe `C` under the fault schedule; after healing,
/// exactly one leads within the bound, and it is the one the znodes say.
async fn churn_suite<C: Contender>() {
    let _serial = SERIAL.lock().await;
    let rig = Rig::start().await;
    let admin = rig.admin("/inv").await;
    let beliefs = Arc::new(Beliefs::new());
    let stop = Arc::new(AtomicBool::new(false));
    // Leadership terms gained, and ended by the recipe while the connection was suspended.
    let counts = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let clients = rig.clients(PARTICIPANTS).await;
    let started = Instant::now();
    let schedule = rig.faults(45);
    let seed = schedule.seed();
    let churn = Arc::new(AtomicBool::new(true));
    let mut tasks = Vec::new();
    for (who, client) in clients.iter().enumerate() {
        let jitter = Jitter(seed ^ (who as u64 + 1).wrapping_mul(0x9e37_79b9));
        tasks.push(tokio::spawn(contend::<C>(
            who,
            client.clone(),
            beliefs.clone(),
            stop.clone(),
            churn.clone(),
            counts.clone(),
            jitter,
        )));
    }
    let log = finish(schedule).await;
    churn.store(false, Ordering::Relaxed);

    // Healed: exactly one leads, within a bound, and it is the one the znodes say.
    let mut violations = Vec::new();
    let converged = beliefs.wait_for_believers(1, CONVERGENCE).await;
    let leader = beliefs.believers();
    match converged {
        None => violations.push(format!(
            "after healing, not exactly one leader within {CONVERGENCE:?}: {leader:?} believe"
        )),
        Some(_) => {
            let said = C::leader_by_znodes(&admin).await.ok().flatten();
            let want = format!("p{}", leader[0]);
            if said.as_deref() != Some(want.as_str()) {
                violations.push(format!(
                    "after healing, participant {want} believes it leads, the znodes say {said:?}"
                ));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    }
    violations.splice(0..0, beliefs.violations(1, Instant::now()));
    let name = C::NAME;
    print_summary(
        name,
        seed,
        started,
        &log,
        &beliefs,
        format!(
            "leadership terms {}, ended by the {name} on a suspended connection {}, one leader {:.2}s after healing (churn stopped at healing)",
            counts[0].load(Ordering::Relaxed),
            counts[1].load(Ordering::Relaxed),
            converged.map(|d| d.as_secs_f64()).unwrap_or(f64::NAN)
        ),
        &violations,
    );
    assert!(
        violations.is_empty(),
        "suite={name} seed={seed}: {} violations (replay with ZKR_FAULT_SEED={seed})",
        violations.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latch() {
    churn_suite::<Latch>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn election() {
    churn_suite::<Election>().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn master() {
    churn_suite::<Master>().await;
}

/// Ends the belief when the leadership task's future ends or is dropped.
struct EndOnDrop {
    who: usize,
    beliefs: Arc<Beliefs>,
    why: &'static str,
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        self.beliefs.end(self.who, Instant::now(), self.why);
    }
}

/// One term: believes (if the context says it leads) until the term is over or the
/// selector cancels it or drops it; the connection's state is not looked at.
async fn term(ctx: LeaderContext, who: usize, beliefs: Arc<Beliefs>, length: Duration) {
    if !ctx.is_leader() {
        return;
    }
    beliefs.begin(who, Instant::now(), ctx.session_id());
    let mut end = EndOnDrop {
        who,
        beliefs,
        why: "task dropped",
    };
    end.why = tokio::select! {
        _ = tokio::time::sleep(length) => "term over",
        _ = ctx.cancelled() => "cancelled",
    };
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selector() {
    let _serial = SERIAL.lock().await;
    let rig = Rig::start().await;
    let _admin = rig.admin("/inv").await;
    let beliefs = Arc::new(Beliefs::new());
    let clients = rig.clients(PARTICIPANTS).await;
    let started = Instant::now();
    let schedule = rig.faults(45);
    let seed = schedule.seed();
    let mut selectors = Vec::new();
    for (who, client) in clients.iter().enumerate() {
        let beliefs = beliefs.clone();
        let jitter = Arc::new(std::sync::Mutex::new(Jitter(
            seed ^ (who as u64 + 1).wrapping_mul(0x9e37_79b9),
        )));
        selectors.push(
            LeaderSelector::builder(client, "/inv/selector", move |ctx| {
                let length = jitter.lock().unwrap().millis(20, 300);
                term(ctx, who, beliefs.clone(), length)
            })
            .id(format!("p{who}"))
            .auto_requeue(true)
            .start()
            .unwrap(),
        );
    }
    let log = finish(schedule).await;

    // Healed: a leader within the bound (terms are short, so it changes hands all the
    // time; one at a time is the safety check above).
    let mut violations = Vec::new();
    let converged = beliefs.wait_for_believers(1, CONVERGENCE).await;
    if converged.is_none() {
        violations.push(format!(
            "after healing, no leader within {CONVERGENCE:?}: {:?} believe",
            beliefs.believers()
        ));
    }
    for selector in selectors {
        let _ = tokio::time::timeout(Duration::from_secs(10), selector.close()).await;
    }
    violations.splice(0..0, beliefs.violations(1, Instant::now()));
    print_summary(
        "selector",
        seed,
        started,
        &log,
        &beliefs,
        format!(
            "leadership terms {}, one leader {:.2}s after healing",
            beliefs.count(),
            converged.map(|d| d.as_secs_f64()).unwrap_or(f64::NAN)
        ),
        &violations,
    );
    assert!(
        violations.is_empty(),
        "suite=selector seed={seed}: {} violations (replay with ZKR_FAULT_SEED={seed})",
        violations.len()
    );
}
