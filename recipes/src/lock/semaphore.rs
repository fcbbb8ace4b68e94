//! [`InterProcessSemaphoreV2`]: Curator's counting semaphore, on the same znodes, and its
//! [`Lease`]s.

use crate::error::ErrorExt;
use std::time::Duration;
use tokio::time::Instant;

use zkrs_client::{
    validate_path, Bytes, Client, CreateMode, Error, ErrorCode, OneshotWatch, Result, WatchedEvent,
};

use super::guard::LockGuard;
use super::mutex::InterProcessMutex;
use super::options::{lock_builder_setters, LockOptions};
use crate::counter::{decode_count, encode_count};
use crate::framework::{
    create_parents, create_protected, join, node_name, parent, Backoff, ConnectionStatePolicy,
    FencingToken, ProtectedName,
};
use crate::line::leftovers::Leftovers;
use crate::metrics::{count, LockKind};
use crate::sequence::{key_fn, sort_key, sorted};

/// The child of the semaphore's path that holds its mutex.
pub const SEMAPHORE_LOCK_PARENT: &str = "locks";
/// The child of the semaphore's path that holds the leases.
pub const SEMAPHORE_LEASE_PARENT: &str = "leases";
/// The name of lease nodes (after the protected prefix).
pub const LEASE_NAME: &str = "lease-";

/// Where a semaphore's maximum number of leases comes from: a fixed number (`From<u32>`, so
/// [`InterProcessSemaphoreV2::builder`] takes a plain count), or a SharedCount node.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MaxLeases {
    /// A fixed maximum.
    Fixed(u32),
    /// The SharedCount at `path` (Curator's `SharedCount` format: a 4-byte big-endian int; a
    /// negative count counts as 0), read again whenever a waiter looks and followed with a
    /// watch while waiting. If the node does not exist, it is created with `seed` (and
    /// missing parents as containers), as Curator's `SharedCount.start()` does.
    Shared {
        /// The SharedCount node's path.
        path: String,
        /// The count the node is created with if it is absent.
        seed: i32,
    },
}

impl MaxLeases {
    /// The SharedCount at `path`, created with `seed` if absent (see [`MaxLeases::Shared`]).
    pub fn shared_count(path: impl Into<String>, seed: i32) -> MaxLeases {
        MaxLeases::Shared {
            path: path.into(),
            seed,
        }
    }
}

impl From<u32> for MaxLeases {
    fn from(max: u32) -> MaxLeases {
        MaxLeases::Fixed(max)
    }
}

/// A counting semaphore across processes, compatible with Curator's
/// `InterProcessSemaphoreV2` on the same path: at most `max_leases` leases are out at once,
/// among all the processes that use it.
///
/// Layout (Curator's): an [`InterProcessMutex`] at `<path>/locks`, and one node per lease,
/// `<path>/leases/_c_<uuid>-lease-<seq>` (ephemeral sequential, protected).
///
/// Taking a lease (Curator's `internalAcquire1Lease`): take the mutex, create the lease node,
/// then list the leases (with a watch) until there are at most `max_leases` of them, and
/// release the mutex. Holding the mutex while waiting makes the semaphore fair: the next
/// taker waits on the mutex, first come, first served. Two steps cost less than Curator's:
/// the first listing goes out with the create (applied after it, it already counts the new
/// lease), and the mutex is let go in the background once the lease is counted, so an
/// uncontended lease is two round trips (the mutex, then the lease) where Curator's is five.
///
/// A waiter for a lease lists the leases again after each change: the notification of a
/// change under `leases` does not say which lease it was (ours too can be deleted, by an
/// expired session or by hand), so unlike a lock's hand-off, a lease's takes that listing.
///
/// The maximum is fixed or read from a SharedCount node ([`MaxLeases`]) and followed when it
/// changes: raising the count lets waiters in. Lowering it takes no lease back; new takers wait
/// until enough leases are returned.
///
/// Leases are *not* tied to the process in any other way: a lease is returned by
/// [`Lease::release`], by dropping it, or when its session ends.
///
/// Every way out of an acquire (error, timeout, a dropped future) deletes the lease and mutex
/// nodes it made.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// use zkrs_recipes::lock::InterProcessSemaphoreV2;
/// let semaphore = InterProcessSemaphoreV2::builder(&client, "/semaphores/db", 3).build()?;
/// let lease = semaphore.acquire_one().await?;
/// // ... at most 3 processes are here at once ...
/// lease.release().await?;
///
/// if let Some(leases) = semaphore.try_acquire(2, Duration::from_secs(1)).await? {
///     // ... two of the three leases ...
///     InterProcessSemaphoreV2::return_all(leases).await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct InterProcessSemaphoreV2 {
    client: Client,
    path: String,
    leases_path: String,
    lock: InterProcessMutex,
    max: MaxLeases,
    data: Vec<u8>,
    policy: ConnectionStatePolicy,
}

