//! Invariants under faults (Jepsen style) for the recipes that hold data: caches and queues,
//! on a 3-node ensemble behind a proxy per member, with the test kit's fault schedule (member
//! kills and pauses, leader kills, black holes, resets, cuts, latency) drawn from a printed
//! seed. Each test prints one summary line and fails on any violation.
//! - caches: a writer makes random changes through the faults; once they stop, a
//!   `CuratorCache`, a `TreeCache` and a `PathChildrenCache` (each on a session of its own)
//!   equal a fresh read of the tree within a bound;
//! - queues: a producer puts numbered items into a queue with a lock path and one without,
//!   consumers on two other sessions take them through the faults, then drain both. With a
//!   lock path every item whose put was acknowledged is completed exactly once (never twice;
//!   never lost, unless a completion's reply was lost and so its outcome unknown); without,
//!   no item is delivered twice, and the items never delivered are no more than the claims
//!   whose outcome was unknown (at most once).
//!
//! Short by default (CI); `ZKR_FAULT_SECS=1800 cargo test -p zkrs-recipes --test
//! invariants_data -- --nocapture --test-threads 1` runs the long form (`scripts/faults.sh`),
//! `ZKR_FAULT_SEED=<n>` replays a schedule.

#[path = "support/beliefs.rs"]
mod beliefs;
mod support;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

use beliefs::{finish, print_faults, Rig, SERIAL};
use support::tree::{fresh_read, try_converge, view_of, Rng};
use zkrs_client::{Client, CreateMode, ErrorCode};
use zkrs_recipes::cache::{CuratorCache, PathChildrenCache, StartMode, TreeCache};
use zkrs_recipes::queue::{DistributedQueue, QueueConsumer};
use zkrs_testkit::faults::fault_duration_from_env;

/// How long the faults last: `ZKR_FAULT_SECS`, 25 s by default.
fn fault_time() -> Duration {
    fault_duration_from_env(Duration::from_secs(25))
}

/// Once the faults stop, how long a cache may take to equal the server.
const CONVERGE: Duration = Duration::from_secs(30);

/// Once the faults stop, how long the consumers may take to drain the queues.
const DRAIN: Duration = Duration::from_secs(60);

/// No single step (a put, a take with its own 300 ms timeout, a completion) may take longer:
/// one that does is a hang, counted as a violation (and the run goes on).
const STEP_DEADLINE: Duration = Duration::from_secs(30);

/// Whether `e` is connection trouble (the outcome of a write unknown), not a refusal.
fn trouble(e: &zkrs_client::Error) -> bool {
    e.is_retryable() || e.code() == ErrorCode::SessionExpired
}

