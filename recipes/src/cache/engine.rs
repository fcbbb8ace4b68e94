//! The task behind every cache: reads the server, keeps the view, tells the events.
//!
//! One engine serves all caches; what differs is how it learns of changes:
//! - [`Watching::OneShot`] (NodeCache, PathChildrenCache, TreeCache, and CuratorCache on a
//!   server without `addWatch`): one-shot data and child watches on every cached node, all
//!   firing into one [`WatcherEvents`] stream. Each watch is set by the read that fetches the
//!   node, and set again by the read its event causes; a [`WatchBook`] per kind remembers
//!   which watches the server holds, so that re-reads (after a reconnect) and duplicate
//!   events do not pile up duplicate watches.
//! - [`Watching::Recursive`] (CuratorCache): one persistent recursive watch, kept by a
//!   [`PersistentWatcher`] across reconnects and session losses.
//!
//! Every change is learned by reading the node again, never by trusting an event's claim:
//! answers are handled in the order the server gave them ([`Pipeline`]), so the view always
//! moves forward. After a reconnect or a new session the engine re-reads every cached node
//! and lists every cached parent: whatever changed while it was away is found, including a
//! node deleted and created again (a new `czxid`: removed, then added).

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};
use zkrs_client::{
    Client, ConnectionState, ErrorCode, EventType, StateChange, WatchedEvent, Watcher,
    WatcherEvents,
};

use super::fetch::{self, Fetched};
use super::persistent_watcher::{PersistentWatcher, PersistentWatcherEvent};
use super::pipeline::Pipeline;
use super::selector::TreeCacheSelector;
use super::view::{below, depth, ViewWriter};
use super::watch_book::WatchBook;
use super::CacheEvent;
use crate::data_codec::DataCodec;
use crate::framework::{join, parent};

/// What a cache reads and tells.
pub(crate) struct Settings {
    pub(crate) root: String,
    /// How far below the root to go (0: the root only).
    pub(crate) max_depth: usize,
    /// Whether the root itself is in the view (not for PathChildrenCache).
    pub(crate) include_root: bool,
    /// Whether to keep data, or the Stat only.
    pub(crate) cache_data: bool,
    pub(crate) selector: Arc<dyn TreeCacheSelector>,
    /// Whether the nodes found by the initial build are told as `Added`.
    pub(crate) initial_events: bool,
    /// Whether `Initialized` is told once the initial build is done.
    pub(crate) initialized_event: bool,
    /// How the data is stored (gzipped: decompressed as read).
    pub(crate) codec: DataCodec,
}

/// How the engine learns of changes.
pub(crate) enum Watching {
    OneShot(OneShot),
    Recursive(PersistentWatcher),
}

pub(crate) struct OneShot {
    watcher: Watcher,
    events: WatcherEvents,
    /// Data (and exist) watches.
    data: WatchBook,
    /// Child watches.
    child: WatchBook,
}

impl OneShot {
    pub(crate) fn new(client: &Client) -> OneShot {
        let (watcher, events) = client.watcher();
        OneShot {
            watcher,
            events,
            data: WatchBook::default(),
            child: WatchBook::default(),
        }
    }
}

/// What a cache's handle asks of its task.
pub(crate) enum Command {
    /// Read everything again; answer once every read is in.
    Refresh(oneshot::Sender<()>),
}

enum Input {
    Command(Command),
    State(StateChange),
    Fetched(Fetched),
    Node(WatchedEvent),
    Reset,
    WatchFailed(zkrs_client::Error),
}

impl Watching {
    async fn next(&mut self) -> Input {
        match self {
            Watching::OneShot(one_shot) => match one_shot.events.next().await {
                Some(event) => Input::Node(event),
                None => std::future::pending().await,
            },
            Watching::Recursive(watcher) => match watcher.next().await {
                Some(PersistentWatcherEvent::Event(event)) => Input::Node(event),
                Some(PersistentWatcherEvent::Reset) => Input::Reset,
                Some(PersistentWatcherEvent::Lagged { .. }) => Input::Reset,
                Some(PersistentWatcherEvent::Failed(error)) => Input::WatchFailed(error),
                None => std::future::pending().await,
            },
        }
    }
}