/// The first listing of the leases (with its watch) and read of the maximum, pipelined
/// with the create.
type FirstAnswers = (
    Result<(zkrs_client::Children, OneshotWatch)>,
    Result<(u32, Option<OneshotWatch>)>,
);

enum Attempt {
    Got(Lease),
    TimedOut,
    /// Our lease node vanished (session lost, directory deleted): try again.
    Gone,
}

/// Settings for an [`InterProcessSemaphoreV2`]; [`InterProcessSemaphoreV2Builder::build`]
/// makes it.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build`"]
pub struct InterProcessSemaphoreV2Builder {
    options: LockOptions,
    max: MaxLeases,
}

impl InterProcessSemaphoreV2Builder {
    lock_builder_setters!(
        InterProcessSemaphoreV2Builder,
        /// Data stored in each lease node (default: empty; Curator's `setNodeData`).
        data,
        /// The connection-state policy the leases follow ([`Lease::is_held`], [`Lease::lost`];
        /// default: standard).
        policy,
    );

    /// The semaphore. Nothing is sent until a lease is acquired. Fails (kind
    /// `InvalidInput`) if its path or its SharedCount's path is not a valid znode path.
    pub fn build(self) -> Result<InterProcessSemaphoreV2> {
        let options = self.options;
        validate_path(&options.path)?;
        if let MaxLeases::Shared { path, .. } = &self.max {
            validate_path(path)?;
        }
        let mut semaphore =
            InterProcessSemaphoreV2::internal(&options.client, &options.path, self.max);
        semaphore.data = options.data;
        semaphore.policy = options.policy;
        Ok(semaphore)
    }
}

impl InterProcessSemaphoreV2 {
    /// A builder for a semaphore at `path` with at most `max_leases` leases out at once: a
    /// number, or [`MaxLeases::shared_count`] to follow a SharedCount node.
    pub fn builder(
        client: &Client,
        path: &str,
        max_leases: impl Into<MaxLeases>,
    ) -> InterProcessSemaphoreV2Builder {
        InterProcessSemaphoreV2Builder {
            options: LockOptions::new(client, path),
            max: max_leases.into(),
        }
    }

    /// A semaphore another recipe is built on (not validated).
    pub(crate) fn internal(client: &Client, path: &str, max: MaxLeases) -> InterProcessSemaphoreV2 {
        InterProcessSemaphoreV2 {
            client: client.clone(),
            path: path.to_string(),
            leases_path: join(path, SEMAPHORE_LEASE_PARENT),
            lock: InterProcessMutex::internal(client, &join(path, SEMAPHORE_LOCK_PARENT)),
            max,
            data: Vec::new(),
            policy: ConnectionStatePolicy::Standard,
        }
    }

    /// The semaphore's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The current maximum number of leases (reads the SharedCount node if there is one,
    /// creating it with its seed if absent).
    pub async fn max_leases(&self) -> Result<u32> {
        self.read_max(false).await.map(|(max, _)| max)
    }

    /// Waits for one lease.
    pub async fn acquire_one(&self) -> Result<Lease> {
        let mut leases = self.acquire(1).await?;
        Ok(leases.pop().expect("one lease"))
    }

    /// Waits for one lease at most `timeout`; `None` if none was free in time.
    pub async fn try_acquire_one(&self, timeout: Duration) -> Result<Option<Lease>> {
        let leases = self.try_acquire(1, timeout).await?;
        Ok(leases.and_then(|mut l| l.pop()))
    }

    /// Waits for `n` leases (taken one after the other). If taking one fails, those already
    /// taken are returned before the error is. `n` must not be 0.
    pub async fn acquire(&self, n: u32) -> Result<Vec<Lease>> {
        let leases = self.acquire_until(n, None).await?;
        Ok(leases.expect("no deadline, so never timed out"))
    }

    /// Waits for `n` leases, all within `timeout`; `None` if they could not all be taken in
    /// time. Then the leases taken, and a lease node still waiting, are deleted before this
    /// returns; a mutex node whose wait timed out is deleted in the background (it may outlive
    /// the call briefly). `n` must not be 0. A zero timeout tries once.
    pub async fn try_acquire(&self, n: u32, timeout: Duration) -> Result<Option<Vec<Lease>>> {
        self.acquire_until(n, Some(Instant::now() + timeout)).await
    }

    /// Returns every lease in `leases` (Curator's `returnAll`); the first error, if any, after
    /// trying them all.
    pub async fn return_all(leases: impl IntoIterator<Item = Lease>) -> Result<()> {
        let mut result = Ok(());
        for lease in leases {
            let released = lease.release().await;
            if result.is_ok() {
                result = released;
            }
        }
        result
    }

