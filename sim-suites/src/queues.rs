//! The `queues` suite, as `recipes/tests/invariants_data.rs` (`queues`) runs it against real
//! servers: a producer puts numbered items into a queue with a lock path and one without;
//! consumers on two other sessions (two per queue) take them through the faults, then drain
//! both once the faults have healed. Violations:
//! - with a lock path, an acknowledged item completed twice, or never completed (unless a
//!   completion's reply was lost and so its outcome unknown);
//! - without, an item delivered twice, or more acknowledged items never delivered than the
//!   consumers' claims whose outcome was unknown (at most once);
//! - a step (a put, a take with its own 300 ms timeout, a completion) past 30 s, queues not
//!   drained 60 s after the faults, a consumer that does not stop, an error not expected.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{Client, ErrorCode};
use zkrs_recipes::queue::{DistributedQueue, QueueConsumer};

use crate::data::{healed_flag, settle_briefly, trouble, Problems};
use crate::participant::{connect, STEP_DEADLINE};
use zkrs_sim::check::ledger::Ledger;
use zkrs_sim::World;

/// Once the faults stop, how long the consumers may take to drain the queues.
const DRAIN: Duration = Duration::from_secs(60);

/// The two queues: (path, lock path).
pub const QUEUES: [(&str, Option<&str>); 2] = [
    ("/inv-q/locked", Some("/inv-q/locked-locks")),
    ("/inv-q/plain", None),
];

/// One of [`QUEUES`] on `client`.
pub fn queue(client: &Client, (path, lock): (&str, Option<&str>)) -> DistributedQueue {
    let q = DistributedQueue::builder(client, path);
    match lock {
        Some(lock) => q.lock_path(lock),
        None => q,
    }
    .build()
    .expect("the suite's paths are valid")
}

/// What the consumers share.
struct Shared {
    world: World,
    problems: Problems,
    stop: AtomicBool,
    takes: AtomicU64,
}

impl Shared {
    /// A step that hung: with the client's state and the leader then.
    fn hang(&self, what: String, client: &Client) {
        self.problems.add(format!(
            "{what} (client {:?}, session {:#x}; leader member {})",
            client.state(),
            client.session_id(),
            self.world.leader()
        ));
    }
}

/// One consumer (`name`): takes and (with a lock path) completes until `stop`.
async fn consume(
    name: String,
    dir: &'static str,
    mut consumer: QueueConsumer,
    client: Client,
    locked: bool,
    ledger: Arc<Mutex<Ledger>>,
    shared: Arc<Shared>,
) -> QueueConsumer {
    while !shared.stop.load(Ordering::Relaxed) {
        let before = consumer.stats();
        let take = consumer.take_timeout(Duration::from_millis(300));
        let message = match tokio::time::timeout(STEP_DEADLINE, take).await {
            Err(_) => {
                let what = format!(
                    "{name}: a take with a 300 ms timeout hung past {STEP_DEADLINE:?} (consumer stats before {before:?}, after {:?})",
                    consumer.stats()
                );
                shared.hang(what, &client);
                shared
                    .world
                    .trace(&queue_report(&shared.world, &client, dir).await);
                continue;
            }
            Ok(Ok(Some(m))) => m,
            Ok(Ok(None)) => continue,
            Ok(Err(e)) if trouble(&e) => {
                settle_briefly(&client).await;
                continue;
            }
            Ok(Err(e)) => {
                shared.problems.add(format!("{name}: take: {e}"));
                return consumer;
            }
        };
        shared.takes.fetch_add(1, Ordering::Relaxed);
        let text = String::from_utf8_lossy(&message.items()[0]).into_owned();
        let Ok(id) = text.parse::<u64>() else {
            shared
                .problems
                .add(format!("{name}: took {text:?}, not an item id"));
            continue;
        };
        ledger.lock().unwrap().record_delivery(id);
        if locked {
            match tokio::time::timeout(STEP_DEADLINE, message.complete()).await {
                Err(_) => {
                    let what = format!("{name}: completing item {id} hung past {STEP_DEADLINE:?}");
                    shared.hang(what, &client);
                    ledger.lock().unwrap().record_completion_in_doubt(id);
                }
                Ok(Ok(())) => ledger.lock().unwrap().record_completion(id),
                Ok(Err(e)) if trouble(&e) => {
                    shared
                        .world
                        .trace(&format!("{name}: completing item {id} in doubt: {e}"));
                    ledger.lock().unwrap().record_completion_in_doubt(id);
                    settle_briefly(&client).await;
                }
                // Our lock is gone (session lost): someone else completes it.
                Ok(Err(e)) => shared
                    .world
                    .trace(&format!("{name}: completing item {id}: {e}")),
            }
        }
    }
    consumer
}

