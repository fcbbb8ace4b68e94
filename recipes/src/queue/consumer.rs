//! [`QueueConsumer`]: takes the items of a `DistributedQueue` (or its id, priority and delay
//! kinds) in the queue's order.

use crate::error::ErrorExt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use zkrs_client::{Bytes, Error, Result};

use super::engine::{ConsumerStats, Engine, Wait};
use super::item::decode;
use super::message::Message;
use super::spec::Spec;

/// Takes items from a queue, in the queue's order, each by exactly one consumer.
///
/// Made by the queue's `consumer()`. Any number of consumers, in this process or others
/// (Curator's among them), may take from one queue; each item goes to one of them. One
/// consumer takes items one [`take`](QueueConsumer::take) at a time; for parallel handling,
/// make several consumers (on one client or several).
///
/// A consumer lists the queue once and works through the sorted names, listing again only
/// when they run out and the queue changed (Curator lists on every change): see the
/// `cursor` notes in the [module docs](super).
///
/// Why items come through `take()` and not an [`EventStream`](zkrs_client::EventStream) like
/// the caches' events: an event stream drops its oldest entries when its reader falls
/// behind, which is right for events and wrong for queue items. Here nothing is taken from
/// the queue before it is asked for (beyond [`prefetch`](QueueConsumer::prefetch)).
///
/// Cancel safety: dropping a `take()` future loses nothing (a claim in flight finishes into
/// the consumer, and the next `take()` returns it). Dropping the consumer gives back what it
/// claimed but did not hand out: locks are deleted, and items already deleted (no lock path)
/// are put back at the end of the queue.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::queue::DistributedQueue;
/// let queue = DistributedQueue::builder(&client, "/queues/jobs").lock_path("/queues/jobs-locks").build()?;
/// queue.put(b"job 1").await?;
/// let mut consumer = queue.consumer();
/// let message = consumer.take().await?;
/// match std::str::from_utf8(&message.items()[0]) {
///     Ok(job) => {
///         println!("running {job}");
///         message.complete().await?; // the item goes
///     }
///     Err(_) => message.fail().await?, // put back at the end (ErrorMode::Requeue)
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct QueueConsumer {
    engine: Engine,
}

impl QueueConsumer {
    pub(crate) fn new(spec: Arc<Spec>) -> QueueConsumer {
        QueueConsumer {
            engine: Engine::new(spec, 1),
        }
    }

    /// How many claims may be in flight at once (default 1). More lets the next items be
    /// claimed while the current one is handled, for throughput; but items claimed and not
    /// yet taken are held by this consumer: locked (lock path), or already deleted (no lock
    /// path: they are put back at the end if the consumer is dropped, and lost if the
    /// process dies).
    pub fn prefetch(mut self, claims: usize) -> QueueConsumer {
        let spec = self.engine.spec().clone();
        self.engine = Engine::new(spec, claims.max(1));
        self
    }

    /// The queue's path.
    pub fn path(&self) -> &str {
        &self.engine.spec().path
    }

    /// The next item, waiting as long as it takes.
    ///
    /// A node whose bytes are not Curator's item framing is removed (as Curator does) and
    /// reported as an error naming it; the consumer carries on with the next call.
    pub async fn take(&mut self) -> Result<Message> {
        loop {
            if let Some(message) = self.take_with(Wait::Forever).await? {
                return Ok(message);
            }
        }
    }

    /// The next item, waiting at most `timeout`; `None` if none came.
    pub async fn take_timeout(&mut self, timeout: Duration) -> Result<Option<Message>> {
        let deadline = tokio::time::Instant::now() + timeout;
        self.take_with(Wait::Until(deadline)).await
    }

    /// An item that is there now, without waiting for one to be put (it may still take a
    /// round trip or two to list and claim); `None` if the queue has none.
    pub async fn try_take(&mut self) -> Result<Option<Message>> {
        self.take_with(Wait::No).await
    }

    /// Takes the next item and runs `handler` on its items: `Ok` completes it, `Err` fails it
    /// ([`Message::complete`], [`Message::fail`]); returns what the handler returned. Like
    /// Curator's `QueueConsumer.consumeMessage`.
    ///
    /// ```no_run
    /// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
    /// use zkrs_recipes::queue::DistributedQueue;
    /// let queue = DistributedQueue::builder(&client, "/queues/mail").lock_path("/queues/mail-locks").build()?;
    /// let mut consumer = queue.consumer();
    /// let sent = consumer
    ///     .process(|items| async move {
    ///         for item in &items {
    ///             if item.is_empty() {
    ///                 return Err("empty mail"); // the node goes back at the end
    ///             }
    ///         }
    ///         Ok(items.len())
    ///     })
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn process<F, Fut, T, E>(&mut self, handler: F) -> Result<std::result::Result<T, E>>
    where
        F: FnOnce(Vec<Bytes>) -> Fut,
        Fut: Future<Output = std::result::Result<T, E>>,
    {
        let message = self.take().await?;
        let outcome = handler(message.items().to_vec()).await;
        match &outcome {
            Ok(_) => message.complete().await?,
            Err(_) => message.fail().await?,
        }
        Ok(outcome)
    }

    /// What this consumer has done so far (listings, items, races lost).
    pub fn stats(&self) -> ConsumerStats {
        self.engine.stats()
    }

    async fn take_with(&mut self, wait: Wait) -> Result<Option<Message>> {
        self.engine.spec().validate()?;
        let Some(taken) = self.engine.take(wait).await? else {
            return Ok(None);
        };
        let spec = self.engine.spec().clone();
        match decode(&taken.data) {
            Ok(items) => Ok(Some(Message::new(
                spec, taken.name, taken.data, items, taken.lock,
            ))),
            Err(why) => {
                // Curator deletes a corrupt item (after logging it); we report it.
                let path = crate::framework::join(&spec.path, &taken.name);
                if let Some(lock) = taken.lock {
                    let removed =
                        Message::new(spec, taken.name, taken.data, Vec::new(), Some(lock));
                    removed.complete().await?;
                }
                Err(Error::invalid_data(format!(
                    "not a queue item ({why}); removed, as Curator does"
                ))
                .with_path(path))
            }
        }
    }
}
