//! [`GroupMember`]: membership of a group, and a live view of its members.

use crate::error::ErrorExt;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use zkrs_client::ErrorKind;

use zkrs_client::{Bytes, Client, CreateMode, Error, EventStream, Result, DEFAULT_EVENT_CAPACITY};

use super::persistent::PersistentNode;
use crate::cache::core::{CacheCore, WatchWith};
use crate::cache::engine::Settings;
use crate::cache::{AllNodes, CacheEvent};
use crate::framework::join;

/// Membership of a group, as Curator's `GroupMember`, on its layout: our member node is
/// `<path>/<id>` (ephemeral, kept by a [`PersistentNode`] across connection and session
/// loss), with our data; the group's members are the children of `<path>`, followed by a
/// [`PathChildrenCache`](crate::cache::PathChildrenCache) once our node is made. Java and
/// Rust members see each other.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::node::GroupMember;
/// let me = GroupMember::builder(&client, "/app/members")
///     .id("host-a")
///     .data(b"10.0.0.1")
///     .start()?;
/// me.initialized().await?;
/// for (id, data) in me.current_members() {
///     println!("{id}: {}", String::from_utf8_lossy(&data));
/// }
/// me.close().await?;
/// # Ok(()) }
/// ```
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct GroupMember {
    id: String,
    path: String,
    node: PersistentNode,
    /// The members' view: started by a task once our node is made, so its first read
    /// holds us.
    members: Arc<CacheCore>,
}

/// Settings for a [`GroupMember`]; [`GroupMemberBuilder::start`] starts it.
#[derive(Debug)]
#[must_use = "a builder does nothing until started"]
pub struct GroupMemberBuilder {
    client: Client,
    path: String,
    id: String,
    data: Vec<u8>,
}

impl GroupMemberBuilder {
    /// Our member id (needed): a node name, not empty, no `/`. Curator: `thisId`.
    pub fn id(mut self, id: impl Into<String>) -> GroupMemberBuilder {
        self.id = id.into();
        self
    }

    /// Our data (default: empty). Curator: `payload`.
    pub fn data(mut self, data: impl AsRef<[u8]>) -> GroupMemberBuilder {
        self.data = data.as_ref().to_vec();
        self
    }

    /// Joins the group and starts following it (in tasks: needs a tokio runtime); returns
    /// at once: [`GroupMember::initialized`] waits until both are done. `InvalidInput` for
    /// a missing or bad id, or a bad path.
    pub fn start(self) -> Result<GroupMember> {
        let id = self.id;
        if id.is_empty() || id.contains('/') || id == "." || id == ".." {
            return Err(Error::invalid(format!(
                "a member id is a node name (not empty, no '/'): {id:?}"
            )));
        }
        let node_path = join(&self.path, &id);
        zkrs_client::validate_path(&node_path)?;
        let node = PersistentNode::builder(&self.client, &node_path, CreateMode::Ephemeral)
            .data(&self.data)
            .start()?;
        let members = Arc::new(CacheCore::new(&self.client, DEFAULT_EVENT_CAPACITY));
        let settings = Settings {
            root: self.path.clone(),
            max_depth: 1,
            include_root: false,
            cache_data: true,
            selector: Arc::new(AllNodes),
            // Curator's BUILD_INITIAL_CACHE: the members found first are not told.
            initial_events: false,
            initialized_event: false,
            // Curator's GroupMember has no compressed form.
            codec: crate::data_codec::DataCodec::Plain,
        };
        let mut creates = node.creates();
        let cache = Arc::downgrade(&members);
        tokio::spawn(async move {
            // Ends without starting if the member is closed or dropped first.
            if creates.wait_for(|n| *n > 0).await.is_ok() {
                if let Some(cache) = cache.upgrade() {
                    let _ = cache.start(settings, WatchWith::OneShot);
                }
            }
        });
        Ok(GroupMember {
            id,
            path: self.path,
            node,
            members,
        })
    }
}

impl GroupMember {
    /// Settings for a member of the group at `path` (its id is set with
    /// [`GroupMemberBuilder::id`]).
    pub fn builder(client: &Client, path: &str) -> GroupMemberBuilder {
        GroupMemberBuilder {
            client: client.clone(),
            path: path.to_string(),
            id: String::new(),
            data: Vec::new(),
        }
    }

    /// Waits until we joined the group (within 60 s: else `Timeout`) and its members were
    /// read.
    pub async fn initialized(&self) -> Result<()> {
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
        self.members.wait_initialized().await
    }

    /// Every member's id and data, sorted by id. Our own id is always there, with our
    /// data (as in Curator), even while the connection is down.
    pub fn current_members(&self) -> BTreeMap<String, Bytes> {
        let mut members: BTreeMap<String, Bytes> = self
            .members
            .snapshot()
            .values()
            .map(|m| (m.name().to_string(), m.data.clone().unwrap_or_default()))
            .collect();
        members.insert(self.id.clone(), Bytes::from(self.node.data()));
        members
    }

    /// Changes our data (written now, and kept for re-creations).
    pub async fn set_this_data(&self, data: &[u8]) -> Result<()> {
        self.node.set_data(data).await
    }

    /// The group's changes from now on: members added, updated, removed (the members found
    /// by the first read are not told).
    pub fn events(&self) -> EventStream<CacheEvent> {
        self.members.events()
    }

    /// Our id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Leaves the group (our node is deleted) and stops following it. Dropping it does the
    /// same in the background.
    pub async fn close(self) -> Result<()> {
        self.members.close().await;
        self.node.close().await
    }
}

impl std::fmt::Debug for GroupMember {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupMember")
            .field("id", &self.id)
            .field("path", &self.path)
            .field("node", &self.node)
            .field("members", &self.members.len())
            .finish()
    }
}
