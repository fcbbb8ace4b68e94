//! `bench get|set|create|lock|latch`: throughput and latency, printed as `name value unit`
//! lines so scripts can pick figures with `awk`.
//!
//! - get/set/create: `--clients` sessions, each with `--in-flight` requests outstanding (one
//!   task per slot, each sending its next request when the last one is answered), `--ops`
//!   requests in all after a short unmeasured warm-up. `create` also measures deleting what
//!   it created.
//! - lock: uncontended acquire+release cycles (`clients x in-flight` lockers, each on its own
//!   lock), then `--rounds` hand-offs between two sessions: the time from the holder's
//!   release to the waiter's acquire returning.
//! - latch: `--rounds` leadership hand-offs: the time from the leader's `close` to the next
//!   participant being told it leads.
//! - lock and latch, then under contention ([`bench_contention`]): `--contenders` sessions on
//!   one lock (latch), each cycling, `--rounds` hand-offs back to back: hand-offs per second
//!   and their latency; with `--curator`, Curator's same loops in a JVM ([`bench_curator`]),
//!   its uncontended cycles (`curator_cycles_per_sec`) as well as its hand-offs, and the
//!   ratios (`cycles_per_sec_ratio`, `contended_handoffs_per_sec_ratio`); with `--in-line`, the same with each length of line against 2 sessions, and
//!   the memory per waiting session.
//!
//! Throughput runs also print this process's cost per operation (per cycle for lock): CPU
//! time (`cpu_ns_per_op`, every thread of the process: callers, the client's driver, the
//! runtime) and heap allocations (`allocs_per_op`, allocations and reallocations), over the
//! measured operations only. `--rt current|multi` picks the runtime.
//!
//! Then the library's own figures for the run (`metrics_*`: `Client::metrics` summed over the
//! bench's sessions, latency bounds from its fixed buckets; `recipe_*` for lock and latch:
//! `zkrs_recipes::metrics::metrics`), to check a dashboard's figures against the bench's.
//!
//! Everything lives under `/zkctl-bench-<pid>` and is deleted afterwards, also on Ctrl-C.

use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zkrs_client::{Client, CreateMode, ErrorKind, Result};
use zkrs_recipes::{
    leader::{participants, CloseMode, LeaderLatch},
    lock::{InterProcessMutex, LockGuard},
};
use zkrs_testkit::measure::{allocation_counts, process_cpu_time};

use crate::args::{BenchKind, BenchOptions, Globals};
use crate::commands::bench_contention::{self, Contenders, Recipe};
use crate::commands::bench_curator::{self, CuratorSide};
use crate::commands::bench_metrics;
use crate::commands::bench_timing::{bounded, Handoffs, Latencies, STUCK};
use crate::commands::data::delete_tree;
use crate::connection::{builder, close, connect};
use crate::failure::{Failure, Outcome, ZkMessage};
use crate::output::{figure, say};
use crate::pipeline;
use crate::signals::Shutdown;

/// With `--curator`, the chunks each side's hand-offs are measured in, alternating.
const CURATOR_CHUNKS: usize = 5;

/// How long a hand-off round lets the waiter settle (its watch set) before the release.
const SETTLE: Duration = Duration::from_millis(5);

/// Runs one benchmark and cleans up its nodes.
pub async fn run(g: &Globals, o: BenchOptions) -> Outcome {
    let mut shutdown = Shutdown::install()?;
    let admin = connect(g).await?;
    let base = format!("/zkctl-bench-{}", std::process::id());
    // A leftover of an earlier process with the same pid would only be in the way.
    delete_tree(&admin, &base, None).await.ok();
    admin.create(&base, b"", CreateMode::Persistent).await?;
    let result = tokio::select! {
        r = bench(g, &admin, &base, o) => r,
        signal = shutdown.recv() => {
            eprintln!("zkctl: {}: cleaning up {base}", signal.name);
            Ok(signal.exit_code())
        }
    };
    if let Err(e) = tokio::time::timeout(STUCK, delete_tree(&admin, &base, None))
        .await
        .unwrap_or_else(|_| {
            Err(zkrs_client::Error::new(
                ErrorKind::Timeout,
                "cleanup took too long",
            ))
        })
    {
        eprintln!("zkctl: could not delete {base}: {}", ZkMessage(&e));
    }
    close(&admin).await;
    result
}

