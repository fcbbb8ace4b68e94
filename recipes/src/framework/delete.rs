//! Deleting a node for sure: the recipes' way out of every path (release, timeout, cancel,
//! session loss) without leaving an orphan node that blocks others.

use std::future::Future;

use zkrs_client::{Client, ErrorCode, Result};

use super::retry::Backoff;

/// Deletes `path`, retrying through connection loss until the node is gone (deleted by us,
/// or already absent). A release that gives up while the node stays would leave a lock held
/// by nobody (CURATOR-678), so only closing the client stops it.
///
/// After a lost session the node may outlive it until the server expires the session: the
/// new session deletes it, so a waiter does not wait for the expiry (CURATOR-604).
pub async fn delete_until_gone(client: &Client, path: &str) -> Result<()> {
    let mut backoff = Backoff::new();
    loop {
        match client.delete(path, None).await {
            Ok(()) => return Ok(()),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(()),
            Err(e) if e.is_closed() => return Err(e),
            Err(e) if e.is_retryable() || e.is_session_expired() => {
                backoff.pause(client).await?;
            }
            Err(e) => return Err(e),
        }
    }
}

/// [`delete_until_gone`], cancel-safe: if the returned future is dropped before the node is
/// gone (a `close` bounded by a timeout, say), the delete goes on in the background. The
/// guard is armed when this is called, before the first poll, so even a future that is never
/// polled leaves no orphan node. For the `close` of a recipe that has already taken the path
/// out of its state (so its own `Drop` no longer sees it).
pub fn delete_for_sure(client: &Client, path: String) -> impl Future<Output = Result<()>> + '_ {
    let mut pending = DeleteOnDrop::new(client, path);
    async move {
        let result = match pending.path() {
            Some(path) => delete_until_gone(client, path).await,
            None => Ok(()),
        };
        // Deleted, or failed for good (the client is closed): nothing left to hand off.
        pending.disarm();
        result
    }
}

/// Deletes its node in the background ([`guaranteed_delete`]) when dropped, unless disarmed:
/// the guard over every way out of an operation that may be cancelled half-way.
#[derive(Debug)]
pub struct DeleteOnDrop<'a> {
    client: &'a Client,
    path: Option<String>,
}

impl<'a> DeleteOnDrop<'a> {
    /// Armed over `path`.
    pub fn new(client: &'a Client, path: String) -> DeleteOnDrop<'a> {
        DeleteOnDrop {
            client,
            path: Some(path),
        }
    }

    /// The node it would delete, while armed.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// The node is taken care of (deleted, or kept on purpose): nothing to do when dropped.
    pub fn disarm(&mut self) {
        self.path = None;
    }
}

impl Drop for DeleteOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            guaranteed_delete(self.client, path);
        }
    }
}

/// Like [`delete_until_gone`], in a background task: for `Drop` and for callers that must not
/// wait. Needs a tokio runtime (if there is none, the node goes with the session).
pub fn guaranteed_delete(client: &Client, path: String) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let client = client.clone();
        runtime.spawn(async move {
            let _ = delete_until_gone(&client, &path).await;
        });
    }
}
