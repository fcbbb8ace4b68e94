//! [`Client`]: a cheap, cloneable handle; every ZooKeeper operation as an async method.
//!
//! Each call validates its input, encodes its request in the caller's task (so the driver
//! task only copies bytes), hands it to the driver with a one-shot reply slot, and decodes the
//! reply in the caller's task. Replies borrow from the frame they arrived in: `get_data`
//! returns a `Bytes` slice of it, and [`Children`] iterates names in place.

use crate::error::ErrorExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;
use zkrs_codec::{
    Acl, AclEntry, AddWatchMode, AddWatchRequest, Create2Response, CreateMode, CreateRequest,
    CreateResponse, CreateTtlRequest, Decode, ErrorCode, GetAclResponse,
    GetAllChildrenNumberResponse, GetDataResponse, GetEphemeralsResponse, List, OpCode, PathRecord,
    Secret, SetAclRequest, SetDataRequest, Stat, StatResponse, WatcherType, WatchesRequest,
    WhoAmIResponse,
};

use crate::children::Children;
use crate::create_options::CreateOptions;
use crate::error::{Error, Result};
use crate::frame::Frame;
use crate::in_flight::InFlight;
use crate::metrics::{ClientMetrics, Metrics};
use crate::multi::{Op, OpResult};
use crate::path::{check_path, validate_create_path, validate_path, Chroot};
use crate::protocol::{Command, ReplyTx, Shared, WatchSink};
use crate::session::{ConnectionState, Reply, WatchKind, WatchOp};
use crate::state_changes::StateChanges;
use crate::watch::{OneshotWatch, PersistentWatch, Watcher, WatcherEvents};

/// A handle to a ZooKeeper session. Clone it freely: all clones share one session and one
/// connection. The session is closed when [`Client::close`] is called or the last handle is
/// dropped.
///
/// ```no_run
/// # async fn demo() -> zkrs_client::Result<()> {
/// use zkrs_client::{Client, CreateMode};
/// let client = Client::connect("127.0.0.1:2181").await?;
/// client.create("/demo", b"hello", CreateMode::Persistent).await?;
/// let (data, stat) = client.get_data("/demo").await?;
/// assert_eq!(&data[..], b"hello");
/// client.delete("/demo", Some(stat.version)).await?;
/// client.close().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) commands: mpsc::UnboundedSender<Command>,
    pub(crate) chroot: Chroot,
    pub(crate) max_frame_len: usize,
    pub(crate) next_watcher: AtomicU64,
    pub(crate) shared: Arc<Mutex<Shared>>,
    /// The bound on requests in flight.
    pub(crate) in_flight: InFlight,
    /// The free reply slots of this client's requests.
    pub(crate) reply_slots: crate::reply_slot::ReplySlots<crate::protocol::Answer>,
    /// The figures `metrics()` reads.
    pub(crate) metrics: Arc<Metrics>,
}

impl Client {
    pub(crate) fn from_inner(inner: Inner) -> Client {
        Client {
            inner: Arc::new(inner),
        }
    }

    // ----- State -----

