//! Feature `metrics`: the figures of [`crate::Client::metrics`] reported through the
//! `metrics` crate's facade, so whatever exporter the service installed (Prometheus,
//! OpenTelemetry, statsd) publishes them.
//!
//! A task reads the client's counters once a second and sets the facade's counters to their
//! totals (`absolute`) and its gauges to their values: the request path pays nothing more
//! than for `Client::metrics`. The task ends when the last handle of the client is dropped.
//!
//! | name | kind | labels |
//! |---|---|---|
//! | `zookeeper_client_requests_total` | counter | `client`, `op` |
//! | `zookeeper_client_request_errors_total` | counter | `client`, `op` |
//! | `zookeeper_client_request_duration_seconds_bucket` | counter (cumulative, Prometheus' histogram layout) | `client`, `op`, `le` |
//! | `zookeeper_client_errors_total` | counter | `client`, `code` |
//! | `zookeeper_client_sent_bytes_total` | counter | `client` |
//! | `zookeeper_client_received_bytes_total` | counter | `client` |
//! | `zookeeper_client_connections_total` | counter | `client` |
//! | `zookeeper_client_session_moves_total` | counter | `client` |
//! | `zookeeper_client_session_expiries_total` | counter | `client` |
//! | `zookeeper_client_watches_registered_total` | counter | `client` |
//! | `zookeeper_client_watch_events_total` | counter | `client` |
//! | `zookeeper_client_requests_in_flight` | gauge | `client` |
//! | `zookeeper_client_requests_waiting` | gauge | `client` |

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Weak;
use std::time::Duration;

use metrics::{counter, gauge};

use crate::client::Inner;
use crate::metrics::{ClientMetrics, LatencyHistogram};

/// How often the figures are reported.
const EVERY: Duration = Duration::from_secs(1);

/// The `client` label of a client built without `ClientBuilder::metrics_label`: `zkrs-1`,
/// `zkrs-2`, ... in the order clients start in this process.
pub(crate) fn default_label() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("zkrs-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Starts the reporting task of the client `inner` (it holds it weakly).
pub(crate) fn spawn(inner: Weak<Inner>, label: String) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(inner) = inner.upgrade() else {
                return;
            };
            let figures = inner.metrics.snapshot(inner.in_flight.counts());
            drop(inner);
            report(&label, &figures);
        }
    });
}

/// Sets the facade's metrics to `m`'s values.
pub(crate) fn report(client: &str, m: &ClientMetrics) {
    let client = client.to_string();
    for op in &m.operations {
        let name = op.op.name();
        counter!("zookeeper_client_requests_total", "client" => client.clone(), "op" => name)
            .absolute(op.requests);
        counter!("zookeeper_client_request_errors_total", "client" => client.clone(), "op" => name)
            .absolute(op.errors);
        let mut cumulative = 0;
        let counts = op.latency.counts();
        for (i, n) in counts.iter().enumerate() {
            cumulative += n;
            let le = match LatencyHistogram::BOUNDS.get(i) {
                Some(bound) => bound.as_secs_f64().to_string(),
                None => "+Inf".to_string(),
            };
            counter!(
                "zookeeper_client_request_duration_seconds_bucket",
                "client" => client.clone(), "op" => name, "le" => le
            )
            .absolute(cumulative);
        }
    }
    for (code, n) in &m.errors {
        counter!("zookeeper_client_errors_total", "client" => client.clone(), "code" => code.name())
            .absolute(*n);
    }
    let totals = [
        ("zookeeper_client_sent_bytes_total", m.bytes_sent),
        ("zookeeper_client_received_bytes_total", m.bytes_received),
        ("zookeeper_client_connections_total", m.connections),
        ("zookeeper_client_session_moves_total", m.session_moves),
        (
            "zookeeper_client_session_expiries_total",
            m.session_expiries,
        ),
        (
            "zookeeper_client_watches_registered_total",
            m.watches_registered,
        ),
        ("zookeeper_client_watch_events_total", m.watch_events),
    ];
    for (name, value) in totals {
        counter!(name, "client" => client.clone()).absolute(value);
    }
    gauge!("zookeeper_client_requests_in_flight", "client" => client.clone())
        .set(m.in_flight.unwrap_or(0) as f64);
    gauge!("zookeeper_client_requests_waiting", "client" => client).set(m.waiting as f64);
}
