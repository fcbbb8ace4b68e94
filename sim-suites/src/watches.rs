//! The `watches` suite, as `recipes/tests/invariants.rs` (`watches`) runs it against real
//! servers: a writer bumps a counter node through the faults; a persistent recursive
//! watcher (A) and a one-shot watch re-armed after every event (B), each on a session of its
//! own, read the node on every event. Violations: a watcher that sees the node's version go
//! backwards, a write not done within 30 s, a watcher that has not read the final value 30 s
//! after the last write (made once the faults have healed), and an error either side does
//! not expect.
//!
//! And abandoned one-shot watches, as `client/tests/abandoned_watches.rs` measures them
//! against a real server: participant C, on a session of its own, leaves a one-shot watch on
//! a node that never changes and drops it (every fourth call cut short after its request
//! went out), through the faults and `ABANDONED_AFTER` times after the last write. At the
//! end, with none of them live, its client may hold at most `ABANDONED_BOUND` one-shot
//! watches: abandoned ones are forgotten, not kept until they fire.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{AddWatchMode, Client, EventType};
use zkrs_recipes::cache::{PersistentWatcher, PersistentWatcherEvent};

use crate::data::{healed_flag, make_node, settle_briefly, trouble, Problems};
use crate::participant::{connect, STEP_DEADLINE};
use zkrs_sim::World;

const DIR: &str = "/inv-w";
const COUNTER: &str = "/inv-w/counter";
/// The node participant C leaves its watches on: never changed.
const STABLE: &str = "/inv-w/stable";

/// Watches participant C leaves and drops once the last write is made (no fault then, so
/// none is forgotten by a session's loss).
const ABANDONED_AFTER: u64 = 400;

/// The most one-shot watches C's client may hold at the end, none of them live: the driver
/// sweeps abandoned ones whenever its watches double since the last sweep, from 64.
const ABANDONED_BOUND: usize = 128;

/// Once the last write is acknowledged, how long the watchers may take to read it.
const CONVERGE: Duration = Duration::from_secs(30);

