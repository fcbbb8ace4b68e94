//! A client's figures for dashboards: requests, errors and latency by operation, errors by
//! code, bytes, connections, session expiries, watches, requests in flight and waiting.
//!
//! Counted with relaxed atomic adds into tables sized when the client starts, so the request
//! path allocates nothing and takes no lock; [`crate::Client::metrics`] reads a snapshot.
//!
//! `--cfg zkrs_no_metrics` (a build of this workspace only, for measuring) leaves the counting
//! on the request path out, so the session bench can put a price on it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use zkrs_codec::{ErrorCode, OpCode};
use zkrs_session::{Error, ErrorKind};

/// The upper bounds of the latency buckets; a last bucket holds everything slower.
const BOUNDS_US: [u64; 17] = [
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000,
];
const BUCKETS: usize = BOUNDS_US.len() + 1;

/// Opcodes -11 (closeSession) to 32, then 100 to 120 (the 3.5+ watch and config ops), then
/// one slot for anything else.
const OP_SLOTS: usize = 44 + 21 + 1;
/// The code a failed request is counted under: the server's, or for a local failure the code
/// the Java client reports for it (`ConnectionLoss` for a closed client, `BadArguments` for
/// input refused before sending, ...), as [`ClientMetrics::errors`] says.
pub(crate) fn counted_code(error: &Error) -> ErrorCode {
    if let Some(code) = error.code() {
        return code;
    }
    match error.kind() {
        ErrorKind::ConnectionLoss | ErrorKind::Closed => ErrorCode::ConnectionLoss,
        ErrorKind::SessionExpired => ErrorCode::SessionExpired,
        ErrorKind::AuthFailed => ErrorCode::AuthFailed,
        ErrorKind::Protocol | ErrorKind::InvalidData | ErrorKind::ReplyTooLarge => {
            ErrorCode::MarshallingError
        }
        ErrorKind::Timeout => ErrorCode::OperationTimeout,
        ErrorKind::InvalidInput => ErrorCode::BadArguments,
        _ => ErrorCode::SystemError,
    }
}

/// Error codes 0 to -8 (system errors), -100 to -130 (API errors), then one for the rest.
const CODE_SLOTS: usize = 9 + 31 + 1;

fn op_slot(code: i32) -> usize {
    match code {
        -11..=32 => (code + 11) as usize,
        100..=120 => 44 + (code - 100) as usize,
        _ => OP_SLOTS - 1,
    }
}

fn op_of_slot(slot: usize) -> Option<OpCode> {
    match slot {
        0..=43 => OpCode::from_code(slot as i32 - 11),
        44..=64 => OpCode::from_code(slot as i32 - 44 + 100),
        _ => None,
    }
}

fn code_slot(code: i32) -> usize {
    match code {
        -8..=0 => (-code) as usize,
        -130..=-100 => 9 + (-code - 100) as usize,
        _ => CODE_SLOTS - 1,
    }
}

fn code_of_slot(slot: usize) -> Option<ErrorCode> {
    match slot {
        0..=8 => Some(ErrorCode::from_code(-(slot as i32))),
        9..=39 => Some(ErrorCode::from_code(-(slot as i32 - 9 + 100))),
        _ => None,
    }
}

#[derive(Default)]
struct OpCounters {
    requests: AtomicU64,
    errors: AtomicU64,
    latency: AtomicHistogram,
}

/// Durations counted into [`LatencyHistogram`]'s buckets with relaxed atomic adds: no lock,
/// no allocation. (The recipes count their waits and holds with it too.)
#[derive(Debug)]
pub struct AtomicHistogram {
    counts: [AtomicU64; BUCKETS],
}

impl Default for AtomicHistogram {
    fn default() -> Self {
        AtomicHistogram::new()
    }
}

impl AtomicHistogram {
    /// Empty; usable in a `static`.
    pub const fn new() -> AtomicHistogram {
        AtomicHistogram {
            counts: [const { AtomicU64::new(0) }; BUCKETS],
        }
    }

