//! [`DistributedBarrier`]: up while its node exists.

use std::time::Duration;
use tokio::time::Instant;

use zkrs_client::{Client, CreateMode, ErrorCode, Result};

use super::wait_until;
use crate::framework::{create_parents, parent, Backoff, ParentMode};

/// A barrier that holds while its node exists, as Curator's `DistributedBarrier`: one process
/// sets it, any number wait on it, and all of them go on when it is removed.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::barrier::DistributedBarrier;
/// let gate = DistributedBarrier::builder(&client, "/app/gate").build()?;
/// gate.set_barrier().await?;
/// // elsewhere: DistributedBarrier::builder(&other, "/app/gate").build()?.wait_on_barrier(None).await?;
/// gate.remove_barrier().await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DistributedBarrier {
    client: Client,
    path: String,
}

/// Settings for a [`DistributedBarrier`]; [`DistributedBarrierBuilder::build`] makes it.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until built"]
pub struct DistributedBarrierBuilder {
    client: Client,
    path: String,
}

impl DistributedBarrierBuilder {
    /// The barrier (nothing is sent). `InvalidInput` for a bad path.
    pub fn build(self) -> Result<DistributedBarrier> {
        zkrs_client::validate_path(&self.path)?;
        Ok(DistributedBarrier {
            client: self.client,
            path: self.path,
        })
    }
}

impl DistributedBarrier {
    /// Settings for a barrier at `path`.
    pub fn builder(client: &Client, path: &str) -> DistributedBarrierBuilder {
        DistributedBarrierBuilder {
            client: client.clone(),
            path: path.to_string(),
        }
    }

    /// Sets the barrier (creates its node, and missing parents as containers); setting a set
    /// barrier is fine.
    pub async fn set_barrier(&self) -> Result<()> {
        create_parents(&self.client, parent(&self.path), ParentMode::Container).await?;
        match self
            .client
            .create(&self.path, b"", CreateMode::Persistent)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Removes the barrier; removing a removed barrier is fine.
    pub async fn remove_barrier(&self) -> Result<()> {
        match self.client.delete(&self.path, None).await {
            Ok(()) => Ok(()),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Waits until the barrier is removed: `true` when it is (or was not set), `false` if
    /// `timeout` passed first. Connection trouble is waited out.
    pub async fn wait_on_barrier(&self, timeout: Option<Duration>) -> Result<bool> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut backoff = Backoff::until(deadline);
        loop {
            match self.client.exists_and_watch(&self.path).await {
                Ok((None, _)) => return Ok(true),
                Ok((Some(_), watch)) => {
                    if wait_until(watch, deadline).await.is_none() {
                        return Ok(false);
                    }
                }
                Err(e) if e.is_retryable() => match backoff.pause(&self.client).await {
                    Ok(()) => {}
                    Err(_) if backoff.is_deadline() => return Ok(false),
                    Err(e) => return Err(e),
                },
                Err(e) => return Err(e),
            }
        }
    }

    /// The barrier's path.
    pub fn path(&self) -> &str {
        &self.path
    }
}
