//! [`DistributedDelayQueue`]: Curator's `DistributedDelayQueue`.

use crate::error::ErrorExt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zkrs_client::{Client, Error, Result};

use super::item::encode_items;
use super::naming::{delay_prefix, Order};
use super::producer::{deadline_in, frame_batch, put_node};
use super::spec::Spec;
use super::{queue_builder, queue_handle};

/// A queue whose items become visible at a time: a consumer takes an item only once it is
/// due, earliest due first; compatible with Curator's `DistributedDelayQueue`.
///
/// Nodes: `<path>/queue-|<due time, ms since the epoch, upper-case hex, at least 8
/// digits>|<seq>`. Due times are compared with the consumer's clock, as in Curator.
///
/// A consumer whose earliest item is not due yet sleeps until it is, or until the queue
/// changes (an earlier item may have come).
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use std::time::{Duration, SystemTime};
/// use zkrs_recipes::queue::DistributedDelayQueue;
/// let queue = DistributedDelayQueue::builder(&client, "/queues/reminders").build()?;
/// queue.put(b"call back", SystemTime::now() + Duration::from_secs(60)).await?;
/// let reminder = queue.consumer().take().await?; // about a minute later
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DistributedDelayQueue {
    spec: Arc<Spec>,
}

impl DistributedDelayQueue {
    /// Settings for a queue at `path` (created, with missing parents as containers, on
    /// first use).
    pub fn builder(client: &Client, path: &str) -> DistributedDelayQueueBuilder {
        DistributedDelayQueueBuilder {
            spec: Spec::new(client, path, Order::Delay),
        }
    }

    /// Puts an item that becomes visible at `due` (a time in the past: at once).
    pub async fn put(&self, item: impl AsRef<[u8]>, due: SystemTime) -> Result<String> {
        let prefix = delay_prefix(epoch_ms(due)?);
        let put = put_node(&self.spec, &prefix, &encode_items([item]), None).await?;
        Ok(put.expect("no deadline"))
    }

    /// Puts several items as one node, visible at `due`.
    pub async fn put_multi<I>(&self, items: I, due: SystemTime) -> Result<String>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let prefix = delay_prefix(epoch_ms(due)?);
        let put = put_node(&self.spec, &prefix, &frame_batch(items)?, None).await?;
        Ok(put.expect("no deadline"))
    }

    /// [`put`](DistributedDelayQueue::put), waiting at most `timeout` for room in a bounded
    /// queue: `None` if it stayed full.
    pub async fn try_put(
        &self,
        item: impl AsRef<[u8]>,
        due: SystemTime,
        timeout: Duration,
    ) -> Result<Option<String>> {
        let prefix = delay_prefix(epoch_ms(due)?);
        let data = encode_items([item]);
        put_node(&self.spec, &prefix, &data, Some(deadline_in(timeout))).await
    }

    queue_handle!(DistributedDelayQueue);
}

/// `due` in ms since the epoch; Curator refuses 0 and negative times.
fn epoch_ms(due: SystemTime) -> Result<u64> {
    match due.duration_since(UNIX_EPOCH) {
        Ok(d) if d.as_millis() > 0 && d.as_millis() <= i64::MAX as u128 => Ok(d.as_millis() as u64),
        _ => Err(Error::invalid(format!(
            "a due time must be after the epoch (1970-01-01) in ms: {due:?}"
        ))),
    }
}

queue_builder!(
    /// Settings for a [`DistributedDelayQueue`]; [`DistributedDelayQueueBuilder::build`] makes it.
    DistributedDelayQueueBuilder,
    DistributedDelayQueue
);
