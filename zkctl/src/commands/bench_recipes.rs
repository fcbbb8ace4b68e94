//! `bench lock|latch|semaphore`: uncontended cycles (with `--curator`, against Curator's in chunks
//! alternating with ours), the hand-off between two sessions against getData yardsticks, and
//! the figures under contention ([`super::bench_contention`]).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use zkrs_client::{Client, ErrorKind, Result};
use zkrs_recipes::{
    leader::{participants, CloseMode, LeaderLatch},
    lock::{InterProcessMutex, InterProcessSemaphoreV2, Lease, LockGuard},
};

use crate::args::{BenchOptions, Globals};
use crate::commands::bench_contention::{self, Contenders, Recipe};
use crate::commands::bench_curator::{self, CuratorSide};
use crate::commands::bench_loop::{closed_loop, Figures, Run};
use crate::commands::bench_timing::{bounded, Handoffs, Latencies};
use crate::connection::builder;
use crate::failure::Failure;
use crate::output::figure;

/// With `--curator`, the chunks each side's cycles and hand-offs are measured in, alternating.
const CURATOR_CHUNKS: usize = 5;

/// How long a hand-off round lets the waiter settle (its watch set) before the release.
const SETTLE: Duration = Duration::from_millis(5);

/// `bench lock|latch`: the uncontended cycles, the two-session hand-offs, and the figures
/// under contention; with `--curator`, Curator's side runs for the whole of it (its cycles
/// alternate with ours, then its contended chunks).
pub async fn recipe(
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
            Recipe::Lock => {
                held::<InterProcessMutex>(g, clients, base, o, curator.as_mut()).await?
            }
            Recipe::Latch => latch(g, clients, base, o, curator.as_mut()).await?,
            Recipe::Semaphore => {
                held::<InterProcessSemaphoreV2>(g, clients, base, o, curator.as_mut()).await?
            }
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

/// The two-session hand-offs' figures (`handoffs`, `handoff_p50_us`...), and their
/// yardsticks, measured on `client` in the same run: sequential getData round trips back to
/// back (`get_hot_p50_us`), and one at a time after the same idle pause as each hand-off
/// round (`get_after_idle_p50_us`: the server's threads and ours wake from idle, as they do
/// for a hand-off). Then the hand-off's median in those round trips (`handoff_in_hot_gets`,
/// `handoff_in_idle_gets`).
async fn handoff_figures(
    client: &Client,
    path: &str,
    rounds: usize,
    handoffs: Vec<u64>,
    out: &mut Figures,
) -> Result<()> {
    out.push(figure("handoffs", handoffs.len(), "handoffs"));
    let handoffs = Latencies::new(handoffs);
    handoffs.figures("handoff_", false, out);
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

/// The waiter's task of a hand-off round, once it ends (within the bench's bound).
async fn joined<T>(task: tokio::task::JoinHandle<T>) -> Result<T> {
    bounded("the hand-off", task).await?.map_err(|e| {
        zkrs_client::Error::new(ErrorKind::InvalidInput, format!("waiter task failed: {e}"))
    })
}

/// A second session for hand-offs when `--clients` is 1.
async fn two_clients(g: &Globals, clients: &[Client]) -> Result<(Client, Client)> {
    let second = match clients.get(1) {
        Some(c) => c.clone(),
        None => builder(g).connect().await?,
    };
    Ok((clients[0].clone(), second))
}

/// What the lock and the semaphore benches measure alike: a recipe made on a session at a
/// path, taken (a lock acquired, a lease of one), given back.
trait Held: Clone + Send + Sync + Sized + 'static {
    /// What taking it holds.
    type Hold: Send + 'static;
    /// The name in the nodes' paths and the figures (`lockers/session`...).
    const NAME: &'static str;
    /// The recipe at `path` on `client` (the semaphore with one lease).
    fn make(client: &Client, path: &str) -> Result<Self>;
    /// Acquires it.
    fn take(&self) -> impl Future<Output = Result<Self::Hold>> + Send;
    /// Gives it back.
    fn give(hold: Self::Hold) -> impl Future<Output = Result<()>> + Send;
    /// Its nodes in line (the holders' included).
    fn in_line(&self) -> impl Future<Output = Result<usize>> + Send;
}

impl Held for InterProcessMutex {
    type Hold = LockGuard;
    const NAME: &'static str = "lock";
    fn make(client: &Client, path: &str) -> Result<Self> {
        InterProcessMutex::builder(client, path).build()
    }
    fn take(&self) -> impl Future<Output = Result<LockGuard>> + Send {
        self.acquire()
    }
    fn give(hold: LockGuard) -> impl Future<Output = Result<()>> + Send {
        hold.release()
    }
    async fn in_line(&self) -> Result<usize> {
        Ok(self.participant_nodes().await?.len())
    }
}

impl Held for InterProcessSemaphoreV2 {
    type Hold = Lease;
    const NAME: &'static str = "semaphore";
    fn make(client: &Client, path: &str) -> Result<Self> {
        InterProcessSemaphoreV2::builder(client, path, 1).build()
    }
    fn take(&self) -> impl Future<Output = Result<Lease>> + Send {
        self.acquire_one()
    }
    fn give(hold: Lease) -> impl Future<Output = Result<()>> + Send {
        hold.release()
    }
    async fn in_line(&self) -> Result<usize> {
        // Leases: the holder's, and the waiter's (made once it holds the mutex).
        Ok(self.participant_nodes().await?.len())
    }
}

/// `bench lock` and `bench semaphore`: uncontended cycles, then the two-session hand-off.
async fn held<R: Held>(
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
    // Uncontended: every locker has a lock (a semaphore) of its own, made beforehand (as a
    // service keeps its mutex), so what is counted is the acquire and the release: a lock's
    // create and listing (pipelined) and delete; a semaphore's mutex (create and listing),
    // its lease (create and listing; the mutex let go in the background) and the lease's
    // return.
    let lockers = o.clients * o.in_flight;
    let recipes: Arc<Vec<R>> = Arc::new(
        (0..lockers)
            .map(|task| {
                let client = &clients[task / o.in_flight];
                R::make(client, &format!("{base}/{}-{task}", R::NAME))
            })
            .collect::<Result<_>>()?,
    );
    let cycle = move |_: Client, task: usize, _| {
        let recipes = recipes.clone();
        async move { R::give(recipes[task].take().await?).await }
    };
    cycles(clients, o, cycle, curator, &mut out).await?;

    // Hand-off: A holds, B waits in line (for a semaphore: holding its mutex, its lease node
    // made, watching the leases); the time from A's release to B's acquire returning. The
    // two swap every round.
    let (a, b) = two_clients(g, clients).await?;
    let path = format!("{base}/handoff-{}", R::NAME);
    let mut sides = [R::make(&a, &path)?, R::make(&b, &path)?];
    let mut holder = bounded("the first hold", sides[0].take()).await??;
    let mut handoffs = Vec::with_capacity(o.rounds);
    for _ in 0..o.rounds {
        let taking = sides[1].clone();
        let waiting = tokio::spawn(async move {
            let held = taking.take().await;
            (held, Instant::now())
        });
        until_count("the waiter to queue", 2, || sides[0].in_line()).await?;
        tokio::time::sleep(SETTLE).await;
        let released = Instant::now();
        R::give(holder).await?;
        let (held, acquired) = joined(waiting).await?;
        holder = held?;
        handoffs.push(acquired.duration_since(released).as_nanos() as u64);
        sides.swap(0, 1);
    }
    R::give(holder).await?;
    handoff_figures(&a, base, o.rounds, handoffs, &mut out).await?;
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
        cycle_figures(run, out);
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
    let ours = cycle_figures(Run::combine(ours), out);
    let theirs = Handoffs::combine(theirs);
    theirs.rate_figures("curator_", "cycle", out);
    theirs.latencies.figures("curator_cycle_", false, out);
    out.push(figure(
        "cycles_per_sec_ratio",
        format!("{:.2}", ours.rate() / theirs.rate().max(1e-9)),
        "ours/curator",
    ));
    let p50 = |cycles: &Handoffs| cycles.latencies.percentile_ns(0.5).max(1) as f64;
    out.push(figure(
        "cycle_p50_ratio",
        format!("{:.2}", p50(&ours) / p50(&theirs)),
        "ours/curator",
    ));
    Ok(())
}

/// `cycles`, `cycles_per_sec`, the cost per cycle and the cycles' latencies; the cycles, for
/// the ratios.
fn cycle_figures<T>(run: Run<T>, out: &mut Figures) -> Handoffs {
    let mut cost = Vec::new();
    run.cost_figures("cycle", &mut cost);
    let cycles = Handoffs {
        latencies: Latencies::new(run.latencies),
        window: run.elapsed,
    };
    cycles.rate_figures("", "cycle", out);
    out.extend(cost);
    cycles.latencies.figures("cycle_", false, out);
    cycles
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
        let (next, at) = joined(told).await??;
        handoffs.push(at.duration_since(closed).as_nanos() as u64);
        leader = next;
    }
    leader.close_with(CloseMode::Silent).await?;
    handoff_figures(&sessions[0], base, o.rounds, handoffs, &mut out).await?;
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
