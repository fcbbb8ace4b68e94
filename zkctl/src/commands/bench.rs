//! `bench get|set|create|lock|latch|semaphore`: throughput and latency, printed as
//! `name value unit` lines so scripts can pick figures with `awk`.
//!
//! - get/set/create (here): `--clients` sessions, each with `--in-flight` requests
//!   outstanding (one task per slot, each sending its next request when the last one is
//!   answered: [`super::bench_loop`]), `--ops` requests in all after a short unmeasured
//!   warm-up. `create` also measures deleting what it created.
//! - lock and semaphore ([`super::bench_recipes`]): uncontended acquire+release cycles
//!   (`clients x in-flight` lockers, each on its own lock, or semaphore of one lease), then
//!   `--rounds` hand-offs between two sessions: the time from the holder's release to the
//!   waiter's acquire returning.
//! - latch: uncontended start+lead+close cycles, then `--rounds` leadership hand-offs: the
//!   time from the leader's `close` to the next participant being told it leads.
//! - lock, latch and semaphore, then under contention ([`super::bench_contention`]):
//!   `--contenders` sessions on one lock (latch, semaphore), each cycling, `--rounds`
//!   hand-offs back to back: hand-offs per second and their latency; with `--curator`,
//!   Curator's same loops in a JVM ([`super::bench_curator`]), its uncontended cycles
//!   (`curator_cycles_per_sec`) as well as its hand-offs, and the ratios
//!   (`cycles_per_sec_ratio`, `contended_handoffs_per_sec_ratio`); with `--in-line`, the
//!   same with each length of line against 2 sessions, and the memory per waiting session.
//!
//! Throughput runs also print this process's cost per operation (per cycle for lock): CPU
//! time (`cpu_ns_per_op`, every thread of the process: callers, the client's driver, the
//! runtime) and heap allocations (`allocs_per_op`, allocations and reallocations), over the
//! measured operations only. `--rt current|multi` picks the runtime.
//!
//! Then the library's own figures for the run (`metrics_*`: `Client::metrics` summed over the
//! bench's sessions, latency bounds from its fixed buckets; `recipe_*` for lock, latch and
//! semaphore: `zkrs_recipes::metrics::metrics`), to check a dashboard's figures against the
//! bench's.
//!
//! Everything lives under `/zkctl-bench-<pid>` and is deleted afterwards, also on Ctrl-C.

use std::sync::Arc;

use zkrs_client::{Client, CreateMode, ErrorKind, Result};

use crate::args::{BenchKind, BenchOptions, Globals};
use crate::commands::bench_contention::Recipe;
use crate::commands::bench_loop::{closed_loop, Figures, Run};
use crate::commands::bench_metrics;
use crate::commands::bench_recipes::recipe;
use crate::commands::bench_timing::{Latencies, STUCK};
use crate::commands::data::delete_tree;
use crate::connection::{builder, close, connect};
use crate::failure::{Outcome, ZkMessage};
use crate::output::{figure, note, say};
use crate::pipeline;
use crate::signals::Shutdown;

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
            note!("zkctl: {}: cleaning up {base}", signal.name);
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
        note!("zkctl: could not delete {base}: {}", ZkMessage(&e));
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
        BenchKind::Semaphore => recipe(g, admin, &clients, Recipe::Semaphore, base, &o).await?,
    };
    figures.extend(bench_metrics::client_figures(&clients));
    if matches!(
        kind,
        BenchKind::Lock | BenchKind::Latch | BenchKind::Semaphore
    ) {
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
