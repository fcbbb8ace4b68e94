//! `bench lock|latch|semaphore` under contention: N sessions, each its own client, on one
//! mutex (one leader latch, one semaphore of one lease), each cycling acquire and release
//! (join, lead, leave) with no pause between.
//!
//! A hand-off is the time from one holder starting to let go (the call to `release`, or to
//! `close` of its latch) to the next holder's acquire (its wait for leadership) returning.
//! The semaphore's line forms on its mutex: the one that holds the mutex waits for the
//! lease, the others for the mutex.
//! Every contender runs in this process, so both ends are read on one clock. A chunk: the
//! first holder keeps the lock until every contender is in line (so memory can be measured
//! with the whole line waiting); the first hand-offs after that are a warm-up; then the
//! chunk's hand-offs are measured, their rate over the window from the last warm-up
//! acquisition to the last measured one; then the contenders still waiting are dropped
//! mid-wait (the recipes are cancel-safe). With Curator's side ([`super::bench_curator`]),
//! chunks of ours and of Curator's alternate on the same sessions.
//!
//! Memory per waiting session: this process's resident set (`VmRSS`) and its live heap (the
//! counting allocator zkctl installs), read before the sessions connect, once they are
//! connected, and once all of them are in line, each growth divided by the sessions.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio::task::JoinSet;
use zkrs_client::{Client, ErrorCode, ErrorKind, Result};
use zkrs_recipes::{
    leader::{CloseMode, LeaderLatch},
    lock::{InterProcessMutex, InterProcessSemaphoreV2, SEMAPHORE_LOCK_PARENT},
};

use crate::args::Globals;
use crate::commands::bench_timing::{Handoffs, Latencies, STUCK};
use crate::connection::{builder, close};
use crate::lab;
use crate::output::figure;
use crate::pipeline;

/// What the contenders hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recipe {
    /// An `InterProcessMutex`: acquire, release.
    Lock,
    /// A `LeaderLatch`: join, lead, close.
    Latch,
    /// An `InterProcessSemaphoreV2` of one lease: acquire a lease, return it.
    Semaphore,
}

impl Recipe {
    /// Curator's name for the loop (the Java side's argument).
    pub fn name(self) -> &'static str {
        match self {
            Recipe::Lock => "lock",
            Recipe::Latch => "latch",
            Recipe::Semaphore => "semaphore",
        }
    }

    /// Where its line forms: the folder whose children are the contenders in line.
    fn line(self, path: &str) -> String {
        match self {
            Recipe::Lock | Recipe::Latch => path.to_owned(),
            // The semaphore's mutex: the holder of the lease has let it go.
            Recipe::Semaphore => format!("{path}/{SEMAPHORE_LOCK_PARENT}"),
        }
    }

    /// How many are in that line once every contender waits behind the first holder.
    fn in_line(self, contenders: usize) -> usize {
        match self {
            Recipe::Lock | Recipe::Latch => contenders,
            Recipe::Semaphore => contenders - 1,
        }
    }
}

/// The hand-offs not measured after the line has formed: a fifth of the measured ones, at
/// least 10.
pub fn warmup(rounds: usize) -> usize {
    (rounds / 5).max(10)
}

/// The memory a line costs, per waiting session.
pub struct Memory {
    /// Growth of the resident set per session, connected and in line (`None`: no
    /// `/proc/self/status`).
    pub rss_per_waiter: Option<i64>,
    /// Growth of the live heap per session, once connected (where the heap is counted).
    pub heap_per_session: Option<i64>,
    /// Growth of the live heap per session, for its place in line (the recipe's wait).
    pub heap_per_waiter: Option<i64>,
}

impl Memory {
    /// `<prefix>rss_per_waiter_bytes` (when the resident set could be read),
    /// `<prefix>heap_per_session_bytes`, `<prefix>heap_per_waiter_bytes`.
    pub fn figures(&self, prefix: &str, out: &mut Vec<String>) {
        if let Some(rss) = self.rss_per_waiter {
            out.push(figure(
                &format!("{prefix}rss_per_waiter_bytes"),
                rss,
                "bytes",
            ));
        }
        if let Some(heap) = self.heap_per_session {
            out.push(figure(
                &format!("{prefix}heap_per_session_bytes"),
                heap,
                "bytes",
            ));
        }
        if let Some(heap) = self.heap_per_waiter {
            out.push(figure(
                &format!("{prefix}heap_per_waiter_bytes"),
                heap,
                "bytes",
            ));
        }
    }
}

/// Bytes live on the heap now, where the binary counts them (see [`crate::lab`]).
fn live_heap() -> Option<i64> {
    lab::get().live_heap_bytes.map(|f| f() as i64)
}

