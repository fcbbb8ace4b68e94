//! Seeds of the campaign's suites that found a defect of the library, each passing since its
//! fix. A seed means the same run only while its suite and the library's requests stay as
//! they are: when a change reshuffles a run, find the defect's seed again (or write the
//! case out, as `cancelled_ways_out.rs` does) rather than drop the line.

use zkrs_sim::Simulation;

fn passes(suite: &'static str, seed: u64) {
    let report = Simulation::new(seed)
        .run(move |world| async move { zkrs_sim::suites::run(suite, world).await });
    assert!(
        report.passed(),
        "{suite} seed {seed}: {:?}",
        report.violation
    );
}

/// A persistent node's re-check after a reconnect adopted the node with a copy of its data
/// taken before an update, and wrote the old payload over the new one: the registry kept an
/// instance's older payload for good.
#[test]
fn discovery_a_re_check_does_not_undo_an_update() {
    passes("discovery", 1218);
    passes("discovery", 1845);
}

/// A latch close dropped at its first await (44), a persistent node closed with its first
/// create in flight (39): each left an ephemeral node of a live session.
#[test]
fn cancellation_ways_out_cut_short_leave_no_node() {
    passes("cancellation", 44);
    passes("cancellation", 39);
}
