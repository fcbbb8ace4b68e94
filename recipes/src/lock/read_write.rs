//! [`InterProcessReadWriteLock`]: Curator's read/write lock, on the same znodes.

use std::ops::Deref;
use std::time::Duration;
use tokio::time::Instant;
use zkrs_client::ErrorKind;

use zkrs_client::{validate_path, Client, Error, Result};

use super::guard::LockGuard;
use super::internals::{acquire_with_sequence, participants, LockSpec, Rule};
use super::options::{lock_builder_setters, LockOptions};
use super::{READ_LOCK_NAME, WRITE_LOCK_NAME};
use crate::framework::{node_name, ConnectionStatePolicy};
use crate::metrics::{count, LockKind};
use crate::sequence::read_write_sort_key;

/// A read/write lock across processes, compatible with Curator's `InterProcessReadWriteLock`
/// on the same path: many readers at once, or one writer alone.
///
/// Layout (Curator's): read nodes `<path>/_c_<uuid>-__READ__<seq>` and write nodes
/// `<path>/_c_<uuid>-__WRIT__<seq>`, ephemeral sequential, in the same directory, ordered by
/// their sequence number whatever their kind ([`crate::sequence::read_write_sort_key`]).
///
/// - A writer holds the lock when its node sorts first of all nodes (readers and writers).
/// - A reader holds the lock when no write node sorts before it. So the lock is fair: a
///   reader that arrives while a writer waits queues behind that writer, and a stream of
///   readers cannot starve writers.
///
/// Downgrade: while holding the write lock, [`WriteLockGuard::read_lock`] takes a read lock at
/// once; releasing the write lock then leaves a read lock that no writer waiting since can
/// overtake (its node sorts where the write node was, as in Curator after CURATOR-621).
/// [`WriteLockGuard::downgrade`] does both steps.
///
/// Upgrade (read to write) is not possible: a write request made while holding a read lock
/// waits for every node before it, our own read node included, so it would wait for itself
/// (until its timeout, or forever with [`WriteLock::acquire`]). Release the read lock first.
///
/// Unlike Curator's, the locks are not re-entrant: a guard is the proof of ownership, and
/// every acquire makes a new node.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::lock::InterProcessReadWriteLock;
/// let lock = InterProcessReadWriteLock::builder(&client, "/locks/config").build()?;
///
/// // Many readers may hold it at once.
/// let read = lock.read_lock().acquire().await?;
/// read.release().await?;
///
/// // A writer holds it alone; it may downgrade to a read lock without letting a writer in.
/// let write = lock.write_lock().acquire().await?;
/// let read = write.downgrade().await?;
/// read.release().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct InterProcessReadWriteLock {
    client: Client,
    dir: String,
    data: Vec<u8>,
    policy: ConnectionStatePolicy,
}

/// Settings for an [`InterProcessReadWriteLock`]; [`InterProcessReadWriteLockBuilder::build`]
/// makes it.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build`"]
pub struct InterProcessReadWriteLockBuilder {
    options: LockOptions,
}

impl InterProcessReadWriteLockBuilder {
    lock_builder_setters!(
        InterProcessReadWriteLockBuilder,
        /// Data stored in each lock node, read and write (default: empty; Curator's `lockData`).
        data,
        /// The connection-state policy the guards follow (default: standard).
        policy,
    );

    /// The lock. Nothing is sent until one of its sides is acquired. Fails (kind
    /// `InvalidInput`) if the path is not a valid znode path.
    pub fn build(self) -> Result<InterProcessReadWriteLock> {
        let LockOptions {
            client,
            path,
            data,
            policy,
        } = self.options;
        validate_path(&path)?;
        Ok(InterProcessReadWriteLock {
            client,
            dir: path,
            data,
            policy,
        })
    }
}

impl InterProcessReadWriteLock {
    /// A builder for a read/write lock at `path` (the lock directory, shared by readers and
    /// writers).
    pub fn builder(client: &Client, path: &str) -> InterProcessReadWriteLockBuilder {
        InterProcessReadWriteLockBuilder {
            options: LockOptions::new(client, path),
        }
    }

