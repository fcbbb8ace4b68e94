//! [`DistributedDoubleBarrier`]: N members enter together and leave together.

use crate::error::ErrorExt;
use std::time::Duration;
use tokio::time::Instant;
use zkrs_client::ErrorKind;

use zkrs_client::{Client, CreateMode, Error, ErrorCode, Result};

use super::wait_until;
use crate::framework::{create_parents, guaranteed_delete, join, DeleteOnDrop, ParentMode, Uuid};

/// The node whose creation lets members in (Curator's name).
pub const READY_NODE: &str = "ready";

/// A double barrier, as Curator's `DistributedDoubleBarrier` and on its nodes, so Java and
/// Rust members mix in one barrier: each member's node is `<path>/<uuid>` (ephemeral); the
/// member that makes the count reach N creates `<path>/ready`, which lets everyone in.
/// Leaving: every member deletes its node, the lowest (by name) last, and waits until all
/// are gone.
///
/// Where it differs from Curator 5.4: a timed `enter` counts only a real arrival of `ready`
/// (apache/curator#1290), and a member whose `enter` fails, times out or is dropped deletes
/// its node (#601), so it cannot be counted by the others. A `leave` that times out deletes
/// the node too. A member whose session ends while it waits to enter, or before it leaves,
/// is told so (`SessionExpired`), never `true` (Curator's `leave` returns `true` then if no
/// one is left).
///
/// Use a path once (one per phase, as below): a later `enter` at a path whose `ready` is
/// still there goes straight in, as with Curator's, and `ready` can outlive a use (each
/// `leave` deletes it, in the background when it cannot at once, but a `ready` whose
/// creation failed in doubt and that no member saw stays).
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// use zkrs_recipes::barrier::DistributedDoubleBarrier;
/// let barrier = DistributedDoubleBarrier::builder(&client, "/jobs/phase-1", 5).build()?;
/// if barrier.enter(Some(Duration::from_secs(30))).await? {
///     // ... all five are here: work ...
///     barrier.leave(Some(Duration::from_secs(30))).await?;
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct DistributedDoubleBarrier {
    client: Client,
    path: String,
    member_qty: usize,
    name: String,
}

/// Settings for a [`DistributedDoubleBarrier`]; [`DistributedDoubleBarrierBuilder::build`]
/// makes it.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until built"]
pub struct DistributedDoubleBarrierBuilder {
    client: Client,
    path: String,
    member_qty: usize,
}

impl DistributedDoubleBarrierBuilder {
    /// A member of the barrier (nothing is sent; its node name is drawn now).
    /// `InvalidInput` for a bad path.
    pub fn build(self) -> Result<DistributedDoubleBarrier> {
        zkrs_client::validate_path(&self.path)?;
        Ok(DistributedDoubleBarrier {
            client: self.client,
            path: self.path,
            member_qty: self.member_qty,
            name: Uuid::new_v4().to_string(),
        })
    }
}

impl DistributedDoubleBarrier {
    /// Settings for a member of the barrier at `path` that opens once `member_qty` members
    /// are there.
    pub fn builder(
        client: &Client,
        path: &str,
        member_qty: usize,
    ) -> DistributedDoubleBarrierBuilder {
        DistributedDoubleBarrierBuilder {
            client: client.clone(),
            path: path.to_string(),
            member_qty,
        }
    }

    /// This member's node name (a UUID, as Curator's).
    pub fn node_name(&self) -> &str {
        &self.name
    }

    fn our_path(&self) -> String {
        join(&self.path, &self.name)
    }