pub(crate) struct Engine {
    client: Client,
    settings: Settings,
    writer: ViewWriter,
    watching: Watching,
    pipeline: Pipeline<Fetched>,
    /// The root's `czxid` while it exists (the root is not always in the view).
    root_czxid: Option<i64>,
    session_id: i64,
    /// Whether the initial build has started (a recursive watch waits for its watch first).
    reading: bool,
    /// Whether a read of this pass failed on connection trouble: the view is not whole until
    /// the pass after the reconnect, so `initialized` waits for it (a server before 3.6
    /// closes the connection that asked for the recursive watch, under the fallback's reads).
    incomplete: bool,
    initialized: bool,
    /// Refreshes to answer once every read in flight is in.
    refreshed: Vec<oneshot::Sender<()>>,
}

impl Engine {
    pub(crate) fn new(
        client: Client,
        settings: Settings,
        mut writer: ViewWriter,
        watching: Watching,
    ) -> Engine {
        writer.announce = settings.initial_events;
        Engine {
            session_id: client.session_id(),
            client,
            settings,
            writer,
            watching,
            pipeline: Pipeline::new(),
            root_czxid: None,
            reading: false,
            incomplete: false,
            initialized: false,
            refreshed: Vec::new(),
        }
    }

    /// Runs until `close` fires (or its sender is dropped) or the client closes. Sends on
    /// `initialized` once the initial build is complete.
    pub(crate) async fn run(
        mut self,
        mut close: oneshot::Receiver<()>,
        mut commands: mpsc::UnboundedReceiver<Command>,
        initialized: Option<tokio::sync::watch::Sender<bool>>,
    ) {
        let mut states = self.client.state_changes();
        if matches!(self.watching, Watching::OneShot(_)) {
            self.read_all();
        }
        loop {
            if self.reading && !self.incomplete && !self.initialized && self.pipeline.is_empty() {
                self.initialized = true;
                self.writer.announce = true;
                if self.settings.initialized_event {
                    self.writer.emit(CacheEvent::Initialized);
                }
                if let Some(tx) = &initialized {
                    tx.send_replace(true);
                }
            }
            if self.pipeline.is_empty() {
                for done in self.refreshed.drain(..) {
                    let _ = done.send(());
                }
            }
            let Engine {
                pipeline, watching, ..
            } = &mut self;
            let input = tokio::select! {
                biased;
                _ = &mut close => return,
                Some(command) = commands.recv() => Input::Command(command),
                change = states.next() => match change {
                    Some(change) => Input::State(change),
                    None => return,
                },
                fetched = pipeline.next() => Input::Fetched(fetched),
                input = watching.next() => input,
            };
            match input {
                Input::Command(Command::Refresh(done)) => {
                    self.read_all();
                    self.refreshed.push(done);
                }
                Input::State(change) if change.state == ConnectionState::Closed => return,
                Input::State(change) => self.on_state(change),
                Input::Fetched(fetched) => self.on_fetched(fetched),
                Input::Node(event) => self.on_node_event(event),
                Input::Reset => self.read_all(),
                Input::WatchFailed(error) if error.code() == Some(ErrorCode::Unimplemented) => {
                    // A server before 3.6: fall back to one-shot watches on every node.
                    self.watching = Watching::OneShot(OneShot::new(&self.client));
                    self.read_all();
                }
                Input::WatchFailed(error) => {
                    // Not retryable (no permission, say): nothing will ever be read.
                    self.writer.emit(CacheEvent::Failed(error));
                    return;
                }
            }
        }
    }

    fn on_state(&mut self, change: StateChange) {
        match change.state {
            ConnectionState::Suspended => self.writer.emit(CacheEvent::Suspended),
            ConnectionState::Lost => {
                if let Watching::OneShot(w) = &mut self.watching {
                    // The server dropped every watch with the session.
                    w.data.session_lost();
                    w.child.session_lost();
                }
                self.writer.emit(CacheEvent::Lost);
            }
            ConnectionState::Reconnected | ConnectionState::Connected => {
                if change.session_id != self.session_id {
                    if let Watching::OneShot(w) = &mut self.watching {
                        w.data.session_lost();
                        w.child.session_lost();
                    }
                    self.session_id = change.session_id;
                }
                self.writer.emit(CacheEvent::Reconnected);
                // A recursive watch is re-read when its watcher says it is back (Reset).
                if matches!(self.watching, Watching::OneShot(_)) {
                    self.read_all();
                }
            }
            _ => {}
        }
    }

    /// Reads everything again: the root, every cached node, and the children of every
    /// cached node that may have children in the view.
    fn read_all(&mut self) {
        crate::metrics::count::cache_resync();
        self.reading = true;
        self.incomplete = false;
        let root = self.settings.root.clone();
        self.read_node(root.clone());
        if self.root_czxid.is_some() && self.descends(&root) {
            self.list(root.clone());
        }
        for path in self.writer.paths() {
            if path == root {
                continue;
            }
            self.read_node(path.clone());
            if self.descends(&path) {
                self.list(path);
            }
        }
    }