    /// Counts one duration.
    pub fn record(&self, elapsed: Duration) {
        let us = elapsed.as_micros();
        let bucket = BOUNDS_US
            .iter()
            .position(|&b| us <= u128::from(b))
            .unwrap_or(BUCKETS - 1);
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
    }

    /// The counts now.
    pub fn snapshot(&self) -> LatencyHistogram {
        LatencyHistogram {
            counts: std::array::from_fn(|i| self.counts[i].load(Ordering::Relaxed)),
        }
    }
}

/// The live counters of one client, shared by its handles and its driver.
pub(crate) struct Metrics {
    ops: Box<[OpCounters]>,
    /// Errors by code, with one slot for codes this table does not know.
    errors: Box<[AtomicU64]>,
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
    connections: AtomicU64,
    session_moves: AtomicU64,
    session_expiries: AtomicU64,
    watches_registered: AtomicU64,
    watch_events: AtomicU64,
}

impl Metrics {
    pub(crate) fn new() -> Metrics {
        Metrics {
            ops: (0..OP_SLOTS).map(|_| OpCounters::default()).collect(),
            errors: (0..CODE_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            bytes_sent: AtomicU64::new(0),
            bytes_received: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            session_moves: AtomicU64::new(0),
            session_expiries: AtomicU64::new(0),
            watches_registered: AtomicU64::new(0),
            watch_events: AtomicU64::new(0),
        }
    }

    /// A request of `op` ended after `elapsed` (from the call to its answer), with `error`'s
    /// code if it failed.
    pub(crate) fn request(&self, op: OpCode, elapsed: Duration, error: Option<&Error>) {
        let error = error.map(counted_code);
        let counters = &self.ops[op_slot(op.code())];
        counters.requests.fetch_add(1, Ordering::Relaxed);
        counters.latency.record(elapsed);
        if let Some(code) = error {
            counters.errors.fetch_add(1, Ordering::Relaxed);
            self.errors[code_slot(code.code())].fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn sent(&self, bytes: usize) {
        if cfg!(zkrs_no_metrics) {
            return;
        }
        self.bytes_sent.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn received(&self, bytes: usize) {
        if cfg!(zkrs_no_metrics) {
            return;
        }
        self.bytes_received
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn connected(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn session_moved(&self) {
        self.session_moves.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn session_expired(&self) {
        self.session_expiries.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn watch_registered(&self) {
        self.watches_registered.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn watch_event(&self) {
        self.watch_events.fetch_add(1, Ordering::Relaxed);
    }

    /// The figures now, with the bound's own counts (`None`: no bound).
    pub(crate) fn snapshot(&self, in_flight: Option<(usize, usize)>) -> ClientMetrics {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let operations = self
            .ops
            .iter()
            .enumerate()
            .filter(|(_, c)| load(&c.requests) > 0)
            .filter_map(|(slot, c)| {
                Some(OperationMetrics {
                    op: op_of_slot(slot)?,
                    requests: load(&c.requests),
                    errors: load(&c.errors),
                    latency: c.latency.snapshot(),
                })
            })
            .collect();
        let errors = self
            .errors
            .iter()
            .enumerate()
            .filter(|(_, n)| load(n) > 0)
            .filter_map(|(slot, n)| Some((code_of_slot(slot)?, load(n))))
            .collect();
        ClientMetrics {
            operations,
            errors,
            bytes_sent: load(&self.bytes_sent),
            bytes_received: load(&self.bytes_received),
            connections: load(&self.connections),
            session_moves: load(&self.session_moves),
            session_expiries: load(&self.session_expiries),
            watches_registered: load(&self.watches_registered),
            watch_events: load(&self.watch_events),
            in_flight: in_flight.map(|(taken, _)| taken),
            waiting: in_flight.map_or(0, |(_, waiting)| waiting as u64),
        }
    }
}

/// A snapshot of a client's figures since it started ([`crate::Client::metrics`]).
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) {
/// let m = client.metrics();
/// for op in &m.operations {
///     println!(
///         "{}: {} requests, {} errors, p99 <= {:?}",
///         op.op,
///         op.requests,
///         op.errors,
///         op.latency.quantile(0.99)
///     );
/// }
/// println!("{} bytes out, {} in, {} in flight", m.bytes_sent, m.bytes_received, m.in_flight.unwrap_or(0));
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientMetrics {
    /// Per operation that was used: requests, errors, latency.
    pub operations: Vec<OperationMetrics>,
    /// Failed requests by error code (server codes, and the local ones: `ConnectionLoss`,
    /// `BadArguments` for input refused before sending, ...), in code order.
    pub errors: Vec<(ErrorCode, u64)>,
    /// Bytes written to servers.
    pub bytes_sent: u64,
    /// Bytes read from servers.
    pub bytes_received: u64,
    /// Connections on which the session became usable (the first, then every reconnect).
    pub connections: u64,
    /// Moves of the session to another host without suspension (a host-list change, the
    /// ensemble tracker): the new connection was opened before the old one was let go.
    /// Not counted in `connections`.
    pub session_moves: u64,
    /// Sessions lost (expired, or disconnected past their timeout).
    pub session_expiries: u64,
    /// Watches left by successful requests (one-shot and persistent).
    pub watches_registered: u64,
    /// Watch events delivered.
    pub watch_events: u64,
    /// Requests in flight now (`None` when the bound is removed: not counted then).
    pub in_flight: Option<usize>,
    /// Requests waiting now for a place in flight (0 when there is no bound).
    pub waiting: u64,
}

/// One operation's figures.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OperationMetrics {
    /// The operation.
    pub op: OpCode,
    /// Requests handed over to the connection (answered or failed); not those refused
    /// before sending (a bad path, data over the limit).
    pub requests: u64,
    /// Of which failed.
    pub errors: u64,
    /// Time from the call to its answer, including any wait for a place in flight.
    pub latency: LatencyHistogram,
}

/// Counts of latencies in fixed buckets ([`LatencyHistogram::BOUNDS`], then one for
/// anything slower).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatencyHistogram {
    counts: [u64; BUCKETS],
}

impl LatencyHistogram {
    /// The upper bounds of the buckets (50 µs to 10 s); a last bucket holds the rest.
    pub const BOUNDS: [Duration; 17] = {
        let mut bounds = [Duration::ZERO; 17];
        let mut i = 0;
        while i < 17 {
            bounds[i] = Duration::from_micros(BOUNDS_US[i]);
            i += 1;
        }
        bounds
    };

    /// The count of each bucket (one more than [`LatencyHistogram::BOUNDS`]).
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Latencies counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The upper bound of the bucket that holds the `q` quantile (0.0 to 1.0): the `q`
    /// quantile is at most this. `None` with no latency counted, or when it falls in the
    /// last bucket (slower than 10 s).
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Self::BOUNDS.get(i).copied();
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_code_has_its_own_slot() {
        for &op in OpCode::ALL {
            assert_eq!(op_of_slot(op_slot(op.code())), Some(op), "{op}");
        }
        for code in (-8..=0).chain(-130..=-100) {
            let e = ErrorCode::from_code(code);
            if !matches!(e, ErrorCode::Unknown(_)) {
                assert_eq!(code_of_slot(code_slot(code)), Some(e), "{e}");
            }
        }
    }

    #[test]
    fn quantiles_are_bucket_bounds() {
        let m = Metrics::new();
        for us in [40, 60, 60, 900, 20_000_000] {
            m.request(OpCode::GetData, Duration::from_micros(us), None);
        }
        let h = &m.snapshot(None).operations[0].latency;
        assert_eq!(h.total(), 5);
        assert_eq!(h.quantile(0.2), Some(Duration::from_micros(50)));
        assert_eq!(h.quantile(0.6), Some(Duration::from_micros(100)));
        assert_eq!(h.quantile(0.8), Some(Duration::from_micros(1000)));
        assert_eq!(h.quantile(1.0), None);
    }
}
