//! Per-session FIFO (see [`guarantees`](super::guarantees)): one client's successful answers
//! in submission order, and a session's writes with increasing zxids.

use std::collections::BTreeMap;

use super::guarantee_violation::GuaranteeViolation;
use super::history::{History, Operation};

pub(super) fn check(history: &History, limit: usize, found: &mut Vec<GuaranteeViolation>) {
    // Each client's successful operations, in the order submitted (the history's order).
    let mut by_client: BTreeMap<usize, Vec<&Operation>> = BTreeMap::new();
    for op in history.operations.iter().filter(|op| op.zxid().is_some()) {
        by_client.entry(op.client).or_default().push(op);
    }
    let (mut order, mut writes) = (0, 0);
    for ops in by_client.values() {
        // Answers in the order they came: each must be of a request submitted after every
        // one answered before it.
        let mut answered = ops.clone();
        answered.sort_by_key(|op| op.answer.as_ref().map(|a| a.seq));
        let mut latest: Option<&Operation> = None;
        for &op in &answered {
            match latest {
                Some(before) if before.request > op.request => {
                    if order < limit {
                        found.push(GuaranteeViolation::OutOfOrder {
                            first: Box::new(op.clone()),
                            overtook: Box::new(before.clone()),
                        });
                    }
                    order += 1;
                }
                _ => latest = Some(op),
            }
        }
        // Each session's writes, in submission order: increasing zxids.
        let mut last_write: BTreeMap<i64, &Operation> = BTreeMap::new();
        for &op in ops.iter().filter(|op| op.is_write()) {
            let session = op.session().unwrap_or_default();
            if let Some(earlier) = last_write.get(&session) {
                if earlier.zxid() >= op.zxid() {
                    if writes < limit {
                        found.push(GuaranteeViolation::WriteZxidsNotIncreasing {
                            earlier: Box::new((*earlier).clone()),
                            later: Box::new(op.clone()),
                        });
                    }
                    writes += 1;
                }
            }
            last_write.insert(session, op);
        }
    }
}
