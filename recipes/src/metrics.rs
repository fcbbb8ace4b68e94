//! The recipes' figures for dashboards, beside [`Client::metrics`](zkrs_client::Client::metrics):
//! time waiting for and holding locks, leadership terms, cache events and reads, queue items
//! moved. Process-wide (every recipe of every client in this process), counted with relaxed
//! atomic adds into static tables: no lock, no allocation. [`metrics()`] reads a snapshot.
//!
//! With the feature `metrics`, each figure is also reported through the `metrics` crate's
//! facade as it is counted (recipes count at the pace of lock hand-offs and elections, never
//! per request), so the exporter a service installs publishes them:
//!
//! | name | kind | labels |
//! |---|---|---|
//! | `zookeeper_recipe_lock_acquired_total` | counter | `kind` (`mutex`, `semaphore`, `read`, `write`) |
//! | `zookeeper_recipe_lock_timeouts_total` | counter | `kind` |
//! | `zookeeper_recipe_lock_released_total` | counter | `kind` |
//! | `zookeeper_recipe_lock_wait_seconds` | histogram | `kind` |
//! | `zookeeper_recipe_lock_hold_seconds` | histogram | `kind` |
//! | `zookeeper_recipe_leadership_terms_total` | counter | |
//! | `zookeeper_recipe_leadership_term_seconds` | histogram | |
//! | `zookeeper_recipe_leaders` | gauge | |
//! | `zookeeper_recipe_cache_events_total` | counter | |
//! | `zookeeper_recipe_cache_reads_total` | counter | |
//! | `zookeeper_recipe_cache_resyncs_total` | counter | |
//! | `zookeeper_recipe_queue_put_total` | counter | |
//! | `zookeeper_recipe_queue_taken_total` | counter | |

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use zkrs_client::__private::AtomicHistogram;
use zkrs_client::LatencyHistogram;

/// Which lock recipe a lock figure is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LockKind {
    /// [`InterProcessMutex`](crate::lock::InterProcessMutex) (and each mutex of a
    /// [`InterProcessMultiLock`](crate::lock::InterProcessMultiLock)).
    Mutex,
    /// A lease of [`InterProcessSemaphoreV2`](crate::lock::InterProcessSemaphoreV2) (and of the
    /// semaphore mutex built on it).
    Semaphore,
    /// The read side of [`InterProcessReadWriteLock`](crate::lock::InterProcessReadWriteLock).
    Read,
    /// Its write side.
    Write,
}

impl LockKind {
    const ALL: [LockKind; 4] = [
        LockKind::Mutex,
        LockKind::Semaphore,
        LockKind::Read,
        LockKind::Write,
    ];

    /// The `kind` label: `mutex`, `semaphore`, `read`, `write`.
    pub fn name(self) -> &'static str {
        match self {
            LockKind::Mutex => "mutex",
            LockKind::Semaphore => "semaphore",
            LockKind::Read => "read",
            LockKind::Write => "write",
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

/// The recipes' figures since the process started ([`metrics()`]).
///
/// ```
/// let m = zkrs_recipes::metrics::metrics();
/// for lock in &m.locks {
///     println!(
///         "{}: {} acquired, {} timed out, wait p99 <= {:?}",
///         lock.kind.name(),
///         lock.acquired,
///         lock.timed_out,
///         lock.wait.quantile(0.99)
///     );
/// }
/// println!("{} leadership terms, {} leading now", m.leadership.terms, m.leadership.leading);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecipeMetrics {
    /// Per lock kind that was used.
    pub locks: Vec<LockMetrics>,
    /// The leader recipes together.
    pub leadership: LeadershipMetrics,
    /// The caches together.
    pub caches: CacheMetrics,
    /// The queues together.
    pub queues: QueueMetrics,
}

/// One lock kind's figures.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LockMetrics {
    /// Which.
    pub kind: LockKind,
    /// Acquisitions (each lease of a semaphore is one).
    pub acquired: u64,
    /// Attempts that timed out (`try_acquire`).
    pub timed_out: u64,
    /// Holds that ended (released or dropped).
    pub released: u64,
    /// Time from the call to the lock, for acquisitions and timeouts.
    pub wait: LatencyHistogram,
    /// Time from the acquisition to the release (or drop) of the guard.
    pub hold: LatencyHistogram,
    /// The sum of the hold times (with `released`: the mean; the histogram's top bucket is
    /// 10 s).
    pub hold_total: Duration,
}

