//! [`DistributedPriorityQueue`]: Curator's `DistributedPriorityQueue`.

use std::sync::Arc;
use std::time::Duration;

use zkrs_client::{Client, Result};

use super::item::encode_items;
use super::naming::{priority_prefix, Order};
use super::producer::{deadline_in, frame_batch, put_node};
use super::spec::Spec;
use super::{queue_builder, queue_handle};

/// How many items a priority consumer takes from one listing before it looks for newer,
/// more urgent items (when the queue changed meanwhile), unless set.
pub const DEFAULT_REFRESH_AFTER: usize = 10;

/// A queue whose items are taken lowest priority number first (then first come, first
/// served), compatible with Curator's `DistributedPriorityQueue`.
///
/// Nodes: `<path>/queue-` + `1` (priority >= 0) or `0` (negative) + the priority as 8
/// upper-case hex digits, then the sequence: `queue-1000000050000000000` for priority 5.
///
/// A consumer works through one listing; once it has taken
/// [`refresh_after`](DistributedPriorityQueueBuilder::refresh_after) items from it and the
/// queue changed, it lists again, so an urgent item put meanwhile is not stuck behind the
/// rest of a long listing (Curator's `minItemsBeforeRefresh`).
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::queue::DistributedPriorityQueue;
/// let queue = DistributedPriorityQueue::builder(&client, "/queues/alerts").build()?;
/// queue.put(b"disk 80%", 10).await?;
/// queue.put(b"disk 99%", -5).await?;
/// let first = queue.consumer().take().await?;
/// assert_eq!(&first.items()[0][..], b"disk 99%");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DistributedPriorityQueue {
    spec: Arc<Spec>,
}

impl DistributedPriorityQueueBuilder {
    /// Consumers list again after taking this many items from one listing, if the queue
    /// changed meanwhile (default [`DEFAULT_REFRESH_AFTER`]; 0: after every item, which costs
    /// a listing per item on a busy queue).
    pub fn refresh_after(mut self, items: usize) -> DistributedPriorityQueueBuilder {
        self.spec.refresh_after = Some(items);
        self
    }
}

impl DistributedPriorityQueue {
    /// Settings for a priority queue at `path` (created, with missing parents as
    /// containers, on first use).
    pub fn builder(client: &Client, path: &str) -> DistributedPriorityQueueBuilder {
        let mut spec = Spec::new(client, path, Order::Priority);
        spec.refresh_after = Some(DEFAULT_REFRESH_AFTER);
        DistributedPriorityQueueBuilder { spec }
    }

    /// Puts an item with `priority` (lower numbers are taken first).
    pub async fn put(&self, item: impl AsRef<[u8]>, priority: i32) -> Result<String> {
        let data = encode_items([item]);
        let put = put_node(&self.spec, &priority_prefix(priority), &data, None).await?;
        Ok(put.expect("no deadline"))
    }

    /// Puts several items as one node with `priority`.
    pub async fn put_multi<I>(&self, items: I, priority: i32) -> Result<String>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let data = frame_batch(items)?;
        let put = put_node(&self.spec, &priority_prefix(priority), &data, None).await?;
        Ok(put.expect("no deadline"))
    }

    /// [`put`](DistributedPriorityQueue::put), waiting at most `timeout` for room in a
    /// bounded queue: `None` if it stayed full.
    pub async fn try_put(
        &self,
        item: impl AsRef<[u8]>,
        priority: i32,
        timeout: Duration,
    ) -> Result<Option<String>> {
        let data = encode_items([item]);
        let deadline = Some(deadline_in(timeout));
        put_node(&self.spec, &priority_prefix(priority), &data, deadline).await
    }

    queue_handle!(DistributedPriorityQueue);
}

queue_builder!(
    /// Settings for a [`DistributedPriorityQueue`]; [`DistributedPriorityQueueBuilder::build`]
    /// makes it.
    DistributedPriorityQueueBuilder,
    DistributedPriorityQueue
);
