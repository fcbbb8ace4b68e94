//! [`InterProcessMutex`]: Curator's mutex, on the same znodes.

use std::time::Duration;
use tokio::time::Instant;

use zkrs_client::{validate_path, Client, Result};

use super::guard::LockGuard;
use super::internals::{acquire, participants, LockSpec, Rule};
use super::options::{lock_builder_setters, LockOptions};
use super::LOCK_NAME;
use crate::framework::ConnectionStatePolicy;
use crate::metrics::{count, LockKind};

/// A mutex across processes, fair (first come, first served), compatible with Curator's
/// `InterProcessMutex` on the same path: a Java process holding it excludes a Rust one and the
/// other way round.
///
/// Nodes: `<path>/_c_<uuid>-lock-<seq>`, ephemeral. Unlike Curator's it is not re-entrant:
/// the guard is the proof of ownership.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::lock::InterProcessMutex;
/// let mutex = InterProcessMutex::builder(&client, "/locks/report").build()?;
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
    /// Counted in the metrics as (`None` for the mutexes other recipes are built on).
    kind: Option<LockKind>,
}

/// Settings for an [`InterProcessMutex`]; [`InterProcessMutexBuilder::build`] makes it.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build`"]
pub struct InterProcessMutexBuilder {
    options: LockOptions,
}

impl InterProcessMutexBuilder {
    lock_builder_setters!(
        InterProcessMutexBuilder,
        /// Data stored in each lock node (default: empty; Curator's `getLockNodeBytes`, e.g. the
        /// holder's id).
        data,
        /// The connection-state policy guards follow (default: standard).
        policy,
    );

    /// The mutex. Nothing is sent until it is acquired. Fails (kind `InvalidInput`) if the
    /// path is not a valid znode path.
    pub fn build(self) -> Result<InterProcessMutex> {
        let options = self.options;
        validate_path(&options.path)?;
        let mut mutex =
            InterProcessMutex::with_lock_name(&options.client, &options.path, LOCK_NAME);
        mutex.data = options.data;
        mutex.policy = options.policy;
        Ok(mutex)
    }
}

impl InterProcessMutex {
    /// A builder for a mutex at `path` (the lock directory).
    pub fn builder(client: &Client, path: &str) -> InterProcessMutexBuilder {
        InterProcessMutexBuilder {
            options: LockOptions::new(client, path),
        }
    }

    /// A mutex at `path` that another recipe is built on: not validated (its path is made by
    /// the recipe) and left out of the lock metrics.
    pub(crate) fn internal(client: &Client, path: &str) -> InterProcessMutex {
        InterProcessMutex::with_lock_name(client, path, LOCK_NAME).uncounted()
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
            kind: Some(LockKind::Mutex),
        }
    }

    /// Left out of the lock metrics: a mutex another recipe is built on (the semaphore's,
    /// the leader selector's, the atomic counter's), counted as that recipe if at all.
    pub(crate) fn uncounted(mut self) -> InterProcessMutex {
        self.kind = None;
        self
    }

    /// Data stored in each lock node (for the recipes built on a mutex).
    pub(crate) fn with_data(mut self, data: impl Into<Vec<u8>>) -> InterProcessMutex {
        self.data = data.into();
        self
    }

    /// The connection-state policy guards follow (for the recipes built on a mutex).
    pub(crate) fn with_policy(mut self, policy: ConnectionStatePolicy) -> InterProcessMutex {
        self.policy = policy;
        self
    }

    /// The lock directory.
    pub fn path(&self) -> &str {
        &self.spec.dir
    }

    /// Waits for the lock.
    pub async fn acquire(&self) -> Result<LockGuard> {
        let guard = self.acquire_until(None).await?;
        Ok(guard.expect("no deadline, so never timed out"))
    }

    /// Waits for the lock at most `timeout`; `None` if it was not acquired (our node is then
    /// deleted). A zero timeout tries once.
    pub async fn try_acquire(&self, timeout: Duration) -> Result<Option<LockGuard>> {
        self.acquire_until(Some(Instant::now() + timeout)).await
    }

    async fn acquire_until(&self, deadline: Option<Instant>) -> Result<Option<LockGuard>> {
        let started = Instant::now();
        let got = acquire(
            &self.client,
            &self.spec,
            Rule::Exclusive,
            &self.data,
            deadline,
        )
        .await?;
        count::lock_attempt(self.kind, started, got.is_some());
        Ok(got.map(|a| {
            LockGuard::new(
                &self.client,
                a.path,
                a.session_id,
                a.token,
                self.policy,
                self.kind,
            )
        }))
    }

    /// The contenders' node paths, holder first.
    pub async fn participant_nodes(&self) -> Result<Vec<String>> {
        participants(&self.client, &self.spec).await
    }
}
