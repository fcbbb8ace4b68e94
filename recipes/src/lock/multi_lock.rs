//! [`InterProcessMultiLock`]: several locks taken as one, all or nothing.

use std::time::Duration;
use tokio::time::Instant;

use zkrs_client::Result;

use super::guard::LockGuard;
use super::mutex::InterProcessMutex;
use super::read_write::{ReadLock, WriteLock};
use super::semaphore_mutex::InterProcessSemaphoreMutex;

/// One of the locks an [`InterProcessMultiLock`] takes. Made with `.into()` from any of them.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Lockable {
    /// An [`InterProcessMutex`].
    Mutex(InterProcessMutex),
    /// The read side of an [`crate::lock::InterProcessReadWriteLock`].
    Read(ReadLock),
    /// The write side of an [`crate::lock::InterProcessReadWriteLock`].
    Write(WriteLock),
    /// An [`InterProcessSemaphoreMutex`].
    SemaphoreMutex(InterProcessSemaphoreMutex),
}

impl Lockable {
    /// The lock's path.
    pub fn path(&self) -> &str {
        match self {
            Lockable::Mutex(l) => l.path(),
            Lockable::Read(l) => l.path(),
            Lockable::Write(l) => l.path(),
            Lockable::SemaphoreMutex(l) => l.path(),
        }
    }

    /// Takes the lock, waiting until `deadline` (forever if `None`); `None` if timed out.
    async fn acquire_until(&self, deadline: Option<Instant>) -> Result<Option<LockGuard>> {
        let Some(deadline) = deadline else {
            return Ok(Some(match self {
                Lockable::Mutex(l) => l.acquire().await?,
                Lockable::Read(l) => l.acquire().await?,
                Lockable::Write(l) => l.acquire().await?.into_guard(),
                Lockable::SemaphoreMutex(l) => l.acquire().await?.into_guard(),
            }));
        };
        let left = deadline.saturating_duration_since(Instant::now());
        Ok(match self {
            Lockable::Mutex(l) => l.try_acquire(left).await?,
            Lockable::Read(l) => l.try_acquire(left).await?,
            Lockable::Write(l) => l.try_acquire(left).await?.map(|g| g.into_guard()),
            Lockable::SemaphoreMutex(l) => l.try_acquire(left).await?.map(|l| l.into_guard()),
        })
    }
}

impl From<InterProcessMutex> for Lockable {
    fn from(lock: InterProcessMutex) -> Lockable {
        Lockable::Mutex(lock)
    }
}

impl From<ReadLock> for Lockable {
    fn from(lock: ReadLock) -> Lockable {
        Lockable::Read(lock)
    }
}

impl From<WriteLock> for Lockable {
    fn from(lock: WriteLock) -> Lockable {
        Lockable::Write(lock)
    }
}

impl From<InterProcessSemaphoreMutex> for Lockable {
    fn from(lock: InterProcessSemaphoreMutex) -> Lockable {
        Lockable::SemaphoreMutex(lock)
    }
}

/// Several locks taken as one (Curator's `InterProcessMultiLock`): acquired in the order
/// given, all or nothing, and released in reverse order.
///
/// If one of them cannot be taken (an error, or the timeout), those already taken are
/// released (in reverse order) before the acquire returns: no node is left behind. Unlike
/// Curator's, whose timeout applies to each lock in turn, the timeout of
/// [`InterProcessMultiLock::try_acquire`] bounds the whole acquire.
///
/// To avoid deadlocks between processes, take the same locks in the same order everywhere.
/// Do not combine the read and the write side of one read/write lock: the second would wait
/// for the first (use [`crate::lock::WriteLockGuard::read_lock`] for that).
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// use zkrs_recipes::lock::{InterProcessMultiLock, InterProcessMutex, InterProcessReadWriteLock};
///
/// // Mutexes at several paths.
/// let both = InterProcessMultiLock::builder()
///     .lock(InterProcessMutex::builder(&client, "/locks/a").build()?)
///     .lock(InterProcessMutex::builder(&client, "/locks/b").build()?)
///     .build()?;
/// let guard = both.acquire().await?;
/// guard.release().await?; // /locks/b first, then /locks/a
///
/// // Any mix of lock kinds.
/// let config = InterProcessReadWriteLock::builder(&client, "/locks/config").build()?;
/// let mixed = InterProcessMultiLock::builder()
///     .lock(config.read_lock())
///     .lock(InterProcessMutex::builder(&client, "/locks/job").build()?)
///     .build()?;
/// if let Some(guard) = mixed.try_acquire(Duration::from_secs(1)).await? {
///     guard.release().await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct InterProcessMultiLock {
    locks: Vec<Lockable>,
}