async fn bench(g: &Globals, admin: &Client, base: &str, o: BenchOptions) -> Outcome {
    let clients: Vec<Client> = pipeline::all((0..o.clients).map(|_| builder(g).connect()))
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    let kind = o.kind;
    let mut figures = match kind {
        BenchKind::Get => get(admin, &clients, base, o).await?,
        BenchKind::Set => set(admin, &clients, base, o).await?,
        BenchKind::Create => create(admin, &clients, base, o).await?,
        BenchKind::Lock => recipe(g, admin, &clients, Recipe::Lock, base, &o).await?,
        BenchKind::Latch => recipe(g, admin, &clients, Recipe::Latch, base, &o).await?,
    };
    figures.extend(bench_metrics::client_figures(&clients));
    if matches!(kind, BenchKind::Lock | BenchKind::Latch) {
        figures.extend(bench_metrics::recipe_figures(
            &zkrs_recipes::metrics::metrics(),
        ));
    }
    for c in &clients {
        close(c).await;
    }
    for line in figures {
        if crate::output_json::on() {
            crate::output_json::say(&crate::json_records::Figure::parse(&line))?;
        } else {
            say(line)?;
        }
    }
    Ok(0)
}

/// The figures of one run.
type Figures = Vec<String>;

/// `bench lock|latch`: the uncontended cycles, the two-session hand-offs, and the figures
/// under contention; with `--curator`, Curator's side runs for the whole of it (its cycles
/// alternate with ours, then its contended chunks).
async fn recipe(
    g: &Globals,
    admin: &Client,
    clients: &[Client],
    recipe: Recipe,
    base: &str,
    o: &BenchOptions,
) -> Result<Figures, Failure> {
    let mut curator = match o.curator {
        true => {
            let path = format!("{base}/curator-{}", recipe.name());
            Some(CuratorSide::start(g, recipe, &path, o.contenders).await?)
        }
        false => None,
    };
    let figures = async {
        let mut out = match recipe {
            Recipe::Lock => lock(g, clients, base, o, curator.as_mut()).await?,
            Recipe::Latch => latch(g, clients, base, o, curator.as_mut()).await?,
        };
        out.extend(contention(g, admin, recipe, base, o, curator.as_mut()).await?);
        Ok(out)
    }
    .await;
    if let Some(curator) = curator {
        curator.close().await;
    }
    figures
}

/// One measured closed-loop run.
struct Run<T> {
    /// Each operation's latency, nanoseconds.
    latencies: Vec<u64>,
    /// Wall time.
    elapsed: Duration,
    /// What the operations returned.
    outputs: Vec<T>,
    /// This process's CPU time over the run (every thread: callers, driver, runtime).
    cpu: Duration,
    /// Calls into the allocator over the run.
    allocations: u64,
}

impl<T> Run<T> {
    /// Runs measured apart, as one: every latency and output, the times and counts added up.
    fn combine(runs: Vec<Run<T>>) -> Run<T> {
        let mut all = Run {
            latencies: Vec::new(),
            elapsed: Duration::ZERO,
            outputs: Vec::new(),
            cpu: Duration::ZERO,
            allocations: 0,
        };
        for run in runs {
            all.latencies.extend(run.latencies);
            all.elapsed += run.elapsed;
            all.outputs.extend(run.outputs);
            all.cpu += run.cpu;
            all.allocations += run.allocations;
        }
        all
    }

    /// `cpu_ns_per_<unit>` and `allocs_per_<unit>`: the client's own cost per operation.
    fn cost_figures(&self, unit: &str, out: &mut Figures) {
        let n = self.latencies.len().max(1) as f64;
        out.push(figure(
            &format!("cpu_ns_per_{unit}"),
            (self.cpu.as_nanos() as f64 / n).round() as u64,
            "ns",
        ));
        out.push(figure(
            &format!("allocs_per_{unit}"),
            format!("{:.2}", self.allocations as f64 / n),
            "allocs",
        ));
    }
}

