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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

use beliefs::{finish, print_faults, Rig, SERIAL};
use support::tree::{fresh_read, Rng};
use zkrs_client::{Client, CreateMode};
use zkrs_recipes::cache::{CuratorCache, PathChildrenCache, StartMode, TreeCache};
use zkrs_recipes::queue::QueueConsumer;
use zkrs_sim::check::tree::{cache_checks, try_converge, CacheCheck, OnReadError};
// The queue layout and the ledger's accounting are the simulation's: one copy.
use zkrs_sim::check::ledger::Ledger;
use zkrs_sim_suites::data::{settle_briefly as settle, trouble};
use zkrs_sim_suites::queues::{left_in_queues, queue, QUEUES};
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
    let curator = CuratorCache::builder(&c1, "/inv-c").start().unwrap();
    let tree = TreeCache::builder(&c2, "/inv-c").start().unwrap();
    let children = PathChildrenCache::builder(&c3, "/inv-c")
        .start_mode(StartMode::BuildInitialCache)
        .start()
        .unwrap();
    children.initialized().await.unwrap();

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
    for CacheCheck {
        name,
        max_depth: depth,
        with_root,
        view,
        ..
    } in cache_checks(&curator, &tree, &children)
    {
        // Panics on a failed read, as every read after the faults should succeed.
        let converged = try_converge(
            &writer,
            "/inv-c",
            depth,
            with_root,
            CONVERGE,
            OnReadError::Panic,
            view,
        );
        match converged.await {
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
        ledger.lock().unwrap().record_delivery(id);
        if locked {
            match tokio::time::timeout(STEP_DEADLINE, message.complete()).await {
                Err(_) => {
                    hangs.record(
                        format!("completing item {id} hung past {STEP_DEADLINE:?}"),
                        &client,
                    );
                    ledger.lock().unwrap().record_completion_in_doubt(id);
                }
                Ok(Ok(())) => ledger.lock().unwrap().record_completion(id),
                Ok(Err(e)) if trouble(&e) => {
                    ledger.lock().unwrap().record_completion_in_doubt(id);
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
    let queues = QUEUES;
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
                Err(zkrs_client::Error::new(
                    zkrs_client::ErrorKind::ConnectionLoss,
                    "",
                ))
            });
            match put {
                Ok(_) => ledger.lock().unwrap().record_put(next),
                Err(e) if trouble(&e) => {
                    // Not retried: a retry would be a second item with the same id.
                    ledger.lock().unwrap().record_put_in_doubt(next);
                    settle(&producer).await;
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
        while left_in_queues(&producer).await > 0 {
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

    // With a lock path: every acknowledged item completed exactly once; without, none
    // delivered twice, and no more missing than claims in doubt.
    let locked = ledgers[0].lock().unwrap();
    let plain = ledgers[1].lock().unwrap();
    violations.extend(locked.locked_violations().iter().map(ToString::to_string));
    violations.extend(
        plain
            .plain_violations(in_doubt_claims)
            .iter()
            .map(ToString::to_string),
    );
    let missing = plain.missing();
    let redelivered = locked.redeliveries();
    println!(
        "suite=queues seed={seed} duration={:.0}s faults={} operations={} (puts {} acked {}+{} in doubt {}+{}, takes {}, locked redeliveries {redelivered}, completes in doubt {}, plain claims in doubt {in_doubt_claims} missing {missing}) drained_in={:.1}s violations={}",
        started.elapsed().as_secs_f32(),
        injected.len(),
        2 * next + takes.load(Ordering::Relaxed),
        2 * next,
        locked.puts_acked(),
        plain.puts_acked(),
        locked.puts_in_doubt(),
        plain.puts_in_doubt(),
        takes.load(Ordering::Relaxed),
        locked.completions_in_doubt(),
        settled.elapsed().as_secs_f32(),
        violations.len()
    );
    print_faults(&injected, hangs.since);
    assert!(violations.is_empty(), "seed {seed}: {violations:#?}");
}