/// This process's resident set in bytes (`VmRSS` of `/proc/self/status`), where there is one.
fn resident_bytes() -> Option<i64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// What the contenders of one run share: one clock, the last release, the acquisitions so
/// far and the measured hand-offs. Only one contender holds at a time, so each acquisition
/// number is recorded by exactly one of them; the table is made before the clock runs.
struct Shared {
    base: Instant,
    warmup: usize,
    rounds: usize,
    /// When the last holder started to let go, nanoseconds after `base`.
    released_at: AtomicU64,
    /// Acquisitions so far: the first is no hand-off, the n-th after it is hand-off n.
    taken: AtomicUsize,
    window_start: AtomicU64,
    window_end: AtomicU64,
    table: Box<[AtomicU64]>,
    /// Opened once every contender is in line; the first holder waits for it.
    gate: Notify,
    /// Told when the last measured hand-off is in.
    done: Notify,
}

impl Shared {
    fn now(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }

    /// Records an acquisition; false once every measured hand-off is in (the holder then
    /// lets go and stops).
    async fn acquired(&self) -> bool {
        let now = self.now();
        let n = self.taken.fetch_add(1, Ordering::SeqCst);
        if n == 0 {
            self.gate.notified().await;
        }
        if n == self.warmup {
            self.window_start.store(now, Ordering::SeqCst);
        }
        let end = self.warmup + self.rounds;
        if n > self.warmup && n <= end {
            let released = self.released_at.load(Ordering::SeqCst);
            self.table[n - self.warmup - 1].store(now.saturating_sub(released), Ordering::SeqCst);
        }
        if n == end {
            self.window_end.store(now, Ordering::SeqCst);
            self.done.notify_one();
        }
        n < end
    }

    /// Called just before the holder's release (close) is sent.
    fn letting_go(&self) {
        self.released_at.store(self.now(), Ordering::SeqCst);
    }
}

async fn lock_contender(mutex: InterProcessMutex, shared: Arc<Shared>) -> Result<()> {
    loop {
        let guard = mutex.acquire().await?;
        let more = shared.acquired().await;
        shared.letting_go();
        guard.release().await?;
        if !more {
            return Ok(());
        }
    }
}

async fn latch_contender(
    client: Client,
    path: String,
    id: usize,
    shared: Arc<Shared>,
) -> Result<()> {
    for round in 0.. {
        let latch = LeaderLatch::builder(&client, &path)
            .id(format!("bench-{id}-{round}"))
            .start()?;
        latch.await_leadership().await?;
        let more = shared.acquired().await;
        shared.letting_go();
        latch.close_with(CloseMode::Silent).await?;
        if !more {
            break;
        }
    }
    Ok(())
}

async fn semaphore_contender(
    semaphore: InterProcessSemaphoreV2,
    shared: Arc<Shared>,
) -> Result<()> {
    loop {
        let lease = semaphore.acquire_one().await?;
        let more = shared.acquired().await;
        shared.letting_go();
        lease.release().await?;
        if !more {
            return Ok(());
        }
    }
}

fn stuck(what: String) -> zkrs_client::Error {
    zkrs_client::Error::new(ErrorKind::Timeout, format!("stuck waiting for {what}"))
}

