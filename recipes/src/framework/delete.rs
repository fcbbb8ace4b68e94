//! Deleting a node for sure: the recipes' way out of every path (release, timeout, cancel,
//! session loss) without leaving an orphan node that blocks others.

use zkr_client::{Client, ErrorCode, Result};

use super::connection::wait_connected;

/// Deletes `path`, retrying through connection loss until the node is gone (deleted by us,
/// or already absent). A release that gives up while the node stays would leave a lock held
/// by nobody (CURATOR-678), so only closing the client stops it.
///
/// After a lost session the node may outlive it until the server expires the session: the
/// new session deletes it, so a waiter does not wait for the expiry (CURATOR-604).
pub async fn delete_until_gone(client: &Client, path: &str) -> Result<()> {
    loop {
        match client.delete(path, None).await {
            Ok(()) => return Ok(()),
            Err(e) if e.code() == ErrorCode::NoNode => return Ok(()),
            Err(e) if e.is_closed() => return Err(e),
            Err(e) if e.is_retryable() || e.code() == ErrorCode::SessionExpired => {
                wait_connected(client).await?;
            }
            Err(e) => return Err(e),
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

/// Deletes, in the background, every child of `parent` whose name starts with `prefix` (a
/// protected create's `_c_<uuid>-`): the cleanup of a create whose outcome is unknown because
/// its caller went away. The listing is sent after the create on the same session, so the
/// server has applied the create when it lists.
pub fn guaranteed_delete_protected(client: &Client, parent: String, prefix: String) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let client = client.clone();
        runtime.spawn(async move {
            loop {
                match client.get_children(&parent).await {
                    Ok(children) => {
                        for name in children.iter().filter(|n| n.starts_with(&prefix)) {
                            let path = super::paths::join(&parent, name);
                            let _ = delete_until_gone(&client, &path).await;
                        }
                        return;
                    }
                    Err(e) if e.code() == ErrorCode::NoNode || e.is_closed() => return,
                    Err(_) => {
                        if wait_connected(&client).await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
    }
}
