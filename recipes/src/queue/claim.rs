//! Taking one item: the delete decides (no lock path), or the lock node does (lock path).
//!
//! Without a lock path the item's getData and delete go out together on the session
//! (ZooKeeper applies a session's requests in order, so the read sees the node the delete
//! then removes): one round trip, and exactly one consumer's delete succeeds. Curator reads,
//! then deletes: two.
//!
//! With a lock path, the ephemeral `<lock path>/<item name>` and the item's getData go out
//! together. The item stays in the queue until the handler's outcome is known
//! ([`super::Message`]); if the consumer dies, the lock node goes with its session and the
//! item is free again. A consumer that finds an item locked leaves a watch on the lock node,
//! so it learns when the item is freed without listing the queue again.

use std::sync::Arc;

use tokio::sync::Notify;
use zkrs_client::{Bytes, Client, CreateMode, CreateOptions, Error, ErrorCode, Watcher};

use zkrs_client::__private::delete_in_session;

use crate::framework::{join, Backoff, Uuid};

/// An item taken from the queue (its node deleted, or locked by us).
#[derive(Debug)]
pub(crate) struct Taken {
    /// The node's name.
    pub(crate) name: String,
    /// The node's data.
    pub(crate) data: Bytes,
    /// The lock node we hold on it (lock path only).
    pub(crate) lock: Option<LockHeld>,
}

/// How one claim ended.
#[derive(Debug)]
pub(crate) enum Claimed {
    /// Ours.
    Won(Taken),
    /// Taken by another consumer, or removed.
    Gone,
    /// Locked by another consumer; a watch on its lock node is set.
    Busy,
    /// Was locked, but the lock is gone already: worth another try.
    Freed,
    /// The connection was lost with our delete in flight and the node is gone: it may be
    /// ours (then it is lost: no lock path means at most once) or another consumer's.
    InDoubt,
    /// The lock path does not exist.
    NoLockDir,
    /// An error no retry fixes.
    Failed(Error),
}

/// A lock node we created on an item. Dropping it deletes the node in the background (the
/// item is then free for others), unless our session is gone (then the server deleted it,
/// and a node at that path now is another consumer's).
#[derive(Debug)]
pub(crate) struct LockHeld {
    pub(crate) client: Client,
    pub(crate) node: String,
    pub(crate) session_id: i64,
    /// Told once the lock is deleted and the item left in place: the consumer that took
    /// it lists again (no queue child changed, so its watch would not say so).
    released: Arc<Notify>,
    armed: bool,
}

impl LockHeld {
    pub(crate) fn new(
        client: &Client,
        node: String,
        session_id: i64,
        released: Arc<Notify>,
    ) -> LockHeld {
        LockHeld {
            client: client.clone(),
            node,
            session_id,
            released,
            armed: true,
        }
    }

    /// Whether the lock can still be ours: the session that created it is the current one.
    pub(crate) fn is_valid(&self) -> bool {
        self.client.session_id() == self.session_id
    }

    /// Deletes the lock node (retrying through connection loss while the session lasts).
    /// Cancel-safe: if this future is dropped before the node is gone, `Drop` deletes it in
    /// the background.
    pub(crate) async fn release(mut self) -> zkrs_client::Result<()> {
        let result = delete_lock(&self.client, &self.node, self.session_id).await;
        self.armed = false;
        self.released.notify_one();
        result
    }

    /// The node is gone by other means (deleted in the transaction that settled the item).
    pub(crate) fn forget(mut self) {
        self.armed = false;
    }

    /// Deletes the node in the background without waking our consumer: the item it locked
    /// is gone, so there is nothing to take again.
    fn discard(mut self) {
        self.armed = false;
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let client = self.client.clone();
            let node = std::mem::take(&mut self.node);
            let session = self.session_id;
            runtime.spawn(async move {
                let _ = delete_lock(&client, &node, session).await;
            });
        }
    }
}

impl Drop for LockHeld {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let client = self.client.clone();
            let node = std::mem::take(&mut self.node);
            let session = self.session_id;
            let released = self.released.clone();
            runtime.spawn(async move {
                let _ = delete_lock(&client, &node, session).await;
                released.notify_one();
            });
        }
    }
}

/// Deletes our lock node, retrying through connection loss, but only while the session
/// that created it lasts: after that the server has deleted it, and a node at that path is
/// another consumer's lock.
///
/// The delete is bound to that session in the client's request path
/// (`delete_in_session`): a check of the session id before sending is not enough, as the
/// request can wait (for a place in flight, for a connection) past the session's loss and
/// then go out on the next session. A multi with a check on the node would not do either:
/// ZooKeeper's check compares the data version only, and another consumer's lock made
/// since has version 0 as ours has; nothing in a transaction compares the ephemeral owner.
pub(crate) async fn delete_lock(
    client: &Client,
    node: &str,
    session_id: i64,
) -> zkrs_client::Result<()> {
    let mut backoff = Backoff::new();
    loop {
        if client.session_id() != session_id {
            return Ok(());
        }
        match delete_in_session(client, node, None, session_id).await {
            Ok(()) => return Ok(()),
            Err(e) if e.code() == Some(ErrorCode::NoNode) || e.is_session_expired() => {
                return Ok(())
            }
            Err(e) if e.is_retryable() => backoff.pause(client).await?,
            Err(e) => return Err(e),
        }
    }
}

