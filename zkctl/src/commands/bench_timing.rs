//! How `zkctl bench` times things: measured latencies and their percentiles, and waits
//! that report a stuck benchmark instead of hanging.

use std::future::Future;
use std::time::Duration;

use zkrs_client::{ErrorKind, Result};

use crate::output::figure;

/// How long any single wait of a benchmark may take before it is reported as stuck.
pub const STUCK: Duration = Duration::from_secs(30);

/// Latencies in nanoseconds, sorted, with nearest-rank percentiles.
pub struct Latencies(Vec<u64>);

impl Latencies {
    /// Sorts `all`.
    pub fn new(mut all: Vec<u64>) -> Latencies {
        all.sort_unstable();
        Latencies(all)
    }

    /// How many were measured.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The nearest-rank percentile `q` (0 to 1), nanoseconds; 0 when nothing was measured.
    pub fn percentile_ns(&self, q: f64) -> u64 {
        if self.0.is_empty() {
            return 0;
        }
        let rank = ((q * self.0.len() as f64).ceil() as usize).clamp(1, self.0.len());
        self.0[rank - 1]
    }

    /// The same in microseconds.
    pub fn percentile_us(&self, q: f64) -> u64 {
        self.percentile_ns(q) / 1000
    }

    /// `p50`, `p99` (and with `full`, `p90`, `p999`, `max`) lines named `<prefix>p50_us`.
    pub fn figures(&self, prefix: &str, full: bool, out: &mut Vec<String>) {
        let mut quantiles = vec![("p50", 0.5), ("p99", 0.99)];
        if full {
            quantiles.insert(1, ("p90", 0.9));
            quantiles.extend([("p999", 0.999), ("max", 1.0)]);
        }
        for (name, q) in quantiles {
            out.push(figure(
                &format!("{prefix}{name}_us"),
                self.percentile_us(q),
                "us",
            ));
        }
    }
}

/// Hand-offs measured back to back under contention: each one's latency, and the window
/// they took from the acquisition before the first to the last.
pub struct Handoffs {
    /// Each hand-off's latency.
    pub latencies: Latencies,
    /// The window.
    pub window: Duration,
}

impl Handoffs {
    /// Hand-offs per second over the window.
    pub fn rate(&self) -> f64 {
        self.latencies.len() as f64 / self.window.as_secs_f64().max(1e-9)
    }

    /// Chunks measured apart, as one: every latency, and the windows added up.
    pub fn combine(chunks: Vec<Handoffs>) -> Handoffs {
        let window = chunks.iter().map(|c| c.window).sum();
        let latencies = chunks.into_iter().flat_map(|c| c.latencies.0).collect();
        Handoffs {
            latencies: Latencies::new(latencies),
            window,
        }
    }

    /// `<prefix>handoffs`, `<prefix>handoffs_per_sec`, `<prefix>handoff_p50_us`,
    /// `<prefix>handoff_p99_us`.
    pub fn figures(&self, prefix: &str, out: &mut Vec<String>) {
        self.rate_figures(prefix, "handoff", out);
        self.latencies
            .figures(&format!("{prefix}handoff_"), false, out);
    }

    /// `<prefix><what>s` (how many) and `<prefix><what>s_per_sec`: `what` is `handoff`, or
    /// `cycle` for the uncontended cycles measured the same way.
    pub fn rate_figures(&self, prefix: &str, what: &str, out: &mut Vec<String>) {
        out.push(figure(
            &format!("{prefix}{what}s"),
            self.latencies.len(),
            &format!("{what}s"),
        ));
        out.push(figure(
            &format!("{prefix}{what}s_per_sec"),
            self.rate().round() as u64,
            &format!("{what}s/s"),
        ));
    }
}

/// Waits for `what`, at most [`STUCK`].
pub async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> Result<T> {
    tokio::time::timeout(STUCK, f).await.map_err(|_| {
        zkrs_client::Error::new(ErrorKind::Timeout, format!("stuck waiting for {what}"))
    })
}
