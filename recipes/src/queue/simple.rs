//! [`SimpleDistributedQueue`]: Curator's `SimpleDistributedQueue` (ZooKeeper's own queue
//! recipe), a `java.util.Queue`-like API over raw bytes.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use zkrs_client::{Bytes, Client, Result};

use super::engine::{ConsumerStats, Engine, Wait};
use super::naming::{Order, SIMPLE_ITEM_PREFIX};
use super::producer::put_node;
use super::spec::Spec;

/// A queue of raw byte items with `put`, `take`, `try_take`, `peek`, compatible with
/// Curator's `SimpleDistributedQueue` on the same path (Curator's `offer`, `take`, `poll`,
/// `peek`; its `remove` and `element` are `try_take` and `peek`, with `None` for an empty
/// queue).
///
/// Nodes: `<path>/qn-<seq>`, persistent sequential, the item's bytes as they are; `<path>`
/// is a container (created when missing, also after the server reaped it while empty).
///
/// An item is taken by deleting its node (read and delete go out together: one round trip):
/// exactly one taker gets it. Curator lists the whole queue on every take; this handle keeps
/// one listing and works through it, listing again only when it runs out and the queue
/// changed, and waits with a watch when the queue is empty.
///
/// Calls on one handle share its listing. A call made while another is under way on the
/// same handle (a `peek` while a `take` waits, say) does not wait for it: it lists the queue
/// on its own, as Curator does for every call. For takers in parallel, use one handle each.
/// A dropped `take`/`try_take` loses nothing: an item whose claim was in flight is kept for the
/// next call on this handle, and given back (put at the end of the queue) if the handle is
/// dropped.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// use zkrs_recipes::queue::SimpleDistributedQueue;
/// let queue = SimpleDistributedQueue::builder(&client, "/queues/tasks").build()?;
/// queue.put(b"task 1").await?;
/// assert_eq!(queue.peek().await?.as_deref(), Some(&b"task 1"[..]));
/// let task = queue.take().await?;            // waits for an item
/// let next = queue.take_timeout(Duration::from_millis(100)).await?; // None: empty
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct SimpleDistributedQueue {
    spec: Arc<Spec>,
    /// The shared listing, used by one call at a time.
    engine: Mutex<Engine>,
    /// The shared engine's figures as of its last call, plus those of the engines of calls
    /// made while it was busy.
    stats: std::sync::Mutex<(ConsumerStats, ConsumerStats)>,
}

/// Settings for a [`SimpleDistributedQueue`]; [`SimpleDistributedQueueBuilder::build`]
/// makes it.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until built"]
pub struct SimpleDistributedQueueBuilder {
    spec: Spec,
}

impl SimpleDistributedQueueBuilder {
    /// The queue (nothing is sent: its node is created on first use). `InvalidInput` for a
    /// bad path.
    pub fn build(self) -> Result<SimpleDistributedQueue> {
        self.spec.validate()?;
        let spec = Arc::new(self.spec);
        Ok(SimpleDistributedQueue {
            engine: Mutex::new(Engine::new(spec.clone(), 1)),
            spec,
            stats: std::sync::Mutex::new(Default::default()),
        })
    }
}

impl SimpleDistributedQueue {
    /// Settings for a queue at `path`.
    pub fn builder(client: &Client, path: &str) -> SimpleDistributedQueueBuilder {
        SimpleDistributedQueueBuilder {
            spec: Spec::new(client, path, Order::Simple),
        }
    }

    /// The queue's path.
    pub fn path(&self) -> &str {
        &self.spec.path
    }

    /// Adds an item at the end; returns its node's path. Curator: `offer`.
    pub async fn put(&self, data: impl AsRef<[u8]>) -> Result<String> {
        let put = put_node(&self.spec, SIMPLE_ITEM_PREFIX, data.as_ref(), None).await?;
        Ok(put.expect("no deadline"))
    }

    /// Removes and returns the head, waiting for one if the queue is empty.
    pub async fn take(&self) -> Result<Bytes> {
        loop {
            if let Some(data) = self.take_with(Wait::Forever).await? {
                return Ok(data);
            }
        }
    }

    /// Removes and returns the head; `None` if the queue is empty. Curator: `poll`, and
    /// `remove` (which throws on an empty queue instead).
    pub async fn try_take(&self) -> Result<Option<Bytes>> {
        self.take_with(Wait::No).await
    }

    /// Removes and returns the head, waiting at most `timeout` for one. Curator: `poll` with
    /// a timeout.
    pub async fn take_timeout(&self, timeout: Duration) -> Result<Option<Bytes>> {
        let deadline = tokio::time::Instant::now() + timeout;
        self.take_with(Wait::Until(deadline)).await
    }

    /// The head without removing it; `None` if the queue is empty. Curator: `peek`, and
    /// `element` (which throws on an empty queue instead).
    pub async fn peek(&self) -> Result<Option<Bytes>> {
        self.spec.validate()?;
        match self.engine.try_lock() {
            Ok(mut engine) => {
                let result = engine.peek().await;
                self.note(&engine, true);
                result
            }
            Err(_) => {
                let mut engine = Engine::new(self.spec.clone(), 1);
                let result = engine.peek().await;
                self.note(&engine, false);
                result
            }
        }
    }

    /// What this handle's calls have cost so far (listings, items, races lost).
    pub fn stats(&self) -> ConsumerStats {
        let (shared, others) = *self.stats.lock().unwrap_or_else(|e| e.into_inner());
        ConsumerStats {
            listings: shared.listings + others.listings,
            taken: shared.taken + others.taken,
            lost: shared.lost + others.lost,
            busy: shared.busy + others.busy,
            in_doubt: shared.in_doubt + others.in_doubt,
        }
    }

    async fn take_with(&self, wait: Wait) -> Result<Option<Bytes>> {
        self.spec.validate()?;
        match self.engine.try_lock() {
            Ok(mut engine) => {
                let result = engine.take(wait).await;
                self.note(&engine, true);
                Ok(result?.map(|taken| taken.data))
            }
            Err(_) => {
                // Busy (another call waits on the shared listing): list on our own. Depth 1
                // means nothing is left in flight once an item is won.
                let mut engine = Engine::new(self.spec.clone(), 1);
                let result = engine.take(wait).await;
                self.note(&engine, false);
                Ok(result?.map(|taken| taken.data))
            }
        }
    }

    fn note(&self, engine: &Engine, shared: bool) {
        let mut stats = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        let now = engine.stats();
        if shared {
            stats.0 = now;
        } else {
            let others = &mut stats.1;
            others.listings += now.listings;
            others.taken += now.taken;
            others.lost += now.lost;
            others.busy += now.busy;
            others.in_doubt += now.in_doubt;
        }
    }
}
