//! Barriers on Curator's znodes: [`DistributedBarrier`] (everyone waits while a node exists)
//! and [`DistributedDoubleBarrier`] (N members enter together and leave together; Java and
//! Rust members mix in one barrier).

mod double;
mod single;

pub use double::{DistributedDoubleBarrier, DistributedDoubleBarrierBuilder, READY_NODE};
pub use single::{DistributedBarrier, DistributedBarrierBuilder};

use tokio::time::Instant;

use zkrs_client::{OneshotWatch, WatchedEvent};

/// Waits for `watch` until `deadline` (forever if `None`); `None` when the deadline passed.
pub(crate) async fn wait_until(
    watch: OneshotWatch,
    deadline: Option<Instant>,
) -> Option<WatchedEvent> {
    match deadline {
        Some(d) => tokio::time::timeout_at(d, watch).await.ok(),
        None => Some(watch.await),
    }
}