fn retry_later(e: &Error) -> bool {
    e.is_retryable() || e.is_session_expired()
}

/// Claims `<dir>/<name>` by deleting it (no lock path).
pub(crate) async fn claim_by_delete(client: Client, dir: &str, name: String) -> Claimed {
    let path = join(dir, &name);
    let mut backoff = Backoff::new();
    loop {
        let (read, deleted) = tokio::join!(client.get_data(&path), client.delete(&path, None));
        match deleted {
            Ok(()) => {
                return match read {
                    Ok((data, _)) => Claimed::Won(Taken {
                        name,
                        data,
                        lock: None,
                    }),
                    // Not possible on one session (the read went first); say so if it happens.
                    Err(e) => Claimed::Failed(e.with_detail("read failed, delete succeeded")),
                };
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => return Claimed::Gone,
            Err(e) if e.is_closed() => return Claimed::Failed(e),
            Err(e) if retry_later(&e) => {
                // The delete may have been applied. If the node is still there it was not:
                // claim again. If it is gone we cannot tell whose delete it was.
                loop {
                    if let Err(e) = backoff.pause(&client).await {
                        return Claimed::Failed(e);
                    }
                    match client.exists(&path).await {
                        Ok(Some(_)) => break,
                        Ok(None) => return Claimed::InDoubt,
                        Err(e) if retry_later(&e) => continue,
                        Err(e) => return Claimed::Failed(e),
                    }
                }
            }
            Err(e) => return Claimed::Failed(e),
        }
    }
}

/// Claims `<dir>/<name>` by creating the ephemeral `<lock_dir>/<name>` (lock path).
pub(crate) async fn claim_by_lock(
    client: Client,
    dir: &str,
    lock_dir: &str,
    name: String,
    watcher: Watcher,
    released: Arc<Notify>,
) -> Claimed {
    let path = join(dir, &name);
    let lock_node = join(lock_dir, &name);
    let options = CreateOptions::new(CreateMode::Ephemeral).with_stat();
    // The lock's data names this claim, so that after a create in doubt we know the node for
    // ours: the session alone would not say, as another take on this session may hold it.
    // (Curator only looks at whether a lock node exists.)
    let token = Uuid::new_v4().to_ascii();
    // A create of ours failed with its outcome unknown: the node may be ours.
    let mut in_doubt = false;
    let mut backoff = Backoff::new();
    let (held, mut read) = loop {
        if in_doubt {
            // Did our create happen? Synced first: the member we reconnected to may not have
            // applied it yet, and may still show a lock that was deleted since (found by the
            // simulation, queues seed 5000105: the look read a lagging member, saw the lock
            // of a consumer that had finished, and our own lock stayed for the session's
            // life). Ours if its data is our token.
            if let Err(e) = backoff.pause(&client).await {
                return Claimed::Failed(e);
            }
            let looked = match client.sync(lock_dir).await {
                Ok(()) => client.get_data(&lock_node).await,
                Err(e) => Err(e),
            };
            match looked {
                Ok((data, stat)) if data[..] == token[..] => {
                    let held = LockHeld::new(&client, lock_node, stat.ephemeral_owner, released);
                    break (held, client.get_data(&path).await);
                }
                // Another consumer's (so our create did not happen), or none: create again,
                // and a `NodeExists` watches it.
                Ok(_) => {}
                Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
                Err(e) if retry_later(&e) => continue,
                Err(e) => return Claimed::Failed(e),
            }
        }
        let (created, read) = tokio::join!(
            client.create_with(&lock_node, &token, &options),
            client.get_data(&path)
        );
        match created {
            Ok((_, stat)) => {
                let owner = stat.map_or_else(|| client.session_id(), |s| s.ephemeral_owner);
                break (LockHeld::new(&client, lock_node, owner, released), read);
            }
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => {
                return busy(&client, &lock_node, &watcher).await;
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => return Claimed::NoLockDir,
            Err(e) if e.is_closed() => return Claimed::Failed(e),
            Err(e) if retry_later(&e) => in_doubt = true,
            Err(e) => return Claimed::Failed(e),
        }
    };
    loop {
        match read {
            Ok((data, _)) => {
                return Claimed::Won(Taken {
                    name,
                    data,
                    lock: Some(held),
                })
            }
            // Settled by another consumer between our listing and our lock: the lock goes.
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                held.discard();
                return Claimed::Gone;
            }
            Err(e) if e.is_retryable() && held.is_valid() => {
                if let Err(e) = backoff.pause(&client).await {
                    return Claimed::Failed(e);
                }
                read = client.get_data(&path).await;
            }
            // The session ended: the lock went with it.
            Err(e) if retry_later(&e) => return Claimed::Freed,
            Err(e) => return Claimed::Failed(e),
        }
    }
}

/// The item is locked by someone else: watch its lock node, so its release wakes us.
async fn busy(client: &Client, lock_node: &str, watcher: &Watcher) -> Claimed {
    match client.exists_with_watcher(lock_node, watcher).await {
        Ok(Some(_)) => Claimed::Busy,
        // Released already, or we could not set the watch: try again after a listing.
        Ok(None) | Err(_) => Claimed::Freed,
    }
}