    /// The lease nodes' paths, oldest first.
    pub async fn participant_nodes(&self) -> Result<Vec<String>> {
        let children = match self.client.get_children(&self.leases_path).await {
            Ok(c) => c,
            Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        Ok(sorted(children.iter(), key_fn(|n| sort_key(n, LEASE_NAME)))
            .into_iter()
            .map(|n| join(&self.leases_path, n))
            .collect())
    }

    pub(crate) async fn acquire_until(
        &self,
        n: u32,
        deadline: Option<Instant>,
    ) -> Result<Option<Vec<Lease>>> {
        if n == 0 {
            return Err(Error::invalid(
                "a semaphore acquire needs at least one lease",
            ));
        }
        // Dropped (with every lease in it) on any way out but success.
        let mut leases = Vec::with_capacity(n as usize);
        while leases.len() < n as usize {
            match self.acquire_one_until(deadline).await? {
                Some(lease) => leases.push(lease),
                None => {
                    InterProcessSemaphoreV2::return_all(leases).await?;
                    return Ok(None);
                }
            }
        }
        Ok(Some(leases))
    }

    async fn acquire_one_until(&self, deadline: Option<Instant>) -> Result<Option<Lease>> {
        let started = Instant::now();
        let got = self.acquire_one_uncounted(deadline).await?;
        count::lock_attempt(Some(LockKind::Semaphore), started, got.is_some());
        Ok(got)
    }

    async fn acquire_one_uncounted(&self, deadline: Option<Instant>) -> Result<Option<Lease>> {
        loop {
            let mutex = match deadline {
                None => self.lock.acquire().await?,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    match self.lock.try_acquire(left).await? {
                        Some(guard) => guard,
                        None => return Ok(None),
                    }
                }
            };
            // Cancel-safe: a release dropped half-way leaves the node to the guard's `Drop`.
            match self.lease_under_mutex(deadline).await {
                Ok(Attempt::Got(lease)) => {
                    // The lease is counted: the mutex only keeps the next taker waiting now,
                    // so it is let go in the background (the guard's `Drop` deletes it for
                    // sure) and the caller does not wait a round trip for it. The next taker
                    // waits for that deletion either way; Curator's acquire waits for it too.
                    drop(mutex);
                    return Ok(Some(lease));
                }
                Ok(Attempt::TimedOut) => {
                    mutex.release().await?;
                    return Ok(None);
                }
                Ok(Attempt::Gone) => mutex.release().await?,
                Err(e) => {
                    let _ = mutex.release().await;
                    return Err(e);
                }
            }
        }
    }

    /// Creates our lease node and waits until it fits under the maximum; the caller holds
    /// the mutex.
    async fn lease_under_mutex(&self, deadline: Option<Instant>) -> Result<Attempt> {
        let client = &self.client;
        let (lease, first) = self.create_lease().await?;
        let mut first = Some(first);
        if lease.session_id() != client.session_id() {
            // Created by a session that is gone since: not a lease we hold.
            return Ok(Attempt::Gone);
        }
        let ours = lease.node_name();
        let mut backoff = Backoff::until(deadline);
        loop {
            let pipelined = first.is_some();
            let (listed, max) = match first.take() {
                Some(answers) => answers,
                None => {
                    tokio::join!(
                        client.get_children_and_watch(&self.leases_path),
                        self.read_max(true)
                    )
                }
            };
            let ((children, children_changed), (max, max_changed)) = match (listed, max) {
                (Ok(listed), Ok(max)) => (listed, max),
                // Listed before the create made the leases' folder: look again.
                (Err(e), _) if pipelined && e.code() == Some(ErrorCode::NoNode) => continue,
                (Err(e), _) if e.code() == Some(ErrorCode::NoNode) => return Ok(Attempt::Gone),
                (Err(e), _) | (_, Err(e)) if e.is_retryable() || e.is_session_expired() => {
                    match backoff.pause(client).await {
                        Ok(()) => continue,
                        Err(_) if backoff.is_deadline() => {
                            lease.release().await?;
                            return Ok(Attempt::TimedOut);
                        }
                        Err(e) => return Err(e),
                    }
                }
                (Err(e), _) | (_, Err(e)) => return Err(e),
            };
            if !children.contains(ours) {
                if pipelined {
                    // Listed before a create made again: look again.
                    continue;
                }
                return Ok(Attempt::Gone);
            }
            if children.len() <= max as usize {
                return Ok(Attempt::Got(lease));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                lease.release().await?;
                return Ok(Attempt::TimedOut);
            }
            // Wait for a lease to go, the maximum to change, or the deadline.
            tokio::select! {
                biased;
                _ = children_changed => {}
                _ = changed(max_changed) => {}
                _ = until(deadline) => {}
            }
        }
    }

