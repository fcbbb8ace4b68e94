//! Each guarantee's check on small histories written out: one that keeps it, one that
//! breaks it.

use std::time::Duration;

use zkrs_codec::{EventType, KeeperState, OpCode, Stat};

use super::guarantees::{violations, GuaranteeViolation};
use super::history::{Answered, Delivery, History, Operation, Outcome};

const SESSION: i64 = 0x100;

/// Builds a history step by step, each step one place later in the run's order.
#[derive(Default)]
struct Steps {
    history: History,
    seq: u64,
}

impl Steps {
    fn next(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Client `client` submits `op` on `path`; returns its index.
    fn submit(&mut self, client: usize, op: OpCode, path: &str, watcher: Option<u64>) -> usize {
        let seq = self.next();
        let request = self
            .history
            .operations
            .iter()
            .filter(|o| o.client == client)
            .count() as u64
            + 1;
        self.history.operations.push(Operation {
            client,
            request,
            seq,
            op,
            path: Some(path.to_string()),
            watcher,
            submitted: Duration::from_millis(seq),
            answer: None,
        });
        self.history.operations.len() - 1
    }

    /// Operation `index` is answered with `zxid` (and a Stat whose zxids are `changed`).
    fn answer(&mut self, index: usize, zxid: i64, changed: Option<i64>) {
        let seq = self.next();
        let stat = changed.map(|z| Stat {
            czxid: 1,
            mzxid: z,
            pzxid: z,
            ..Stat::default()
        });
        self.history.operations[index].answer = Some(Answered {
            seq,
            at: Duration::from_millis(seq),
            session: SESSION + self.history.operations[index].client as i64,
            outcome: Outcome::Ok { zxid, stat },
        });
    }

    fn deliver(&mut self, client: usize, watcher: u64, path: &str) {
        let seq = self.next();
        self.history.deliveries.push(Delivery {
            client,
            seq,
            at: Duration::from_millis(seq),
            watcher,
            session: SESSION + client as i64,
            event_type: EventType::NodeDataChanged,
            state: KeeperState::SyncConnected,
            path: path.to_string(),
        });
    }

    fn found(&self) -> Vec<GuaranteeViolation> {
        violations(&self.history, 10)
    }
}

#[test]
fn answers_out_of_submission_order_break_fifo() {
    let mut ok = Steps::default();
    let (a, b) = (
        ok.submit(1, OpCode::GetData, "/a", None),
        ok.submit(1, OpCode::GetData, "/b", None),
    );
    ok.answer(a, 5, Some(2));
    ok.answer(b, 5, Some(3));
    assert!(ok.found().is_empty(), "{:?}", ok.found());

    let mut broken = Steps::default();
    let (a, b) = (
        broken.submit(1, OpCode::GetData, "/a", None),
        broken.submit(1, OpCode::GetData, "/b", None),
    );
    broken.answer(b, 5, Some(3));
    broken.answer(a, 5, Some(2));
    let found = broken.found();
    assert!(
        matches!(&found[..], [GuaranteeViolation::OutOfOrder { first, overtook }]
            if first.request == 1 && overtook.request == 2),
        "{found:?}"
    );
}

#[test]
fn a_later_write_of_a_session_with_a_lower_zxid_breaks_fifo() {
    let mut broken = Steps::default();
    let (a, b) = (
        broken.submit(1, OpCode::SetData, "/a", None),
        broken.submit(1, OpCode::SetData, "/a", None),
    );
    broken.answer(a, 7, Some(7));
    broken.answer(b, 6, Some(6));
    let found = broken.found();
    assert!(found
        .iter()
        .any(|v| matches!(v, GuaranteeViolation::WriteZxidsNotIncreasing { .. })));
    // The two were in flight together: in real time, either order would do.
    assert!(!found
        .iter()
        .any(|v| matches!(v, GuaranteeViolation::WritesNotLinearizable { .. })));
}

#[test]
fn a_lower_zxid_after_a_higher_one_breaks_monotonic_reads() {
    let mut broken = Steps::default();
    let a = broken.submit(1, OpCode::GetData, "/a", None);
    broken.answer(a, 9, Some(2));
    let b = broken.submit(1, OpCode::GetData, "/a", None);
    broken.answer(b, 8, Some(2));
    let found = broken.found();
    assert!(
        matches!(&found[..], [GuaranteeViolation::WentBack { seen, later }]
            if seen.zxid() == Some(9) && later.zxid() == Some(8)),
        "{found:?}"
    );
    // Another client may be behind: no single system image across clients is promised.
    let mut ok = Steps::default();
    let a = ok.submit(1, OpCode::GetData, "/a", None);
    ok.answer(a, 9, Some(2));
    let b = ok.submit(2, OpCode::GetData, "/a", None);
    ok.answer(b, 8, Some(2));
    assert!(ok.found().is_empty(), "{:?}", ok.found());
}

#[test]
fn writes_overlapping_in_time_may_take_either_order_but_not_after_an_answer() {
    let mut ok = Steps::default();
    let (a, b) = (
        ok.submit(1, OpCode::Create, "/a", None),
        ok.submit(2, OpCode::Create, "/b", None),
    );
    ok.answer(b, 11, None);
    ok.answer(a, 10, None);
    assert!(ok.found().is_empty(), "{:?}", ok.found());

    let mut broken = Steps::default();
    let a = broken.submit(1, OpCode::Create, "/a", None);
    broken.answer(a, 11, None);
    let b = broken.submit(2, OpCode::Create, "/b", None);
    broken.answer(b, 10, None);
    let found = broken.found();
    assert!(
        matches!(&found[..], [GuaranteeViolation::WritesNotLinearizable { earlier, later }]
            if earlier.client == 1 && later.client == 2),
        "{found:?}"
    );
}

#[test]
fn a_change_shown_before_its_watch_event_breaks_watch_before_data() {
    // The watch set at zxid 5; the change at 6 fired it.
    let mut ok = Steps::default();
    let read = ok.submit(1, OpCode::GetData, "/a", Some(1));
    ok.answer(read, 5, Some(4));
    ok.deliver(1, 1, "/a");
    let again = ok.submit(1, OpCode::GetData, "/a", None);
    ok.answer(again, 6, Some(6));
    assert!(ok.found().is_empty(), "{:?}", ok.found());

    let mut broken = Steps::default();
    let read = broken.submit(1, OpCode::GetData, "/a", Some(1));
    broken.answer(read, 5, Some(4));
    let again = broken.submit(1, OpCode::GetData, "/a", None);
    broken.answer(again, 6, Some(6));
    broken.deliver(1, 1, "/a");
    let found = broken.found();
    assert!(
        matches!(&found[..], [GuaranteeViolation::DataBeforeWatch { registered, shown, .. }]
            if registered.request == 1 && shown.request == 2),
        "{found:?}"
    );
    // A reply that shows no change after the watch was set may come first.
    let mut ok = Steps::default();
    let read = ok.submit(1, OpCode::GetData, "/a", Some(1));
    ok.answer(read, 5, Some(4));
    let again = ok.submit(1, OpCode::GetData, "/a", None);
    ok.answer(again, 5, Some(4));
    ok.deliver(1, 1, "/a");
    assert!(ok.found().is_empty(), "{:?}", ok.found());
}
