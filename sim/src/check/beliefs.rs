//! The invariant suites' checker (shared by the real-server fault suites and the
//! simulation): what every participant believed (it holds a lock, a
//! lease, leadership) and when, as intervals on one monotonic clock, and the instants where
//! more participants believed at once than the recipe allows. A belief weighs 1 unless
//! begun with a weight (a write lock weighs as much as every reader together, so one writer
//! with anyone else is over the limit).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// One belief: participant `who` believed from `from` to `to`.
#[derive(Debug, Clone)]
pub struct Interval {
    /// The participant.
    pub who: usize,
    /// When the belief began.
    pub from: Instant,
    /// When it ended (or now, for one still held).
    pub to: Instant,
    /// The session it believed on.
    pub session: i64,
    /// Why the belief ended ("released", "suspended", "lost", "latch", ...).
    pub ended_by: &'static str,
    /// What it counts for against the limit.
    pub weight: usize,
}

#[derive(Debug, Default)]
struct State {
    /// Who believes now: since when, on which session, with what weight.
    open: BTreeMap<usize, (Instant, i64, usize)>,
    closed: Vec<Interval>,
}

/// Beliefs of all participants, on the clock that starts at `epoch`.
#[derive(Debug)]
pub struct Beliefs {
    epoch: Instant,
    state: Mutex<State>,
    /// How many believe now (to wait on).
    believers: watch::Sender<usize>,
}

impl Default for Beliefs {
    fn default() -> Self {
        Beliefs::new()
    }
}

impl Beliefs {
    /// No beliefs yet; the clock starts now.
    pub fn new() -> Beliefs {
        Beliefs {
            epoch: Instant::now(),
            state: Mutex::default(),
            believers: watch::channel(0).0,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `who` believes from `at` (no-op if it already does).
    pub fn begin(&self, who: usize, at: Instant, session: i64) {
        self.begin_weighted(who, at, session, 1);
    }

    /// `who` believes from `at`, counting `weight` against the limit (no-op if it already
    /// believes).
    pub fn begin_weighted(&self, who: usize, at: Instant, session: i64, weight: usize) {
        let mut state = self.state();
        state.open.entry(who).or_insert((at, session, weight));
        self.believers.send_replace(state.open.len());
    }

    /// `who` stops believing at `at` (no-op if it did not).
    pub fn end(&self, who: usize, at: Instant, ended_by: &'static str) {
        let mut state = self.state();
        if let Some((from, session, weight)) = state.open.remove(&who) {
            state.closed.push(Interval {
                who,
                from,
                to: at,
                session,
                ended_by,
                weight,
            });
        }
        self.believers.send_replace(state.open.len());
    }

    /// Whether `who` believes now.
    pub fn believes(&self, who: usize) -> bool {
        self.state().open.contains_key(&who)
    }

    /// Who believes now.
    pub fn believers(&self) -> Vec<usize> {
        self.state().open.keys().copied().collect()
    }

    /// Waits until exactly `n` believe, at most `timeout`; how long it took, or `None`.
    pub async fn wait_for_believers(&self, n: usize, timeout: Duration) -> Option<Duration> {
        let started = Instant::now();
        let mut count = self.believers.subscribe();
        tokio::time::timeout(timeout, count.wait_for(|&c| c == n))
            .await
            .ok()
            .map(|_| started.elapsed())
    }

    /// Every interval, closed ones and (ended at `now`) open ones, by start.
    pub fn intervals(&self, now: Instant) -> Vec<Interval> {
        let state = self.state();
        let mut all = state.closed.clone();
        all.extend(
            state
                .open
                .iter()
                .map(|(&who, &(from, session, weight))| Interval {
                    who,
                    from,
                    to: now,
                    session,
                    ended_by: "(still believing)",
                    weight,
                }),
        );
        all.sort_by_key(|i| i.from);
        all
    }

    /// Milliseconds since the epoch, for printing.
    pub fn ms(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.epoch).as_secs_f64() * 1000.0
    }

    /// One interval as a line of text.
    pub fn show(&self, i: &Interval) -> String {
        format!(
            "participant {} (weight {}) session 0x{:x} [{:.3} ms, {:.3} ms] ({:.3} ms, ended by {})",
            i.who,
            i.weight,
            i.session,
            self.ms(i.from),
            self.ms(i.to),
            (i.to - i.from).as_secs_f64() * 1000.0,
            i.ended_by
        )
    }

    /// The violations: each instant where the beliefs held at once weighed more than `limit`
    /// (more than `limit` participants, when every weight is 1; intervals are closed,
    /// [from, to]; at equal instants an end counts before a begin), with the intervals
    /// involved. One entry per maximal overlap episode.
    pub fn violations(&self, limit: usize, now: Instant) -> Vec<String> {
        let intervals = self.intervals(now);
        // (time, 0 = end / 1 = begin / 2 = end of a belief that began at that instant,
        // index): a belief that begins and ends at one instant still counts there (ending
        // before it began, it would count for ever after).
        let mut events: Vec<(Instant, u8, usize)> = Vec::new();
        for (k, i) in intervals.iter().enumerate() {
            events.push((i.from, 1, k));
            events.push((i.to, if i.to > i.from { 0 } else { 2 }, k));
        }
        events.sort();
        let mut active: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        let mut episode: Option<(Instant, Vec<usize>)> = None;
        for (at, kind, k) in events {
            if kind == 1 {
                active.push(k);
            } else {
                active.retain(|&a| a != k);
            }
            let weight: usize = active.iter().map(|&a| intervals[a].weight).sum();
            if weight > limit {
                let e = episode.get_or_insert((at, Vec::new()));
                for &a in &active {
                    if !e.1.contains(&a) {
                        e.1.push(a);
                    }
                }
            } else if let Some((from, members)) = episode.take() {
                let mut text = format!(
                    "beliefs over the limit of {limit} at once from {:.3} ms to {:.3} ms ({:.3} ms):",
                    self.ms(from),
                    self.ms(at),
                    (at - from).as_secs_f64() * 1000.0
                );
                for m in members {
                    let _ = write!(text, "\n    {}", self.show(&intervals[m]));
                }
                out.push(text);
            }
        }
        out
    }

    /// How many intervals were recorded (closed ones).
    pub fn count(&self) -> usize {
        self.state().closed.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_belief_of_one_instant_counts_at_that_instant_only() {
        let beliefs = Beliefs::new();
        let t0 = beliefs.epoch;
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        // p0 believes for an instant at 10 ms; p1 from 20 ms to 30 ms: no overlap.
        beliefs.begin(0, at(10), 1);
        beliefs.end(0, at(10), "lost");
        beliefs.begin(1, at(20), 2);
        beliefs.end(1, at(30), "released");
        assert!(beliefs.violations(1, at(40)).is_empty());
        // p2 for an instant inside p1's belief: an overlap.
        beliefs.begin(2, at(25), 3);
        beliefs.end(2, at(25), "lost");
        assert_eq!(beliefs.violations(1, at(40)).len(), 1);
        // Hand-offs at one instant are no overlap: p3 ends at 50 ms as p4 begins.
        let handoff = Beliefs::new();
        let at = |ms: u64| handoff.epoch + Duration::from_millis(ms);
        handoff.begin(3, at(40), 4);
        handoff.end(3, at(50), "released");
        handoff.begin(4, at(50), 5);
        handoff.end(4, at(50), "lost");
        handoff.begin(5, at(50), 6);
        handoff.end(5, at(60), "released");
        assert_eq!(handoff.violations(1, at(70)).len(), 1, "p4 and p5 at 50 ms");
    }
}
