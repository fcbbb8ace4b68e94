//! The queue checker: what happened to the items of one distributed queue (puts acknowledged
//! or in doubt, deliveries, completions), and the invariants over it. Shared by the simulated
//! `queues` suite and the real-server one (`recipes/tests/invariants_data.rs`).

use std::collections::{BTreeMap, BTreeSet};

/// What happened to the items of one queue (each item a number, its data).
#[derive(Debug, Default)]
pub struct Ledger {
    /// Items whose put was acknowledged.
    pub acked: BTreeSet<u64>,
    /// Items whose put's outcome is unknown (its reply lost).
    pub put_in_doubt: BTreeSet<u64>,
    /// Deliveries per item (take returned it).
    pub delivered: BTreeMap<u64, u32>,
    /// Completions acknowledged per item (lock path only).
    pub completed: BTreeMap<u64, u32>,
    /// Items whose completion's outcome is unknown (lock path only).
    pub complete_in_doubt: BTreeSet<u64>,
}

impl Ledger {
    /// A queue with a lock path: every acknowledged item completed exactly once (never
    /// twice; never lost, unless a completion's outcome is unknown). The violations.
    pub fn locked_violations(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (&id, &n) in &self.completed {
            if n > 1 {
                found.push(format!("locked queue: item {id} completed {n} times"));
            }
        }
        let lost: Vec<u64> = self
            .acked
            .iter()
            .copied()
            .filter(|id| !self.completed.contains_key(id) && !self.complete_in_doubt.contains(id))
            .collect();
        if !lost.is_empty() {
            found.push(format!(
                "locked queue: acknowledged items never completed: {lost:?}"
            ));
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
    pub fn plain_violations(&self, in_doubt_claims: u64) -> Vec<String> {
        let mut found = Vec::new();
        for (&id, &n) in &self.delivered {
            if n > 1 {
                found.push(format!("plain queue: item {id} delivered {n} times"));
            }
        }
        let missing = self.missing();
        if missing > in_doubt_claims {
            found.push(format!(
                "plain queue: {missing} acknowledged items never delivered, only {in_doubt_claims} claims in doubt"
            ));
        }
        found
    }

    /// Deliveries beyond the first of each item.
    pub fn redeliveries(&self) -> u32 {
        self.delivered.values().map(|n| n - 1).sum()
    }
}