/// What `dir` holds: as `client` lists it (its first names, and whether it reads each) and
/// as each member's tree has it (for a hang's trace).
async fn queue_report(world: &World, client: &Client, dir: &str) -> String {
    let mut out = match client.get_children(dir).await {
        Ok(children) => {
            let mut names: Vec<String> = children.to_vec();
            names.sort();
            let mut text = format!("{dir}: the client lists {} names", names.len());
            for name in names.iter().take(3) {
                let path = format!("{dir}/{name}");
                let read = client.get_data(&path).await.map(drop);
                let members: Vec<bool> = (0..world.members())
                    .map(|m| world.children_on(m, &path).is_some())
                    .collect();
                text.push_str(&format!("; {name}: read {read:?}, on members {members:?}"));
            }
            text
        }
        Err(e) => format!("{dir}: the client cannot list it: {e}"),
    };
    for m in 0..world.members() {
        let n = world.children_on(m, dir).map(|c| c.len());
        out.push_str(&format!("; member {m} has {n:?} children"));
    }
    out
}

/// How many nodes the queues and the lock directory still hold (a directory that cannot be
/// listed now counts as one).
pub async fn left_in_queues(client: &Client) -> usize {
    let mut left = 0;
    for (path, lock) in QUEUES {
        for dir in [Some(path), lock].into_iter().flatten() {
            left += match client.get_children(dir).await {
                Ok(c) => c.len(),
                Err(e) if e.code() == Some(ErrorCode::NoNode) => 0,
                Err(_) => 1,
            };
        }
    }
    left
}

/// Each queue's ledger: what was put, delivered and completed.
type Ledgers = [Arc<Mutex<Ledger>>; 2];

/// Runs the suite in `world`; `Err` lists every violation.
pub async fn run(world: World) -> Result<(), String> {
    let producer = connect(&world).await?;
    let (ca, cb) = (connect(&world).await?, connect(&world).await?);
    let ledgers = [
        Arc::new(Mutex::new(Ledger::default())),
        Arc::new(Mutex::new(Ledger::default())),
    ];
    let shared = Arc::new(Shared {
        world: world.clone(),
        problems: Problems::new(&world),
        stop: AtomicBool::new(false),
        takes: AtomicU64::new(0),
    });
    let consumers = start_consumers(&shared, &ledgers, [&ca, &cb]);
    let puts = produce(&world, &shared, &producer, &ledgers).await;
    world.healed().await;
    world.trace(&format!("healed after {puts} items per queue"));
    let (in_doubt_claims, drained_in) = drain(&shared, &producer, consumers).await?;
    judge(&shared, &ledgers, puts, in_doubt_claims, drained_in);
    for c in [producer, ca, cb] {
        let _ = c.close().await;
    }
    shared.problems.verdict()
}

/// Two consumers per queue, one on each client.
fn start_consumers(
    shared: &Arc<Shared>,
    ledgers: &Ledgers,
    clients: [&Client; 2],
) -> Vec<tokio::task::JoinHandle<QueueConsumer>> {
    let mut consumers = Vec::new();
    for (q, ledger) in QUEUES.iter().zip(ledgers) {
        for (c, client) in ["a", "b"].into_iter().zip(clients) {
            let name = format!(
                "{} consumer {c}",
                if q.1.is_some() { "locked" } else { "plain" }
            );
            consumers.push(tokio::spawn(consume(
                name,
                q.0,
                queue(client, *q).consumer(),
                client.clone(),
                q.1.is_some(),
                ledger.clone(),
                shared.clone(),
            )));
        }
    }
    consumers
}

