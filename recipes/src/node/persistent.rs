//! [`PersistentNode`]: a node kept in place across connection loss and session loss.

use crate::error::ErrorExt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{oneshot, watch};
use zkrs_client::__private::delete_in_session;
use zkrs_client::{
    Client, ConnectionState, CreateMode, CreateOptions, Error, ErrorCode, EventStream, EventType,
    Lagged, Result, DEFAULT_EVENT_CAPACITY,
};

use crate::data_codec::DataCodec;
use crate::framework::{
    create_parents, create_protected, delete_for_sure, delete_until_gone, guaranteed_delete,
    node_name, parent, Backoff, Listeners, ParentMode, ProtectedName,
};

/// What a [`PersistentNode`] tells.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum PersistentNodeEvent {
    /// The node was created (the first time, or again after it was deleted or its session
    /// was lost), at this path; or found there when starting, and adopted.
    Created {
        /// The node's path (with its sequence number for sequential modes).
        path: String,
    },
    /// The node cannot be created and no retry will fix it (no permission, a bad path, TTL
    /// nodes disabled on the server): the error, each time it is met again. Match on its
    /// [`kind`](Error::kind) and [`code`](Error::code).
    Failed(Error),
    /// The reader fell behind and `missed` events were dropped.
    Lagged {
        /// How many events were dropped.
        missed: u64,
    },
}

impl From<Lagged> for PersistentNodeEvent {
    fn from(lagged: Lagged) -> Self {
        PersistentNodeEvent::Lagged {
            missed: lagged.missed,
        }
    }
}

struct State {
    /// The data as given.
    data: Vec<u8>,
    /// What is written: `data` encoded by `codec`.
    stored: Vec<u8>,
    codec: DataCodec,
    /// The path we created, once we have (sequential modes keep it: they are created again
    /// under the same name, unsequenced, as Curator does).
    actual: Option<String>,
    /// The session that created `actual`.
    created_by: i64,
    ttl: Option<Duration>,
    protection: Option<ProtectedName>,
    /// Made by the caller just before starting (`adopt`): the first round watches it
    /// without creating it again.
    adopted: bool,
    /// The path of a first create sent (ephemeral, unsequenced, unprotected) whose node is
    /// not `actual` yet: stopped then (a close, a drop, while the create is in flight or
    /// its outcome unknown), the node it may have made is ours to delete.
    in_doubt: Option<String>,
}

struct Inner {
    client: Client,
    path: String,
    mode: CreateMode,
    state: Mutex<State>,
    listeners: Listeners<PersistentNodeEvent>,
    /// How many times the node was created.
    creates: watch::Sender<u64>,
    run: Mutex<Run>,
}

enum Run {
    Idle,
    Running(oneshot::Sender<()>, tokio::task::JoinHandle<()>),
    Closed,
}