    /// Whether the children of `path` belong in the view.
    fn descends(&self, path: &str) -> bool {
        depth(&self.settings.root, path) < self.settings.max_depth
            && self.settings.selector.traverse_children(path)
    }

    fn wants_data(&self, path: &str) -> bool {
        self.settings.cache_data && (path != self.settings.root || self.settings.include_root)
    }

    /// Reads a node's data (or Stat), watching it unless the server holds a watch already.
    fn read_node(&mut self, path: String) {
        let watcher = match &mut self.watching {
            Watching::OneShot(w) => w.data.start_read(&path).then(|| w.watcher.clone()),
            Watching::Recursive(_) => None,
        };
        let client = self.client.clone();
        crate::metrics::count::cache_read();
        if self.wants_data(&path) {
            self.pipeline.push(fetch::data(client, path, watcher));
        } else {
            self.pipeline.push(fetch::exists(client, path, watcher));
        }
    }

    /// Watches for the root to be created (unless a watched read of it is still to answer:
    /// the last of them to find it missing comes back here).
    fn await_root(&mut self) {
        let root = self.settings.root.clone();
        if let Watching::OneShot(w) = &mut self.watching {
            if w.data.is_unwatched(&root) && w.data.start_read(&root) {
                let watcher = Some(w.watcher.clone());
                crate::metrics::count::cache_read();
                self.pipeline
                    .push(fetch::exists(self.client.clone(), root, watcher));
            }
        }
        // A recursive watch sees the root's creation by itself.
    }

    fn list(&mut self, path: String) {
        let watcher = match &mut self.watching {
            Watching::OneShot(w) => w.child.start_read(&path).then(|| w.watcher.clone()),
            Watching::Recursive(_) => None,
        };
        crate::metrics::count::cache_read();
        self.pipeline
            .push(fetch::children(self.client.clone(), path, watcher));
    }

    /// A watched read of `path` was answered (`watch_set`: it left a watch).
    fn answered(&mut self, path: &str, child: bool, watch_set: bool) {
        if let Watching::OneShot(w) = &mut self.watching {
            let book = if child { &mut w.child } else { &mut w.data };
            book.answered(path, watch_set);
        }
    }

    /// A watch on `path` fired: whether a watched read of it is in flight, which reads the
    /// change and leaves the next watch (so no other read is needed).
    fn fired(&mut self, path: &str, child: bool) -> bool {
        match &mut self.watching {
            Watching::OneShot(w) if child => w.child.fired(path),
            Watching::OneShot(w) => w.data.fired(path),
            Watching::Recursive(_) => false,
        }
    }

    fn on_fetched(&mut self, fetched: Fetched) {
        // First the bookkeeping: which answers left a watch. A getData or getChildren that
        // fails leaves none; exists leaves one whether the node is there or not.
        match &fetched {
            Fetched::Data {
                path,
                watched: true,
                result,
            } => self.answered(path, false, result.is_ok()),
            Fetched::Exists {
                path,
                watched: true,
                result,
            } => self.answered(path, false, result.is_ok()),
            Fetched::Children {
                path,
                watched: true,
                result,
            } => self.answered(path, true, result.is_ok()),
            _ => {}
        }
        match fetched {
            Fetched::Data { path, result, .. } => match result {
                Ok((stored, stat)) => match self.settings.codec.decode(stored) {
                    Ok(data) => self.found(&path, stat, Some(data)),
                    // Not readable as the cache was told to read it: left out (or left as
                    // last read), as Curator leaves out a node whose decompression failed;
                    // the watch this read left brings the next write.
                    Err(_e) => {
                        zkrs_client::__log!(warn, path = %path, error = %_e, "cache: data not readable: skipped");
                    }
                },
                Err(e) => {
                    if e.code() == Some(ErrorCode::NoNode) {
                        self.gone(&path);
                    }
                    // Connection trouble: everything is read again on reconnect.
                    self.note_trouble(&e);
                }
            },
            Fetched::Exists { path, result, .. } => match result {
                // There (again): read its data too; the exists call left the watch.
                Ok(Some(_)) if self.wants_data(&path) => self.read_node(path),
                Ok(Some(stat)) => self.found(&path, stat, None),
                // exists on a missing node leaves a watch for its creation.
                Ok(None) => self.gone(&path),
                // Connection trouble: everything is read again on reconnect.
                Err(e) => self.note_trouble(&e),
            },
            Fetched::Children { path, result, .. } => match result {
                Ok(children) => {
                    let parent_known = if path == self.settings.root {
                        self.root_czxid.is_some()
                    } else {
                        self.writer.contains(&path)
                    };
                    if !parent_known {
                        // Removed since this listing was asked for; its re-creation will be
                        // listed again.
                        return;
                    }
                    if let Some(stat) = children.stat() {
                        self.writer.refresh_stat(&path, *stat);
                    }
                    let mut listed = HashSet::with_capacity(children.len());
                    for name in children.iter() {
                        let child = join(&path, name);
                        if !self.settings.selector.accept_child(&child) {
                            continue;
                        }
                        if !self.writer.contains(&child) {
                            self.read_node(child.clone());
                        }
                        listed.insert(child);
                    }
                    for cached in self.writer.children_of(&path) {
                        if !listed.contains(&cached) {
                            self.writer.remove_subtree(&cached);
                        }
                    }
                }
                Err(e) => {
                    if e.code() == Some(ErrorCode::NoNode) {
                        self.gone(&path);
                    }
                    self.note_trouble(&e);
                }
            },
        }
    }

