//! The closed loop `bench` measures with: `clients x in-flight` tasks, each sending its next
//! operation when the last one is answered, every operation timed, and this process's CPU
//! time and allocations over the run (the client's own cost).

use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::lab;
use crate::output::figure;
use zkrs_client::{Client, ErrorKind, Result};

/// The figures of one run.
pub type Figures = Vec<String>;

/// One measured closed-loop run.
pub struct Run<T> {
    /// Each operation's latency, nanoseconds.
    pub latencies: Vec<u64>,
    /// Wall time.
    pub elapsed: Duration,
    /// What the operations returned.
    pub outputs: Vec<T>,
    /// This process's CPU time over the run (every thread: callers, driver, runtime), where
    /// the binary measures it (see [`crate::lab`]).
    pub cpu: Option<Duration>,
    /// Calls into the allocator over the run, where the binary counts them.
    pub allocations: Option<u64>,
}

impl<T> Run<T> {
    /// Runs measured apart, as one: every latency and output, the times and counts added up.
    pub fn combine(runs: Vec<Run<T>>) -> Run<T> {
        let mut all = Run {
            latencies: Vec::new(),
            elapsed: Duration::ZERO,
            outputs: Vec::new(),
            cpu: Some(Duration::ZERO),
            allocations: Some(0),
        };
        for run in runs {
            all.latencies.extend(run.latencies);
            all.elapsed += run.elapsed;
            all.outputs.extend(run.outputs);
            all.cpu = all.cpu.zip(run.cpu).map(|(a, b)| a + b);
            all.allocations = all.allocations.zip(run.allocations).map(|(a, b)| a + b);
        }
        all
    }

    /// `cpu_ns_per_<unit>` and `allocs_per_<unit>`: the client's own cost per operation
    /// (each where it was measured).
    pub fn cost_figures(&self, unit: &str, out: &mut Figures) {
        let n = self.latencies.len().max(1) as f64;
        if let Some(cpu) = self.cpu {
            out.push(figure(
                &format!("cpu_ns_per_{unit}"),
                (cpu.as_nanos() as f64 / n).round() as u64,
                "ns",
            ));
        }
        if let Some(allocations) = self.allocations {
            out.push(figure(
                &format!("allocs_per_{unit}"),
                format!("{:.2}", allocations as f64 / n),
                "allocs",
            ));
        }
    }
}

/// Runs `ops` operations from `clients.len() x in_flight` tasks, each sending its next
/// request when the last one is answered. `op(client, task, ticket)` is one timed operation
/// of task `task` (`0..clients x in_flight`); tickets are `0..ops`, each used once. The
/// bookkeeping allocates nothing while the clock runs (latencies go into a table made
/// before, by ticket), so the allocations counted are the operations' own.
pub async fn closed_loop<T, F, Fut>(
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
    let lab = lab::get();
    let cpu_time = || lab.cpu_time.map(|f| f());
    let allocation_calls = || lab.allocation_calls.map(|f| f());
    let (started, cpu, allocations) = (Instant::now(), cpu_time(), allocation_calls());
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
        cpu_time()
            .zip(cpu)
            .map(|(now, then)| now.saturating_sub(then)),
        allocation_calls()
            .zip(allocations)
            .map(|(now, then)| now.saturating_sub(then)),
    );
    Ok(Run {
        latencies: table.iter().map(|l| l.load(Ordering::Relaxed)).collect(),
        elapsed,
        outputs,
        cpu,
        allocations,
    })
}
