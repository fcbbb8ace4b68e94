//! What a queue is (its node, kind, lock path, settings), shared by its handles and
//! consumers, and the nodes it makes for itself.

use crate::error::ErrorExt;
use zkrs_client::{Client, CreateMode, Error, ErrorCode, Result};

use super::error_mode::ErrorMode;
use super::naming::{requeue_prefix, Order};
use crate::framework::{create_parents, join, parent, Backoff, ParentMode};

/// What a queue is: where, which kind, and how it is consumed. Shared by its handles and
/// consumers.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub(crate) client: Client,
    pub(crate) path: String,
    pub(crate) order: Order,
    pub(crate) lock_path: Option<String>,
    pub(crate) error_mode: ErrorMode,
    pub(crate) max_items: Option<usize>,
    /// Priority queue: list again after this many items when the queue changed.
    pub(crate) refresh_after: Option<usize>,
    /// The queue node is a container (`SimpleDistributedQueue`), else persistent.
    pub(crate) container: bool,
}

impl Spec {
    pub(crate) fn new(client: &Client, path: &str, order: Order) -> Spec {
        Spec {
            client: client.clone(),
            path: path.to_string(),
            order,
            lock_path: None,
            error_mode: ErrorMode::Requeue,
            max_items: None,
            refresh_after: None,
            container: order == Order::Simple,
        }
    }

    /// Checks the paths (so a bad one is reported by name, before anything is sent).
    pub(crate) fn validate(&self) -> Result<()> {
        zkrs_client::validate_path(&self.path)?;
        if self.path == "/" {
            return Err(Error::invalid("a queue needs its own node, not the root"));
        }
        if self.max_items == Some(0) {
            return Err(Error::invalid("max_items must be at least 1"));
        }
        if let Some(lock) = &self.lock_path {
            zkrs_client::validate_path(lock)?;
            if lock == &self.path || lock == "/" {
                return Err(Error::invalid(format!(
                    "the lock path {lock:?} must be a node of its own, not the queue's or the root"
                )));
            }
        }
        Ok(())
    }

    /// Creates the queue node (persistent, or a container) and missing parents (containers),
    /// as Curator's `start()` does.
    pub(crate) async fn ensure_dir(&self) -> Result<()> {
        ensure_node(&self.client, &self.path, self.container).await
    }
}

/// Creates `path` (persistent or container) with missing parents as containers.
pub(crate) async fn ensure_node(client: &Client, path: &str, container: bool) -> Result<()> {
    let mode = if container {
        CreateMode::Container
    } else {
        CreateMode::Persistent
    };
    let mut backoff = Backoff::new();
    loop {
        match client.create(path, b"", mode).await {
            Ok(_) => return Ok(()),
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => return Ok(()),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                create_parents(client, parent(path), ParentMode::Container).await?
            }
            Err(e) if e.is_retryable() => backoff.pause(client).await?,
            Err(e) => return Err(e),
        }
    }
}

/// Puts `data` at the back of the queue again, under the item's own prefix.
pub(crate) async fn requeue(spec: &Spec, name: &str, data: &[u8]) -> Result<String> {
    let path = join(&spec.path, requeue_prefix(name));
    loop {
        match spec
            .client
            .create(&path, data, CreateMode::PersistentSequential)
            .await
        {
            Ok(created) => return Ok(created),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => spec.ensure_dir().await?,
            Err(e) => return Err(e),
        }
    }
}
