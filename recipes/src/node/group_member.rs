//! [`GroupMember`]: membership of a group, and a live view of its members.

use crate::error::ErrorExt;
use std::collections::BTreeMap;
use std::time::Duration;
use zkrs_client::ErrorKind;

use zkrs_client::{Bytes, Client, CreateMode, Error, EventStream, Result};

use super::persistent::PersistentNode;
use crate::cache::{CacheEvent, PathChildrenCache, StartMode};
use crate::framework::join;

/// Membership of a group, as Curator's `GroupMember`, on its layout: our member node is
/// `<path>/<id>` (ephemeral, kept by a [`PersistentNode`] across connection and session
/// loss), with our data; the group's members are the children of `<path>`, followed by a
/// [`PathChildrenCache`]. Java and Rust members see each other.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::node::GroupMember;
/// let me = GroupMember::new(&client, "/app/members", "host-a", b"10.0.0.1")?;
/// me.start().await?;
/// for (id, data) in me.current_members() {
///     println!("{id}: {}", String::from_utf8_lossy(&data));
/// }
/// me.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct GroupMember {
    id: String,
    path: String,
    node: PersistentNode,
    members: PathChildrenCache,
}

impl GroupMember {
    /// Member `id` of the group at `path`, with `data` (not started). The id is a node name:
    /// not empty, no `/`.
    pub fn new(client: &Client, path: &str, id: &str, data: &[u8]) -> Result<GroupMember> {
        if id.is_empty() || id.contains('/') || id == "." || id == ".." {
            return Err(Error::invalid(format!(
                "a member id is a node name (not empty, no '/'): {id:?}"
            )));
        }
        let node_path = join(path, id);
        zkrs_client::validate_path(&node_path, false)?;
        Ok(GroupMember {
            id: id.to_string(),
            path: path.to_string(),
            node: PersistentNode::new(client, &node_path, CreateMode::Ephemeral, data),
            members: PathChildrenCache::new(client, path),
        })
    }

    /// Joins the group and reads its members; returns once both are done.
    pub async fn start(&self) -> Result<()> {
        self.node.start()?;
        let joined = self
            .node
            .wait_for_initial_create(Duration::from_secs(60))
            .await?;
        if !joined {
            return Err(Error::new(
                ErrorKind::Timeout,
                format!("{}: could not join within 60 s", self.path),
            ));
        }
        self.members.start(StartMode::BuildInitialCache).await
    }

    /// Every member's id and data, sorted by id. Our own id is always there, with our
    /// data (as in Curator), even while the connection is down.
    pub fn current_members(&self) -> BTreeMap<String, Bytes> {
        let mut members: BTreeMap<String, Bytes> = self
            .members
            .current_data()
            .iter()
            .map(|m| (m.name().to_string(), m.data.clone().unwrap_or_default()))
            .collect();
        members.insert(self.id.clone(), Bytes::from(self.node.data()));
        members
    }

    /// Changes our data (written now, and kept for re-creations).
    pub async fn set_this_data(&self, data: &[u8]) -> Result<()> {
        self.node.set_data(data).await
    }

    /// The group's changes from now on: members added, updated, removed.
    pub fn events(&self) -> EventStream<CacheEvent> {
        self.members.events()
    }

    /// Our id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Leaves the group (our node is deleted) and stops following it.
    pub async fn close(&self) -> Result<()> {
        self.members.close().await;
        self.node.close().await
    }
}
