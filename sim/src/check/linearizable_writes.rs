//! Linearizable writes (see [`guarantees`](super::guarantees)): the zxid order of successful
//! writes agrees with real time (here, the run's one order of steps), over every client.

use std::collections::BTreeMap;

use super::guarantee_violation::GuaranteeViolation;
use super::history::{History, Operation};

pub(super) fn check(history: &History, limit: usize, found: &mut Vec<GuaranteeViolation>) {
    let writes: Vec<&Operation> = history
        .operations
        .iter()
        .filter(|op| op.is_write() && op.zxid().is_some())
        .collect();
    let mut count = 0;
    let mut report = |earlier: &Operation, later: &Operation| {
        if count < limit {
            found.push(GuaranteeViolation::WritesNotLinearizable {
                earlier: Box::new(earlier.clone()),
                later: Box::new(later.clone()),
            });
        }
        count += 1;
    };
    // No two writes share a zxid.
    let mut by_zxid: BTreeMap<i64, &Operation> = BTreeMap::new();
    for &op in &writes {
        if let Some(other) = by_zxid.insert(op.zxid().unwrap_or_default(), op) {
            report(other, op);
        }
    }
    // In submission order (the history's), each write against the highest zxid of the
    // writes answered before it was submitted.
    let mut answered = writes.clone();
    answered.sort_by_key(|op| op.answer.as_ref().map(|a| a.seq));
    let mut next = 0;
    let mut highest: Option<&Operation> = None;
    for &op in &writes {
        while let Some(&done) = answered.get(next) {
            if done.answer.as_ref().is_none_or(|a| a.seq >= op.seq) {
                break;
            }
            if highest.is_none_or(|h| h.zxid() < done.zxid()) {
                highest = Some(done);
            }
            next += 1;
        }
        if let Some(h) = highest {
            if h.zxid() >= op.zxid() {
                report(h, op);
            }
        }
    }
}
