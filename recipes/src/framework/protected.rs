//! Protected creates (Curator's `withProtection`): a node named `_c_<uuid>-<name>`, so that
//! after a connection loss during the create we can find out whether it happened.

use zkrs_client::{Children, Client, CreateMode, CreateOptions, ErrorCode, Result, Stat};

use super::delete::{delete_until_gone, guaranteed_delete};
use super::paths::{create_parents, join, parent, ParentMode};
use super::retry::Backoff;

use super::uuid::Uuid;

/// The protected-name prefix.
pub const PROTECTED_PREFIX: &str = "_c_";

/// Length of `_c_<uuid>-`.
const PREFIX_LEN: usize = 3 + 36 + 1;

/// A protected name for one create: `_c_<uuid>-`. Kept on the stack: one is made per lock
/// acquire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtectedName {
    prefix: [u8; PREFIX_LEN],
}

impl ProtectedName {
    /// A fresh random one.
    pub fn new() -> ProtectedName {
        let mut prefix = [b'-'; PREFIX_LEN];
        prefix[..3].copy_from_slice(PROTECTED_PREFIX.as_bytes());
        prefix[3..39].copy_from_slice(&Uuid::new_v4().to_ascii());
        ProtectedName { prefix }
    }

    /// `_c_<uuid>-`.
    pub fn prefix(&self) -> &str {
        // Built from ASCII only.
        std::str::from_utf8(&self.prefix).unwrap_or_default()
    }

    /// The path to create: `<parent>/_c_<uuid>-<name>`, in one allocation.
    pub fn path(&self, parent: &str, name: &str) -> String {
        let parent = if parent == "/" { "" } else { parent };
        // Room for the ten digits a sequential create appends: the path asked for can then
        // become the created node's path without growing.
        let mut path = String::with_capacity(parent.len() + 1 + PREFIX_LEN + name.len() + 10);
        path.push_str(parent);
        path.push('/');
        path.push_str(self.prefix());
        path.push_str(name);
        path
    }
}

impl Default for ProtectedName {
    fn default() -> Self {
        ProtectedName::new()
    }
}

/// Creates `<parent>/_c_<uuid>-<name>` (with missing parents as containers) and returns its
/// path and Stat. After a connection loss (or another retryable error) it backs off, then
/// looks for a child of `parent` with our prefix before creating again, looking again after
/// each retryable failure of the look; an ephemeral found there that belongs to an earlier
/// session is deleted, not adopted (it is about to vanish).
pub async fn create_protected(
    client: &Client,
    parent_path: &str,
    name: &str,
    data: &[u8],
    mode: CreateMode,
    protected: &ProtectedName,
) -> Result<(String, Stat)> {
    let path = protected.path(parent_path, name);
    let options = CreateOptions::new(mode).with_stat();
    let mut backoff = Backoff::new();
    loop {
        match client.create_with(&path, data, &options).await {
            Ok((created, stat)) => return Ok((created, stat.unwrap_or_default())),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                create_parents(client, parent(&path), ParentMode::Container).await?;
            }
            Err(e) if in_doubt(&e) => loop {
                // The create may have happened: look before creating again.
                backoff.pause(client).await?;
                match find_protected(client, parent_path, protected, mode).await {
                    Ok(Some(found)) => return Ok(found),
                    Ok(None) => break,
                    Err(e) if in_doubt(&e) => {}
                    Err(e) => return Err(e),
                }
            },
            Err(e) => return Err(e),
        }
    }
}

/// Whether `e` leaves a request's outcome unknown, to be looked at again after a pause.
fn in_doubt(e: &zkrs_client::Error) -> bool {
    e.is_retryable() || e.is_session_expired()
}

/// Looks for our protected node under `parent`; returns it if it is ours to keep.
pub async fn find_protected(
    client: &Client,
    parent: &str,
    protected: &ProtectedName,
    mode: CreateMode,
) -> Result<Option<(String, Stat)>> {
    let Some(children) = list_in_doubt(client, parent).await? else {
        return Ok(None);
    };
    let Some(name) = children.iter().find(|n| n.starts_with(protected.prefix())) else {
        return Ok(None);
    };
    let path = join(parent, name);
    let Some(stat) = client.exists(&path).await? else {
        return Ok(None);
    };
    if mode.is_ephemeral() && stat.ephemeral_owner != client.session_id() {
        // Created by a session that is gone: it will vanish at that session's expiry.
        guaranteed_delete(client, path);
        return Ok(None);
    }
    Ok(Some((path, stat)))
}

/// The children of `parent` where a create whose reply was lost would be, `None` if `parent`
/// is gone. Synced first: the create may have been applied by the leader and not yet by the
/// member we reconnected to (one just resumed from a pause, or slow); a listing there could
/// miss the node, a second one would be made, and the first would stay for the session's
/// life (first in line, for a lock, and nobody then gets it).
pub(crate) async fn list_in_doubt(client: &Client, parent: &str) -> Result<Option<Children>> {
    let listed = match client.sync(parent).await {
        Ok(()) => client.get_children(parent).await,
        Err(e) => Err(e),
    };
    match listed {
        Ok(children) => Ok(Some(children)),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Deletes, in the background, every child of `parent` whose name starts with `prefix` (a
/// protected create's `_c_<uuid>-`): the cleanup of a create whose outcome is unknown because
/// its caller went away. Listed after a `sync`: a member reconnected to may not have applied
/// the create yet, and a listing there could miss the node.
pub fn guaranteed_delete_protected(client: &Client, parent: String, prefix: String) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let client = client.clone();
        runtime.spawn(async move {
            let mut backoff = Backoff::new();
            loop {
                match list_in_doubt(&client, &parent).await {
                    Ok(None) => return,
                    Ok(Some(children)) => {
                        for name in children.iter().filter(|n| n.starts_with(&prefix)) {
                            let path = join(&parent, name);
                            let _ = delete_until_gone(&client, &path).await;
                        }
                        return;
                    }
                    Err(e) if in_doubt(&e) => {
                        if backoff.pause(&client).await.is_err() {
                            return;
                        }
                    }
                    // Closed, or an error no retry fixes (the node then stays for its
                    // session's life).
                    Err(_) => return,
                }
            }
        });
    }
}
