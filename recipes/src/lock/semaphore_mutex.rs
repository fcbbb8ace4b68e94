//! [`InterProcessSemaphoreMutex`]: Curator's non-re-entrant mutex made of a one-lease
//! semaphore.

use std::time::Duration;

use zkrs_client::{Client, Result};

use super::semaphore::{InterProcessSemaphoreV2, Lease};
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
/// use zkrs_recipes::InterProcessSemaphoreMutex;
/// let mutex = InterProcessSemaphoreMutex::new(&client, "/locks/job");
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

impl InterProcessSemaphoreMutex {
    /// A mutex at `path`.
    pub fn new(client: &Client, path: &str) -> InterProcessSemaphoreMutex {
        InterProcessSemaphoreMutex {
            semaphore: InterProcessSemaphoreV2::new(client, path, 1),
        }
    }

    /// Data stored in the lease node.
    pub fn with_data(mut self, data: impl Into<Vec<u8>>) -> InterProcessSemaphoreMutex {
        self.semaphore = self.semaphore.with_data(data);
        self
    }

    /// The connection-state policy the lease follows (default: standard).
    pub fn with_policy(mut self, policy: ConnectionStatePolicy) -> InterProcessSemaphoreMutex {
        self.semaphore = self.semaphore.with_policy(policy);
        self
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