/// The leader recipes' figures ([`LeaderLatch`](crate::leader::LeaderLatch),
/// [`LeaderSelector`](crate::leader::LeaderSelector),
/// [`LeaderElection`](crate::leader::LeaderElection),
/// [`MasterElection`](crate::leader::MasterElection)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LeadershipMetrics {
    /// Terms begun (a participant became leader).
    pub terms: u64,
    /// Participants leading now.
    pub leading: u64,
    /// The lengths of the terms that ended.
    pub term_length: LatencyHistogram,
    /// Their sum.
    pub term_total: Duration,
}

/// The caches' figures ([`CuratorCache`](crate::cache::CuratorCache),
/// [`TreeCache`](crate::cache::TreeCache), [`PathChildrenCache`](crate::cache::PathChildrenCache),
/// [`NodeCache`](crate::cache::NodeCache)).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CacheMetrics {
    /// Events told to listeners (a node added, changed or removed, and the others).
    pub events: u64,
    /// Reads made to learn of a change (`getData`, `exists`, `getChildren`).
    pub reads: u64,
    /// Times a cache read everything again (after a reconnect, a new session, a refresh).
    pub resyncs: u64,
}

/// The queues' figures (every queue of `zkrs_recipes::queue`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct QueueMetrics {
    /// Items put (a batch put as one node counts once).
    pub put: u64,
    /// Items taken.
    pub taken: u64,
}

struct LockCounters {
    acquired: AtomicU64,
    timed_out: AtomicU64,
    released: AtomicU64,
    wait: AtomicHistogram,
    hold: AtomicHistogram,
    hold_us: AtomicU64,
}

impl LockCounters {
    const fn new() -> LockCounters {
        LockCounters {
            acquired: AtomicU64::new(0),
            timed_out: AtomicU64::new(0),
            released: AtomicU64::new(0),
            wait: AtomicHistogram::new(),
            hold: AtomicHistogram::new(),
            hold_us: AtomicU64::new(0),
        }
    }
}

static LOCKS: [LockCounters; 4] = [const { LockCounters::new() }; 4];
static TERMS: AtomicU64 = AtomicU64::new(0);
static TERMS_ENDED: AtomicU64 = AtomicU64::new(0);
static TERM_LENGTH: AtomicHistogram = AtomicHistogram::new();
static TERM_US: AtomicU64 = AtomicU64::new(0);
static CACHE_EVENTS: AtomicU64 = AtomicU64::new(0);
static CACHE_READS: AtomicU64 = AtomicU64::new(0);
static CACHE_RESYNCS: AtomicU64 = AtomicU64::new(0);
static QUEUE_PUT: AtomicU64 = AtomicU64::new(0);
static QUEUE_TAKEN: AtomicU64 = AtomicU64::new(0);

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A snapshot of the recipes' figures in this process.
pub fn metrics() -> RecipeMetrics {
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let locks = LockKind::ALL
        .iter()
        .map(|&kind| {
            let c = &LOCKS[kind.slot()];
            LockMetrics {
                kind,
                acquired: load(&c.acquired),
                timed_out: load(&c.timed_out),
                released: load(&c.released),
                wait: c.wait.snapshot(),
                hold: c.hold.snapshot(),
                hold_total: Duration::from_micros(load(&c.hold_us)),
            }
        })
        .filter(|l| l.acquired + l.timed_out > 0)
        .collect();
    let terms = load(&TERMS);
    RecipeMetrics {
        locks,
        leadership: LeadershipMetrics {
            terms,
            leading: terms.saturating_sub(load(&TERMS_ENDED)),
            term_length: TERM_LENGTH.snapshot(),
            term_total: Duration::from_micros(load(&TERM_US)),
        },
        caches: CacheMetrics {
            events: load(&CACHE_EVENTS),
            reads: load(&CACHE_READS),
            resyncs: load(&CACHE_RESYNCS),
        },
        queues: QueueMetrics {
            put: load(&QUEUE_PUT),
            taken: load(&QUEUE_TAKEN),
        },
    }
}

/// Counting, for the recipes.
pub(crate) mod count {
    use super::*;

