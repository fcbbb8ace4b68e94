//! Soak: mixed operations and recipes (locks, latches, caches, ephemeral nodes) on several
//! sessions under the fault injector, with memory sampled: the process's resident set, raw
//! and once the allocator has returned its free pages, and the bytes live on the heap (a
//! counting allocator: the leak signal, since the resident set also moves with the
//! allocator's arenas and fragmentation). After the run: live heap back within 10% of what
//! the idle sessions held before it (and of what the process held before them, once they
//! are closed), in runs of 20 minutes or more the trimmed resident set within 10% of its
//! figure after warm-up (a quarter of the run), every recipe's znodes gone once
//! the recipes are closed (from the ensemble's agreed state: a node that a majority of the
//! members lack is a diverged replica, printed as ZooKeeper's), and the runtime's task count
//! back to its baseline. No step may
//! hang (take longer than the suites' shared [`STEP_DEADLINE`]); steps slower than
//! [`SLOW_STEP`] are listed with what was going on, to read against the fault log.
//!
//! 2 minutes by default (CI); `scripts/soak.sh` runs an hour (`ZKR_SOAK_SECS=3600`). glibc's
//! malloc arenas are capped at what a service on the soak's runtime would use
//! ([`MALLOC_ARENAS`]; `ZKR_SOAK_MALLOC_ARENAS=0` keeps glibc's default).
//! `ZKR_SOAK_STOP_AT_END=1` ends the process at the end-of-run measurement, so a heap
//! profiler (heaptrack) reports what the run retained as leaked.

#[path = "support/beliefs.rs"]
mod beliefs;
mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

use beliefs::{env_number, Rig, SESSION, STEP_DEADLINE};
use zkrs_client::{Client, CreateMode};
use zkrs_recipes::cache::{PathChildrenCache, StartMode};
use zkrs_recipes::{
    leader::{CloseMode, LeaderLatch},
    lock::InterProcessMutex,
};

#[global_allocator]
static GLOBAL: zkrs_testkit::measure::CountingAllocator = zkrs_testkit::measure::CountingAllocator;

/// Bytes live on the heap, KiB.
fn heap_kib() -> u64 {
    (zkrs_testkit::measure::live_heap_bytes() / 1024) as u64
}

/// A step slower than this is listed (a lock wait is bounded by its own 2 s timeout, and one
/// fault at a time is at most a few seconds of unavailability, plus an election).
const SLOW_STEP: Duration = Duration::from_secs(12);

/// The kinds of step the workers take in turn.
const STEP_KINDS: [&str; 4] = ["mutex", "latch", "cache", "ephemeral"];

/// How the mutex steps ended.
#[derive(Default)]
struct MutexOutcomes {
    acquired: AtomicU64,
    timed_out: AtomicU64,
    last_acquired_ms: AtomicU64,
}

/// A step that took longer than [`SLOW_STEP`].
struct SlowStep {
    worker: usize,
    kind: &'static str,
    /// When it began, from the start of the run.
    began: Duration,
    /// How long it took; `None` if it hung (cancelled at [`STEP_DEADLINE`]).
    took: Option<Duration>,
    /// The client's connection state and session when it passed [`SLOW_STEP`].
    state_when_slow: String,
}

impl std::fmt::Debug for SlowStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "worker {} {} step at {:.1}s ",
            self.worker,
            self.kind,
            self.began.as_secs_f32()
        )?;
        match self.took {
            Some(took) => write!(f, "took {:.1}s", took.as_secs_f32())?,
            None => write!(f, "hung")?,
        }
        write!(f, " ({} when slow)", self.state_when_slow)
    }
}

fn soak_secs() -> u64 {
    env_number("ZKR_SOAK_SECS", 120)
}

/// Resident memory of this process, KiB.
fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4
}

/// The glibc allocator controls the soak uses (no crate wraps them without dependencies).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use std::os::raw::c_int;

    /// `mallopt`'s parameter for the most arenas malloc makes.
    pub const M_ARENA_MAX: c_int = -8;

    extern "C" {
        /// Returns the free memory of every arena to the system.
        pub fn malloc_trim(pad: usize) -> c_int;
        /// Sets an allocator parameter; returns 1 on success.
        pub fn mallopt(param: c_int, value: c_int) -> c_int;
    }
}

/// Resident memory of this process, KiB, once the allocator has handed its free pages back:
/// the figure the resident-memory check judges.
///
/// glibc's malloc keeps freed memory in its arenas until asked to return it, so untrimmed
/// the resident set follows each arena's high-water mark. Trimming does not undo
/// fragmentation, though: what it leaves grows with the number of arenas (see
/// [`MALLOC_ARENAS`]). Both figures are printed.
fn held_rss_kib() -> u64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only releases free memory, under the arenas' own locks.
        unsafe {
            glibc::malloc_trim(0);
        }
    }
    rss_kib()
}

