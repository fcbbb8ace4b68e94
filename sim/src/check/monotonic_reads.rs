//! Monotonic reads and a single system image (see [`guarantees`](super::guarantees)): a
//! session never sees a zxid lower than one it saw before, whichever member answers.

use std::collections::BTreeMap;

use super::guarantee_violation::GuaranteeViolation;
use super::history::{History, Operation};

pub(super) fn check(history: &History, limit: usize, found: &mut Vec<GuaranteeViolation>) {
    // Each session's successful answers, in the order they came.
    let mut by_session: BTreeMap<(usize, i64), Vec<&Operation>> = BTreeMap::new();
    for op in &history.operations {
        if let (Some(zxid), Some(session)) = (op.zxid(), op.session()) {
            if zxid > 0 {
                by_session.entry((op.client, session)).or_default().push(op);
            }
        }
    }
    let mut count = 0;
    for ops in by_session.values_mut() {
        ops.sort_by_key(|op| op.answer.as_ref().map(|a| a.seq));
        let mut highest: Option<&Operation> = None;
        for &op in ops.iter() {
            match highest {
                Some(seen) if seen.zxid() > op.zxid() => {
                    if count < limit {
                        found.push(GuaranteeViolation::WentBack {
                            seen: Box::new(seen.clone()),
                            later: Box::new(op.clone()),
                        });
                    }
                    count += 1;
                }
                _ => highest = Some(op),
            }
        }
    }
}
