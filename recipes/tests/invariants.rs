//! Invariants under faults (Jepsen style) for watches and sessions: a 3-node ensemble, several
//! sessions, random member kills, leader kills and pauses (shorter and longer than the
//! session timeout, and of two members at once: quorum lost) drawn from a printed seed, and a
//! checker of what every participant saw. Each test prints one summary line and fails on any
//! violation.
//!
//! Short by default (CI); `ZKR_FAULT_SECS=1800 cargo test -p zkrs-recipes --test invariants
//! -- --nocapture` runs the long form, `ZKR_FAULT_SEED=<n>` replays a schedule.

#[path = "support/beliefs.rs"]
mod beliefs;
mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

use beliefs::{finish, Rig};
use support::within;
use zkrs_client::{AddWatchMode, Client, CreateMode, EventType};
use zkrs_recipes::cache::{PersistentWatcher, PersistentWatcherEvent};
use zkrs_sim_suites::sessions;
use zkrs_testkit::faults::fault_duration_from_env;

/// Creates per bucket in the sessions suite: each session creates into a bucket of its own and
/// moves to a new one every `BUCKET` ids, checking and removing the one it leaves. A listing
/// stays far below the 1 MiB frame limit (a 30-minute run creates some two million nodes; in
/// one directory, its listing would be refused as too large a frame), and the members' data
/// stays small.
const BUCKET: u64 = 1_000;

/// How long the faults last: `ZKR_FAULT_SECS`, 25 s by default.
fn fault_time() -> Duration {
    fault_duration_from_env(Duration::from_secs(25))
}

/// Waits for the connection to come back (or a new session), briefly.
async fn settle(client: &Client) {
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        let mut states = client.state_changes();
        while !client.state().is_connected() {
            if states.next().await.is_none() {
                return;
            }
        }
    })
    .await;
}