    pub(crate) fn shared(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.inner.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current connection state.
    pub fn state(&self) -> ConnectionState {
        self.shared().current.state
    }

    /// The current session id (0 when there is none); see [`Client::session_password`].
    pub fn session_id(&self) -> i64 {
        self.shared().current.session_id
    }

    /// The session timeout the server granted.
    pub fn session_timeout(&self) -> Duration {
        self.shared().negotiated_timeout
    }

    /// The latest instant the server is known to have heard from this session: the send
    /// time of the newest request, ping or handshake whose reply came from a read-write
    /// server (`None` without a session). The server cannot expire the session before this
    /// instant plus [`Client::session_timeout`] (less any difference in clock rates):
    /// ZooKeeper restarts a session's timeout when one of its requests arrives, and a
    /// request arrives after it is sent. The recipes' session-deadline policy counts from
    /// here. On the client's clock (tokio's, virtual on a paused runtime).
    pub fn last_heard(&self) -> Option<std::time::Instant> {
        self.shared().last_heard
    }

    /// The chroot of the connect string.
    pub fn chroot(&self) -> &Chroot {
        &self.inner.chroot
    }

    /// Requests in flight now: handed to the connection (or queued for it while disconnected) and
    /// not yet answered, at most
    /// [`ClientBuilder::max_in_flight`](crate::ClientBuilder::max_in_flight). `None` when that
    /// bound was removed (`usize::MAX`): requests are not counted then.
    pub fn in_flight(&self) -> Option<usize> {
        self.inner.in_flight.counts().map(|(taken, _)| taken)
    }

    /// The client's figures since it started: requests, errors and latency by operation,
    /// errors by code, bytes, connections, session expiries, watches, requests in flight
    /// and waiting. Counting costs a few relaxed atomic adds per request and allocates
    /// nothing; reading allocates the snapshot.
    pub fn metrics(&self) -> ClientMetrics {
        self.inner.metrics.snapshot(self.inner.in_flight.counts())
    }

    /// Every state transition from now on, in order (none is ever dropped).
    pub fn state_changes(&self) -> StateChanges {
        let shared = self.shared();
        StateChanges::new(shared.current, shared.subscribers.subscribe())
    }

    // ----- Operations -----

    /// Creates a node with the open ACL; returns its path (with the sequence suffix for
    /// sequential modes).
    pub async fn create(&self, path: &str, data: &[u8], mode: CreateMode) -> Result<String> {
        self.create_with(path, data, &CreateOptions::new(mode))
            .await
            .map(|(path, _)| path)
    }

    /// Creates a node with options; returns its path and, if asked or if the mode always
    /// returns it (container, TTL), its Stat.
    pub async fn create_with(
        &self,
        path: &str,
        data: &[u8],
        options: &CreateOptions<'_>,
    ) -> Result<(String, Option<Stat>)> {
        let (created, stat) = self.create_in_reply(path, data, options).await?;
        Ok((created.as_str().to_string(), stat))
    }

    /// [`Client::create_with`], the created path left in the reply it came in.
    pub(crate) async fn create_in_reply(
        &self,
        path: &str,
        data: &[u8],
        options: &CreateOptions<'_>,
    ) -> Result<(crate::created_path::CreatedPath, Option<Stat>)> {
        let mode = options.mode;
        validate_create_path(path, mode)?;
        let ttl_ms = match (mode.is_ttl(), options.ttl) {
            (true, Some(ttl)) if !ttl.is_zero() => {
                Some(ttl.as_millis().min(i64::MAX as u128) as i64)
            }
            (true, _) => return Err(Error::invalid(format!("{mode} needs a positive TTL"))),
            (false, Some(_)) => {
                return Err(Error::invalid(format!(
                    "a TTL needs a TTL mode, not {mode}"
                )))
            }
            (false, None) => None,
        };
        let op = if ttl_ms.is_some() {
            OpCode::CreateTtl
        } else if mode.is_container() {
            OpCode::CreateContainer
        } else if options.with_stat {
            OpCode::Create2
        } else {
            OpCode::Create
        };
        let mut acl_store = Vec::new();
        let acl = Op::acl_list(options.acl, &mut acl_store);
        #[cfg(feature = "compression")]
        let gzipped = options
            .compressed
            .then(|| crate::compression::compress(data));
        #[cfg(feature = "compression")]
        let data = gzipped.as_deref().unwrap_or(data);
        let frame = self.inner.chroot.with_server_path(path, |p| {
            let hint = p.len() + data.len() + 64;
            match ttl_ms {
                Some(ttl_ms) => self.frame(
                    op,
                    &CreateTtlRequest {
                        path: p,
                        data: Some(data),
                        acl: List::Slice(acl),
                        mode,
                        ttl_ms,
                    },
                    hint,
                ),
                None => self.frame(
                    op,
                    &CreateRequest {
                        path: p,
                        data: Some(data),
                        acl: List::Slice(acl),
                        mode,
                    },
                    hint,
                ),
            }
        })?;
        let reply = self.call(frame).await.map_err(|e| e.with_path(path))?;
        let (server_path, stat) = if op == OpCode::Create {
            (CreateResponse::decode_prefix(&reply.body)?.path, None)
        } else {
            let created = Create2Response::decode_prefix(&reply.body)?;
            (created.path, Some(created.stat))
        };
        let client_path = self.inner.chroot.to_client(server_path);
        let created = crate::created_path::CreatedPath::new(&reply.body, client_path);
        Ok((created, stat))
    }

    /// Deletes a node if it has `version` (`None`: any version).
    pub async fn delete(&self, path: &str, version: Option<i32>) -> Result<()> {
        self.delete_in(path, version, None).await
    }

    /// The node's Stat, or `None` if it does not exist.
    pub async fn exists(&self, path: &str) -> Result<Option<Stat>> {
        let frame = self.path_watch(OpCode::Exists, path, false)?;
        stat_or_none(self.call(frame).await).map_err(|e| e.with_path(path))
    }

    /// Like [`Client::exists`], leaving a watch that fires when the node is created, changed
    /// or deleted.
    pub async fn exists_and_watch(&self, path: &str) -> Result<(Option<Stat>, OneshotWatch)> {
        let frame = self.path_watch(OpCode::Exists, path, true)?;
        let (result, watch) = self.call_watched(frame, WatchKind::Exist, path).await;
        let stat = stat_or_none(result).map_err(|e| e.with_path(path))?;
        Ok((stat, watch))
    }

    /// The node's data (a slice of the reply frame: no copy) and Stat.
    pub async fn get_data(&self, path: &str) -> Result<(Bytes, Stat)> {
        let frame = self.path_watch(OpCode::GetData, path, false)?;
        let reply = self.call(frame).await.map_err(|e| e.with_path(path))?;
        data_and_stat(reply.body)
    }

    /// Like [`Client::get_data`], leaving a watch that fires when the data changes or the
    /// node is deleted.
    pub async fn get_data_and_watch(&self, path: &str) -> Result<(Bytes, Stat, OneshotWatch)> {
        let frame = self.path_watch(OpCode::GetData, path, true)?;
        let (result, watch) = self.call_watched(frame, WatchKind::Data, path).await;
        let (data, stat) = data_and_stat(result.map_err(|e| e.with_path(path))?.body)?;
        Ok((data, stat, watch))
    }

    /// A [`Watcher`]: one stream ([`WatcherEvents`]) for the events of many one-shot watches
    /// left with [`Client::get_data_with_watcher`], [`Client::exists_with_watcher`] and
    /// [`Client::get_children_with_watcher`].
    ///
    /// ```no_run
    /// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
    /// let (watcher, mut events) = client.watcher();
    /// for path in ["/a", "/b", "/c"] {
    ///     client.exists_with_watcher(path, &watcher).await?;
    /// }
    /// while let Some(event) = events.next().await {
    ///     println!("{:?} {}", event.event_type, event.path);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn watcher(&self) -> (Watcher, WatcherEvents) {
        let group = crate::session::WatcherGroup::new(
            self.inner.next_watcher.fetch_add(1, Ordering::Relaxed),
        );
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Watcher { group, tx },
            WatcherEvents::new(group, rx, self.inner.commands.downgrade()),
        )
    }

    /// Like [`Client::exists`], leaving a one-shot watch that fires into `watcher`'s stream
    /// when the node is created, changed or deleted.
    pub async fn exists_with_watcher(&self, path: &str, watcher: &Watcher) -> Result<Option<Stat>> {
        let frame = self.path_watch(OpCode::Exists, path, true)?;
        let result = self.call_into(frame, WatchKind::Exist, path, watcher).await;
        stat_or_none(result).map_err(|e| e.with_path(path))
    }

    /// Like [`Client::get_data`], leaving a one-shot watch that fires into `watcher`'s stream
    /// when the data changes or the node is deleted.
    pub async fn get_data_with_watcher(
        &self,
        path: &str,
        watcher: &Watcher,
    ) -> Result<(Bytes, Stat)> {
        let frame = self.path_watch(OpCode::GetData, path, true)?;
        let reply = self
            .call_into(frame, WatchKind::Data, path, watcher)
            .await
            .map_err(|e| e.with_path(path))?;
        data_and_stat(reply.body)
    }

    /// Like [`Client::get_children2`], leaving a one-shot watch that fires into `watcher`'s
    /// stream when a child is added or removed, or the node is deleted.
    pub async fn get_children_with_watcher(
        &self,
        path: &str,
        watcher: &Watcher,
    ) -> Result<Children> {
        let frame = self.path_watch(OpCode::GetChildren2, path, true)?;
        let reply = self
            .call_into(frame, WatchKind::Child, path, watcher)
            .await
            .map_err(|e| e.with_path(path))?;
        Children::from_get_children2(reply.body)
    }

    /// Sets the node's data if it has `version` (`None`: any); returns the new Stat.
    pub async fn set_data(&self, path: &str, data: &[u8], version: Option<i32>) -> Result<Stat> {
        validate_path(path)?;
        let frame = self.inner.chroot.with_server_path(path, |p| {
            self.frame(
                OpCode::SetData,
                &SetDataRequest {
                    path: p,
                    data: Some(data),
                    version: version.unwrap_or(-1),
                },
                p.len() + data.len(),
            )
        })?;
        let reply = self.call(frame).await.map_err(|e| e.with_path(path))?;
        Ok(StatResponse::decode_prefix(&reply.body)?.stat)
    }

    /// The node's ACL and Stat.
    pub async fn get_acl(&self, path: &str) -> Result<(Vec<AclEntry>, Stat)> {
        let frame = self.path_only(OpCode::GetAcl, path)?;
        let reply = self.call(frame).await.map_err(|e| e.with_path(path))?;
        let decoded = GetAclResponse::decode_prefix(&reply.body)?;
        Ok((
            decoded.acl.iter().map(AclEntry::from).collect(),
            decoded.stat,
        ))
    }

    /// Sets the node's ACL if its ACL version is `version` (`None`: any).
    pub async fn set_acl(
        &self,
        path: &str,
        acl: &[AclEntry],
        version: Option<i32>,
    ) -> Result<Stat> {
        validate_path(path)?;
        if acl.is_empty() {
            return Err(Error::invalid("an ACL needs at least one entry"));
        }
        let acl: Vec<Acl<'_>> = acl.iter().map(AclEntry::as_acl).collect();
        let frame = self.inner.chroot.with_server_path(path, |p| {
            self.frame(
                OpCode::SetAcl,
                &SetAclRequest {
                    path: p,
                    acl: List::Slice(&acl),
                    version: version.unwrap_or(-1),
                },
                p.len() + 64 * acl.len(),
            )
        })?;
        let reply = self.call(frame).await.map_err(|e| e.with_path(path))?;
        Ok(StatResponse::decode_prefix(&reply.body)?.stat)
    }

    /// The node's children (names, borrowed from the reply).
    pub async fn get_children(&self, path: &str) -> Result<Children> {
        let frame = self.path_watch(OpCode::GetChildren, path, false)?;
        let reply = self.call(frame).await.map_err(|e| e.with_path(path))?;
        Children::from_get_children(reply.body)
    }

    /// The node's children and its Stat ([`Children::stat`]).
    pub async fn get_children2(&self, path: &str) -> Result<Children> {
        let frame = self.path_watch(OpCode::GetChildren2, path, false)?;
        let reply = self.call(frame).await.map_err(|e| e.with_path(path))?;
        Children::from_get_children2(reply.body)
    }

    /// Like [`Client::get_children2`], leaving a watch that fires when a child is added or
    /// removed, or the node is deleted.
    pub async fn get_children_and_watch(&self, path: &str) -> Result<(Children, OneshotWatch)> {
        let frame = self.path_watch(OpCode::GetChildren2, path, true)?;
        let (result, watch) = self.call_watched(frame, WatchKind::Child, path).await;
        let children = Children::from_get_children2(result.map_err(|e| e.with_path(path))?.body)?;
        Ok((children, watch))
    }

    /// Makes the server this client is connected to catch up with the leader, so a read
    /// after it sees every write committed before it.
    pub async fn sync(&self, path: &str) -> Result<()> {
        let frame = self.path_only(OpCode::Sync, path)?;
        self.call(frame)
            .await
            .map(drop)
            .map_err(|e| e.with_path(path))
    }

    /// Descendants of a node (not counting it).
    pub async fn get_all_children_number(&self, path: &str) -> Result<i32> {
        let frame = self.path_only(OpCode::GetAllChildrenNumber, path)?;
        let reply = self.call(frame).await.map_err(|e| e.with_path(path))?;
        Ok(GetAllChildrenNumberResponse::decode_prefix(&reply.body)?.total_number)
    }

    /// Paths of this session's ephemeral nodes under a path prefix (`/` for all).
    pub async fn get_ephemerals(&self, prefix: &str) -> Result<Vec<String>> {
        check_path(prefix, true)?;
        let frame = self.inner.chroot.with_server_path(prefix, |p| {
            self.frame(OpCode::GetEphemerals, &PathRecord { path: p }, p.len())
        })?;
        let reply = self.call(frame).await?;
        let decoded = GetEphemeralsResponse::decode_prefix(&reply.body)?;
        Ok(decoded
            .ephemerals
            .iter()
            .map(|p| self.client_path(p))
            .collect())
    }

    /// The identities this session is authenticated as: `(scheme, user)` pairs.
    pub async fn who_am_i(&self) -> Result<Vec<(String, String)>> {
        let reply = self.call(Frame::header_only(OpCode::WhoAmI)).await?;
        let decoded = WhoAmIResponse::decode_prefix(&reply.body)?;
        Ok(decoded
            .client_info
            .iter()
            .map(|c| (c.auth_scheme.to_string(), c.user.to_string()))
            .collect())
    }

    /// Adds an identity to the session (also re-sent after every reconnect).
    pub async fn add_auth(&self, scheme: &str, credentials: impl Into<Secret>) -> Result<()> {
        let (tx, rx) = ReplyTx::new(&self.inner.reply_slots, None);
        self.send(Command::AddAuth {
            scheme: scheme.to_string(),
            auth: credentials.into(),
            reply: tx,
        })?;
        rx.await.ok_or_else(Error::closed)?.map(drop)
    }

    /// A persistent watch on a node (or, with [`AddWatchMode::PersistentRecursive`], on its
    /// whole subtree): every event until the returned stream is dropped. Its buffer holds
    /// [`DEFAULT_EVENT_CAPACITY`](crate::DEFAULT_EVENT_CAPACITY) events; see
    /// [`PersistentWatch`] for what happens past that.
    pub async fn add_watch(&self, path: &str, mode: AddWatchMode) -> Result<PersistentWatch> {
        self.add_watch_with_capacity(path, mode, crate::DEFAULT_EVENT_CAPACITY)
            .await
    }

    /// [`add_watch`](Client::add_watch) with a buffer of `capacity` events (at least 1):
    /// past that, the oldest are dropped and the reader is told how many with an
    /// `Err(Lagged)`.
    pub async fn add_watch_with_capacity(
        &self,
        path: &str,
        mode: AddWatchMode,
        capacity: usize,
    ) -> Result<PersistentWatch> {
        validate_path(path)?;
        let frame = self.inner.chroot.with_server_path(path, |p| {
            self.frame(
                OpCode::AddWatch,
                &AddWatchRequest { path: p, mode },
                p.len(),
            )
        })?;
        let id =
            crate::session::WatcherId::new(self.inner.next_watcher.fetch_add(1, Ordering::Relaxed));
        let (events_tx, events_rx) = crate::event_stream::event_stream(capacity);
        let kind = match mode {
            AddWatchMode::Persistent => WatchKind::Persistent,
            AddWatchMode::PersistentRecursive => WatchKind::PersistentRecursive,
            other => {
                return Err(Error::invalid(format!(
                    "{other:?}: not a watch mode this client can follow"
                )))
            }
        };
        let watch = WatchOp::Register {
            kind,
            path: self.server_path(path),
            watcher: id,
            group: None,
        };
        let sink = (id, WatchSink::Stream(events_tx));
        self.submit(frame, Some(watch), Some(sink))
            .await
            .map_err(|e| e.with_path(path))?;
        Ok(PersistentWatch::new(
            id,
            events_rx,
            self.inner.commands.downgrade(),
        ))
    }

    /// Removes this session's watches of a kind on a node, on the server and here (waiting
    /// watchers get a `*WatchRemoved` event).
    pub async fn remove_watches(&self, path: &str, watcher_type: WatcherType) -> Result<()> {
        validate_path(path)?;
        let frame = self.inner.chroot.with_server_path(path, |p| {
            self.frame(
                OpCode::RemoveWatches,
                &WatchesRequest {
                    path: p,
                    watcher_type,
                },
                p.len(),
            )
        })?;
        let watch = WatchOp::Remove {
            path: self.server_path(path),
            watcher_type,
        };
        self.submit(frame, Some(watch), None)
            .await
            .map(drop)
            .map_err(|e| e.with_path(path))
    }

    /// Runs write operations (create, delete, setData, check) as one transaction: all or
    /// nothing. On failure the error names the first operation that failed.
    pub async fn multi(&self, ops: &[Op]) -> Result<Vec<OpResult>> {
        self.multi_in(ops, None).await
    }

    /// Runs reads (getData, getChildren) in one round trip. Each result is independent: a
    /// read that fails is an [`OpResult::Error`].
    pub async fn multi_read(&self, ops: &[Op]) -> Result<Vec<OpResult>> {
        if let Some(write) = ops
            .iter()
            .find(|op| !matches!(op, Op::GetData { .. } | Op::GetChildren { .. }))
        {
            return Err(Error::invalid(format!(
                "multi_read takes reads only; use multi for writes ({})",
                write.path()
            )));
        }
        self.run_multi(OpCode::MultiRead, ops, None).await
    }

    /// Closes the session (its ephemeral nodes are deleted now) and waits for the server to
    /// confirm. Every clone of this handle is closed too.
    pub async fn close(&self) -> Result<()> {
        let (tx, rx) = ReplyTx::new(&self.inner.reply_slots, None);
        if self.send(Command::Close(Some(tx))).is_err() {
            return Ok(()); // Already gone.
        }
        match rx.await {
            Some(result) => result.map(drop),
            None => Ok(()),
        }
    }

    pub(crate) fn close_in_background(&self) {
        let _ = self.send(Command::Close(None));
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let current = self.shared().current;
        f.debug_struct("Client")
            .field("state", &current.state)
            .field("session_id", &format_args!("{:#x}", current.session_id))
            .field("chroot", &self.inner.chroot.as_str())
            .finish()
    }
}

fn stat_or_none(result: Result<Reply>) -> Result<Option<Stat>> {
    match result {
        Ok(reply) => Ok(Some(StatResponse::decode_prefix(&reply.body)?.stat)),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(None),
        Err(e) => Err(e),
    }
}

fn data_and_stat(body: Bytes) -> Result<(Bytes, Stat)> {
    let decoded = GetDataResponse::decode_prefix(&body)?;
    let data = match decoded.data {
        Some(d) if !d.is_empty() => body.slice_ref(d),
        _ => Bytes::new(),
    };
    Ok((data, decoded.stat))
}