/// Runs `ops` operations from `clients.len() x in_flight` tasks, each sending its next
/// request when the last one is answered. `op(client, task, ticket)` is one timed operation
/// of task `task` (`0..clients x in_flight`); tickets are `0..ops`, each used once. The
/// bookkeeping allocates nothing while the clock runs (latencies go into a table made
/// before, by ticket), so the allocations counted are the operations' own.
async fn closed_loop<T, F, Fut>(
    clients: &[Client],
    in_flight: usize,
    ops: usize,
    op: F,
) -> Result<Run<T>>
where
    T: Send + 'static,
    F: Fn(Client, usize, usize) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<T>> + Send,
{
    let remaining = Arc::new(AtomicUsize::new(ops));
    let table: Arc<[AtomicU64]> = (0..ops).map(|_| AtomicU64::new(0)).collect();
    let mut tasks = Vec::with_capacity(clients.len() * in_flight);
    let (started, cpu, allocations) = (Instant::now(), process_cpu_time(), allocation_counts());
    for (c, client) in clients.iter().enumerate() {
        for s in 0..in_flight {
            let (client, remaining, op, table) =
                (client.clone(), remaining.clone(), op.clone(), table.clone());
            let task = c * in_flight + s;
            tasks.push(tokio::spawn(async move {
                let mut outputs = Vec::new();
                // One ticket per operation, so exactly `ops` run in all.
                while let Ok(left) =
                    remaining
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                {
                    let ticket = left - 1;
                    let t = Instant::now();
                    outputs.push(op(client.clone(), task, ticket).await?);
                    table[ticket].store(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
                }
                Ok::<_, zkrs_client::Error>(outputs)
            }));
        }
    }
    let mut outputs = Vec::new();
    for task in tasks {
        let o = task.await.map_err(|e| {
            zkrs_client::Error::new(
                ErrorKind::InvalidInput,
                format!("benchmark task failed: {e}"),
            )
        })??;
        outputs.extend(o);
    }
    let (elapsed, cpu, allocations) = (
        started.elapsed(),
        process_cpu_time().saturating_sub(cpu),
        (allocation_counts() - allocations).calls(),
    );
    Ok(Run {
        latencies: table.iter().map(|l| l.load(Ordering::Relaxed)).collect(),
        elapsed,
        outputs,
        cpu,
        allocations,
    })
}

/// Figures for a throughput run: rate, latency, and the cost per operation.
fn throughput<T>(prefix: &str, run: Run<T>, out: &mut Figures) {
    let n = run.latencies.len();
    out.push(figure(&format!("{prefix}ops"), n, "ops"));
    out.push(figure(
        &format!("{prefix}elapsed_ms"),
        run.elapsed.as_millis(),
        "ms",
    ));
    let rate = n as f64 / run.elapsed.as_secs_f64().max(1e-9);
    out.push(figure(
        &format!("{prefix}ops_per_sec"),
        rate.round() as u64,
        "ops/s",
    ));
    run.cost_figures(&format!("{prefix}op"), out);
    Latencies::new(run.latencies).figures(prefix, true, out);
}

fn setup_figures(o: &BenchOptions) -> Figures {
    vec![
        figure("clients", o.clients, "sessions"),
        figure("in_flight", o.in_flight, "requests/session"),
        figure("size", o.size, "bytes"),
    ]
}

/// Warm-up operations (unmeasured): enough to open connections' buffers and the server's JIT.
fn warmup(o: &BenchOptions) -> usize {
    (o.ops / 10).clamp(o.clients * o.in_flight, 5_000)
}

async fn get(admin: &Client, clients: &[Client], base: &str, o: BenchOptions) -> Result<Figures> {
    let path: Arc<str> = format!("{base}/data").into();
    admin
        .create(&path, &vec![b'x'; o.size], CreateMode::Persistent)
        .await?;
    let op = move |client: Client, _, _| {
        let path = path.clone();
        async move { client.get_data(&path).await.map(drop) }
    };
    closed_loop(clients, o.in_flight, warmup(&o), op.clone()).await?;
    let run = closed_loop(clients, o.in_flight, o.ops, op).await?;
    let mut out = setup_figures(&o);
    throughput("", run, &mut out);
    Ok(out)
}

async fn set(admin: &Client, clients: &[Client], base: &str, o: BenchOptions) -> Result<Figures> {
    // As many nodes as clients, written in turn: no single node is the only one written.
    let paths: Arc<Vec<String>> =
        Arc::new((0..o.clients).map(|c| format!("{base}/set-{c}")).collect());
    for p in paths.iter() {
        admin.create(p, b"", CreateMode::Persistent).await?;
    }
    let data: Arc<Vec<u8>> = Arc::new(vec![b'x'; o.size]);
    let op = move |client: Client, _, ticket: usize| {
        let (paths, data) = (paths.clone(), data.clone());
        async move {
            client
                .set_data(&paths[ticket % paths.len()], &data, None)
                .await
                .map(drop)
        }
    };
    closed_loop(clients, o.in_flight, warmup(&o), op.clone()).await?;
    let run = closed_loop(clients, o.in_flight, o.ops, op).await?;
    let mut out = setup_figures(&o);
    throughput("", run, &mut out);
    Ok(out)
}

async fn create(
    admin: &Client,
    clients: &[Client],
    base: &str,
    o: BenchOptions,
) -> Result<Figures> {
    let dir = format!("{base}/create");
    admin.create(&dir, b"", CreateMode::Persistent).await?;
    let data: Arc<Vec<u8>> = Arc::new(vec![b'x'; o.size]);
    let prefix: Arc<str> = format!("{dir}/n-").into();
    let op = move |client: Client, _, _| {
        let (prefix, data) = (prefix.clone(), data.clone());
        async move {
            client
                .create(&prefix, &data, CreateMode::PersistentSequential)
                .await
        }
    };
    closed_loop(clients, o.in_flight, warmup(&o), op.clone()).await?;
    let mut run = closed_loop(clients, o.in_flight, o.ops, op).await?;
    let created = std::mem::take(&mut run.outputs);
    let mut out = setup_figures(&o);
    throughput("", run, &mut out);
    // Delete what was measured, with the same concurrency, and report that too (the warm-up's
    // nodes go with the final cleanup).
    let created: Arc<Vec<String>> = Arc::new(created);
    let delete = move |client: Client, _, ticket: usize| {
        let created = created.clone();
        async move { client.delete(&created[ticket], None).await }
    };
    let run = closed_loop(clients, o.in_flight, o.ops, delete).await?;
    throughput("delete_", run, &mut out);
    Ok(out)
}

/// The yardsticks of a hand-off, measured on `client` in the same run: sequential getData
/// round trips back to back (`get_hot_p50_us`), and one at a time after the same idle pause
/// as each hand-off round (`get_after_idle_p50_us`: the server's threads and ours wake from
/// idle, as they do for a hand-off). Then the hand-off's median in those round trips
/// (`handoff_in_hot_gets`, `handoff_in_idle_gets`).
async fn handoff_yardsticks(
    client: &Client,
    path: &str,
    rounds: usize,
    handoffs: &Latencies,
    out: &mut Figures,
) -> Result<()> {
    let mut hot = Vec::with_capacity(1000);
    for _ in 0..1000 {
        let t = Instant::now();
        client.get_data(path).await?;
        hot.push(t.elapsed().as_nanos() as u64);
    }
    let mut idle = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        tokio::time::sleep(SETTLE).await;
        let t = Instant::now();
        client.get_data(path).await?;
        idle.push(t.elapsed().as_nanos() as u64);
    }
    let (hot, idle) = (Latencies::new(hot), Latencies::new(idle));
    hot.figures("get_hot_", false, out);
    idle.figures("get_after_idle_", false, out);
    let handoff = handoffs.percentile_us(0.5) as f64;
    for (name, get) in [("hot", &hot), ("idle", &idle)] {
        let get = get.percentile_us(0.5).max(1) as f64;
        out.push(figure(
            &format!("handoff_in_{name}_gets"),
            format!("{:.2}", handoff / get),
            "round_trips",
        ));
    }
    Ok(())
}