/// Polls the children of `path` until there are `n` (every contender in line), failing
/// when their number stops changing for [`STUCK`] (1,000 sessions on a busy machine
/// take a while, but they keep coming).
async fn until_in_line(admin: &Client, path: &str, n: usize) -> Result<()> {
    let (mut seen, mut since) = (usize::MAX, Instant::now());
    loop {
        let now = match admin.get_children(path).await {
            Ok(children) => children.len(),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => 0,
            Err(e) => return Err(e),
        };
        if now >= n {
            return Ok(());
        }
        if now != seen {
            (seen, since) = (now, Instant::now());
        } else if since.elapsed() > STUCK {
            return Err(stuck(format!("{n} contenders in line ({now} are)")));
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// `n` new sessions contending on `recipe` at `path`, for one chunk after another.
pub struct Contenders {
    recipe: Recipe,
    path: String,
    clients: Vec<Client>,
    /// One mutex per contender (lock), kept across chunks.
    mutexes: Vec<InterProcessMutex>,
    semaphores: Vec<InterProcessSemaphoreV2>,
    /// The resident set and live heap before the sessions connected, and the live heap once
    /// they had.
    rss_before: Option<i64>,
    heap_before: Option<i64>,
    heap_connected: Option<i64>,
}

impl Contenders {
    /// Connects `n` sessions.
    pub async fn connect(g: &Globals, recipe: Recipe, path: &str, n: usize) -> Result<Contenders> {
        let (rss_before, heap_before) = (resident_bytes(), live_heap());
        let clients: Vec<Client> = pipeline::all((0..n).map(|_| builder(g).connect()))
            .await
            .into_iter()
            .collect::<Result<_>>()?;
        let heap_connected = live_heap();
        let mutexes = match recipe {
            Recipe::Lock => clients
                .iter()
                .map(|c| InterProcessMutex::builder(c, path).build())
                .collect::<Result<_>>()?,
            Recipe::Latch | Recipe::Semaphore => Vec::new(),
        };
        let semaphores = match recipe {
            Recipe::Semaphore => clients
                .iter()
                .map(|c| InterProcessSemaphoreV2::builder(c, path, 1).build())
                .collect::<Result<_>>()?,
            Recipe::Lock | Recipe::Latch => Vec::new(),
        };
        Ok(Contenders {
            recipe,
            path: path.to_owned(),
            clients,
            mutexes,
            semaphores,
            rss_before,
            heap_before,
            heap_connected,
        })
    }

    /// One chunk: `warmup` hand-offs, then `rounds` measured; and the memory read with the
    /// whole line waiting.
    pub async fn chunk(
        &self,
        admin: &Client,
        warmup: usize,
        rounds: usize,
    ) -> Result<(Handoffs, Memory)> {
        let shared = Arc::new(Shared {
            base: Instant::now(),
            warmup,
            rounds,
            released_at: AtomicU64::new(0),
            taken: AtomicUsize::new(0),
            window_start: AtomicU64::new(0),
            window_end: AtomicU64::new(0),
            table: (0..rounds).map(|_| AtomicU64::new(0)).collect(),
            gate: Notify::new(),
            done: Notify::new(),
        });
        let mut tasks = JoinSet::new();
        for (id, client) in self.clients.iter().enumerate() {
            let shared = shared.clone();
            match self.recipe {
                Recipe::Lock => {
                    tasks.spawn(lock_contender(self.mutexes[id].clone(), shared));
                }
                Recipe::Semaphore => {
                    tasks.spawn(semaphore_contender(self.semaphores[id].clone(), shared));
                }
                Recipe::Latch => {
                    tasks.spawn(latch_contender(
                        client.clone(),
                        self.path.clone(),
                        id,
                        shared,
                    ));
                }
            }
        }
        let n = self.clients.len();
        let line = (self.recipe.line(&self.path), self.recipe.in_line(n));
        let result = measure(admin, &line.0, line.1, &shared, &mut tasks).await;
        // The waiting contenders are dropped mid-wait (the recipes are cancel-safe: their
        // nodes go).
        tasks.shutdown().await;
        let (window, rss_in_line, heap_in_line) = result?;
        let per = |grown: i64| grown / n as i64;
        let handoffs = Handoffs {
            latencies: Latencies::new(
                shared
                    .table
                    .iter()
                    .map(|l| l.load(Ordering::SeqCst))
                    .collect(),
            ),
            window,
        };
        let memory = Memory {
            rss_per_waiter: self
                .rss_before
                .zip(rss_in_line)
                .map(|(before, after)| per(after - before)),
            heap_per_session: self
                .heap_connected
                .zip(self.heap_before)
                .map(|(after, before)| per(after - before)),
            heap_per_waiter: heap_in_line
                .zip(self.heap_connected)
                .map(|(after, before)| per(after - before)),
        };
        Ok((handoffs, memory))
    }

    /// Closes the sessions (which deletes whatever they left).
    pub async fn close(self) {
        pipeline::all(self.clients.iter().map(close)).await;
    }
}

/// `n` new sessions on `recipe` at `path` for one chunk of `rounds` hand-offs after
/// [`warmup`], then closed.
pub async fn run(
    g: &Globals,
    admin: &Client,
    recipe: Recipe,
    path: &str,
    n: usize,
    rounds: usize,
) -> Result<(Handoffs, Memory)> {
    let contenders = Contenders::connect(g, recipe, path, n).await?;
    let result = contenders.chunk(admin, warmup(rounds), rounds).await;
    contenders.close().await;
    result
}

/// Waits for the line to form, reads the memory, opens the gate and waits for the last
/// measured hand-off: the window, and the resident set and live heap with all in line. Fails
/// when a contender fails, or when no acquisition happens for [`STUCK`].
async fn measure(
    admin: &Client,
    path: &str,
    contenders: usize,
    shared: &Shared,
    tasks: &mut JoinSet<Result<()>>,
) -> Result<(Duration, Option<i64>, Option<i64>)> {
    until_in_line(admin, path, contenders).await?;
    let memory = (resident_bytes(), live_heap());
    shared.gate.notify_one();
    let mut seen = 0;
    loop {
        tokio::select! {
            () = shared.done.notified() => break,
            Some(ended) = tasks.join_next() => {
                // A contender ends early only when it fails (or panics).
                ended.map_err(|e| {
                    zkrs_client::Error::new(ErrorKind::InvalidInput, format!("contender failed: {e}"))
                })??;
            }
            () = tokio::time::sleep(STUCK) => {
                let now = shared.taken.load(Ordering::SeqCst);
                if now == seen {
                    return Err(stuck(format!("a hand-off ({now} acquisitions so far)")));
                }
                seen = now;
            }
        }
    }
    let (start, end) = (
        shared.window_start.load(Ordering::SeqCst),
        shared.window_end.load(Ordering::SeqCst),
    );
    Ok((
        Duration::from_nanos(end.saturating_sub(start)),
        memory.0,
        memory.1,
    ))
}
