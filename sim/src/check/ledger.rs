//! The queue checker: what happened to the items of one distributed queue (puts acknowledged
//! or in doubt, deliveries, completions), and the invariants over it. Shared by the simulated
//! `queues` suite and the real-server one (`recipes/tests/invariants_data.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// What happened to the items of one queue (each item a number, its data): record with the
/// `record_*` methods, then ask for the violations.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Items whose put was acknowledged.
    acked: BTreeSet<u64>,
    /// Items whose put's outcome is unknown (its reply lost).
    put_in_doubt: BTreeSet<u64>,
    /// Deliveries per item (take returned it).
    delivered: BTreeMap<u64, u32>,
    /// Completions acknowledged per item (lock path only).
    completed: BTreeMap<u64, u32>,
    /// Items whose completion's outcome is unknown (lock path only).
    complete_in_doubt: BTreeSet<u64>,
}

/// A broken invariant of a queue, found by [`Ledger::locked_violations`] or
/// [`Ledger::plain_violations`]. `Display` gives the text the suites report.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueueViolation {
    /// A queue with a lock path completed an item more than once.
    CompletedTwice {
        /// The item.
        item: u64,
        /// How many times it was completed.
        times: u32,
    },
    /// A queue with a lock path never completed these acknowledged items (and no completion
    /// of theirs is in doubt).
    NeverCompleted(Vec<u64>),
    /// A queue without a lock path delivered an item more than once.
    DeliveredTwice {
        /// The item.
        item: u64,
        /// How many times it was delivered.
        times: u32,
    },
    /// A queue without a lock path lost more acknowledged items than its consumers' claims
    /// whose outcome was unknown.
    Missing {
        /// Acknowledged items never delivered.
        missing: u64,
        /// The consumers' claims in doubt.
        in_doubt_claims: u64,
    },
}

impl fmt::Display for QueueViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueViolation::CompletedTwice { item, times } => {
                write!(f, "locked queue: item {item} completed {times} times")
            }
            QueueViolation::NeverCompleted(lost) => write!(
                f,
                "locked queue: acknowledged items never completed: {lost:?}"
            ),
            QueueViolation::DeliveredTwice { item, times } => {
                write!(f, "plain queue: item {item} delivered {times} times")
            }
            QueueViolation::Missing {
                missing,
                in_doubt_claims,
            } => write!(
                f,
                "plain queue: {missing} acknowledged items never delivered, only {in_doubt_claims} claims in doubt"
            ),
        }
    }
}

impl Ledger {
    /// Item `id`'s put was acknowledged.
    pub fn record_put(&mut self, id: u64) {
        self.acked.insert(id);
    }

    /// Item `id`'s put's outcome is unknown (its reply was lost).
    pub fn record_put_in_doubt(&mut self, id: u64) {
        self.put_in_doubt.insert(id);
    }

    /// A take returned item `id`.
    pub fn record_delivery(&mut self, id: u64) {
        *self.delivered.entry(id).or_default() += 1;
    }

    /// Item `id`'s completion was acknowledged (lock path only).
    pub fn record_completion(&mut self, id: u64) {
        *self.completed.entry(id).or_default() += 1;
    }

    /// Item `id`'s completion's outcome is unknown (lock path only).
    pub fn record_completion_in_doubt(&mut self, id: u64) {
        self.complete_in_doubt.insert(id);
    }

    /// How many puts were acknowledged.
    pub fn puts_acked(&self) -> usize {
        self.acked.len()
    }

    /// How many puts' outcomes are unknown.
    pub fn puts_in_doubt(&self) -> usize {
        self.put_in_doubt.len()
    }

    /// How many completions' outcomes are unknown.
    pub fn completions_in_doubt(&self) -> usize {
        self.complete_in_doubt.len()
    }

    /// A queue with a lock path: every acknowledged item completed exactly once (never
    /// twice; never lost, unless a completion's outcome is unknown). The violations.
    pub fn locked_violations(&self) -> Vec<QueueViolation> {
        let mut found = Vec::new();
        for (&id, &n) in &self.completed {
            if n > 1 {
                found.push(QueueViolation::CompletedTwice { item: id, times: n });
            }
        }
        let lost: Vec<u64> = self
            .acked
            .iter()
            .copied()
            .filter(|id| !self.completed.contains_key(id) && !self.complete_in_doubt.contains(id))
            .collect();
        if !lost.is_empty() {
            found.push(QueueViolation::NeverCompleted(lost));
        }
        found
    }

    /// Acknowledged items never delivered.
    pub fn missing(&self) -> u64 {
        self.acked
            .iter()
            .filter(|id| !self.delivered.contains_key(id))
            .count() as u64
    }

    /// A queue without a lock path (at most once): no item delivered twice, and no more
    /// acknowledged items missing than the consumers' claims whose outcome was unknown
    /// (`in_doubt_claims`). The violations.
    pub fn plain_violations(&self, in_doubt_claims: u64) -> Vec<QueueViolation> {
        let mut found = Vec::new();
        for (&id, &n) in &self.delivered {
            if n > 1 {
                found.push(QueueViolation::DeliveredTwice { item: id, times: n });
            }
        }
        let missing = self.missing();
        if missing > in_doubt_claims {
            found.push(QueueViolation::Missing {
                missing,
                in_doubt_claims,
            });
        }
        found
    }

    /// Deliveries beyond the first of each item.
    pub fn redeliveries(&self) -> u32 {
        self.delivered.values().map(|n| n - 1).sum()
    }
}