    /// An attempt at a lock of `kind` (if counted) that began at `started` ended: `got` it,
    /// or timed out.
    pub(crate) fn lock_attempt(kind: Option<LockKind>, started: tokio::time::Instant, got: bool) {
        let Some(kind) = kind else {
            return;
        };
        let waited = started.elapsed();
        if got {
            lock_acquired(kind, waited);
        } else {
            lock_timed_out(kind, waited);
        }
    }

    /// A lock of `kind` was acquired after `waited`.
    pub(crate) fn lock_acquired(kind: LockKind, waited: Duration) {
        let c = &LOCKS[kind.slot()];
        add(&c.acquired, 1);
        c.wait.record(waited);
        #[cfg(feature = "metrics")]
        {
            ::metrics::counter!("zookeeper_recipe_lock_acquired_total", "kind" => kind.name())
                .increment(1);
            ::metrics::histogram!("zookeeper_recipe_lock_wait_seconds", "kind" => kind.name())
                .record(waited.as_secs_f64());
        }
    }

    /// An attempt at a lock of `kind` timed out after `waited`.
    pub(crate) fn lock_timed_out(kind: LockKind, waited: Duration) {
        let c = &LOCKS[kind.slot()];
        add(&c.timed_out, 1);
        c.wait.record(waited);
        #[cfg(feature = "metrics")]
        {
            ::metrics::counter!("zookeeper_recipe_lock_timeouts_total", "kind" => kind.name())
                .increment(1);
            ::metrics::histogram!("zookeeper_recipe_lock_wait_seconds", "kind" => kind.name())
                .record(waited.as_secs_f64());
        }
    }

    /// A hold of a lock of `kind` ended after `held`.
    pub(crate) fn lock_released(kind: LockKind, held: Duration) {
        let c = &LOCKS[kind.slot()];
        add(&c.released, 1);
        add(&c.hold_us, micros(held));
        c.hold.record(held);
        #[cfg(feature = "metrics")]
        {
            ::metrics::counter!("zookeeper_recipe_lock_released_total", "kind" => kind.name())
                .increment(1);
            ::metrics::histogram!("zookeeper_recipe_lock_hold_seconds", "kind" => kind.name())
                .record(held.as_secs_f64());
        }
    }

    /// A participant became leader.
    pub(crate) fn term_began() {
        add(&TERMS, 1);
        #[cfg(feature = "metrics")]
        {
            ::metrics::counter!("zookeeper_recipe_leadership_terms_total").increment(1);
            ::metrics::gauge!("zookeeper_recipe_leaders").increment(1.0);
        }
    }

    /// A participant stopped leading after `length`.
    pub(crate) fn term_ended(length: Duration) {
        add(&TERMS_ENDED, 1);
        add(&TERM_US, micros(length));
        TERM_LENGTH.record(length);
        #[cfg(feature = "metrics")]
        {
            ::metrics::histogram!("zookeeper_recipe_leadership_term_seconds")
                .record(length.as_secs_f64());
            ::metrics::gauge!("zookeeper_recipe_leaders").decrement(1.0);
        }
    }

    /// A cache told an event.
    pub(crate) fn cache_event() {
        add(&CACHE_EVENTS, 1);
        #[cfg(feature = "metrics")]
        ::metrics::counter!("zookeeper_recipe_cache_events_total").increment(1);
    }

    /// A cache sent a read.
    pub(crate) fn cache_read() {
        add(&CACHE_READS, 1);
        #[cfg(feature = "metrics")]
        ::metrics::counter!("zookeeper_recipe_cache_reads_total").increment(1);
    }

    /// A cache reads everything again.
    pub(crate) fn cache_resync() {
        add(&CACHE_RESYNCS, 1);
        #[cfg(feature = "metrics")]
        ::metrics::counter!("zookeeper_recipe_cache_resyncs_total").increment(1);
    }

    /// A queue item was put.
    pub(crate) fn queue_put() {
        add(&QUEUE_PUT, 1);
        #[cfg(feature = "metrics")]
        ::metrics::counter!("zookeeper_recipe_queue_put_total").increment(1);
    }

    /// A queue item was taken.
    pub(crate) fn queue_taken() {
        add(&QUEUE_TAKEN, 1);
        #[cfg(feature = "metrics")]
        ::metrics::counter!("zookeeper_recipe_queue_taken_total").increment(1);
    }
}
