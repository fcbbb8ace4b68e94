//! [`SimpleDistributedQueue`]: Curator's `SimpleDistributedQueue` (ZooKeeper's own queue
//! recipe), a `java.util.Queue`-like API over raw bytes.

use std::sync::Arc;
use std::time::Duration;
use zkrs_client::ErrorKind;

use tokio::sync::Mutex;
use zkrs_client::{Bytes, Client, Error, Result};

use super::engine::{ConsumerStats, Engine, Wait};
use super::naming::{Order, SIMPLE_ITEM_PREFIX};
use super::producer::put_node;
use super::spec::Spec;

/// A queue of raw byte items with `offer`, `take`, `poll`, `peek`, compatible with Curator's
/// `SimpleDistributedQueue` on the same path.
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
/// A dropped `take`/`poll` loses nothing: an item whose claim was in flight is kept for the
/// next call on this handle, and given back (put at the end of the queue) if the handle is
/// dropped.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// use zkrs_recipes::queue::SimpleDistributedQueue;
/// let queue = SimpleDistributedQueue::new(&client, "/queues/tasks");
/// queue.offer(b"task 1").await?;
/// assert_eq!(queue.peek().await?.as_deref(), Some(&b"task 1"[..]));
/// let task = queue.take().await?;            // waits for an item
/// let next = queue.poll_timeout(Duration::from_millis(100)).await?; // None: empty
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

impl SimpleDistributedQueue {
    /// A queue at `path`.
    pub fn new(client: &Client, path: &str) -> SimpleDistributedQueue {
        let spec = Arc::new(Spec::new(client, path, Order::Simple));
        SimpleDistributedQueue {
            engine: Mutex::new(Engine::new(spec.clone(), 1)),
            spec,
            stats: std::sync::Mutex::new(Default::default()),
        }
    }

    /// The queue's path.
    pub fn path(&self) -> &str {
        &self.spec.path
    }

    /// Adds an item at the end; returns its node's path.
    pub async fn offer(&self, data: impl AsRef<[u8]>) -> Result<String> {
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

    /// Removes and returns the head; `None` if the queue is empty.
    pub async fn poll(&self) -> Result<Option<Bytes>> {
        self.take_with(Wait::No).await
    }

    /// Removes and returns the head, waiting at most `timeout` for one.
    pub async fn poll_timeout(&self, timeout: Duration) -> Result<Option<Bytes>> {
        let deadline = tokio::time::Instant::now() + timeout;
        self.take_with(Wait::Until(deadline)).await
    }

    /// Removes and returns the head; an error (`NoNode`, "the queue is empty") if there is
    /// none (Curator's `remove`, which throws `NoSuchElementException`).
    pub async fn remove(&self) -> Result<Bytes> {
        self.poll().await?.ok_or_else(|| self.empty())
    }

    /// The head without removing it; `None` if the queue is empty.
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

    /// The head without removing it; an error (`NoNode`, "the queue is empty") if there is
    /// none.
    pub async fn element(&self) -> Result<Bytes> {
        self.peek().await?.ok_or_else(|| self.empty())
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

    fn empty(&self) -> Error {
        Error::new(ErrorKind::Empty, "the queue is empty").with_path(&self.spec.path)
    }
}