/// Puts numbered items into both queues until the faults have healed; how many per queue.
async fn produce(world: &World, shared: &Shared, producer: &Client, ledgers: &Ledgers) -> u64 {
    let healed = healed_flag(world);
    let producers = [queue(producer, QUEUES[0]), queue(producer, QUEUES[1])];
    let mut next = 0u64;
    while !healed.load(Ordering::Relaxed) {
        next += 1;
        for (q, ledger) in producers.iter().zip(ledgers) {
            let put = match tokio::time::timeout(STEP_DEADLINE, q.put(next.to_string())).await {
                Ok(put) => put,
                Err(_) => {
                    let what = format!("putting item {next} hung past {STEP_DEADLINE:?}");
                    shared.hang(what, producer);
                    ledger.lock().unwrap().record_put_in_doubt(next);
                    continue;
                }
            };
            match put {
                Ok(_) => {
                    ledger.lock().unwrap().record_put(next);
                }
                Err(e) if trouble(&e) => {
                    // Not retried: a retry would be a second item with the same id.
                    world.trace(&format!("put {next} in doubt: {e}"));
                    ledger.lock().unwrap().record_put_in_doubt(next);
                    settle_briefly(producer).await;
                }
                Err(e) => shared.problems.add(format!("put {next}: {e}")),
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    next
}

/// After the faults: the consumers drain both queues (locks and all), then stop. The plain
/// queue's claims whose outcome was unknown, and how long the drain took.
async fn drain(
    shared: &Shared,
    producer: &Client,
    consumers: Vec<tokio::task::JoinHandle<QueueConsumer>>,
) -> Result<(u64, Duration), String> {
    let settled = Instant::now();
    let drained = tokio::time::timeout(DRAIN, async {
        while left_in_queues(producer).await > 0 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    if drained.is_err() {
        shared.problems.add(format!(
            "the queues were not drained {DRAIN:?} after the faults ({} nodes left)",
            left_in_queues(producer).await
        ));
    }
    let drained_in = settled.elapsed();
    shared.stop.store(true, Ordering::Relaxed);
    let mut in_doubt_claims = 0;
    for (i, consumer) in consumers.into_iter().enumerate() {
        // A consumer checks `stop` at least every step.
        let Ok(consumer) = tokio::time::timeout(STEP_DEADLINE * 2, consumer).await else {
            shared.problems.add(format!("consumer {i} did not stop"));
            continue;
        };
        let consumer = consumer.map_err(|e| format!("consumer {i}: {e}"))?;
        if i >= 2 {
            // The plain queue's consumers: claims whose outcome was unknown.
            in_doubt_claims += consumer.stats().in_doubt;
        }
    }
    Ok((in_doubt_claims, drained_in))
}

/// With a lock path: every acknowledged item completed exactly once; without, none
/// delivered twice, and no more missing than claims in doubt. Traces the counts.
fn judge(
    shared: &Shared,
    ledgers: &Ledgers,
    puts: u64,
    in_doubt_claims: u64,
    drained_in: Duration,
) {
    let problems = &shared.problems;
    let locked = std::mem::take(&mut *ledgers[0].lock().unwrap());
    let plain = std::mem::take(&mut *ledgers[1].lock().unwrap());
    for found in locked
        .locked_violations()
        .into_iter()
        .chain(plain.plain_violations(in_doubt_claims))
    {
        problems.add(found.to_string());
    }
    let missing = plain.missing();
    let redelivered = locked.redeliveries();
    shared.world.trace(&format!(
        "queues: puts {} (acked {}+{}, in doubt {}+{}), takes {}, locked redeliveries {redelivered}, completes in doubt {}, plain claims in doubt {in_doubt_claims}, missing {missing}, drained in {} ms, violations {}",
        2 * puts,
        locked.puts_acked(),
        plain.puts_acked(),
        locked.puts_in_doubt(),
        plain.puts_in_doubt(),
        shared.takes.load(Ordering::Relaxed),
        locked.completions_in_doubt(),
        drained_in.as_millis(),
        problems.len()
    ));
}
