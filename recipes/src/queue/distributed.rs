//! [`DistributedQueue`]: Curator's `DistributedQueue`, on the same znodes.

use std::sync::Arc;
use std::time::Duration;

use zkrs_client::{Client, Result};

use super::item::encode_items;
use super::naming::{Order, QUEUE_ITEM_PREFIX};
use super::producer::{deadline_in, frame_batch, put_node};
use super::spec::Spec;
use super::{queue_builder, queue_handle};

/// A first-in first-out queue shared by processes, compatible with Curator's
/// `DistributedQueue` on the same path: a Curator consumer takes what we put, and the other
/// way round.
///
/// Nodes: `<path>/queue-<seq>`, persistent sequential, each holding one item (`put`) or a
/// batch (`put_multi`) in Curator's item framing ([`encode_items`](super::encode_items)).
/// Items are bytes: serialize them as you like (Curator's `QueueSerializer` does the same job
/// on the Java side).
///
/// Delivery:
/// - without a lock path an item is taken by deleting its node: exactly one consumer gets it
///   (the delete decides), at most once (if the consumer dies after taking it, it is gone);
/// - with a lock path ([`lock_path`](DistributedQueueBuilder::lock_path)) it stays in the
///   queue, locked by the consumer, until its handler's outcome is known
///   ([`Message`](super::Message)): at least once, and put back at the end on failure
///   ([`ErrorMode`](super::ErrorMode)). A consumer that dies mid-handler loses nothing: its
///   lock goes with its session and the item is taken again.
///
/// A bound ([`max_items`](DistributedQueueBuilder::max_items)) makes `put` wait while the
/// queue is full (and [`try_put`](DistributedQueue::try_put) give up after a timeout).
///
/// A put that fails with a connection loss (`ConnectionLoss`) may or may not have put the
/// item, as with Curator: its node name cannot carry a protection marker without Curator's
/// consumers skipping it. Retry if a duplicate is harmless. A dropped put future likewise.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// use zkrs_recipes::queue::DistributedQueue;
/// let queue = DistributedQueue::builder(&client, "/queues/resize")
///     .lock_path("/queues/resize-locks")
///     .max_items(10_000)
///     .build()?;
/// queue.put(b"img-1.png").await?;
/// queue.put_multi([&b"img-2.png"[..], b"img-3.png"]).await?; // one node, two items
/// if queue.try_put(b"img-4.png", Duration::from_secs(5)).await?.is_none() {
///     eprintln!("queue full for 5 s");
/// }
///
/// let mut consumer = queue.consumer();
/// while let Some(message) = consumer.take_timeout(Duration::from_secs(1)).await? {
///     for image in message.items() {
///         println!("resizing {}", String::from_utf8_lossy(image));
///     }
///     message.complete().await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DistributedQueue {
    spec: Arc<Spec>,
}

impl DistributedQueue {
    /// Settings for a queue at `path` (created, with missing parents as containers, on
    /// first use).
    pub fn builder(client: &Client, path: &str) -> DistributedQueueBuilder {
        DistributedQueueBuilder {
            spec: Spec::new(client, path, Order::Plain),
        }
    }

    /// Puts one item; returns its node's path. In a bounded queue, waits while it is full.
    pub async fn put(&self, item: impl AsRef<[u8]>) -> Result<String> {
        let data = encode_items([item]);
        let put = put_node(&self.spec, QUEUE_ITEM_PREFIX, &data, None).await?;
        Ok(put.expect("no deadline"))
    }

    /// Puts several items as one node (Curator's `putMulti`): a consumer gets them together,
    /// in this order. An empty batch is refused.
    pub async fn put_multi<I>(&self, items: I) -> Result<String>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let data = frame_batch(items)?;
        let put = put_node(&self.spec, QUEUE_ITEM_PREFIX, &data, None).await?;
        Ok(put.expect("no deadline"))
    }

    /// [`put`](DistributedQueue::put), waiting at most `timeout` for room in a bounded queue:
    /// `None` if it stayed full.
    pub async fn try_put(
        &self,
        item: impl AsRef<[u8]>,
        timeout: Duration,
    ) -> Result<Option<String>> {
        self.try_put_node(&encode_items([item]), timeout).await
    }

    /// [`put_multi`](DistributedQueue::put_multi), waiting at most `timeout` for room.
    pub async fn try_put_multi<I>(&self, items: I, timeout: Duration) -> Result<Option<String>>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        self.try_put_node(&frame_batch(items)?, timeout).await
    }

    /// Puts one item node holding `data`, waiting at most `timeout` for room.
    async fn try_put_node(&self, data: &[u8], timeout: Duration) -> Result<Option<String>> {
        let deadline = Some(deadline_in(timeout));
        put_node(&self.spec, QUEUE_ITEM_PREFIX, data, deadline).await
    }

    queue_handle!(DistributedQueue);
}

queue_builder!(
    /// Settings for a [`DistributedQueue`]; [`DistributedQueueBuilder::build`] makes it.
    DistributedQueueBuilder,
    DistributedQueue
);