/// The locks of an [`InterProcessMultiLock`], in acquire order;
/// [`InterProcessMultiLockBuilder::build`] makes it.
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until `build`"]
pub struct InterProcessMultiLockBuilder {
    locks: Vec<Lockable>,
}

impl InterProcessMultiLockBuilder {
    /// Adds a lock, taken after those added before it (any lock kind: see [`Lockable`]).
    pub fn lock(mut self, lock: impl Into<Lockable>) -> InterProcessMultiLockBuilder {
        self.locks.push(lock.into());
        self
    }

    /// The multi-lock. Nothing is sent until it is acquired; each lock checked its path when
    /// it was built, so this does not fail today (the `Result` is the builders' shape).
    pub fn build(self) -> Result<InterProcessMultiLock> {
        Ok(InterProcessMultiLock { locks: self.locks })
    }
}

impl InterProcessMultiLock {
    /// A builder: add the locks with [`InterProcessMultiLockBuilder::lock`], in acquire
    /// order (Curator's constructors take a list of locks, or of paths for mutexes).
    pub fn builder() -> InterProcessMultiLockBuilder {
        InterProcessMultiLockBuilder::default()
    }

    /// The locks, in acquire order.
    pub fn locks(&self) -> &[Lockable] {
        &self.locks
    }

    /// Waits for all the locks. On an error, those taken are released and the error returned.
    pub async fn acquire(&self) -> Result<MultiLockGuard> {
        let got = self.acquire_until(None).await?;
        Ok(got.expect("no deadline, so never timed out"))
    }

    /// Waits for all the locks, at most `timeout` in all; `None` if they could not all be
    /// taken. Then those taken are released, in reverse order, before this returns; the
    /// node of the lock whose wait timed out is deleted in the background (it may outlive the
    /// call briefly).
    pub async fn try_acquire(&self, timeout: Duration) -> Result<Option<MultiLockGuard>> {
        self.acquire_until(Some(Instant::now() + timeout)).await
    }

    async fn acquire_until(&self, deadline: Option<Instant>) -> Result<Option<MultiLockGuard>> {
        // Dropped, releasing what it holds in reverse order, on every way out but success.
        let mut taken = MultiLockGuard {
            guards: Vec::with_capacity(self.locks.len()),
        };
        for lock in &self.locks {
            match lock.acquire_until(deadline).await {
                Ok(Some(guard)) => taken.guards.push(guard),
                Ok(None) => {
                    taken.release().await?;
                    return Ok(None);
                }
                Err(e) => {
                    let _ = taken.release().await;
                    return Err(e);
                }
            }
        }
        Ok(Some(taken))
    }
}

/// Held while all the locks of an [`InterProcessMultiLock`] are held. [`MultiLockGuard::release`]
/// releases them in reverse order; dropping it releases them in the background (the deletes
/// are started in reverse order).
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct MultiLockGuard {
    guards: Vec<LockGuard>,
}

impl MultiLockGuard {
    /// The guards, in acquire order.
    pub fn guards(&self) -> &[LockGuard] {
        &self.guards
    }

    /// Whether every lock can still be counted on.
    pub fn is_held(&self) -> bool {
        self.guards.iter().all(LockGuard::is_held)
    }

    /// Releases the locks in reverse order, each one's node gone before the next is released;
    /// the first error, if any, after trying them all. Cancel-safe: what is not released yet
    /// when the future is dropped is released in the background.
    pub async fn release(mut self) -> Result<()> {
        let mut result = Ok(());
        while let Some(guard) = self.guards.pop() {
            let released = guard.release().await;
            if result.is_ok() {
                result = released;
            }
        }
        result
    }
}

impl Drop for MultiLockGuard {
    fn drop(&mut self) {
        while let Some(guard) = self.guards.pop() {
            drop(guard);
        }
    }
}