/// Polls `count` until it reaches `n` (how a hand-off round knows the waiter is in line).
async fn until_count<F, Fut>(what: &str, n: usize, count: F) -> Result<()>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<usize>>,
{
    bounded(what, async {
        loop {
            if count().await? >= n {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await?
}

/// A second session for hand-offs when `--clients` is 1.
async fn two_clients(g: &Globals, clients: &[Client]) -> Result<(Client, Client)> {
    let second = match clients.get(1) {
        Some(c) => c.clone(),
        None => builder(g).connect().await?,
    };
    Ok((clients[0].clone(), second))
}

async fn lock(
    g: &Globals,
    clients: &[Client],
    base: &str,
    o: &BenchOptions,
    curator: Option<&mut CuratorSide>,
) -> Result<Figures, Failure> {
    let mut out = vec![
        figure("clients", o.clients, "sessions"),
        figure("in_flight", o.in_flight, "lockers/session"),
    ];
    // Uncontended: every locker has its own lock, so each cycle is acquire (create + list,
    // pipelined) and release (delete).
    let lockers = o.clients * o.in_flight;
    // One mutex per locker, made beforehand (as a service keeps its mutex), so what is
    // counted is the acquire and the release.
    let mutexes: Arc<Vec<InterProcessMutex>> = Arc::new(
        (0..lockers)
            .map(|task| {
                let client = &clients[task / o.in_flight];
                InterProcessMutex::builder(client, &format!("{base}/lock-{task}")).build()
            })
            .collect::<Result<_, _>>()?,
    );
    let cycle = move |_: Client, task: usize, _| {
        let mutexes = mutexes.clone();
        async move {
            let guard = mutexes[task].acquire().await?;
            guard.release().await
        }
    };
    cycles(clients, o, cycle, curator, &mut out).await?;

    // Hand-off: A holds, B waits in line; time from A's release to B's acquire returning.
    let (a, b) = two_clients(g, clients).await?;
    let path = format!("{base}/handoff");
    let mut holder_mutex = InterProcessMutex::builder(&a, &path).build()?;
    let mut waiter_mutex = InterProcessMutex::builder(&b, &path).build()?;
    let mut holder: LockGuard = bounded("the first lock", holder_mutex.acquire()).await??;
    let mut handoffs = Vec::with_capacity(o.rounds);
    for _ in 0..o.rounds {
        let waiter = waiter_mutex.clone();
        let waiting = tokio::spawn(async move {
            let guard = waiter.acquire().await;
            (guard, Instant::now())
        });
        until_count("the waiter to queue", 2, || async {
            Ok(holder_mutex.participant_nodes().await?.len())
        })
        .await?;
        tokio::time::sleep(SETTLE).await;
        let released = Instant::now();
        holder.release().await?;
        let (guard, acquired) = bounded("the hand-off", waiting).await?.map_err(|e| {
            zkrs_client::Error::new(ErrorKind::InvalidInput, format!("waiter task failed: {e}"))
        })?;
        holder = guard?;
        handoffs.push(acquired.duration_since(released).as_nanos() as u64);
        std::mem::swap(&mut holder_mutex, &mut waiter_mutex);
    }
    holder.release().await?;
    out.push(figure("handoffs", handoffs.len(), "handoffs"));
    let handoffs = Latencies::new(handoffs);
    handoffs.figures("handoff_", false, &mut out);
    handoff_yardsticks(&a, base, o.rounds, &handoffs, &mut out).await?;
    Ok(out)
}

/// The uncontended cycles (`clients x in-flight` lockers, each on a lock or latch of its
/// own): an unmeasured warm-up, then `--ops` cycles. With Curator's side, its same loop on as
/// many sessions and lockers, in chunks alternating with ours (a change in the machine's load
/// falls on both), and the ratios ours / Curator's.
async fn cycles<F, Fut>(
    clients: &[Client],
    o: &BenchOptions,
    cycle: F,
    curator: Option<&mut CuratorSide>,
    out: &mut Figures,
) -> Result<(), Failure>
where
    F: Fn(Client, usize, usize) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<()>> + Send,
{
    let lockers = o.clients * o.in_flight;
    let warmup = lockers.max(o.ops / 10);
    closed_loop(clients, o.in_flight, warmup, cycle.clone()).await?;
    let Some(curator) = curator else {
        let run = closed_loop(clients, o.in_flight, o.ops, cycle).await?;
        cycle_figures("", run, out);
        return Ok(());
    };
    let chunks = CURATOR_CHUNKS.min(o.ops);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for chunk in 0..chunks {
        let size = o.ops / chunks + usize::from(chunk < o.ops % chunks);
        ours.push(closed_loop(clients, o.in_flight, size, cycle.clone()).await?);
        let (warmup, jit) = match chunk {
            0 => (warmup, bench_curator::JIT_WARMUP),
            _ => (0, Duration::ZERO),
        };
        theirs.push(
            curator
                .cycles(o.clients, lockers, warmup, jit, size)
                .await?,
        );
    }
    let (ours, theirs) = (Run::combine(ours), Handoffs::combine(theirs));
    let ours_rate = ours.latencies.len() as f64 / ours.elapsed.as_secs_f64().max(1e-9);
    let ours_p50 = Latencies::new(ours.latencies.clone()).percentile_ns(0.5) as f64;
    cycle_figures("", ours, out);
    out.push(figure("curator_cycles", theirs.latencies.len(), "cycles"));
    let theirs_rate = theirs.rate();
    out.push(figure(
        "curator_cycles_per_sec",
        theirs_rate.round() as u64,
        "cycles/s",
    ));
    theirs.latencies.figures("curator_cycle_", false, out);
    out.push(figure(
        "cycles_per_sec_ratio",
        format!("{:.2}", ours_rate / theirs_rate.max(1e-9)),
        "ours/curator",
    ));
    let theirs_p50 = theirs.latencies.percentile_ns(0.5).max(1) as f64;
    out.push(figure(
        "cycle_p50_ratio",
        format!("{:.2}", ours_p50 / theirs_p50),
        "ours/curator",
    ));
    Ok(())
}

/// `<prefix>cycles`, `<prefix>cycles_per_sec`, the cost per cycle and the cycles' latencies.
fn cycle_figures<T>(prefix: &str, run: Run<T>, out: &mut Figures) {
    out.push(figure(
        &format!("{prefix}cycles"),
        run.latencies.len(),
        "cycles",
    ));
    let rate = run.latencies.len() as f64 / run.elapsed.as_secs_f64().max(1e-9);
    out.push(figure(
        &format!("{prefix}cycles_per_sec"),
        rate.round() as u64,
        "cycles/s",
    ));
    run.cost_figures(&format!("{prefix}cycle"), out);
    Latencies::new(run.latencies).figures(&format!("{prefix}cycle_"), false, out);
}

async fn latch(
    g: &Globals,
    clients: &[Client],
    base: &str,
    o: &BenchOptions,
    curator: Option<&mut CuratorSide>,
) -> Result<Figures, Failure> {
    let mut out = vec![
        figure("clients", o.clients, "sessions"),
        figure("in_flight", o.in_flight, "participants/session"),
    ];
    // Uncontended, as the lock's cycles: every participant has a latch of its own, so each
    // cycle is start (create + list, pipelined), being told it leads, and close (delete).
    // They also warm the server's JIT up before the hand-offs, as the lock's cycles do.
    let latches = o.clients * o.in_flight;
    let paths: Arc<Vec<String>> = Arc::new(
        (0..latches)
            .map(|task| format!("{base}/latch-{task}"))
            .collect(),
    );
    let cycle = move |client: Client, task: usize, _| {
        let paths = paths.clone();
        async move {
            let latch = LeaderLatch::builder(&client, &paths[task]).start()?;
            latch.await_leadership().await?;
            latch.close_with(CloseMode::Silent).await
        }
    };
    cycles(clients, o, cycle, curator, &mut out).await?;

    // Leader on one session, next in line on the other; the next one becomes the leader of
    // the following round, and a new participant joins behind it on the first session.
    let (a, b) = two_clients(g, clients).await?;
    let path = format!("{base}/latch");
    let mut sessions = [a, b];
    let mut leader = LeaderLatch::builder(&sessions[0], &path)
        .id("bench-0")
        .start()?;
    bounded("the first leadership", leader.await_leadership()).await??;
    let mut handoffs = Vec::with_capacity(o.rounds);
    for round in 1..=o.rounds {
        sessions.swap(0, 1);
        let next = LeaderLatch::builder(&sessions[0], &path)
            .id(format!("bench-{round}"))
            .start()?;
        // Waiting already when the leader closes, as the lock's waiter is.
        let told = tokio::spawn(async move {
            let led = next.await_leadership().await;
            let at = Instant::now();
            led.map(|()| (next, at))
        });
        until_count("the next participant to join", 2, || async {
            Ok(participants(&sessions[0], &path).await?.len())
        })
        .await?;
        tokio::time::sleep(SETTLE).await;
        let closed = Instant::now();
        leader.close_with(CloseMode::Silent).await?;
        let (next, at) = bounded("the hand-off", told).await?.map_err(|e| {
            zkrs_client::Error::new(ErrorKind::InvalidInput, format!("latch task failed: {e}"))
        })??;
        handoffs.push(at.duration_since(closed).as_nanos() as u64);
        leader = next;
    }
    leader.close_with(CloseMode::Silent).await?;
    out.push(figure("handoffs", handoffs.len(), "handoffs"));
    let handoffs = Latencies::new(handoffs);
    handoffs.figures("handoff_", false, &mut out);
    handoff_yardsticks(&sessions[0], base, o.rounds, &handoffs, &mut out).await?;
    Ok(out)
}

/// The figures under contention: `--contenders` sessions on one lock (latch), with `--curator`
/// Curator's side on the same server and the ratios ours / Curator's; then with `--in-line`,
/// the hand-off with each length of line against 2 sessions, and the memory per waiter.
async fn contention(
    g: &Globals,
    admin: &Client,
    recipe: Recipe,
    base: &str,
    o: &BenchOptions,
    curator: Option<&mut CuratorSide>,
) -> Result<Figures, Failure> {
    let name = recipe.name();
    let mut out = vec![figure("contenders", o.contenders, "sessions")];
    let path = format!("{base}/contended-{name}");
    match curator {
        None => {
            let (ours, _) =
                bench_contention::run(g, admin, recipe, &path, o.contenders, o.rounds).await?;
            ours.figures("contended_", &mut out);
        }
        Some(curator) => {
            let contenders = Contenders::connect(g, recipe, &path, o.contenders).await?;
            let measured = alternate(admin, &contenders, curator, o.rounds).await;
            contenders.close().await;
            let (ours, curator) = measured?;
            ours.figures("contended_", &mut out);
            curator.figures("curator_contended_", &mut out);
            let ours_p50 = ours.latencies.percentile_ns(0.5) as f64;
            let curator_p50 = curator.latencies.percentile_ns(0.5).max(1) as f64;
            out.push(figure(
                "contended_handoffs_per_sec_ratio",
                format!("{:.2}", ours.rate() / curator.rate().max(1e-9)),
                "ours/curator",
            ));
            out.push(figure(
                "contended_handoff_p50_ratio",
                format!("{:.2}", ours_p50 / curator_p50),
                "ours/curator",
            ));
        }
    }
    if o.in_line.is_empty() {
        return Ok(out);
    }
    let mut baseline = None;
    for n in std::iter::once(2).chain(o.in_line.iter().copied()) {
        let path = format!("{base}/in-line-{n}-{name}");
        let (handoffs, memory) =
            bench_contention::run(g, admin, recipe, &path, n, o.rounds).await?;
        let prefix = format!("in_line_{n}_");
        handoffs.figures(&prefix, &mut out);
        memory.figures(&prefix, &mut out);
        let p50 = handoffs.latencies.percentile_ns(0.5) as f64;
        match baseline {
            None => baseline = Some(p50.max(1.0)),
            Some(two) => out.push(figure(
                &format!("{prefix}handoff_p50_ratio"),
                format!("{:.2}", p50 / two),
                "x_2_sessions",
            )),
        }
    }
    Ok(out)
}

/// Chunks of ours and of Curator's, alternating, on the same sessions: a change in the
/// machine's load falls on both sides. `rounds` hand-offs on each side in all; Curator's
/// first chunk also warms its JIT up.
async fn alternate(
    admin: &Client,
    ours: &Contenders,
    curator: &mut CuratorSide,
    rounds: usize,
) -> Result<(Handoffs, Handoffs), Failure> {
    let chunks = CURATOR_CHUNKS.min(rounds);
    let (mut our_chunks, mut curator_chunks) = (Vec::new(), Vec::new());
    for chunk in 0..chunks {
        // The rounds split as evenly as they go.
        let size = rounds / chunks + usize::from(chunk < rounds % chunks);
        let warmup = bench_contention::warmup(size);
        let jit = if chunk == 0 {
            bench_curator::JIT_WARMUP
        } else {
            Duration::ZERO
        };
        our_chunks.push(ours.chunk(admin, warmup, size).await?.0);
        curator_chunks.push(curator.chunk(warmup, jit, size).await?);
    }
    Ok((
        Handoffs::combine(our_chunks),
        Handoffs::combine(curator_chunks),
    ))
}