fn value_of(data: &[u8]) -> u64 {
    std::str::from_utf8(data)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// What the watchers share.
struct Shared {
    world: World,
    problems: Problems,
    /// The last write is made: a watcher that reads `final_value` is done.
    done: AtomicBool,
    final_value: AtomicU64,
}

/// What one watcher read, in order: (version, value).
type Seen = Arc<Mutex<Vec<(i32, u64)>>>;

impl Shared {
    /// Records a read by watcher `who`; whether it was the final value.
    fn read(&self, who: &str, seen: &Seen, version: i32, value: u64) -> bool {
        let mut seen = seen.lock().unwrap();
        if let Some(&(last, _)) = seen.last() {
            if version < last {
                self.problems
                    .add(format!("{who} saw version {version} after {last}"));
            }
        }
        seen.push((version, value));
        self.done.load(Ordering::Relaxed) && value == self.final_value.load(Ordering::Relaxed)
    }
}

/// Watcher A: one persistent recursive watch, kept across session loss.
async fn watcher_a(client: Client, shared: Arc<Shared>, seen: Seen) {
    let mut watcher = PersistentWatcher::builder(&client, DIR, AddWatchMode::PersistentRecursive)
        .start()
        .expect("the suite's path is valid");
    loop {
        let read = match watcher.next().await {
            Some(PersistentWatcherEvent::Event(e)) => e.event_type == EventType::NodeDataChanged,
            Some(PersistentWatcherEvent::Reset) => {
                shared.world.trace("A: watch reset");
                true
            }
            Some(PersistentWatcherEvent::Lagged { .. }) => true,
            Some(PersistentWatcherEvent::Failed(e)) => {
                shared.problems.add(format!("watcher A failed: {e}"));
                return;
            }
            Some(_) => false,
            None => return,
        };
        if !read {
            continue;
        }
        if let Ok((data, stat)) = client.get_data(COUNTER).await {
            if shared.read("A", &seen, stat.version, value_of(&data)) {
                shared.world.trace("A: read the final value");
                return;
            }
        }
    }
}

/// Watcher B: a one-shot watch re-armed after every event.
async fn watcher_b(client: Client, shared: Arc<Shared>, seen: Seen) {
    loop {
        match client.get_data_and_watch(COUNTER).await {
            Ok((data, stat, watch)) => {
                if shared.read("B", &seen, stat.version, value_of(&data)) {
                    shared.world.trace("B: read the final value");
                    return;
                }
                // The event, or a session event (then re-arm on the new session).
                let _ = tokio::time::timeout(Duration::from_secs(2), watch).await;
            }
            Err(e) if trouble(&e) => settle_briefly(&client).await,
            Err(e) => {
                shared.problems.add(format!("watcher B: {e}"));
                return;
            }
        }
    }
}

/// Participant C: leaves one-shot watches on [`STABLE`] and drops them, until
/// [`ABANDONED_AFTER`] calls after the last write; then checks how many its client holds.
async fn abandoner(client: Client, shared: Arc<Shared>) {
    let (mut calls, mut after) = (0u64, 0u64);
    while after < ABANDONED_AFTER {
        if shared.done.load(Ordering::Relaxed) {
            after += 1;
        }
        calls += 1;
        if calls % 4 == 0 {
            // Cut short after its request went out: its watch is made when the reply
            // comes, and nobody will read it.
            let _ = tokio::time::timeout(Duration::ZERO, client.exists_and_watch(STABLE)).await;
        } else {
            match client.get_data_and_watch(STABLE).await {
                Ok((_, _, watch)) => drop(watch),
                Err(e) if trouble(&e) => settle_briefly(&client).await,
                Err(e) => {
                    shared.problems.add(format!("participant C: {e}"));
                    return;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The cut-short calls' replies come first (a session answers in order).
    while let Err(e) = client.get_data(STABLE).await {
        if !trouble(&e) {
            shared.problems.add(format!("participant C: {e}"));
            return;
        }
        settle_briefly(&client).await;
    }
    let held = zkrs_client::__private::one_shot_watches(&client).await;
    shared.world.trace(&format!(
        "C: {calls} one-shot watches left and dropped, the client holds {held:?}"
    ));
    match held {
        Some(n) if n <= ABANDONED_BOUND => {}
        Some(n) => shared.problems.add(format!(
            "participant C's client holds {n} one-shot watches after {calls} left and dropped, \
             none live (at most {ABANDONED_BOUND}): abandoned watches are kept"
        )),
        None => shared
            .problems
            .add("participant C's client is gone".to_string()),
    }
}

/// Writes `value` once: on connection trouble, reads back rather than write twice.
async fn write(writer: &Client, value: u64) -> Result<(), String> {
    loop {
        match writer
            .set_data(COUNTER, value.to_string().as_bytes(), None)
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if trouble(&e) => {
                // Maybe applied: read back rather than write twice.
                settle_briefly(writer).await;
                if let Ok((data, _)) = writer.get_data(COUNTER).await {
                    if value_of(&data) == value {
                        return Ok(());
                    }
                }
            }
            Err(e) => return Err(format!("writer: {e}")),
        }
    }
}

/// Runs the suite in `world`; `Err` lists every violation.
pub async fn run(world: World) -> Result<(), String> {
    let (writer, a, b) = (
        connect(&world).await?,
        connect(&world).await?,
        connect(&world).await?,
    );
    make_node(&writer, DIR, b"").await?;
    make_node(&writer, COUNTER, b"0").await?;
    make_node(&writer, STABLE, b"").await?;
    let c = connect(&world).await?;
    let shared = Arc::new(Shared {
        world: world.clone(),
        problems: Problems::new(&world),
        done: AtomicBool::new(false),
        final_value: AtomicU64::new(u64::MAX),
    });
    let (a_seen, b_seen): (Seen, Seen) = Default::default();
    let task_a = tokio::spawn(watcher_a(a.clone(), shared.clone(), a_seen.clone()));
    let task_b = tokio::spawn(watcher_b(b.clone(), shared.clone(), b_seen.clone()));
    let task_c = tokio::spawn(abandoner(c.clone(), shared.clone()));

    // The writer, through the faults (until they have healed).
    let healed = healed_flag(&world);
    let mut value = 0u64;
    while !healed.load(Ordering::Relaxed) {
        value += 1;
        match tokio::time::timeout(STEP_DEADLINE, write(&writer, value)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                shared.problems.add(e);
                return shared.problems.verdict();
            }
            Err(_) => {
                shared
                    .problems
                    .add(format!("writing {value} not done within {STEP_DEADLINE:?}"));
                return shared.problems.verdict();
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    world.trace(&format!("healed after {value} writes"));
    value += 1;
    shared.final_value.store(value, Ordering::Relaxed);
    shared.done.store(true, Ordering::Relaxed);
    match tokio::time::timeout(STEP_DEADLINE, write(&writer, value)).await {
        Ok(Ok(())) => world.trace(&format!("final write {value} acknowledged")),
        Ok(Err(e)) => shared.problems.add(e),
        Err(_) => shared
            .problems
            .add(format!("the final write not done within {STEP_DEADLINE:?}")),
    }

    // After the faults: both watchers end on the final value, within a bound.
    let settled = Instant::now();
    let converged = tokio::time::timeout(CONVERGE, async {
        let _ = task_a.await;
        let _ = task_b.await;
    })
    .await;
    // C's calls after the last write take about 20 s (each 50 ms apart).
    if tokio::time::timeout(STEP_DEADLINE, task_c).await.is_err() {
        shared.problems.add(format!(
            "participant C did not finish within {STEP_DEADLINE:?} of the last write"
        ));
    }
    if converged.is_err() {
        shared.problems.add(format!(
            "watchers did not reach the final value {value} within {CONVERGE:?} (A last {:?}, B last {:?})",
            a_seen.lock().unwrap().last(),
            b_seen.lock().unwrap().last()
        ));
    }
    let (a_reads, b_reads) = (a_seen.lock().unwrap().len(), b_seen.lock().unwrap().len());
    world.trace(&format!(
        "watches: writes {value}, reads A {a_reads}, B {b_reads}, converged in {} ms",
        settled.elapsed().as_millis()
    ));
    for c in [writer, a, b, c] {
        let _ = c.close().await;
    }
    shared.problems.verdict()
}
