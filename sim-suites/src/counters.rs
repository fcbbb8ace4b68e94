//! The `counters` suite: 4 participants, each on its own session, change two counters
//! through the faults, one `DistributedAtomicLong` (`increment`) and one `SharedCount`
//! (`try_set_count` from the value it last saw, plus one).
//!
//! Invariants:
//! - A counter never loses an acknowledged change: no two acknowledged increments of the
//!   atomic long report the same value after them, nor two acknowledged sets of the shared
//!   count the same new count (either would be one change written over another).
//! - Once healed, the atomic long holds at least as many increments as were acknowledged
//!   (an increment in doubt may have been applied too, even twice: the recipe, as
//!   Curator's, tries again after a lost reply), and no acknowledged value is above what it
//!   holds; each participant's `SharedCount` shows the count on the server within 12 s.
//! - No step takes longer than 30 s.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::Client;
use zkrs_recipes::counter::{decode_count, DistributedAtomicLong, SharedCount};
use zkrs_recipes::framework::RetryPolicy;

use crate::data::{healed_flag, make_node, settle_briefly, Problems};
use crate::participant::{connect, STEP_DEADLINE};
use zkrs_sim::World;

const PARTICIPANTS: usize = 4;
const LONG: &str = "/inv-c/long";
const COUNT: &str = "/inv-c/count";
/// The pause between a participant's changes.
const PACE: Duration = Duration::from_millis(40);
/// How long after healing each `SharedCount` may take to show the server's count.
const CONVERGENCE: Duration = Duration::from_secs(12);

/// The acknowledged values: each value after a change, and who was told it.
#[derive(Default)]
struct Acked {
    long: BTreeMap<i64, usize>,
    count: BTreeMap<i32, usize>,
}

/// The atomic long's retries: 10, from 10 ms to at most 500 ms apart. The default (from
/// 100 ms, up to 5 s apart: 26 s of sleeps alone) could take a contended increment past the
/// step deadline with no fault at all.
fn retry() -> RetryPolicy {
    RetryPolicy::exponential(Duration::from_millis(10), Duration::from_millis(500), 10)
}

/// One participant: increments the long and sets the count, in turn, until the faults heal.
async fn participant(
    who: usize,
    client: Client,
    stop: Arc<AtomicBool>,
    acked: Arc<Mutex<Acked>>,
    problems: Arc<Problems>,
) -> SharedCount {
    let long = DistributedAtomicLong::builder(&client, LONG)
        .retry(retry())
        .build()
        .expect("a valid path");
    let count = SharedCount::builder(&client, COUNT)
        .start()
        .expect("a valid path");
    let mut round = 0u64;
    while !stop.load(Ordering::Relaxed) {
        round += 1;
        let t0 = Instant::now();
        let outcome = if round % 2 == 0 {
            match tokio::time::timeout(STEP_DEADLINE, long.increment()).await {
                Err(_) => None,
                Ok(Ok(v)) if v.succeeded => {
                    if let Some(other) = acked.lock().unwrap().long.insert(v.post_value, who) {
                        problems.add(format!(
                            "the atomic long's increment to {} acknowledged to p{who} and to p{other}: one change lost",
                            v.post_value
                        ));
                    }
                    Some(true)
                }
                Ok(Ok(_)) => Some(true),
                Ok(Err(_)) => Some(false),
            }
        } else {
            let seen = count.versioned_value();
            let next = seen.value.wrapping_add(1);
            match tokio::time::timeout(STEP_DEADLINE, count.try_set_count(&seen, next)).await {
                Err(_) => None,
                Ok(Ok(true)) => {
                    if let Some(other) = acked.lock().unwrap().count.insert(next, who) {
                        problems.add(format!(
                            "the shared count's set to {next} acknowledged to p{who} and to p{other}: one change lost"
                        ));
                    }
                    Some(true)
                }
                Ok(Ok(false)) => Some(true),
                Ok(Err(_)) => Some(false),
            }
        };
        match outcome {
            None => problems.add(format!(
                "p{who}: round {round} still pending after {:?}",
                t0.elapsed()
            )),
            Some(false) => settle_briefly(&client).await,
            // A pause between changes: back to back, the four contend so hard that a seed
            // takes 50 times longer to run, and no more of the faults' windows are hit.
            Some(true) => tokio::time::sleep(PACE).await,
        }
    }
    count
}

/// Reads the atomic long on `admin` once healed (retrying a read cut short).
async fn final_long(admin: &Client) -> Option<i64> {
    let long = DistributedAtomicLong::builder(admin, LONG)
        .build()
        .expect("a valid path");
    for _ in 0..10 {
        match long.get().await {
            Ok(v) if v.succeeded => return Some(v.post_value),
            _ => settle_briefly(admin).await,
        }
    }
    None
}

/// Runs the suite in `world`; `Err` lists every violation.
pub async fn run(world: World) -> Result<(), String> {
    let admin = connect(&world).await?;
    make_node(&admin, "/inv-c", b"").await?;
    let problems = Arc::new(Problems::new(&world));
    let stop = healed_flag(&world);
    let acked = Arc::new(Mutex::new(Acked::default()));
    let mut clients = Vec::new();
    for _ in 0..PARTICIPANTS {
        clients.push(connect(&world).await?);
    }
    let tasks: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(who, client)| {
            tokio::spawn(participant(
                who,
                client.clone(),
                stop.clone(),
                acked.clone(),
                problems.clone(),
            ))
        })
        .collect();
    world.healed().await;
    let mut counts = Vec::new();
    for (who, task) in tasks.into_iter().enumerate() {
        match tokio::time::timeout(STEP_DEADLINE, task).await {
            Ok(Ok(count)) => counts.push(count),
            _ => problems.add(format!("p{who} did not stop within {STEP_DEADLINE:?}")),
        }
    }
    let (acked_long, top_long, acked_count) = {
        let acked = acked.lock().unwrap();
        (
            acked.long.len(),
            acked.long.keys().next_back().copied(),
            acked.count.len(),
        )
    };
    let held = final_long(&admin).await;
    match held {
        None => problems.add("the atomic long could not be read after healing".into()),
        Some(held) => {
            if (held as u128) < acked_long as u128 || top_long.is_some_and(|top| top > held) {
                problems.add(format!(
                    "the atomic long holds {held} after {acked_long} acknowledged increments (the highest acknowledged value {top_long:?})"
                ));
            }
        }
    }
    // Every participant's shared count shows the server's count within the bound.
    let deadline = Instant::now() + CONVERGENCE;
    let server = loop {
        if let Ok((data, _)) = admin.get_data(COUNT).await {
            break decode_count(&data);
        }
        if Instant::now() >= deadline {
            break None;
        }
        settle_briefly(&admin).await;
    };
    for (who, count) in counts.iter().enumerate() {
        let shows = async {
            while Some(count.count()) != server {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        if tokio::time::timeout_at(deadline, shows).await.is_err() {
            problems.add(format!(
                "p{who}'s shared count shows {} {CONVERGENCE:?} after healing, the server {server:?}",
                count.count()
            ));
        }
    }
    world.trace(&format!(
        "counters: {acked_long} increments acknowledged, the long holds {held:?}; {acked_count} sets of the count acknowledged, it holds {server:?}"
    ));
    for count in counts {
        count.close().await;
    }
    for c in clients.into_iter().chain([admin]) {
        let _ = c.close().await;
    }
    problems.verdict()
}
