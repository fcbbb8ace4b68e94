//! [`Message`]: one queue node handed to a consumer, and how its handler's outcome settles it
//! ([`ErrorMode`]).

use std::sync::Arc;
use zkrs_client::ErrorKind;

use zkrs_client::{Bytes, CreateMode, Error, ErrorCode, Op, Result};

use super::claim::LockHeld;
use super::error_mode::ErrorMode;
use super::naming::{item_id, requeue_prefix};
use super::spec::Spec;
use zkrs_client::__private::multi_in_session;

use crate::framework::{join, Backoff};

/// One queue node taken by a [`super::QueueConsumer`]: one item from `put`, or the batch of
/// one `put_multi`, in order.
///
/// Without a lock path the node is already deleted: the item is ours alone, and settling it
/// changes nothing. With a lock path the node is still in the queue, locked by us (its
/// `<lock path>/<name>` node), until it is settled:
/// - [`Message::complete`]: the handler succeeded, the item goes;
/// - [`Message::fail`]: the handler failed; [`ErrorMode`] says what happens;
/// - [`Message::release`], or dropping the message: the lock goes and the item stays where it
///   was, for any consumer to take.
///
/// If our session ends before that (the process died, the session expired), the server
/// deletes the lock node and the item is free again: nothing is lost.
#[derive(Debug)]
pub struct Message {
    spec: Arc<Spec>,
    name: String,
    data: Bytes,
    items: Vec<Bytes>,
    lock: Option<LockHeld>,
}

impl Message {
    pub(crate) fn new(
        spec: Arc<Spec>,
        name: String,
        data: Bytes,
        items: Vec<Bytes>,
        lock: Option<LockHeld>,
    ) -> Message {
        Message {
            spec,
            name,
            data,
            items,
            lock,
        }
    }

    /// The items of the node, in the order they were put (one, unless it was `put_multi`).
    pub fn items(&self) -> &[Bytes] {
        &self.items
    }

    /// The node's raw data (Curator's framing).
    pub fn data(&self) -> &Bytes {
        &self.data
    }

    /// The node's name (`queue-0000000042`, `queue-|id|0000000042`, ...).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The node's path.
    pub fn path(&self) -> String {
        join(&self.spec.path, &self.name)
    }

    /// The item's id (id queue only).
    pub fn id(&self) -> Option<&str> {
        item_id(&self.name)
    }

    /// Whether the item is held with a lock node (the queue has a lock path).
    pub fn is_locked(&self) -> bool {
        self.lock.is_some()
    }

    /// Whether our lock on the item can still be counted on: it was made by the current
    /// session. After a session loss the server has deleted it and another consumer may
    /// have the item. Always true without a lock path.
    pub fn is_held(&self) -> bool {
        self.lock.as_ref().is_none_or(LockHeld::is_valid)
    }

    /// The handler succeeded: deletes the item and our lock in one transaction (lock path),
    /// retrying through connection loss. Fails if the lock was lost with our session: then
    /// the item is not deleted (another consumer may be handling it; Curator would delete
    /// it under that consumer, apache/curator#1122).
    pub async fn complete(mut self) -> Result<()> {
        let Some(lock) = self.lock.take() else {
            return Ok(());
        };
        self.settle(lock, None).await
    }

    /// The handler failed: with a lock path, applies the queue's [`ErrorMode`] (by default
    /// the item is put back at the end, in one transaction with its delete and the lock's).
    /// Without a lock path the item is already gone: nothing happens (Curator's at-most-once).
    pub async fn fail(mut self) -> Result<()> {
        let Some(lock) = self.lock.take() else {
            return Ok(());
        };
        match self.spec.error_mode {
            ErrorMode::Delete => self.settle(lock, None).await,
            ErrorMode::Requeue => {
                let again = join(&self.spec.path, requeue_prefix(&self.name));
                self.settle(lock, Some(again)).await
            }
        }
    }

    /// Gives the item up without a verdict: deletes our lock, the item stays where it was
    /// (dropping the message does the same in the background). Nothing to do without a lock
    /// path.
    pub async fn release(mut self) -> Result<()> {
        match self.lock.take() {
            Some(lock) => lock.release().await,
            None => Ok(()),
        }
    }

    /// Deletes the item and our lock, and puts the data back under `requeue` if given, as
    /// one transaction.
    async fn settle(&self, lock: LockHeld, requeue: Option<String>) -> Result<()> {
        let client = lock.client.clone();
        let item = self.path();
        let mut ops = vec![Op::delete(item.clone(), None)];
        if let Some(path) = requeue {
            ops.push(Op::create(
                path,
                self.data.to_vec(),
                CreateMode::PersistentSequential,
            ));
        }
        ops.push(Op::delete(lock.node.clone(), None));
        let mut backoff = Backoff::new();
        loop {
            if !lock.is_valid() {
                lock.forget();
                return Err(lock_lost(&item));
            }
            // Bound to the lock's session, as the lock's delete is (`claim::delete_lock`
            // says why): sent on a later session it would delete another consumer's lock
            // and the item under it.
            match multi_in_session(&client, &ops, lock.session_id).await {
                Ok(_) => {
                    lock.forget();
                    return Ok(());
                }
                // The item is gone: removed by id, or our earlier try went through before
                // the connection dropped. Either way it is settled; our lock goes.
                Err(e)
                    if e.code() == Some(ErrorCode::NoNode) && e.path() == Some(item.as_str()) =>
                {
                    return lock.release().await;
                }
                Err(e) if e.is_retryable() => backoff.pause(&client).await?,
                Err(e) if e.is_session_expired() || e.code() == Some(ErrorCode::NoNode) => {
                    // Our lock node is gone: the session that held it ended.
                    lock.forget();
                    return Err(lock_lost(&item));
                }
                // Anything else leaves the item in place; `lock` is deleted on drop.
                Err(e) => return Err(e),
            }
        }
    }
}

fn lock_lost(item: &str) -> Error {
    Error::new(
        ErrorKind::SessionExpired,
        "the lock on this queue item went with our session: the item was left in the queue \
             (another consumer may have it)",
    )
    .with_path(item)
}