/// Waits briefly for the connection to come back.
async fn settle(client: &Client) {
    let _ = tokio::time::timeout(
        Duration::from_millis(500),
        zkrs_recipes::framework::wait_connected(client),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caches() {
    let _serial = SERIAL.lock().await;
    let rig = Rig::start().await;
    let writer = rig.client().await;
    writer
        .create("/inv-c", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let (c1, c2, c3) = (rig.client().await, rig.client().await, rig.client().await);
    let curator = CuratorCache::new(&c1, "/inv-c");
    curator.start().unwrap();
    let tree = TreeCache::new(&c2, "/inv-c");
    tree.start().unwrap();
    let children = PathChildrenCache::new(&c3, "/inv-c");
    children.start(StartMode::BuildInitialCache).await.unwrap();

    let started = Instant::now();
    let faults = rig.faults(25);
    let seed = faults.seed();
    println!("fault schedule seed={seed} (replay with ZKR_FAULT_SEED={seed})");
    let mut rng = Rng::new(seed);
    let (mut changes, mut refused) = (0u64, 0u64);
    while started.elapsed() < fault_time() {
        match support::tree::random_change(&writer, "/inv-c", &mut rng).await {
            Ok(()) => changes += 1,
            Err(e) if trouble(&e) => {
                refused += 1;
                settle(&writer).await;
            }
            Err(e) => panic!("writer: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let injected = finish(faults).await;

    // After the faults: every cache equals a fresh read, within the bound.
    let settled = Instant::now();
    let mut violations = Vec::new();
    let mut slowest = Duration::ZERO;
    let checks: [CacheCheck; 3] = [
        (
            "CuratorCache",
            usize::MAX,
            true,
            Box::new(|| view_of(&curator.snapshot())),
        ),
        (
            "TreeCache",
            usize::MAX,
            true,
            Box::new(|| view_of(&tree.snapshot())),
        ),
        (
            "PathChildrenCache",
            1,
            false,
            Box::new(|| view_of(&children.snapshot())),
        ),
    ];
    for (name, depth, with_root, view) in checks {
        match try_converge(&writer, "/inv-c", depth, with_root, CONVERGE, view).await {
            Ok(took) => slowest = slowest.max(took),
            Err(diff) => violations.push(format!(
                "{name} differs from the server {CONVERGE:?} after the faults: {diff}"
            )),
        }
    }
    let nodes = fresh_read(&writer, "/inv-c", usize::MAX).await.len();
    println!(
        "suite=caches seed={seed} duration={:.0}s faults={} operations={} (changes {changes}, refused {refused}) nodes={nodes} converged_in={:.1}s violations={}",
        started.elapsed().as_secs_f32(),
        injected.len(),
        changes + refused,
        settled.elapsed().as_secs_f32().max(slowest.as_secs_f32()),
        violations.len()
    );
    print_faults(&injected, started);
    assert!(violations.is_empty(), "seed {seed}: {violations:#?}");
}

/// A cache to compare with the server: its name, the depth it follows, whether its view
/// holds the root, and its view.
type CacheCheck<'a> = (
    &'a str,
    usize,
    bool,
    Box<dyn Fn() -> support::tree::Tree + 'a>,
);

/// Steps that hung, each with when it was noticed, the client's state and every member's
/// mode then (to tell a client that stopped from an ensemble that did).
#[derive(Clone)]
struct Hangs {
    list: Arc<Mutex<Vec<String>>>,
    since: Instant,
    cluster: Arc<zkrs_testkit::TestingCluster>,
}

impl Hangs {
    fn record(&self, what: String, client: &Client) {
        let modes: Vec<String> = tokio::task::block_in_place(|| {
            (0..self.cluster.len())
                .map(|i| {
                    let address = self.cluster.member_address(i);
                    match zkrs_testkit::server_mode(address, Duration::from_millis(500)) {
                        Ok(Some(mode)) => format!("{mode:?}"),
                        Ok(None) => "not serving".to_string(),
                        Err(_) => "no answer".to_string(),
                    }
                })
                .collect()
        });
        self.list.lock().unwrap().push(format!(
            "{what} (noticed at {:.1}s; client {:?}, session {:#x}; members {modes:?})",
            self.since.elapsed().as_secs_f32(),
            client.state(),
            client.session_id()
        ));
    }
}

/// What happened to the items of one queue.
#[derive(Default)]
struct Ledger {
    /// Items whose put was acknowledged.
    acked: BTreeSet<u64>,
    /// Items whose put's outcome is unknown (its reply lost).
    put_in_doubt: BTreeSet<u64>,
    /// Deliveries per item (take returned it).
    delivered: HashMap<u64, u32>,
    /// Completions acknowledged per item (lock path only).
    completed: HashMap<u64, u32>,
    /// Items whose completion's outcome is unknown (lock path only).
    complete_in_doubt: BTreeSet<u64>,
}

/// One consumer: takes and (with a lock path) completes until `stop`.
async fn consume(
    mut consumer: QueueConsumer,
    client: Client,
    locked: bool,
    ledger: Arc<Mutex<Ledger>>,
    stop: Arc<AtomicBool>,
    takes: Arc<AtomicU64>,
    hangs: Hangs,
) -> QueueConsumer {
    while !stop.load(Ordering::Relaxed) {
        let take = consumer.take_timeout(Duration::from_millis(300));
        let message = match tokio::time::timeout(STEP_DEADLINE, take).await {
            Err(_) => {
                let what = format!("a take with a 300 ms timeout hung past {STEP_DEADLINE:?}");
                hangs.record(what, &client);
                continue;
            }
            Ok(Ok(Some(m))) => m,
            Ok(Ok(None)) => continue,
            Ok(Err(e)) if trouble(&e) => {
                settle(&client).await;
                continue;
            }
            Ok(Err(e)) => panic!("take: {e}"),
        };
        takes.fetch_add(1, Ordering::Relaxed);
        let id: u64 = String::from_utf8_lossy(&message.items()[0])
            .parse()
            .expect("an item id");
        *ledger.lock().unwrap().delivered.entry(id).or_default() += 1;
        if locked {
            match tokio::time::timeout(STEP_DEADLINE, message.complete()).await {
                Err(_) => {
                    hangs.record(
                        format!("completing item {id} hung past {STEP_DEADLINE:?}"),
                        &client,
                    );
                    ledger.lock().unwrap().complete_in_doubt.insert(id);
                }
                Ok(Ok(())) => *ledger.lock().unwrap().completed.entry(id).or_default() += 1,
                Ok(Err(e)) if trouble(&e) => {
                    ledger.lock().unwrap().complete_in_doubt.insert(id);
                    settle(&client).await;
                }
                // Our lock is gone (session lost): someone else completes it.
                Ok(Err(_)) => {}
            }
        }
    }
    consumer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues() {
    let _serial = SERIAL.lock().await;
    let rig = Rig::start().await;
    let producer = rig.client().await;
    let (ca, cb) = (rig.client().await, rig.client().await);
    let queues = [
        ("/inv-q/locked", Some("/inv-q/locked-locks")),
        ("/inv-q/plain", None),
    ];
    let queue = |client: &Client, (path, lock): (&str, Option<&str>)| {
        let q = DistributedQueue::new(client, path);
        match lock {
            Some(lock) => q.with_lock_path(lock),
            None => q,
        }
    };
    let ledgers = [
        Arc::new(Mutex::new(Ledger::default())),
        Arc::new(Mutex::new(Ledger::default())),
    ];
    let stop = Arc::new(AtomicBool::new(false));
    let takes = Arc::new(AtomicU64::new(0));
    let hangs = Hangs {
        list: Arc::new(Mutex::new(Vec::new())),
        since: Instant::now(),
        cluster: rig.cluster.clone(),
    };
    let mut consumers = Vec::new();
    for (q, ledger) in queues.iter().zip(&ledgers) {
        for client in [&ca, &cb] {
            consumers.push(tokio::spawn(consume(
                queue(client, *q).consumer(),
                client.clone(),
                q.1.is_some(),
                ledger.clone(),
                stop.clone(),
                takes.clone(),
                hangs.clone(),
            )));
        }
    }

    let started = Instant::now();
    let faults = rig.faults(25);
    let seed = faults.seed();
    println!("fault schedule seed={seed} (replay with ZKR_FAULT_SEED={seed})");
    let producers = [queue(&producer, queues[0]), queue(&producer, queues[1])];
    let mut next = 0u64;
    while started.elapsed() < fault_time() {
        next += 1;
        for (q, ledger) in producers.iter().zip(&ledgers) {
            let put = tokio::time::timeout(STEP_DEADLINE, q.put(next.to_string())).await;
            let put = put.unwrap_or_else(|_| {
                let what = format!("putting item {next} hung past {STEP_DEADLINE:?}");
                hangs.record(what, &producer);
                Err(
                    <zkrs_client::Error as zkrs_client::__private::ErrorInternals>::connection_loss(
                    ),
                )
            });
            match put {
                Ok(_) => ledger.lock().unwrap().acked.insert(next),
                Err(e) if trouble(&e) => {
                    // Not retried: a retry would be a second item with the same id.
                    ledger.lock().unwrap().put_in_doubt.insert(next);
                    settle(&producer).await;
                    true
                }
                Err(e) => panic!("put: {e}"),
            };
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let injected = finish(faults).await;

    // After the faults: the consumers drain both queues (locks and all).
    let settled = Instant::now();
    let mut violations = Vec::new();
    let drained = tokio::time::timeout(DRAIN, async {
        loop {
            let mut left = 0;
            for (path, lock) in queues {
                for dir in [Some(path), lock].into_iter().flatten() {
                    left += match producer.get_children(dir).await {
                        Ok(c) => c.len(),
                        Err(e) if e.code() == ErrorCode::NoNode => 0,
                        Err(_) => 1,
                    };
                }
            }
            if left == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    if drained.is_err() {
        violations.push(format!(
            "the queues were not drained {DRAIN:?} after the faults"
        ));
    }
    stop.store(true, Ordering::Relaxed);
    let mut in_doubt_claims = 0;
    for (i, consumer) in consumers.into_iter().enumerate() {
        // A consumer checks `stop` at least every step.
        let Ok(consumer) = tokio::time::timeout(STEP_DEADLINE * 2, consumer).await else {
            violations.push(format!("consumer {i} did not stop"));
            continue;
        };
        if i >= 2 {
            // The plain queue's consumers: claims whose outcome was unknown.
            in_doubt_claims += consumer.unwrap().stats().in_doubt;
        }
    }
    violations.extend(hangs.list.lock().unwrap().iter().cloned());

    // With a lock path: every acknowledged item completed exactly once.
    let locked = ledgers[0].lock().unwrap();
    for (&id, &n) in &locked.completed {
        if n > 1 {
            violations.push(format!("locked queue: item {id} completed {n} times"));
        }
    }
    let lost: Vec<u64> = locked
        .acked
        .iter()
        .copied()
        .filter(|id| !locked.completed.contains_key(id) && !locked.complete_in_doubt.contains(id))
        .collect();
    if !lost.is_empty() {
        violations.push(format!(
            "locked queue: acknowledged items never completed: {lost:?}"
        ));
    }
    // Without: none delivered twice, and no more missing than claims in doubt.
    let plain = ledgers[1].lock().unwrap();
    for (&id, &n) in &plain.delivered {
        if n > 1 {
            violations.push(format!("plain queue: item {id} delivered {n} times"));
        }
    }
    let missing = plain
        .acked
        .iter()
        .filter(|id| !plain.delivered.contains_key(id))
        .count() as u64;
    if missing > in_doubt_claims {
        violations.push(format!(
            "plain queue: {missing} acknowledged items never delivered, only {in_doubt_claims} claims in doubt"
        ));
    }
    let redelivered: u32 = locked.delivered.values().map(|n| n - 1).sum();
    println!(
        "suite=queues seed={seed} duration={:.0}s faults={} operations={} (puts {} acked {}+{} in doubt {}+{}, takes {}, locked redeliveries {redelivered}, completes in doubt {}, plain claims in doubt {in_doubt_claims} missing {missing}) drained_in={:.1}s violations={}",
        started.elapsed().as_secs_f32(),
        injected.len(),
        2 * next + takes.load(Ordering::Relaxed),
        2 * next,
        locked.acked.len(),
        plain.acked.len(),
        locked.put_in_doubt.len(),
        plain.put_in_doubt.len(),
        takes.load(Ordering::Relaxed),
        locked.complete_in_doubt.len(),
        settled.elapsed().as_secs_f32(),
        violations.len()
    );
    print_faults(&injected, hangs.since);
    assert!(violations.is_empty(), "seed {seed}: {violations:#?}");
}
