//! [`InterProcessMutex`]: Curator's mutex, on the same znodes.

use std::time::Duration;
use tokio::time::Instant;

use zkrs_client::{Client, Result};

use super::guard::LockGuard;
use super::internals::{acquire, participants, LockSpec, Rule};
use super::LOCK_NAME;
use crate::framework::ConnectionStatePolicy;

/// A mutex across processes, fair (first come, first served), compatible with Curator's
/// `InterProcessMutex` on the same path: a Java process holding it excludes a Rust one and the
/// other way round.
///
/// Nodes: `<path>/_c_<uuid>-lock-<seq>`, ephemeral. Unlike Curator's it is not re-entrant:
/// the guard is the proof of ownership.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::InterProcessMutex;
/// let mutex = InterProcessMutex::new(&client, "/locks/report");
/// let guard = mutex.acquire().await?;
/// // ... the critical section; stop if `guard.lost()` resolves ...
/// guard.release().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct InterProcessMutex {
    client: Client,
    spec: LockSpec,
    data: Vec<u8>,
    policy: ConnectionStatePolicy,
}

impl InterProcessMutex {
    /// A mutex at `path` (the lock directory).
    pub fn new(client: &Client, path: &str) -> InterProcessMutex {
        InterProcessMutex::with_lock_name(client, path, LOCK_NAME)
    }

    pub(crate) fn with_lock_name(
        client: &Client,
        path: &str,
        lock_name: &'static str,
    ) -> InterProcessMutex {
        InterProcessMutex {
            client: client.clone(),
            spec: LockSpec {
                dir: path.to_string(),
                lock_name,
                read_write: false,
            },
            data: Vec::new(),
            policy: ConnectionStatePolicy::Standard,
        }
    }

    /// Data stored in each lock node (Curator's `getLockNodeBytes`; e.g. the holder's id).
    pub fn with_data(mut self, data: impl Into<Vec<u8>>) -> InterProcessMutex {
        self.data = data.into();
        self
    }

    /// The connection-state policy guards follow (default: standard).
    pub fn with_policy(mut self, policy: ConnectionStatePolicy) -> InterProcessMutex {
        self.policy = policy;
        self
    }

    /// The lock directory.
    pub fn path(&self) -> &str {
        &self.spec.dir
    }

    /// Waits for the lock.
    pub async fn acquire(&self) -> Result<LockGuard> {
        let got = acquire(&self.client, &self.spec, Rule::Exclusive, &self.data, None).await?;
        let got = got.expect("no deadline, so never timed out");
        Ok(LockGuard::new(
            &self.client,
            got.path,
            got.session_id,
            self.policy,
        ))
    }

    /// Waits for the lock at most `timeout`; `None` if it was not acquired (our node is then
    /// deleted). A zero timeout tries once.
    pub async fn try_acquire(&self, timeout: Duration) -> Result<Option<LockGuard>> {
        let deadline = Instant::now() + timeout;
        let got = acquire(
            &self.client,
            &self.spec,
            Rule::Exclusive,
            &self.data,
            Some(deadline),
        )
        .await?;
        Ok(got.map(|a| LockGuard::new(&self.client, a.path, a.session_id, self.policy)))
    }

    /// The contenders' node paths, holder first.
    pub async fn participant_nodes(&self) -> Result<Vec<String>> {
        participants(&self.client, &self.spec).await
    }
}