/// Children of `path`, retrying through connection trouble.
async fn children(client: &Client, path: &str) -> Vec<String> {
    loop {
        match client.get_children(path).await {
            Ok(c) => return c.to_vec(),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// The floor of the live heap over `window` (KiB), sampled every 200 ms.
async fn heap_floor_kib(window: Duration) -> u64 {
    let mut floor = heap_kib();
    let end = Instant::now() + window;
    while Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(200)).await;
        floor = floor.min(heap_kib());
    }
    floor
}

/// Worker threads of the soak's runtime.
const WORKERS: usize = 2;

/// glibc's malloc arenas the soak's process may use, unless `ZKR_SOAK_MALLOC_ARENAS` says
/// otherwise (0: glibc's default, eight per core): one per thread a service on this runtime
/// allocates from (its workers and the thread blocked on the runtime).
///
/// glibc gives each new thread an arena of its own until it has eight per core, and an
/// arena's fragmentation stays resident. A service on this runtime has three such threads;
/// the soak's process also has the test kit's proxies, which relay every connection on four
/// threads of their own (about 20 at a time). Uncapped, the resident set follows 16 arenas'
/// fragmentation and grew 17.6% between 15 and 60 minutes of an hour-long run while the live
/// heap stayed near 1.4 MiB; with one arena it stayed flat. The cap keeps the figure about
/// the library rather than about the test kit's threads.
const MALLOC_ARENAS: usize = WORKERS + 1;

/// Caps glibc's malloc arenas (`M_ARENA_MAX`) before the runtime's threads allocate.
/// Returns the cap, or `None` where glibc's default stays.
fn cap_malloc_arenas() -> Option<usize> {
    let arenas = env_number("ZKR_SOAK_MALLOC_ARENAS", MALLOC_ARENAS as u64) as usize;
    if arenas == 0 {
        return None;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets a limit the allocator reads when it makes an arena.
        let set = unsafe { glibc::mallopt(glibc::M_ARENA_MAX, arenas as std::os::raw::c_int) };
        assert_eq!(set, 1, "mallopt(M_ARENA_MAX, {arenas})");
        Some(arenas)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

#[test]
fn soak() {
    let arenas = cap_malloc_arenas();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(run(arenas));
}

async fn run(arenas: Option<usize>) {
    let secs = soak_secs();
    let rig = Rig::start().await;
    let admin = rig.client().await;
    for dir in ["/soak", "/soak/lock", "/soak/latch", "/soak/items"] {
        admin
            .create(dir, b"", CreateMode::Persistent)
            .await
            .unwrap();
    }
    // Memory before the three working sessions, and with them connected and idle.
    let base_heap = heap_floor_kib(Duration::from_secs(1)).await;
    let mut clients = Vec::new();
    for _ in 0..3 {
        clients.push(rig.client().await);
    }
    let idle_heap = heap_floor_kib(Duration::from_secs(1)).await;
    let metrics = tokio::runtime::Handle::current().metrics();
    let baseline_tasks = metrics.num_alive_tasks();

    let stop = Arc::new(AtomicBool::new(false));
    let (steps, errors) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let slow = Arc::new(std::sync::Mutex::new(Vec::<SlowStep>::new()));
    // The mutex steps' outcomes, and when the lock was last taken (ms into the run): a lock
    // left blocked by a node shows as timeouts from then on.
    let locks = Arc::new(MutexOutcomes::default());
    let started = Instant::now();
    // The schedule runs as long as the soak (ZKR_FAULT_SECS is not read here).
    let faults = zkrs_testkit::FaultSchedule::builder(rig.cluster.clone(), rig.proxies.clone())
        .duration(Duration::from_secs(secs))
        .session_timeout(SESSION)
        .start();
    let seed = faults.seed();
    println!(
        "soak for {secs}s; fault schedule seed={seed} (replay with ZKR_FAULT_SEED={seed}); malloc arenas {}",
        arenas.map_or("glibc's default".to_string(), |n| format!("capped at {n}"))
    );
    let mut workers = Vec::new();
    for (k, client) in clients.iter().enumerate() {
        let client = client.clone();
        let (stop, steps, errors, slow, locks) = (
            stop.clone(),
            steps.clone(),
            errors.clone(),
            slow.clone(),
            locks.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let step = async {
                    match i % 4 {
                        0 => {
                            let mutex = InterProcessMutex::builder(&client, "/soak/lock")
                                .build()
                                .unwrap();
                            match mutex.try_acquire(Duration::from_secs(2)).await {
                                Ok(Some(guard)) => {
                                    locks.acquired.fetch_add(1, Ordering::Relaxed);
                                    let at = started.elapsed().as_millis() as u64;
                                    locks.last_acquired_ms.fetch_max(at, Ordering::Relaxed);
                                    guard.release().await.map(drop)
                                }
                                Ok(None) => {
                                    locks.timed_out.fetch_add(1, Ordering::Relaxed);
                                    Ok(())
                                }
                                Err(e) => Err(e),
                            }
                        }
                        1 => {
                            let latch = LeaderLatch::builder(&client, "/soak/latch")
                                .id(format!("w{k}"))
                                .start()
                                .unwrap();
                            let _ = latch
                                .await_leadership_timeout(Duration::from_millis(300))
                                .await;
                            latch.close_with(CloseMode::Silent).await
                        }
                        2 => {
                            let cache = PathChildrenCache::builder(&client, "/soak/items")
                                .start_mode(StartMode::BuildInitialCache)
                                .start()
                                .unwrap();
                            let started = cache.initialized().await;
                            drop(cache);
                            started
                        }
                        _ => match client
                            .create("/soak/items/e-", b"x", CreateMode::EphemeralSequential)
                            .await
                        {
                            Ok(path) => client.delete(&path, None).await,
                            Err(e) => Err(e),
                        },
                    }
                };
                let began = started.elapsed();
                let mut step = std::pin::pin!(step);
                let outcome = match tokio::time::timeout(SLOW_STEP, &mut step).await {
                    Ok(outcome) => Some(outcome),
                    Err(_) => {
                        let state_when_slow =
                            format!("{:?} session {:#x}", client.state(), client.session_id());
                        let rest = STEP_DEADLINE - SLOW_STEP;
                        let outcome = tokio::time::timeout(rest, &mut step).await.ok();
                        slow.lock().unwrap().push(SlowStep {
                            worker: k,
                            kind: STEP_KINDS[(i % 4) as usize],
                            began,
                            took: outcome.is_some().then(|| started.elapsed() - began),
                            state_when_slow,
                        });
                        outcome
                    }
                };
                if let Some(Err(_)) = outcome {
                    errors.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                steps.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }

    // Memory, sampled through the run.
    let every = Duration::from_secs(if secs >= 1200 { 60 } else { 15 });
    let mut samples = Vec::new();
    while started.elapsed() < Duration::from_secs(secs) {
        tokio::time::sleep(every.min(Duration::from_secs(secs).saturating_sub(started.elapsed())))
            .await;
        let (heap, rss) = (heap_kib(), rss_kib());
        samples.push((started.elapsed().as_secs(), heap, rss, held_rss_kib()));
    }
    let injected = tokio::task::block_in_place(|| faults.stop());
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        tokio::time::timeout(STEP_DEADLINE * 2, w)
            .await
            .expect("a worker stops")
            .unwrap();
    }

    let mut violations = Vec::new();
    let slow = std::mem::take(&mut *slow.lock().unwrap());
    let hung: Vec<&SlowStep> = slow.iter().filter(|s| s.took.is_none()).collect();
    if !hung.is_empty() {
        violations.push(format!("steps hung past {STEP_DEADLINE:?}: {hung:?}"));
    }
    // Every recipe is closed or dropped, the sessions still open: the recipes' nodes go (a
    // dropped latch or guard cleans up in the background; nodes of sessions that were lost
    // expire). Plain ephemerals whose create's reply was lost belong to their session, not to
    // a recipe: they go when the sessions close, checked after.
    let recipe_dirs = ["/soak/lock", "/soak/latch"];
    let leftovers = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let mut left = Vec::new();
            for dir in recipe_dirs {
                for child in children(&admin, dir).await {
                    left.push(format!("{dir}/{child}"));
                }
            }
            if left.is_empty() {
                return left;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    if leftovers.is_err() {
        // A node the ensemble agrees on is a recipe's leftover; one a majority of the members
        // lack is a replica that diverged (ZooKeeper's defect, printed with the evidence).
        let (mut left, mut diverged, mut dirs) = (Vec::new(), Vec::new(), Vec::new());
        for dir in recipe_dirs {
            for child in children(&admin, dir).await {
                let path = format!("{dir}/{child}");
                let held = beliefs::members_holding(&rig, &path).await;
                if beliefs::lacked_by_majority(&held) {
                    diverged.push(format!("{path} (held, by member: {held:?})"));
                } else {
                    left.push(path);
                }
                if !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
        }
        for dir in dirs {
            println!(
                "{dir}:\n{}",
                beliefs::lock_dir_report(&rig, &clients, dir).await
            );
        }
        if !diverged.is_empty() {
            println!("ZooKeeper replica divergence, not a recipe's leftover: {diverged:?}");
        }
        if !left.is_empty() {
            violations.push(format!(
                "recipe znodes left 30 s after the run (each member's view above): {left:?}"
            ));
        }
    }
    // Tasks: back to the baseline once background clean-ups are done.
    let tasks = tokio::time::timeout(Duration::from_secs(30), async {
        while metrics.num_alive_tasks() > baseline_tasks {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    if tasks.is_err() {
        violations.push(format!(
            "{} tasks alive, baseline {baseline_tasks}",
            metrics.num_alive_tasks()
        ));
    }
    // The end of the run's memory: recipes closed, sessions still open and idle, as when
    // `idle_heap` was taken. The floor over 3 s (what is retained, not what a finishing
    // background task holds at one instant).
    let end_heap = heap_floor_kib(Duration::from_secs(3)).await;
    let (end_rss, end_held) = (rss_kib(), held_rss_kib());
    if std::env::var_os("ZKR_SOAK_STOP_AT_END").is_some() {
        // For heap profilers: what is live now is what the run retained.
        std::process::exit(3);
    }
    for client in &clients {
        let _ = tokio::time::timeout(STEP_DEADLINE, client.close()).await;
    }
    drop(clients);
    let closed_heap = heap_floor_kib(Duration::from_secs(3)).await;
    let items = children(&admin, "/soak/items").await;
    if !items.is_empty() {
        violations.push(format!(
            "ephemerals left after their sessions closed: {items:?}"
        ));
    }
    // Memory: the live heap is the leak signal, compared quiescent against quiescent.
    // - With the sessions still open, against the same sessions idle before the run: what a
    //   long-lived client keeps must not grow with the work it did. The slack (10% + 1 MiB)
    //   is for buffers that keep the size of the largest frame they carried: each
    //   connection's read buffer and the proxies' relay buffers (64 KiB a direction). The
    //   samples taken during the run are printed but not judged: they catch the caches'
    //   snapshots and the requests in flight at one instant. (Judging against them hid a
    //   leak for a while: every short-lived recipe's state-change stream stayed registered
    //   with its client, its waker pinning the recipe's finished task, until the next state
    //   change swept it; 3.4 MiB a minute here, in sawtooth with the faults.)
    // - With the three sessions closed, against before they connected: everything they
    //   held is returned (a reference cycle, a stray task or a global would stay).
    // The resident set also moves with the allocator's arenas, so it is held to the issue's
    // 10% only in runs of 20 minutes or more, against the first sample after warm-up, and
    // measured once the allocator has returned its free pages (`held_rss_kib`).
    if end_heap * 10 > idle_heap * 11 + 10240 {
        violations.push(format!(
            "live heap with the sessions open grew from {idle_heap} KiB idle before the run to {end_heap} KiB idle after it"
        ));
    }
    if closed_heap * 10 > base_heap * 11 + 2560 {
        violations.push(format!(
            "live heap after the sessions closed is {closed_heap} KiB, {base_heap} KiB before they connected"
        ));
    }
    let warm = samples.iter().find(|s| s.0 >= (secs / 4).max(30));
    let (warm_rss, warm_held) = warm.map_or((0, 0), |s| (s.2, s.3));
    if secs >= 1200 && end_held * 10 > warm_held * 11 {
        violations.push(format!(
            "resident memory (allocator trimmed) grew from {warm_held} KiB after warm-up to {end_held} KiB"
        ));
    }
    for step in &slow {
        println!("  slow step: {step:?}");
    }
    println!(
        "suite=soak seed={seed} duration={:.0}s faults={} operations={} (errors {}) slow_steps={} mutex(acquired={} timed_out={} last_acquired_at={:.1}s) malloc_arenas={} heap_kib base={base_heap} idle={idle_heap} end={end_heap} closed={closed_heap} rss_kib warm={warm_rss} end={end_rss} held_rss_kib warm={warm_held} end={end_held} samples(s,heap,rss,held)={:?} tasks={}/{baseline_tasks} violations={}",
        started.elapsed().as_secs_f32(),
        injected.len(),
        steps.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
        slow.len(),
        locks.acquired.load(Ordering::Relaxed),
        locks.timed_out.load(Ordering::Relaxed),
        locks.last_acquired_ms.load(Ordering::Relaxed) as f64 / 1000.0,
        arenas.map_or("default".to_string(), |n| n.to_string()),
        samples,
        metrics.num_alive_tasks(),
        violations.len()
    );
    beliefs::print_faults(&injected, started);
    assert!(violations.is_empty(), "seed {seed}: {violations:#?}");
}
