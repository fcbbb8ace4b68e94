//! [`LockGuard`]: proof of holding a lock node; releasing it deletes the node for sure.

use tokio::time::Instant;
use zkrs_client::ErrorKind;
use zkrs_client::{Client, ErrorCode, Result};

use crate::metrics::{count, LockKind};

use crate::framework::{
    delete_until_gone, guaranteed_delete, lost_in, lost_now, ConnectionStatePolicy, FencingToken,
    PolicyChanges,
};

/// The data a revoker writes into a holder's node (Curator's `Revoker`).
pub const REVOKE_MESSAGE: &[u8] = b"__REVOKE__";

/// Held while the lock is held. [`LockGuard::release`] deletes the node (retrying through
/// connection loss); dropping the guard deletes it in the background.
///
/// Whether the lock is still held depends on the connection: see [`LockGuard::is_held`] and
/// [`LockGuard::lost`].
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct LockGuard {
    client: Client,
    path: Option<String>,
    session_id: i64,
    token: FencingToken,
    policy: ConnectionStatePolicy,
    /// The kind counted in the metrics and since when it is held (`None`: not counted, the
    /// semaphore's own mutex).
    held: Option<(LockKind, Instant)>,
}

impl LockGuard {
    pub(crate) fn new(
        client: &Client,
        path: String,
        session_id: i64,
        token: FencingToken,
        policy: ConnectionStatePolicy,
        kind: Option<LockKind>,
    ) -> LockGuard {
        LockGuard {
            client: client.clone(),
            path: Some(path),
            session_id,
            token,
            policy,
            held: kind.map(|k| (k, Instant::now())),
        }
    }

    /// The hold ends: counted once, whichever way it ends.
    fn end_hold(&mut self) {
        if let Some((kind, since)) = self.held.take() {
            count::lock_released(kind, since.elapsed());
        }
    }

    /// The client the node was created with.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// The path of the lock node.
    pub fn path(&self) -> &str {
        self.path.as_deref().unwrap_or_default()
    }

    /// The session that owns the node.
    pub fn session_id(&self) -> i64 {
        self.session_id
    }

    /// Whether the lock can still be counted on: same session, and as the policy says
    /// (standard: connected; session-deadline: connected, or suspended for less than the
    /// session's deadline; session-only: the session not lost).
    pub fn is_held(&self) -> bool {
        self.client.session_id() == self.session_id && !lost_now(self.policy, &self.client)
    }

    /// Resolves when the lock can no longer be counted on (under the standard policy: as soon
    /// as the connection is suspended; under session-deadline: at the deadline of a
    /// suspension the session does not come back from in time; under session-only: when the
    /// session is lost). Work done under the lock should stop then.
    pub async fn lost(&self) {
        let mut changes = PolicyChanges::new(&self.client, self.policy);
        if !self.is_held() {
            return;
        }
        while let Some(change) = changes.next().await {
            if lost_in(self.policy, &self.client, change.state)
                || change.session_id != self.session_id
            {
                return;
            }
        }
    }

    /// The lock's fencing token (its node's creation zxid): larger than every earlier
    /// holder's; see [`FencingToken`] for how a resource checks it.
    pub fn fencing_token(&self) -> FencingToken {
        self.token
    }

    /// Resolves when another process asks the holder to release (writes
    /// [`REVOKE_MESSAGE`] into the node: [`crate::lock::revoke`]). Errors if the node is gone.
    pub async fn revocation_requested(&self) -> Result<()> {
        loop {
            let (data, _, watch) = self.client.get_data_and_watch(self.path()).await?;
            if data.as_ref() == REVOKE_MESSAGE {
                return Ok(());
            }
            let event = watch.await;
            if event.is_session_event() {
                return Err(
                    zkrs_client::Error::new(ErrorKind::SessionExpired, "").with_path(self.path())
                );
            }
        }
    }

    /// Releases the lock: deletes the node, retrying through connection loss until it is gone
    /// (a release never leaves the node behind while reporting success).
    ///
    /// Cancel-safe: if the returned future is dropped before the node is gone, the guard's
    /// `Drop` deletes it in the background.
    pub async fn release(mut self) -> Result<()> {
        self.end_hold();
        let result = match self.path.as_deref() {
            Some(path) => delete_until_gone(&self.client, path).await,
            None => Ok(()),
        };
        // Deleted, or failed for good (client closed): nothing left for `Drop`.
        self.path = None;
        result
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        self.end_hold();
        if let Some(path) = self.path.take() {
            guaranteed_delete(&self.client, path);
        }
    }
}

/// Asks the holder of the lock node at `node_path` to release it (Curator's
/// `Revoker.attemptRevoke`). The holder learns it from [`LockGuard::revocation_requested`].
pub async fn revoke(client: &Client, node_path: &str) -> Result<()> {
    match client.set_data(node_path, REVOKE_MESSAGE, None).await {
        Ok(_) => Ok(()),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(()),
        Err(e) => Err(e),
    }
}