    /// The lock directory.
    pub fn path(&self) -> &str {
        &self.dir
    }

    /// The read side (Curator's `readLock()`).
    pub fn read_lock(&self) -> ReadLock {
        ReadLock {
            side: self.side(READ_LOCK_NAME),
        }
    }

    /// The write side (Curator's `writeLock()`).
    pub fn write_lock(&self) -> WriteLock {
        WriteLock {
            side: self.side(WRITE_LOCK_NAME),
            read: self.read_lock(),
        }
    }

    /// Every contender's node path, readers and writers, in lock order.
    pub async fn participant_nodes(&self) -> Result<Vec<String>> {
        participants(&self.client, &self.side(READ_LOCK_NAME).spec).await
    }

    fn side(&self, lock_name: &'static str) -> Side {
        Side {
            client: self.client.clone(),
            spec: LockSpec {
                dir: self.dir.clone(),
                lock_name,
                read_write: true,
            },
            data: self.data.clone(),
            policy: self.policy,
        }
    }
}

/// What a read or a write side needs.
#[derive(Debug, Clone)]
struct Side {
    client: Client,
    spec: LockSpec,
    data: Vec<u8>,
    policy: ConnectionStatePolicy,
}

impl Side {
    async fn acquire(
        &self,
        rule: Rule,
        deadline: Option<Instant>,
        sequence: Option<&str>,
    ) -> Result<Option<LockGuard>> {
        let kind = if self.spec.lock_name == READ_LOCK_NAME {
            LockKind::Read
        } else {
            LockKind::Write
        };
        let started = Instant::now();
        let got = acquire_with_sequence(
            &self.client,
            &self.spec,
            rule,
            &self.data,
            deadline,
            sequence,
        )
        .await?;
        count::lock_attempt(Some(kind), started, got.is_some());
        Ok(got.map(|a| {
            LockGuard::new(
                &self.client,
                a.path,
                a.session_id,
                a.token,
                self.policy,
                Some(kind),
            )
        }))
    }

    /// This side's nodes (Curator filters the participants by lock name), in lock order.
    async fn participant_nodes(&self) -> Result<Vec<String>> {
        let mut nodes = participants(&self.client, &self.spec).await?;
        nodes.retain(|p| node_name(p).contains(self.spec.lock_name));
        Ok(nodes)
    }
}

/// The read side of an [`InterProcessReadWriteLock`]: shared with other readers, excluded by
/// writers (those already holding and those already waiting).
#[derive(Debug, Clone)]
pub struct ReadLock {
    side: Side,
}

impl ReadLock {
    /// Waits for a read lock.
    pub async fn acquire(&self) -> Result<LockGuard> {
        let rule = Rule::Read { holds_write: false };
        let got = self.side.acquire(rule, None, None).await?;
        Ok(got.expect("no deadline, so never timed out"))
    }

    /// Waits for a read lock at most `timeout`; `None` if it was not acquired (our node is
    /// then deleted, in the background: it may outlive the call briefly). A zero timeout
    /// tries once.
    pub async fn try_acquire(&self, timeout: Duration) -> Result<Option<LockGuard>> {
        let rule = Rule::Read { holds_write: false };
        let deadline = Instant::now() + timeout;
        self.side.acquire(rule, Some(deadline), None).await
    }

    /// The read nodes' paths, in lock order.
    pub async fn participant_nodes(&self) -> Result<Vec<String>> {
        self.side.participant_nodes().await
    }

    /// The lock directory.
    pub fn path(&self) -> &str {
        &self.side.spec.dir
    }
}

/// The write side of an [`InterProcessReadWriteLock`]: exclusive of every other node, read or
/// write, that came before it.
#[derive(Debug, Clone)]
pub struct WriteLock {
    side: Side,
    read: ReadLock,
}

