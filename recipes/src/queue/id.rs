//! [`DistributedIdQueue`]: Curator's `DistributedIdQueue`: items with an id, removable by id.

use crate::error::ErrorExt;
use std::sync::Arc;
use std::time::Duration;

use zkrs_client::{Client, CreateMode, Error, ErrorCode, Op, Result};

use super::item::encode_items;
use super::naming::{clean_id, id_prefix, item_id, Order};
use super::producer::{deadline_in, put_node};
use super::spec::{ensure_node, Spec};
use super::{queue_builder, queue_handle};
use crate::framework::{join, join_all};

/// A [`DistributedQueue`](super::DistributedQueue) whose items carry an id, so they can be
/// removed before they are taken ([`remove`](DistributedIdQueue::remove)); compatible with
/// Curator's `DistributedIdQueue`.
///
/// Nodes: `<path>/queue-|<id>|<seq>` (`/` and `|` in the id become `_`), taken in sequence
/// order. A failed item put back keeps its id.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::queue::DistributedIdQueue;
/// let queue = DistributedIdQueue::builder(&client, "/queues/builds").build()?;
/// queue.put(b"build main", "main").await?;
/// queue.put(b"build pr-7", "pr-7").await?;
/// assert_eq!(queue.remove("pr-7").await?, 1); // cancelled before anyone took it
/// let message = queue.consumer().take().await?;
/// assert_eq!(message.id(), Some("main"));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DistributedIdQueue {
    spec: Arc<Spec>,
}

impl DistributedIdQueue {
    /// Settings for a queue at `path` (created, with missing parents as containers, on
    /// first use).
    pub fn builder(client: &Client, path: &str) -> DistributedIdQueueBuilder {
        DistributedIdQueueBuilder {
            spec: Spec::new(client, path, Order::Id),
        }
    }

    /// Puts an item with `id` (not empty; ids need not be unique).
    pub async fn put(&self, item: impl AsRef<[u8]>, id: &str) -> Result<String> {
        let prefix = checked_prefix(id)?;
        let put = put_node(&self.spec, &prefix, &encode_items([item]), None).await?;
        Ok(put.expect("no deadline"))
    }

    /// [`put`](DistributedIdQueue::put), waiting at most `timeout` for room in a bounded
    /// queue: `None` if it stayed full.
    pub async fn try_put(
        &self,
        item: impl AsRef<[u8]>,
        id: &str,
        timeout: Duration,
    ) -> Result<Option<String>> {
        let prefix = checked_prefix(id)?;
        let data = encode_items([item]);
        put_node(&self.spec, &prefix, &data, Some(deadline_in(timeout))).await
    }

    /// Removes every item with `id` that no consumer has taken; returns how many. With a lock
    /// path an item a consumer is handling (locked) is left alone, as in Curator: each
    /// removal is one transaction that creates the lock node, deletes the item and deletes
    /// the lock, so it fails if the item is locked. The removals go out together.
    ///
    /// The id is matched as stored (`/` and `|` made `_`), so `remove("a/b")` removes what
    /// `put(.., "a/b")` put (Curator compares the raw id and misses it).
    pub async fn remove(&self, id: &str) -> Result<usize> {
        self.spec.validate()?;
        if id.is_empty() {
            return Err(Error::invalid("an item id cannot be empty"));
        }
        let wanted = clean_id(id);
        let client = &self.spec.client;
        let children = match client.get_children(&self.spec.path).await {
            Ok(children) => children,
            Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(0),
            Err(e) => return Err(e),
        };
        if let Some(lock_dir) = &self.spec.lock_path {
            // The removals lock each item, so they need the lock directory.
            ensure_node(client, lock_dir, false).await?;
        }
        let names: Vec<&str> = children
            .iter()
            .filter(|n| Order::Id.is_item(n) && item_id(n) == Some(wanted.as_str()))
            .collect();
        let removals = names.iter().map(|name| async move {
            let item = join(&self.spec.path, name);
            match &self.spec.lock_path {
                None => client.delete(&item, None).await,
                Some(lock_dir) => {
                    let lock = join(lock_dir, name);
                    client
                        .multi(&[
                            Op::create(lock.clone(), Vec::new(), CreateMode::Ephemeral),
                            Op::delete(item, None),
                            Op::delete(lock, None),
                        ])
                        .await
                        .map(drop)
                }
            }
        });
        let mut removed = 0;
        for result in join_all(removals).await {
            match result {
                Ok(()) => removed += 1,
                // Taken meanwhile, or locked by a consumer.
                Err(e) if matches!(e.code(), Some(ErrorCode::NoNode | ErrorCode::NodeExists)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(removed)
    }

    queue_handle!(DistributedIdQueue);
}

fn checked_prefix(id: &str) -> Result<String> {
    if id.is_empty() {
        return Err(Error::invalid("an item id cannot be empty"));
    }
    Ok(id_prefix(id))
}

queue_builder!(
    /// Settings for a [`DistributedIdQueue`]; [`DistributedIdQueueBuilder::build`] makes it.
    DistributedIdQueueBuilder,
    DistributedIdQueue
);
