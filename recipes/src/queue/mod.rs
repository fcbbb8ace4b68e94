//! Queues: Curator's `DistributedQueue` and its id, priority and delay kinds, and
//! `SimpleDistributedQueue`, on the same znodes, so Rust and Java (Curator) producers and
//! consumers can share one queue.
//!
//! | queue | Curator class | nodes | order |
//! |---|---|---|---|
//! | [`DistributedQueue`] | `DistributedQueue` | `queue-<seq>`, Curator's item framing | sequence |
//! | [`DistributedIdQueue`] | `DistributedIdQueue` | `queue-\|<id>\|<seq>` | sequence; removable by id |
//! | [`DistributedPriorityQueue`] | `DistributedPriorityQueue` | `queue-<1\|0><%08X prio><seq>` | priority, then sequence |
//! | [`DistributedDelayQueue`] | `DistributedDelayQueue` | `queue-\|<%08X due ms>\|<seq>` | due time; hidden until due |
//! | [`SimpleDistributedQueue`] | `SimpleDistributedQueue` | `qn-<seq>`, raw bytes | sequence |
//!
//! The first four are consumed through a [`QueueConsumer`], which hands out [`Message`]s;
//! with a lock path a message holds a lock on its item until it is settled, and a failed
//! item is put back ([`ErrorMode`]).
//!
//! Where these go beyond Curator:
//! - **Cost.** A consumer lists the queue once and works through the sorted names, listing
//!   again only when they run out and the queue changed (Curator re-lists on every child
//!   event, and `SimpleDistributedQueue` on every take: O(items) bytes per item). Taking an
//!   item is one round trip (read and delete, or lock and read, pipelined), settling it with
//!   a lock path one more (one transaction); Curator needs two and four.
//! - **Competing consumers** skip ahead (at most 16 names) after a lost race instead of
//!   marching in step over the same names, each wasting a delete on every item the first
//!   one took: half the throughput with 3 consumers. A lone consumer never skips and takes
//!   items strictly in order; competing ones may hand an item out a few places after a newer
//!   one.
//! - **Locks are checked.** A consumer whose session ended (its lock went with it) does not
//!   delete the item it was handling: another consumer may have it (Curator deletes it,
//!   apache/curator#1122). A consumer that finds an item locked watches the lock, so an item
//!   freed by a dead consumer is taken again without waiting for other queue activity.
//! - **Nothing is lost by cancelling**: claims live in the consumer, not in the `take()`
//!   future; a dropped consumer gives back what it claimed and did not hand out.
//! - **Requeued items keep their kind**: a failed priority or delay item comes back with its
//!   priority or due time (Curator makes it a plain item, apache/curator#577, #744).
//! - **Bounded queues** wait with a persistent watch and a count (`numChildren`), not by
//!   listing every child.
//! - **Removal by id** matches the id as stored (Curator compares the unescaped id).
//!
//! ```no_run
//! # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
//! use zkrs_recipes::queue::DistributedQueue;
//! let queue = DistributedQueue::builder(&client, "/queues/jobs")
//!     .lock_path("/queues/jobs-locks")
//!     .build()?;
//! queue.put(b"job 1").await?;
//! let mut consumer = queue.consumer();
//! let message = consumer.take().await?;
//! println!("{:?}", message.items());
//! message.complete().await?;
//! # Ok(()) }
//! ```

mod bound;
mod claim;
mod consumer;
mod cursor;
mod delay;
mod distributed;
mod engine;
mod error_mode;
mod id;
mod item;
mod message;
mod naming;
mod priority;
mod producer;
mod simple;
pub(crate) mod spec;

pub use consumer::QueueConsumer;
pub use delay::{DistributedDelayQueue, DistributedDelayQueueBuilder};
pub use distributed::{DistributedQueue, DistributedQueueBuilder};
pub use engine::ConsumerStats;
pub use error_mode::ErrorMode;
pub use id::{DistributedIdQueue, DistributedIdQueueBuilder};
pub use item::{decode_items, encode_items, encoded_len, ITEM_FORMAT_VERSION};
pub use message::Message;
pub use naming::{
    delay_epoch_ms, delay_prefix, id_prefix, item_id, priority_prefix, QUEUE_ITEM_PREFIX,
    SEPARATOR, SIMPLE_ITEM_PREFIX,
};
pub use priority::{
    DistributedPriorityQueue, DistributedPriorityQueueBuilder, DEFAULT_REFRESH_AFTER,
};
pub use simple::{SimpleDistributedQueue, SimpleDistributedQueueBuilder};

/// A queue kind's builder: the settings every `DistributedQueue` kind has, written once.
macro_rules! queue_builder {
    ($(#[$doc:meta])* $builder:ident, $ty:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        #[must_use = "a builder does nothing until built"]
        pub struct $builder {
            spec: $crate::queue::spec::Spec,
        }

        impl $builder {
            /// Takes items under a lock at `<lock_path>/<item name>` (ephemeral), so an item
            /// is removed only once its handler succeeded, and a consumer that dies
            /// mid-handler loses nothing. Curator's `lockPath`; use the same one on every
            /// side.
            pub fn lock_path(mut self, lock_path: &str) -> $builder {
                self.spec.lock_path = Some(lock_path.to_string());
                self
            }

            /// What a failed item becomes (lock path only; default: put back at the end).
            pub fn error_mode(mut self, mode: $crate::queue::ErrorMode) -> $builder {
                self.spec.error_mode = mode;
                self
            }

            /// Bounds the queue: `put` waits while it holds `max` nodes or more (loosely:
            /// puts that see room at the same moment all go ahead, as in Curator). At
            /// least 1.
            pub fn max_items(mut self, max: usize) -> $builder {
                self.spec.max_items = Some(max);
                self
            }

            /// The queue (nothing is sent: its node is created on first use).
            /// `InvalidInput` for a bad path or lock path, or `max_items` 0.
            pub fn build(self) -> zkrs_client::Result<$ty> {
                self.spec.validate()?;
                Ok($ty {
                    spec: std::sync::Arc::new(self.spec),
                })
            }
        }
    };
}
pub(crate) use queue_builder;

/// The consumer methods every `DistributedQueue` kind has, written once.
macro_rules! queue_handle {
    ($ty:ident) => {
        /// The queue's path.
        pub fn path(&self) -> &str {
            &self.spec.path
        }

        /// The lock path, if set.
        pub fn lock_path(&self) -> Option<&str> {
            self.spec.lock_path.as_deref()
        }

        /// A consumer: takes items in this queue's order. Make several for parallel
        /// handling.
        pub fn consumer(&self) -> $crate::queue::QueueConsumer {
            $crate::queue::QueueConsumer::new(self.spec.clone())
        }

        /// How many item nodes the queue holds now (one listing; 0 if it does not exist).
        /// With a lock path, items being handled are counted too.
        pub async fn len(&self) -> zkrs_client::Result<usize> {
            self.spec.validate()?;
            match self.spec.client.get_children(&self.spec.path).await {
                Ok(children) => Ok(children
                    .iter()
                    .filter(|n| self.spec.order.is_item(n))
                    .count()),
                Err(e) if e.code() == Some(zkrs_client::ErrorCode::NoNode) => Ok(0),
                Err(e) => Err(e),
            }
        }

        /// Whether the queue holds no item now.
        pub async fn is_empty(&self) -> zkrs_client::Result<bool> {
            Ok(self.len().await? == 0)
        }
    };
}
pub(crate) use queue_handle;
