//! What `zkctl bench` adds after its own figures: the library's metrics for the run
//! (`Client::metrics` summed over the bench's sessions, and `zkrs_recipes::metrics::metrics`
//! for the lock and latch benches), so the figures a dashboard would show can be checked
//! against the bench's own measurements. Whole run, warm-up included.

use std::time::Duration;

use zkrs_client::{Client, LatencyHistogram};
use zkrs_recipes::metrics::RecipeMetrics;

use crate::output::figure;

/// Bucket counts summed over several histograms.
#[derive(Default)]
struct Summed(Vec<u64>);

impl Summed {
    fn add(&mut self, h: &LatencyHistogram) {
        let counts = h.counts();
        self.0.resize(counts.len().max(self.0.len()), 0);
        for (total, n) in self.0.iter_mut().zip(counts) {
            *total += n;
        }
    }

    /// The upper bound of the bucket holding quantile `q`, in µs (`None`: no count, or
    /// slower than the last bound).
    fn quantile_us(&self, q: f64) -> Option<u128> {
        let total: u64 = self.0.iter().sum();
        if total == 0 {
            return None;
        }
        let rank = ((q * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.0.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return LatencyHistogram::BOUNDS.get(i).map(Duration::as_micros);
            }
        }
        None
    }
}

/// A quantile's bucket bound; left out when there is none (nothing counted, or slower
/// than 10 s), so that every line's value is a number.
fn bound(out: &mut Vec<String>, name: &str, us: Option<u128>) {
    if let Some(us) = us {
        out.push(figure(name, us, "us_at_most"));
    }
}

/// The client figures, summed over `clients`.
pub fn client_figures(clients: &[Client]) -> Vec<String> {
    let mut ops: Vec<(zkrs_client::OpCode, u64, u64, Summed)> = Vec::new();
    let (mut sent, mut received, mut connections) = (0, 0, 0);
    for c in clients {
        let m = c.metrics();
        sent += m.bytes_sent;
        received += m.bytes_received;
        connections += m.connections;
        for op in &m.operations {
            let at = match ops.iter().position(|(o, ..)| *o == op.op) {
                Some(at) => at,
                None => {
                    ops.push((op.op, 0, 0, Summed::default()));
                    ops.len() - 1
                }
            };
            ops[at].1 += op.requests;
            ops[at].2 += op.errors;
            ops[at].3.add(&op.latency);
        }
    }
    let mut out = Vec::new();
    for (op, requests, errors, latency) in &ops {
        let name = op.name();
        out.push(figure(
            &format!("metrics_{name}_requests"),
            requests,
            "count",
        ));
        out.push(figure(&format!("metrics_{name}_errors"), errors, "count"));
        bound(
            &mut out,
            &format!("metrics_{name}_p50"),
            latency.quantile_us(0.5),
        );
        bound(
            &mut out,
            &format!("metrics_{name}_p99"),
            latency.quantile_us(0.99),
        );
    }
    out.push(figure("metrics_bytes_sent", sent, "bytes"));
    out.push(figure("metrics_bytes_received", received, "bytes"));
    out.push(figure("metrics_connections", connections, "count"));
    out
}

/// The recipe figures of this process.
pub fn recipe_figures(m: &RecipeMetrics) -> Vec<String> {
    let mut out = Vec::new();
    for lock in &m.locks {
        let kind = lock.kind.name();
        out.push(figure(
            &format!("recipe_{kind}_acquired"),
            lock.acquired,
            "count",
        ));
        out.push(figure(
            &format!("recipe_{kind}_timed_out"),
            lock.timed_out,
            "count",
        ));
        let mut wait = Summed::default();
        wait.add(&lock.wait);
        bound(
            &mut out,
            &format!("recipe_{kind}_wait_p50"),
            wait.quantile_us(0.5),
        );
        bound(
            &mut out,
            &format!("recipe_{kind}_wait_p99"),
            wait.quantile_us(0.99),
        );
        let mean = lock.hold_total.as_micros() / u128::from(lock.released.max(1));
        out.push(figure(&format!("recipe_{kind}_hold_mean"), mean, "us"));
    }
    let terms = &m.leadership;
    if terms.terms > 0 {
        out.push(figure("recipe_leadership_terms", terms.terms, "count"));
        let ended = terms.term_length.total().max(1);
        let mean = terms.term_total.as_micros() / u128::from(ended);
        out.push(figure("recipe_leadership_term_mean", mean, "us"));
    }
    out
}