    /// A read that failed on connection trouble leaves this pass incomplete (see
    /// `incomplete`); the pass after the reconnect reads everything again.
    fn note_trouble(&mut self, e: &zkrs_client::Error) {
        if e.is_retryable() || e.is_session_expired() {
            self.incomplete = true;
        }
    }

    /// A read found `path` with this Stat (and data).
    fn found(&mut self, path: &str, stat: zkrs_client::Stat, data: Option<zkrs_client::Bytes>) {
        let is_root = path == self.settings.root;
        let previous = if is_root {
            self.root_czxid
        } else {
            self.writer.get(path).map(|d| d.stat.czxid)
        };
        if is_root {
            self.root_czxid = Some(stat.czxid);
        }
        if !is_root || self.settings.include_root {
            self.writer.upsert(path, stat, data);
        }
        let new_node = previous != Some(stat.czxid);
        let may_have_children = match self.watching {
            // A child watch must be set even on a leaf, to see its first child.
            Watching::OneShot(_) => true,
            Watching::Recursive(_) => stat.num_children > 0,
        };
        if new_node && may_have_children && self.descends(path) {
            self.list(path.to_string());
        }
    }

    /// A read found `path` missing.
    fn gone(&mut self, path: &str) {
        if path == self.settings.root {
            self.root_czxid = None;
            self.writer.remove_subtree(path);
            self.await_root();
        } else {
            self.writer.remove_subtree(path);
        }
    }

    fn on_node_event(&mut self, event: WatchedEvent) {
        let path = event.path;
        if matches!(self.watching, Watching::Recursive(_)) && !self.in_scope(&path) {
            return;
        }
        match event.event_type {
            EventType::NodeCreated | EventType::NodeDataChanged | EventType::DataWatchRemoved => {
                if !self.fired(&path, false) {
                    self.read_node(path.clone());
                }
                if event.event_type == EventType::NodeCreated {
                    self.refresh_parent(&path);
                }
            }
            EventType::NodeDeleted => {
                // Both kinds of watch fired; a node created again is listed when found.
                self.fired(&path, true);
                if !self.fired(&path, false) {
                    self.read_node(path.clone());
                }
                self.refresh_parent(&path);
            }
            EventType::NodeChildrenChanged | EventType::ChildWatchRemoved => {
                let reading = self.fired(&path, true);
                if !reading && (self.writer.contains(&path) || path == self.settings.root) {
                    self.list(path);
                }
            }
            // Session events: the state changes say what to do.
            _ => {}
        }
    }

    /// A recursive watch tells of a child's creation or deletion but not of the parent's
    /// changed Stat (child count, pzxid): read it, so the view equals a fresh read.
    fn refresh_parent(&mut self, path: &str) {
        if !matches!(self.watching, Watching::Recursive(_)) || path == self.settings.root {
            return;
        }
        let parent = parent(path).to_string();
        if self.writer.contains(&parent) {
            self.read_node(parent);
        }
    }

    /// Whether a recursive watch's event on `path` concerns this cache (it sees the whole
    /// subtree, whatever the depth and selector).
    fn in_scope(&self, path: &str) -> bool {
        let root = &self.settings.root;
        if path == root {
            return true;
        }
        if !path.starts_with(&below(root)) || depth(root, path) > self.settings.max_depth {
            return false;
        }
        let parent = parent(path);
        self.settings.selector.accept_child(path)
            && (parent == root || self.writer.contains(parent))
            && self.settings.selector.traverse_children(parent)
    }
}