fn value_of(data: &[u8]) -> u64 {
    std::str::from_utf8(data)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A writer bumps a counter node; a persistent recursive watcher and a one-shot re-arming
/// watcher (each on its own session) read the node on every event. Neither may ever see
/// its version go backwards, and both must end on the final value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches() {
    let rig = Rig::start().await;
    let (writer, a, b) = (rig.client().await, rig.client().await, rig.client().await);
    writer
        .create("/inv-w", b"", CreateMode::Persistent)
        .await
        .unwrap();
    writer
        .create("/inv-w/counter", b"0", CreateMode::Persistent)
        .await
        .unwrap();
    let violations = Arc::new(Mutex::new(Vec::<String>::new()));
    let done = Arc::new(AtomicBool::new(false));
    let final_value = Arc::new(AtomicU64::new(u64::MAX));

    // Watcher A: one persistent recursive watch, kept across session loss.
    let a_seen = Arc::new(Mutex::new(Vec::<(i32, u64)>::new()));
    let watcher_a = {
        let (seen, violations, done, final_value) = (
            a_seen.clone(),
            violations.clone(),
            done.clone(),
            final_value.clone(),
        );
        tokio::spawn(async move {
            let mut watcher =
                PersistentWatcher::builder(&a, "/inv-w", AddWatchMode::PersistentRecursive)
                    .start()
                    .unwrap();
            loop {
                let read = match watcher.next().await {
                    Some(PersistentWatcherEvent::Event(e))
                        if e.event_type == EventType::NodeDataChanged =>
                    {
                        true
                    }
                    Some(PersistentWatcherEvent::Reset)
                    | Some(PersistentWatcherEvent::Lagged { .. }) => true,
                    Some(PersistentWatcherEvent::Failed(e)) => panic!("watcher A failed: {e}"),
                    Some(_) => false,
                    None => return,
                };
                if !read {
                    continue;
                }
                if let Ok((data, stat)) = a.get_data("/inv-w/counter").await {
                    let mut seen = seen.lock().unwrap();
                    if let Some(&(last, _)) = seen.last() {
                        if stat.version < last {
                            violations
                                .lock()
                                .unwrap()
                                .push(format!("A saw version {} after {last}", stat.version));
                        }
                    }
                    let v = value_of(&data);
                    seen.push((stat.version, v));
                    if done.load(Ordering::Relaxed) && v == final_value.load(Ordering::Relaxed) {
                        return;
                    }
                }
            }
        })
    };

    // Watcher B: a one-shot watch re-armed after every event.
    let b_seen = Arc::new(Mutex::new(Vec::<(i32, u64)>::new()));
    let watcher_b = {
        let (seen, violations, done, final_value) = (
            b_seen.clone(),
            violations.clone(),
            done.clone(),
            final_value.clone(),
        );
        tokio::spawn(async move {
            loop {
                match b.get_data_and_watch("/inv-w/counter").await {
                    Ok((data, stat, watch)) => {
                        let v = value_of(&data);
                        {
                            let mut seen = seen.lock().unwrap();
                            if let Some(&(last, _)) = seen.last() {
                                if stat.version < last {
                                    violations.lock().unwrap().push(format!(
                                        "B saw version {} after {last}",
                                        stat.version
                                    ));
                                }
                            }
                            seen.push((stat.version, v));
                        }
                        if done.load(Ordering::Relaxed) && v == final_value.load(Ordering::Relaxed)
                        {
                            return;
                        }
                        // The event, or a session event (then re-arm on the new session).
                        let _ = tokio::time::timeout(Duration::from_secs(2), watch).await;
                    }
                    Err(e) if e.is_retryable() || e.is_session_expired() => settle(&b).await,
                    Err(e) => panic!("watcher B: {e}"),
                }
            }
        })
    };

    // The writer, through the faults.
    let started = Instant::now();
    let faults = rig.faults(25);
    let seed = faults.seed();
    println!("fault schedule seed={seed} (replay with ZKR_FAULT_SEED={seed})");
    let mut value = 0u64;
    let mut attempts = 0u64;
    let write = |value: u64| {
        let writer = writer.clone();
        async move {
            loop {
                match writer
                    .set_data("/inv-w/counter", value.to_string().as_bytes(), None)
                    .await
                {
                    Ok(_) => return,
                    Err(e) if e.is_retryable() || e.is_session_expired() => {
                        // Maybe applied: read back rather than write twice.
                        settle(&writer).await;
                        if let Ok((data, _)) = writer.get_data("/inv-w/counter").await {
                            if value_of(&data) == value {
                                return;
                            }
                        }
                    }
                    Err(e) => panic!("writer: {e}"),
                }
            }
        }
    };
    while started.elapsed() < fault_time() {
        value += 1;
        attempts += 1;
        within("a write", write(value)).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let injected = finish(faults).await;
    value += 1;
    final_value.store(value, Ordering::Relaxed);
    done.store(true, Ordering::Relaxed);
    within("the final write", write(value)).await;

    // After the faults: both watchers end on the final value, within a bound.
    let settled = Instant::now();
    let converged = tokio::time::timeout(Duration::from_secs(30), async {
        watcher_a.await.unwrap();
        watcher_b.await.unwrap();
    })
    .await;
    let mut violations = violations.lock().unwrap().clone();
    if converged.is_err() {
        violations.push(format!(
            "watchers did not reach the final value {value} within 30 s (A last {:?}, B last {:?})",
            a_seen.lock().unwrap().last(),
            b_seen.lock().unwrap().last()
        ));
    }
    let (a_reads, b_reads) = (a_seen.lock().unwrap().len(), b_seen.lock().unwrap().len());
    println!(
        "suite=watches seed={seed} duration={:.0}s faults={} operations={} (writes {attempts}+1, reads A {a_reads}, B {b_reads}) converged_in={:.1}s violations={}",
        started.elapsed().as_secs_f32(),
        injected.len(),
        attempts + 1 + a_reads as u64 + b_reads as u64,
        settled.elapsed().as_secs_f32(),
        violations.len()
    );
    for record in &injected {
        println!("  fault: {}", record.fault);
    }
    assert!(violations.is_empty(), "seed {seed}: {violations:#?}");
}

/// Several sessions issue sequential creates and reads (listings of the bucket they create
/// into) through the faults. No request may hang past its deadline, every request ends Ok
/// or with an error, and no create is applied twice: every id appears at most once on the
/// server, and every acknowledged one exactly once (each bucket checked when its session
/// moves on, then removed; see `zkrs_sim_suites::sessions::worker`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions() {
    let rig = Rig::start().await;
    let admin = rig.client().await;
    admin
        .create("/inv-s", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let hung = Arc::new(Mutex::new(Vec::<String>::new()));
    let started = Instant::now();
    let faults = rig.faults(25);
    let seed = faults.seed();
    println!("fault schedule seed={seed} (replay with ZKR_FAULT_SEED={seed})");
    let mut workers = Vec::new();
    for k in 0..4 {
        let client = rig.client().await;
        // The simulation's sessions worker: one copy of the loop and the bucket check.
        workers.push(tokio::spawn(sessions::worker(
            k,
            client,
            stop.clone(),
            BUCKET,
            Duration::ZERO,
            hung.clone(),
        )));
    }
    let injected = finish(faults).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = sessions::Tally::default();
    for w in workers {
        let tally = within("a worker to check its last bucket", w)
            .await
            .unwrap();
        all.add(&tally);
    }
    // The hangs and the bucket checks' violations, in the order found.
    let violations = hung.lock().unwrap().clone();
    let sessions::Tally {
        ok,
        failed,
        acked,
        nodes,
        buckets,
        ..
    } = all;
    println!(
        "suite=sessions seed={seed} duration={:.0}s faults={} operations={} (ok {ok}, errors {failed}, creates acknowledged {acked}, nodes {nodes} in {buckets} buckets) violations={}",
        started.elapsed().as_secs_f32(),
        injected.len(),
        ok + failed,
        violations.len()
    );
    for record in &injected {
        println!("  fault: {}", record.fault);
    }
    assert!(violations.is_empty(), "seed {seed}: {violations:#?}");
}