impl Inner {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn run(&self) -> MutexGuard<'_, Run> {
        self.run.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn options(&self, mode: CreateMode) -> CreateOptions<'static> {
        let mut options = CreateOptions::new(mode).with_stat();
        if let Some(ttl) = self.state().ttl.filter(|_| mode.is_ttl()) {
            options = options.ttl(ttl);
        }
        options
    }

    fn created(&self, path: &str) {
        zkrs_client::__log!(info, path = %path, "persistent node created");
        {
            let mut state = self.state();
            state.actual = Some(path.to_string());
            state.created_by = self.client.session_id();
            state.in_doubt = None;
        }
        self.creates.send_modify(|n| *n += 1);
        self.listeners.send(PersistentNodeEvent::Created {
            path: path.to_string(),
        });
    }

    /// Makes sure the node exists; returns its path.
    async fn ensure(&self) -> Result<String> {
        let (actual, created_by) = {
            let state = self.state();
            (state.actual.clone(), state.created_by)
        };
        let Some(path) = actual else {
            return self.first_create().await;
        };
        // Again, under the first name: unsequenced.
        let mode = unsequenced(self.mode);
        loop {
            // The data as it is now, read just before the create is sent (a `set_data` made
            // while an earlier round waited is not undone).
            let data = self.state().stored.clone();
            match self
                .client
                .create_with(&path, &data, &self.options(mode))
                .await
            {
                Ok(_) => {
                    self.created(&path);
                    return Ok(path);
                }
                Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                    create_parents(&self.client, parent(&path), ParentMode::Container).await?;
                }
                Err(e) if e.code() == Some(ErrorCode::NodeExists) => {
                    let (found, stat) = match self.client.get_data(&path).await {
                        Ok(read) => read,
                        Err(e) if e.code() == Some(ErrorCode::NoNode) => continue,
                        Err(e) => return Err(e),
                    };
                    if mode.is_ephemeral()
                        && stat.ephemeral_owner == created_by
                        && created_by != self.client.session_id()
                    {
                        // Ours, from a lost session: it goes when the server expires that
                        // session. Delete it now and create it on this one.
                        delete_until_gone(&self.client, &path).await?;
                        continue;
                    }
                    // Someone's node at our path (or ours, still there): adopt it, with our
                    // data (Curator's way), writing only if the data differs.
                    if !self.adopt_data(&path, &found, stat.version).await? {
                        continue;
                    }
                    return Ok(path);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Gives the node at `path`, read as `found` at `version`, our data as it is now, unless
    /// it holds that already: `false` if it was written or deleted since the read (look
    /// again). Written only if still at `version`, so a `set_data` that got in first is
    /// not undone by older data (found by the simulation's discovery suite, seed 1218: a
    /// reconnect's re-check, with a copy of the data taken before an update, wrote the old
    /// payload over the new one, and the registry kept it).
    async fn adopt_data(&self, path: &str, found: &[u8], version: i32) -> Result<bool> {
        let data = self.state().stored.clone();
        if found[..] == data[..] {
            return Ok(true);
        }
        match self.client.set_data(path, &data, Some(version)).await {
            Ok(_) => Ok(true),
            Err(e) if matches!(e.code(), Some(ErrorCode::BadVersion | ErrorCode::NoNode)) => {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Writes our data as it is now to the node we just made with `used`, if a `set_data`
    /// changed it meanwhile (it found no node to write).
    async fn catch_up(&self, path: &str, used: &[u8]) -> Result<()> {
        let data = self.state().stored.clone();
        if data[..] != used[..] {
            self.overwrite(path, &data).await?;
        }
        Ok(())
    }

    async fn first_create(&self) -> Result<String> {
        let protection = self.state().protection;
        if let Some(protection) = protection {
            let data = self.state().stored.clone();
            let (path, _) = create_protected(
                &self.client,
                parent(&self.path),
                node_name(&self.path),
                &data,
                self.mode,
                &protection,
            )
            .await?;
            self.created(&path);
            self.catch_up(&path, &data).await?;
            return Ok(path);
        }
        if self.mode.is_ephemeral() && !self.mode.is_sequential() {
            // Before the create is sent: a close or drop from here on deletes the node this
            // session may have made (found by the simulation's cancellation suite: a close
            // with the first create in flight left the node for the session's life).
            self.state().in_doubt = Some(self.path.clone());
        }
        loop {
            let data = self.state().stored.clone();
            match self
                .client
                .create_with(&self.path, &data, &self.options(self.mode))
                .await
            {
                Ok((path, _)) => {
                    self.created(&path);
                    self.catch_up(&path, &data).await?;
                    return Ok(path);
                }
                Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                    create_parents(&self.client, parent(&self.path), ParentMode::Container).await?;
                }
                Err(e) if e.code() == Some(ErrorCode::NodeExists) => {
                    // Someone's node at our path: adopt it, with our data (Curator's way).
                    let data = self.state().stored.clone();
                    self.overwrite(&self.path, &data).await?;
                    self.created(&self.path);
                    return Ok(self.path.clone());
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn overwrite(&self, path: &str, data: &[u8]) -> Result<()> {
        match self.client.set_data(path, data, None).await {
            Ok(_) => Ok(()),
            // Gone meanwhile: the watch that follows creates it again.
            Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// Without the sequence suffix, for creating a sequential node again under its first name.
fn unsequenced(mode: CreateMode) -> CreateMode {
    match mode {
        CreateMode::PersistentSequential => CreateMode::Persistent,
        CreateMode::EphemeralSequential => CreateMode::Ephemeral,
        CreateMode::PersistentSequentialWithTtl => CreateMode::PersistentWithTtl,
        other => other,
    }
}

/// The task: create, watch, create again whenever it is gone or the connection comes back.
async fn keep(inner: Arc<Inner>, mut stop: oneshot::Receiver<()>) {
    let client = inner.client.clone();
    let mut states = client.state_changes();
    let work = async {
        let mut backoff = Backoff::new();
        loop {
            let adopted = std::mem::take(&mut inner.state().adopted);
            let adopted = adopted.then(|| inner.state().actual.clone()).flatten();
            let ensured = match adopted {
                // Its watch below finds it, or finds it gone and comes back here.
                Some(path) => Ok(path),
                None => inner.ensure().await,
            };
            let path = match ensured {
                Ok(path) => {
                    backoff.reset();
                    path
                }
                Err(e) if e.is_closed() => return,
                Err(e) if e.is_retryable() || e.is_session_expired() => {
                    if backoff.pause(&client).await.is_err() {
                        return;
                    }
                    continue;
                }
                Err(e) => {
                    inner.listeners.send(PersistentNodeEvent::Failed(e));
                    // Try again after the next reconnect (or a data change by the user).
                    loop {
                        match states.next().await {
                            None => return,
                            Some(c) if c.state == ConnectionState::Closed => return,
                            Some(c) if c.state == ConnectionState::Reconnected => break,
                            Some(_) => {}
                        }
                    }
                    continue;
                }
            };
            // Watch it until it is gone, or the connection comes back (it may have been
            // deleted, or its session lost, meanwhile).
            'watching: loop {
                let watch = match client.exists_and_watch(&path).await {
                    Ok((None, _)) => break 'watching,
                    Ok((Some(_), watch)) => watch,
                    Err(e) if e.is_closed() => return,
                    Err(_) => {
                        if backoff.pause(&client).await.is_err() {
                            return;
                        }
                        break 'watching;
                    }
                };
                tokio::select! {
                    biased;
                    event = watch => match event.event_type {
                        EventType::NodeDeleted | EventType::None => break 'watching,
                        // Someone else's data stays (as in Curator): watch again.
                        _ => continue 'watching,
                    },
                    change = states.next() => match change {
                        None => return,
                        Some(c) if c.state == ConnectionState::Closed => return,
                        Some(c) if c.state == ConnectionState::Reconnected => break 'watching,
                        Some(_) => continue 'watching,
                    },
                }
            }
        }
    };
    tokio::select! {
        biased;
        _ = &mut stop => {}
        () = work => {}
    }
}

/// A node kept in place, as Curator's `PersistentNode`: created (with missing parents as
/// containers) when started, and created again whenever it is deleted, or its session is
/// lost, or the connection comes back and it is gone. Any mode: an ephemeral node that
/// outlives crashes of the connection, a sequential node that keeps its first name, a TTL
/// node, a container.
///
/// If the node exists already, it is adopted and given our data (Curator's way). An
/// ephemeral node we made on a session since lost is deleted and made again on the new
/// session at once, rather than left to vanish at that session's expiry. Data written by
/// someone else stays until our next `set_data` or re-creation, as in Curator.
///
/// Closing (or dropping) it deletes the node.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// use zkrs_client::CreateMode;
/// use zkrs_recipes::node::PersistentNode;
/// let me = PersistentNode::builder(&client, "/services/api/host-1", CreateMode::Ephemeral)
///     .data(b"10.0.0.1:80")
///     .start()?;
/// assert!(me.wait_for_initial_create(Duration::from_secs(10)).await?);
/// me.set_data(b"10.0.0.1:8080").await?;
/// me.close().await?;
/// # Ok(()) }
/// ```
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct PersistentNode {
    inner: Arc<Inner>,
}

/// Settings for a [`PersistentNode`]; [`PersistentNodeBuilder::start`] starts it.
#[must_use = "a builder does nothing until started"]
pub struct PersistentNodeBuilder {
    client: Client,
    path: String,
    mode: CreateMode,
    data: Vec<u8>,
    protection: bool,
    ttl: Option<Duration>,
    codec: DataCodec,
}

impl PersistentNodeBuilder {
    /// The data the node is created with (default: empty).
    pub fn data(mut self, data: impl AsRef<[u8]>) -> PersistentNodeBuilder {
        self.data = data.as_ref().to_vec();
        self
    }

    /// Whether to create the node under a protected name (`_c_<uuid>-<name>`), so a create
    /// whose reply was lost is found rather than made twice (Curator's `useProtection`;
    /// default: no).
    pub fn protection(mut self, protection: bool) -> PersistentNodeBuilder {
        self.protection = protection;
        self
    }

    /// The TTL of a TTL mode (needed by those modes; needs `extendedTypesEnabled` on the
    /// server).
    pub fn ttl(mut self, ttl: Duration) -> PersistentNodeBuilder {
        self.ttl = Some(ttl);
        self
    }

    /// Whether the node's data is stored gzipped, as Curator's `create().compressed()` and
    /// `setData().compressed()` store it (default: no); [`PersistentNode::data`] and
    /// [`PersistentNode::set_data`] still take and give the data as it is. Readers use
    /// Curator's `getData().decompressed()`, a cache's `.compressed(true)`, or
    /// [`Client::get_data_decompressed`](zkrs_client::Client::get_data_decompressed).
    #[cfg(feature = "compression")]
    #[cfg_attr(docsrs, doc(cfg(feature = "compression")))]
    pub fn compressed(mut self, compressed: bool) -> PersistentNodeBuilder {
        self.codec = DataCodec::compressed(compressed);
        self
    }

    /// Starts keeping the node (in a task: needs a tokio runtime) and returns at once; see
    /// [`PersistentNode::wait_for_initial_create`]. `InvalidInput` for a bad path, or a TTL
    /// mode without a TTL.
    pub fn start(self) -> Result<PersistentNode> {
        let node = PersistentNode::idle(&self.client, &self.path, self.mode, &self.data);
        {
            let mut state = node.inner.state();
            state.ttl = self.ttl;
            state.protection = self.protection.then(ProtectedName::new);
            state.codec = self.codec;
            state.stored = self.codec.encode(&self.data);
        }
        // The stream a user takes right after `start` sees the first create's event.
        node.inner.listeners.keep_first();
        node.run()?;
        Ok(node)
    }
}

impl std::fmt::Debug for PersistentNodeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentNodeBuilder")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("protection", &self.protection)
            .field("ttl", &self.ttl)
            .field("codec", &self.codec)
            .finish_non_exhaustive()
    }
}

impl PersistentNode {
    /// Settings for a node at `path` with `mode` (Curator's `PersistentNode` takes it too).
    pub fn builder(client: &Client, path: &str, mode: CreateMode) -> PersistentNodeBuilder {
        PersistentNodeBuilder {
            client: client.clone(),
            path: path.to_string(),
            mode,
            data: Vec::new(),
            protection: false,
            ttl: None,
            codec: DataCodec::Plain,
        }
    }

    /// A node at `path` with `mode` and `data`, not kept yet ([`PersistentNode::run`]).
    fn idle(client: &Client, path: &str, mode: CreateMode, data: &[u8]) -> PersistentNode {
        let (creates, _) = watch::channel(0);
        PersistentNode {
            inner: Arc::new(Inner {
                client: client.clone(),
                path: path.to_string(),
                mode,
                state: Mutex::new(State {
                    data: data.to_vec(),
                    stored: data.to_vec(),
                    codec: DataCodec::Plain,
                    actual: None,
                    created_by: 0,
                    ttl: None,
                    protection: None,
                    adopted: false,
                    in_doubt: None,
                }),
                listeners: Listeners::new(DEFAULT_EVENT_CAPACITY),
                creates,
                run: Mutex::new(Run::Idle),
            }),
        }
    }

    /// A node already created at `actual` on the client's current session (by a recipe that
    /// made the first create itself, to see its exact error), kept from there: it adopts the
    /// node without writing it, and later re-creations use `actual`'s name.
    /// (Only service discovery uses it: without the feature it would be dead code, a warning
    /// in the default build, which the publish dry run refuses.)
    #[cfg(feature = "discovery")]
    pub(crate) fn adopt(
        client: &Client,
        actual: &str,
        mode: CreateMode,
        data: &[u8],
    ) -> Result<PersistentNode> {
        let node = PersistentNode::idle(client, actual, mode, data);
        {
            let mut state = node.inner.state();
            state.actual = Some(actual.to_string());
            state.created_by = client.session_id();
            state.adopted = true;
        }
        node.inner.creates.send_modify(|n| *n += 1);
        node.run()?;
        Ok(node)
    }

    /// Stops keeping the node without deleting it (another keeper holds it now).
    #[cfg(feature = "discovery")]
    pub(crate) fn forget(&self) {
        let running = std::mem::replace(&mut *self.inner.run(), Run::Closed);
        if let Run::Running(stop, task) = running {
            drop(stop);
            task.abort();
        }
        self.inner.listeners.close();
        self.inner.state().actual = None;
    }

    /// Starts keeping the node (in a task; needs a tokio runtime). Called once, right after
    /// making it.
    fn run(&self) -> Result<()> {
        zkrs_client::validate_create_path(&self.inner.path, self.inner.mode)?;
        if self.inner.mode.is_ttl() && self.inner.state().ttl.is_none() {
            return Err(Error::invalid(format!(
                "{}: {} needs a TTL (ttl)",
                self.inner.path, self.inner.mode
            )));
        }
        let mut run = self.inner.run();
        debug_assert!(matches!(*run, Run::Idle), "a persistent node runs once");
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(keep(self.inner.clone(), stopped));
        *run = Run::Running(stop, task);
        Ok(())
    }

    /// Waits until the node was created once: `false` if `timeout` passed first.
    pub async fn wait_for_initial_create(&self, timeout: Duration) -> Result<bool> {
        let mut creates = self.inner.creates.subscribe();
        let created = tokio::time::timeout(timeout, creates.wait_for(|n| *n > 0))
            .await
            .map(|r| r.is_ok());
        match created {
            Ok(true) => Ok(true),
            Ok(false) => Err(Error::closed()),
            Err(_) => Ok(false),
        }
    }

    /// The node's path once created (with its sequence number or protected prefix).
    /// Curator: `getActualPath`.
    pub fn node_path(&self) -> Option<String> {
        self.inner.state().actual.clone()
    }

    /// The data the node is (re)created with.
    pub fn data(&self) -> Vec<u8> {
        self.inner.state().data.clone()
    }

    /// Changes the node's data: written now if the node exists, and used for every
    /// re-creation.
    pub async fn set_data(&self, data: &[u8]) -> Result<()> {
        let (path, stored) = {
            let mut state = self.inner.state();
            state.data = data.to_vec();
            state.stored = state.codec.encode(data);
            (state.actual.clone(), state.stored.clone())
        };
        if let Some(path) = path {
            self.inner.overwrite(&path, &stored).await?;
        }
        Ok(())
    }

    /// How many times the node was created, watched (a group member starts its view after
    /// the first).
    pub(crate) fn creates(&self) -> watch::Receiver<u64> {
        self.inner.creates.subscribe()
    }

    /// A handle for writing the node's data from another task.
    pub(crate) fn handle(&self) -> NodeHandle {
        NodeHandle {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// Each (re)creation from now on. Any number of streams; each is bounded.
    pub fn events(&self) -> EventStream<PersistentNodeEvent> {
        self.inner.listeners.subscribe()
    }

    /// Stops keeping the node and deletes it (retrying through connection loss). Dropping
    /// it does the same in the background.
    pub async fn close(self) -> Result<()> {
        self.shut().await
    }

    /// [`PersistentNode::close`] for a node shared in an `Arc` (service discovery's).
    pub(crate) async fn shut(&self) -> Result<()> {
        let running = std::mem::replace(&mut *self.inner.run(), Run::Closed);
        if let Run::Running(stop, task) = running {
            let _ = stop.send(());
            let _ = task.await;
        }
        self.inner.listeners.close();
        let (path, in_doubt) = {
            let mut state = self.inner.state();
            (state.actual.take(), state.in_doubt.take())
        };
        if path.is_none() {
            if let Some(path) = in_doubt {
                delete_if_ours(&self.inner.client, path);
            }
        }
        match path {
            // Deleted in the background if this future is dropped half-way.
            Some(path) => delete_for_sure(&self.inner.client, path).await,
            None => Ok(()),
        }
    }
}

impl Drop for PersistentNode {
    fn drop(&mut self) {
        let running = std::mem::replace(&mut *self.inner.run(), Run::Closed);
        if let Run::Running(stop, task) = running {
            drop(stop);
            task.abort();
        }
        self.inner.listeners.close();
        let (path, in_doubt) = {
            let mut state = self.inner.state();
            (state.actual.take(), state.in_doubt.take())
        };
        if let Some(path) = path {
            guaranteed_delete(&self.inner.client, path);
        } else if let Some(path) = in_doubt {
            delete_if_ours(&self.inner.client, path);
        }
    }
}

/// In the background: deletes the ephemeral node at `path` if this session owns it (made
/// by a first create still in flight, or whose reply was lost, when the keeping stopped),
/// retrying through connection loss; a node of another session is left alone. Requests on
/// one session are applied in order, so a create in flight is applied before the look.
fn delete_if_ours(client: &Client, path: String) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let client = client.clone();
    runtime.spawn(async move {
        let mut backoff = Backoff::new();
        loop {
            let session = client.session_id();
            let outcome = match client.exists(&path).await {
                // Bound to the session that owns it: sent on a later one, the delete would
                // remove a node another client made at the path since (at version 0, as
                // ours may be).
                Ok(Some(stat)) if stat.ephemeral_owner == session => {
                    delete_in_session(&client, &path, Some(stat.version), session).await
                }
                Ok(_) => return,
                Err(e) => Err(e),
            };
            match outcome {
                Ok(()) => return,
                Err(e) if e.is_retryable() => {
                    if backoff.pause(&client).await.is_err() {
                        return;
                    }
                }
                // Gone, changed (not ours to judge), the session lost (its nodes go with
                // it), the client closed.
                Err(_) => return,
            }
        }
    });
}

impl std::fmt::Debug for PersistentNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentNode")
            .field("path", &self.inner.path)
            .field("mode", &self.inner.mode)
            .field("node_path", &self.node_path())
            .finish()
    }
}

/// Writes a [`PersistentNode`]'s data from elsewhere (a TTL node's toucher), without
/// keeping it alive.
pub(crate) struct NodeHandle {
    inner: std::sync::Weak<Inner>,
}

impl NodeHandle {
    /// Writes the node's current data again (which resets a TTL node's clock).
    pub(crate) async fn touch(&self) -> Result<()> {
        let Some(inner) = self.inner.upgrade() else {
            return Ok(());
        };
        let (path, data) = {
            let state = inner.state();
            (state.actual.clone(), state.stored.clone())
        };
        match path {
            Some(path) => inner.overwrite(&path, &data).await,
            None => Ok(()),
        }
    }
}
