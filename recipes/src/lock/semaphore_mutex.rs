//! [`InterProcessSemaphoreMutex`]: Curator's non-re-entrant mutex made of a one-lease
//! semaphore.

use std::time::Duration;

use zkrs_client::{Client, Result};

use super::semaphore::{InterProcessSemaphoreV2, InterProcessSemaphoreV2Builder, Lease};
use crate::framework::ConnectionStatePolicy;

/// A mutex across processes made of an [`InterProcessSemaphoreV2`] with one lease, compatible
/// with Curator's `InterProcessSemaphoreMutex` on the same path (same layout: a mutex at
/// `<path>/locks`, the holder's lease at `<path>/leases/_c_<uuid>-lease-<seq>`).
///
/// The holder is whoever has the [`Lease`]: it may be released by any task that has it, and
/// it is not re-entrant (a second acquire by the holder waits for the first lease).
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// use zkrs_recipes::lock::InterProcessSemaphoreMutex;
/// let mutex = InterProcessSemaphoreMutex::builder(&client, "/locks/job").build()?;
/// if let Some(lease) = mutex.try_acquire(Duration::from_secs(1)).await? {
///     // ... the critical section ...
///     lease.release().await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct InterProcessSemaphoreMutex {
    semaphore: InterProcessSemaphoreV2,
}

/// Settings for an [`InterProcessSemaphoreMutex`]; [`InterProcessSemaphoreMutexBuilder::build`]
/// makes it.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build`"]
pub struct InterProcessSemaphoreMutexBuilder {
    semaphore: InterProcessSemaphoreV2Builder,
}

impl InterProcessSemaphoreMutexBuilder {
    /// Data stored in the lease node (default: empty).
    pub fn data(mut self, data: impl Into<Vec<u8>>) -> InterProcessSemaphoreMutexBuilder {
        self.semaphore = self.semaphore.data(data);
        self
    }

    /// The connection-state policy the lease follows (default: standard).
    pub fn policy(mut self, policy: ConnectionStatePolicy) -> InterProcessSemaphoreMutexBuilder {
        self.semaphore = self.semaphore.policy(policy);
        self
    }

    /// The mutex. Nothing is sent until it is acquired. Fails (kind `InvalidInput`) if the
    /// path is not a valid znode path.
    pub fn build(self) -> Result<InterProcessSemaphoreMutex> {
        Ok(InterProcessSemaphoreMutex {
            semaphore: self.semaphore.build()?,
        })
    }
}

impl InterProcessSemaphoreMutex {
    /// A builder for a mutex at `path`.
    pub fn builder(client: &Client, path: &str) -> InterProcessSemaphoreMutexBuilder {
        InterProcessSemaphoreMutexBuilder {
            semaphore: InterProcessSemaphoreV2::builder(client, path, 1),
        }
    }

    /// The mutex's path.
    pub fn path(&self) -> &str {
        self.semaphore.path()
    }

    /// Waits for the mutex; releasing (or dropping) the lease releases it.
    pub async fn acquire(&self) -> Result<Lease> {
        self.semaphore.acquire_one().await
    }

    /// Waits for the mutex at most `timeout`; `None` if it was not acquired (no node is left
    /// behind; see [`InterProcessSemaphoreV2::try_acquire`]). A zero timeout tries once.
    pub async fn try_acquire(&self, timeout: Duration) -> Result<Option<Lease>> {
        self.semaphore.try_acquire_one(timeout).await
    }

    /// The lease nodes' paths (the holder's, and a waiter's that is still checking).
    pub async fn participant_nodes(&self) -> Result<Vec<String>> {
        self.semaphore.participant_nodes().await
    }
}