    /// Creates our lease node, with the first listing (and read of the maximum) pipelined:
    /// applied after the create on this session, so it already counts our lease, and an
    /// uncontended lease costs one round trip here instead of two. If the create had to be
    /// made again (a missing parent, a lost connection), that listing does not show it and
    /// [`lease_under_mutex`](Self::lease_under_mutex) lists again.
    async fn create_lease(&self) -> Result<(Lease, FirstAnswers)> {
        let client = &self.client;
        let protected = ProtectedName::new();
        // Until the create's outcome is known, a dropped future or an error deletes
        // whatever carries our prefix.
        let mut cleanup = Leftovers {
            client,
            dir: &self.leases_path,
            protected: &protected,
            node: None,
            in_doubt: true,
        };
        let (created, listed, max) = tokio::join!(
            create_protected(
                client,
                &self.leases_path,
                LEASE_NAME,
                &self.data,
                CreateMode::EphemeralSequential,
                &protected,
            ),
            client.get_children_and_watch(&self.leases_path),
            self.read_max(true)
        );
        let (path, stat) = created?;
        cleanup.in_doubt = false;
        // From here on the lease deletes its node when dropped.
        let lease = Lease {
            guard: LockGuard::new(
                client,
                path,
                stat.ephemeral_owner,
                FencingToken::from_zxid(stat.czxid),
                self.policy,
                Some(LockKind::Semaphore),
            ),
        };
        Ok((lease, (listed, max)))
    }

    /// The current maximum, and (if `watch` and it comes from a node) a watch on that node.
    async fn read_max(&self, watch: bool) -> Result<(u32, Option<OneshotWatch>)> {
        let (path, seed) = match &self.max {
            MaxLeases::Fixed(max) => return Ok((*max, None)),
            MaxLeases::Shared { path, seed } => (path, *seed),
        };
        loop {
            let read = if watch {
                self.client
                    .get_data_and_watch(path)
                    .await
                    .map(|(data, _, w)| (data, Some(w)))
            } else {
                self.client
                    .get_data(path)
                    .await
                    .map(|(data, _)| (data, None))
            };
            match read {
                Ok((data, w)) => {
                    let count = decode_count(&data).ok_or_else(|| {
                        Error::invalid_data(format!(
                            "{path}: a shared count is 4 bytes, found {}",
                            data.len()
                        ))
                    })?;
                    return Ok((count.max(0) as u32, w));
                }
                Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                    create_parents(
                        &self.client,
                        parent(path),
                        crate::framework::ParentMode::Container,
                    )
                    .await?;
                    let seeded = self
                        .client
                        .create(path, &encode_count(seed), CreateMode::Persistent)
                        .await;
                    match seeded {
                        Ok(_) => {}
                        Err(e) if e.code() == Some(ErrorCode::NodeExists) => {}
                        Err(e) => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }
}

async fn changed(watch: Option<OneshotWatch>) -> WatchedEvent {
    match watch {
        Some(w) => w.await,
        None => std::future::pending().await,
    }
}

async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// One lease of an [`InterProcessSemaphoreV2`] (Curator's `Lease`): its node under
/// `<path>/leases`. [`Lease::release`] deletes the node (retrying through connection loss);
/// dropping the lease deletes it in the background.
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct Lease {
    guard: LockGuard,
}

impl Lease {
    /// The lease node's path.
    pub fn path(&self) -> &str {
        self.guard.path()
    }

    /// The lease node's name (Curator's `getNodeName`).
    pub fn node_name(&self) -> &str {
        node_name(self.guard.path())
    }

    /// The data stored in the lease node (Curator's `getData`).
    pub async fn data(&self) -> Result<Bytes> {
        let (data, _) = self.guard.client().get_data(self.path()).await?;
        Ok(data)
    }

    /// The session that owns the node.
    pub fn session_id(&self) -> i64 {
        self.guard.session_id()
    }

    /// Whether the lease can still be counted on (see [`LockGuard::is_held`]).
    pub fn is_held(&self) -> bool {
        self.guard.is_held()
    }

    /// The lease's fencing token (its node's creation zxid; see
    /// [`crate::framework::FencingToken`]).
    pub fn fencing_token(&self) -> FencingToken {
        self.guard.fencing_token()
    }

    /// Resolves when the lease can no longer be counted on (see [`LockGuard::lost`]).
    pub async fn lost(&self) {
        self.guard.lost().await
    }

    /// Returns the lease: deletes its node, retrying through connection loss until it is
    /// gone. Cancel-safe, like [`LockGuard::release`].
    pub async fn release(self) -> Result<()> {
        self.guard.release().await
    }

    /// The lease as a plain [`LockGuard`] on its node (for [`crate::lock::InterProcessMultiLock`]
    /// and other code that handles guards).
    pub fn into_guard(self) -> LockGuard {
        self.guard
    }
}