impl WriteLock {
    /// Waits for the write lock.
    pub async fn acquire(&self) -> Result<WriteLockGuard> {
        let got = self.side.acquire(Rule::Exclusive, None, None).await?;
        let guard = got.expect("no deadline, so never timed out");
        Ok(self.guard(guard))
    }

    /// Waits for the write lock at most `timeout`; `None` if it was not acquired (our node is
    /// then deleted, in the background: it may outlive the call briefly). A zero timeout
    /// tries once.
    pub async fn try_acquire(&self, timeout: Duration) -> Result<Option<WriteLockGuard>> {
        let deadline = Instant::now() + timeout;
        let got = self
            .side
            .acquire(Rule::Exclusive, Some(deadline), None)
            .await?;
        Ok(got.map(|g| self.guard(g)))
    }

    /// The write nodes' paths, in lock order.
    pub async fn participant_nodes(&self) -> Result<Vec<String>> {
        self.side.participant_nodes().await
    }

    /// The lock directory.
    pub fn path(&self) -> &str {
        &self.side.spec.dir
    }

    fn guard(&self, guard: LockGuard) -> WriteLockGuard {
        WriteLockGuard {
            guard,
            read: self.read.clone(),
        }
    }
}

/// Held while the write lock is held: a [`LockGuard`] (it derefs to one) that can also take a
/// read lock at once ([`WriteLockGuard::read_lock`], Curator's downgrade).
///
/// Dropping it releases the write lock in the background, like a [`LockGuard`].
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct WriteLockGuard {
    guard: LockGuard,
    read: ReadLock,
}

impl WriteLockGuard {
    /// Takes a read lock while holding the write lock; it is granted at once. Its node
    /// `_c_<uuid>-__READ__<seq>` carries the write node's sequence number (an ephemeral, not
    /// sequential, node), so it sorts where the write node is: a writer that is waiting now
    /// stays behind it after the write lock is released (CURATOR-621).
    ///
    /// Fails with `SessionExpired` if the write lock's session is gone (the write lock is no
    /// longer held, so no read lock is granted on its account).
    ///
    /// ```no_run
    /// # async fn demo(lock: zkrs_recipes::lock::InterProcessReadWriteLock) -> zkrs_client::Result<()> {
    /// let write = lock.write_lock().acquire().await?;
    /// // ... update the data ...
    /// let read = write.read_lock().await?;
    /// write.release().await?; // still reading: no writer got in between
    /// // ... read the data ...
    /// read.release().await?;
    /// # Ok(()) }
    /// ```
    pub async fn read_lock(&self) -> Result<LockGuard> {
        let side = &self.read.side;
        let lost = || Error::new(ErrorKind::SessionExpired, "").with_path(self.guard.path());
        if side.client.session_id() != self.guard.session_id() {
            return Err(lost());
        }
        let sequence = read_write_sort_key(node_name(self.guard.path()));
        let rule = Rule::Read { holds_write: true };
        let guard = side
            .acquire(rule, None, Some(sequence))
            .await?
            .expect("no deadline, so never timed out");
        if guard.session_id() != self.guard.session_id() {
            // A new session: the write node (and with it the right to read at once) is gone.
            // Dropping the guard deletes the read node.
            drop(guard);
            return Err(lost());
        }
        Ok(guard)
    }

    /// Downgrades: takes a read lock ([`WriteLockGuard::read_lock`]), then releases the
    /// write lock. If the read lock cannot be taken, the write lock is released all the same
    /// and the error returned.
    pub async fn downgrade(self) -> Result<LockGuard> {
        let read = self.read_lock().await;
        let released = self.release().await;
        let read = read?;
        released?;
        Ok(read)
    }

    /// Releases the write lock (see [`LockGuard::release`]).
    pub async fn release(self) -> Result<()> {
        self.guard.release().await
    }

    /// The plain guard, without the downgrade.
    pub fn into_guard(self) -> LockGuard {
        self.guard
    }
}

impl Deref for WriteLockGuard {
    type Target = LockGuard;

    fn deref(&self) -> &LockGuard {
        &self.guard
    }
}
