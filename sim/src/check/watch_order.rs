//! Watch before data (see [`guarantees`](super::guarantees)): a client sees a watch's event
//! before any reply that shows the change that fired it.

use std::collections::BTreeMap;

use zkrs_codec::{EventType, KeeperState, OpCode};

use super::guarantee_violation::GuaranteeViolation;
use super::history::{History, Operation};

pub(super) fn check(history: &History, limit: usize, found: &mut Vec<GuaranteeViolation>) {
    // The one-shot watches set by successful reads, by client and watcher.
    let mut set_by: BTreeMap<(usize, u64), &Operation> = BTreeMap::new();
    // Each client's replies with a Stat, by path, in the order they came.
    let mut stats: BTreeMap<(usize, &str), Vec<&Operation>> = BTreeMap::new();
    for op in &history.operations {
        if op.zxid().is_none() {
            continue;
        }
        let reads = matches!(
            op.op,
            OpCode::GetData | OpCode::Exists | OpCode::GetChildren | OpCode::GetChildren2
        );
        if let (Some(watcher), true) = (op.watcher, reads) {
            set_by.insert((op.client, watcher), op);
        }
        if let (Some(path), Some(_)) = (&op.path, op.stat()) {
            stats.entry((op.client, path)).or_default().push(op);
        }
    }
    for ops in stats.values_mut() {
        ops.sort_by_key(|op| op.answer.as_ref().map(|a| a.seq));
    }
    let mut count = 0;
    for event in &history.deliveries {
        // A change's event: not a session event, not a watch removed by the client.
        let change = matches!(
            event.event_type,
            EventType::NodeCreated
                | EventType::NodeDeleted
                | EventType::NodeDataChanged
                | EventType::NodeChildrenChanged
        );
        if event.state != KeeperState::SyncConnected || !change {
            continue;
        }
        let Some(&read) = set_by.get(&(event.client, event.watcher)) else {
            continue;
        };
        let (Some(path), Some(answer), Some(set_at)) = (&read.path, &read.answer, read.zxid())
        else {
            continue;
        };
        if answer.session != event.session {
            continue;
        }
        let Some(replies) = stats.get(&(event.client, path.as_str())) else {
            continue;
        };
        let seq = |op: &Operation| op.answer.as_ref().map_or(0, |a| a.seq);
        let from = replies.partition_point(|op| seq(op) <= answer.seq);
        let to = replies.partition_point(|op| seq(op) < event.seq);
        let child_watch = matches!(read.op, OpCode::GetChildren | OpCode::GetChildren2);
        let shown = replies[from..to.max(from)].iter().find(|op| {
            let stat = op.stat().expect("kept for its Stat");
            let changed = if child_watch { stat.pzxid } else { stat.mzxid };
            op.session() == Some(event.session) && changed > set_at
        });
        if let Some(shown) = shown {
            if count < limit {
                found.push(GuaranteeViolation::DataBeforeWatch {
                    registered: Box::new(read.clone()),
                    shown: Box::new((*shown).clone()),
                    event: Box::new(event.clone()),
                });
            }
            count += 1;
        }
    }
}