    /// Enters, and waits until `member_qty` members have: `true` once in, `false` if
    /// `timeout` passed first (our node is then deleted). `SessionExpired` if the session
    /// ended while waiting (our node went with it: we would not be counted); Curator fails
    /// an `enter` that saw the connection go at all (`ConnectionLoss`).
    pub async fn enter(&self, timeout: Option<Duration>) -> Result<bool> {
        if self.member_qty == 0 {
            return Err(Error::invalid("a double barrier needs at least one member"));
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        let ready_path = join(&self.path, READY_NODE);
        let our_path = self.our_path();
        let (ready, mut ready_watch) = self.client.exists_and_watch(&ready_path).await?;
        create_parents(&self.client, &self.path, ParentMode::Container).await?;
        // Deletes our node on every way out of `enter` but success.
        let mut leave = DeleteOnDrop::new(&self.client, our_path.clone());
        match self
            .client
            .create(&our_path, b"", CreateMode::Ephemeral)
            .await
        {
            Ok(_) => {}
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => {}
            Err(e) => return Err(e),
        }
        if ready.is_none() {
            loop {
                let members = self.client.get_children(&self.path).await?;
                // Curator counts every child, `ready` and stale members included.
                if members.len() >= self.member_qty {
                    match self
                        .client
                        .create(&ready_path, b"", CreateMode::Persistent)
                        .await
                    {
                        Ok(_) => break,
                        Err(e) if e.code() == Some(ErrorCode::NodeExists) => break,
                        Err(e) => return Err(e),
                    }
                }
                match wait_until(ready_watch, deadline).await {
                    None => return Ok(false),
                    Some(event) if event.event_type == zkrs_client::EventType::NodeCreated => break,
                    Some(event) if event.is_session_event() => {
                        // The session ended (or the client closed) and our ephemeral node
                        // with it: looking again under a new session could let us in
                        // without a node, not counted by the others.
                        return Err(session_ended(&event, our_path));
                    }
                    Some(_) => {
                        // Not the creation of `ready` (a session event, say): look again.
                        let (ready, watch) = self.client.exists_and_watch(&ready_path).await?;
                        if ready.is_some() {
                            break;
                        }
                        ready_watch = watch;
                    }
                }
            }
        }
        leave.disarm();
        Ok(true)
    }

    /// Leaves, and waits until every member has: `true` once all are gone, `false` if `timeout`
    /// passed first (our node is deleted either way). `ready` is deleted on the way out, as Curator
    /// does (if that fails, in the background until it is gone). `SessionExpired` if our node was
    /// gone before we left (the session that made it ended, or an earlier `leave` deleted it), even
    /// when no one is left: the others did not wait for us.
    pub async fn leave(&self, timeout: Option<Duration>) -> Result<bool> {
        let deadline = timeout.map(|t| Instant::now() + t);
        // Our node goes on every way out but a complete leave (which deleted it): an error,
        // a timeout, or this future dropped half-way.
        let mut ours = DeleteOnDrop::new(&self.client, self.our_path());
        let outcome = self.leave_until(deadline).await;
        if matches!(outcome, Ok(true)) {
            ours.disarm();
        }
        drop(ours);
        let ready = join(&self.path, READY_NODE);
        match self.client.delete(&ready, None).await {
            Ok(()) => {}
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
            Err(e) => {
                // Tried again in the background until it is gone: when every member's
                // `leave` fails (an outage), a `ready` left behind would let a later `enter`
                // at this path straight in.
                guaranteed_delete(&self.client, ready);
                if outcome.is_ok() {
                    return Err(e);
                }
            }
        }
        outcome
    }

    async fn leave_until(&self, deadline: Option<Instant>) -> Result<bool> {
        let our_path = self.our_path();
        let mut ours_exists = true;
        loop {
            let mut members: Vec<String> = match self.client.get_children(&self.path).await {
                Ok(children) => children
                    .iter()
                    .filter(|name| *name != READY_NODE)
                    .map(str::to_string)
                    .collect(),
                Err(e) if e.code() == Some(ErrorCode::NoNode) => Vec::new(),
                Err(e) => return Err(e),
            };
            members.sort();
            let our_index = members.iter().position(|m| *m == self.name);
            if our_index.is_none() && ours_exists {
                // Deleted under us: with an ephemeral node, that is the session's end. Checked
                // before whether anyone is left (Curator returns true when no one is): the
                // others may have left long before we started leaving, which is no leaving
                // together.
                return Err(
                    Error::new(ErrorKind::SessionExpired, "our member node is gone")
                        .with_path(our_path),
                );
            }
            if members.is_empty() {
                return Ok(true);
            }
            if members.len() == 1 && our_index == Some(0) {
                self.delete_ours(&our_path).await?;
                return Ok(true);
            }
            // With ours deleted, a member still there is waited for like any other, even a
            // last one: the lowest member's node can go before it is the last (its session
            // lost, or its own leave failed and deleted it), and returning here would leave
            // while that member is still in the barrier.

            let watched = if our_index == Some(0) {
                // The lowest leaves last: wait for the highest to go.
                join(&self.path, &members[members.len() - 1])
            } else {
                if ours_exists {
                    self.delete_ours(&our_path).await?;
                    ours_exists = false;
                }
                join(&self.path, &members[0])
            };
            let (stat, watch) = self.client.exists_and_watch(&watched).await?;
            if stat.is_some() && wait_until(watch, deadline).await.is_none() {
                return Ok(false);
            }
        }
    }

    async fn delete_ours(&self, our_path: &str) -> Result<()> {
        match self.client.delete(our_path, None).await {
            Ok(()) => Ok(()),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The barrier's path.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// The error of an `enter` whose session ended while it waited: `SessionExpired`, or
/// `Closed` if the client was closed.
fn session_ended(event: &zkrs_client::WatchedEvent, our_path: String) -> Error {
    if event.state == zkrs_client::KeeperState::Closed {
        Error::new(ErrorKind::Closed, "the client closed while entering").with_path(our_path)
    } else {
        Error::new(
            ErrorKind::SessionExpired,
            "the session ended while entering: our member node went with it",
        )
        .with_path(our_path)
    }
}
