//! [`TypedCache`]: the nodes of a path template kept decoded, over a
//! [`CuratorCache`](crate::cache::CuratorCache); a node that does not decode is told, never
//! fatal.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;
use zkrs_client::{Client, Error, EventStream, Result, DEFAULT_EVENT_CAPACITY};

use super::serializer::decode;
use super::{JsonSerializer, TypedData, ValueSerializer, ZPath};
use crate::cache::{CacheEvent, ChildData, CuratorCache};
use crate::error::ErrorExt;
use crate::framework::Listeners;

/// The decoded nodes of a cache by path, in byte order of the paths: an `Arc`, taken
/// without copying or waiting on the network.
pub type TypedSnapshot<T> = Arc<BTreeMap<String, Arc<TypedData<T>>>>;

/// What a [`TypedCache`] tells, in the order the server applied the changes: a
/// [`CacheEvent`] over decoded values. A node whose data does not decode is told as
/// [`CacheEvent::Skipped`] and is not in the view; `Initialized` follows the first read,
/// whose nodes were told as `Added` (or `Skipped`); `Failed` when the server refuses the
/// watch (`NoAuth`, say).
pub type TypedCacheEvent<T> = CacheEvent<TypedData<T>>;

/// The nodes of a path template (`/users/{id}/profile`), or of one path, kept current and
/// decoded, as Curator's `CachedModeledFramework`. Under it is a
/// [`CuratorCache`](crate::cache::CuratorCache) of the template's fixed part (`/users`; the
/// node itself for a path without parameters), with its guarantees: convergence after
/// faults, identity by `czxid`, server order. Each node that fits the template is decoded
/// once per version; other nodes of the subtree are not told, but they are held (raw) by
/// the cache under it: a template that starts with a parameter (`/{tenant}/config`) caches
/// the whole tree.
///
/// A node whose data does not decode is not in the view and is told as
/// [`CacheEvent::Skipped`], with its path and the error; the cache goes on, and the node
/// is `Added` once it is written with data that decodes.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::typed::{TypedCache, TypedCacheEvent};
///
/// #[derive(serde::Deserialize, serde::Serialize)]
/// struct Profile {
///     name: String,
/// }
///
/// let profiles = TypedCache::<Profile>::builder(&client, "/users/{id}/profile").start()?;
/// let mut events = profiles.events();
/// profiles.initialized().await?;
/// println!("{} profiles", profiles.len());
/// while let Some(event) = events.next().await {
///     match event {
///         TypedCacheEvent::Added(p) => println!("{}: {}", p.path, p.value.name),
///         TypedCacheEvent::Skipped { path, error } => eprintln!("{path}: {error}"),
///         _ => {}
///     }
/// }
/// # Ok(()) }
/// ```
#[must_use = "dropping a cache stops it"]
pub struct TypedCache<T> {
    shared: Arc<Shared<T>>,
    template: ZPath,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// Settings for a [`TypedCache`]; [`TypedCacheBuilder::start`] starts it.
#[must_use = "a builder does nothing until started"]
pub struct TypedCacheBuilder<T, S = JsonSerializer> {
    client: Client,
    template: String,
    serializer: S,
    event_capacity: usize,
    _value: PhantomData<fn() -> T>,
}

impl<T> TypedCache<T> {
    /// Settings for a cache of the nodes of `template` (a path, or a template with
    /// parameters: see [`ZPath`]), decoded as JSON unless another serializer is set.
    pub fn builder(client: &Client, template: &str) -> TypedCacheBuilder<T, JsonSerializer> {
        TypedCacheBuilder {
            client: client.clone(),
            template: template.to_string(),
            serializer: JsonSerializer,
            event_capacity: DEFAULT_EVENT_CAPACITY,
            _value: PhantomData,
        }
    }
}

impl<T, S> TypedCacheBuilder<T, S> {
    /// Another format for the values (default [`JsonSerializer`]).
    pub fn serializer<S2: ValueSerializer<T>>(self, serializer: S2) -> TypedCacheBuilder<T, S2> {
        TypedCacheBuilder {
            client: self.client,
            template: self.template,
            serializer,
            event_capacity: self.event_capacity,
            _value: PhantomData,
        }
    }

    /// The buffer of each event stream (default
    /// [`DEFAULT_EVENT_CAPACITY`](zkrs_client::DEFAULT_EVENT_CAPACITY)).
    pub fn event_capacity(mut self, capacity: usize) -> TypedCacheBuilder<T, S> {
        self.event_capacity = capacity;
        self
    }
}

impl<T, S> TypedCacheBuilder<T, S>
where
    T: Send + Sync + 'static,
    S: ValueSerializer<T>,
{
    /// Starts watching (in tasks: needs a tokio runtime) and returns at once;
    /// [`TypedCache::initialized`] waits for the first read. The nodes found first are told
    /// as `Added` (or `Skipped`), then `Initialized`. `InvalidInput` for a bad template.
    pub fn start(self) -> Result<TypedCache<T>> {
        let template = ZPath::parse(&self.template)?;
        let mut raw = CuratorCache::builder(&self.client, &template.fixed_prefix())
            .event_capacity(self.event_capacity);
        if template.is_resolved() {
            raw = raw.single_node();
        }
        let raw = raw.start()?;
        let raw_events = raw.events();
        let (initialized_tx, initialized) = watch::channel(false);
        let shared = Arc::new(Shared {
            raw,
            view: Mutex::new(TypedSnapshot::default()),
            known: Mutex::new(BTreeMap::new()),
            listeners: Listeners::new(self.event_capacity),
            initialized,
        });
        // The stream a user takes right after `start` sees the first read's events.
        shared.listeners.keep_first();
        let relay = Relay {
            shared: shared.clone(),
            template: template.clone(),
            serializer: self.serializer,
            initialized: initialized_tx,
        };
        let task = tokio::spawn(relay.run(raw_events));
        Ok(TypedCache {
            shared,
            template,
            task: Some(task),
        })
    }
}

struct Shared<T> {
    raw: CuratorCache,
    view: Mutex<TypedSnapshot<T>>,
    /// Path -> the version (`czxid`, `mzxid`) last taken in, decoded or not, of each node of
    /// the template: a node is decoded (or told `Skipped`) once per version.
    known: Mutex<BTreeMap<String, (i64, i64)>>,
    listeners: Listeners<TypedCacheEvent<T>>,
    initialized: watch::Receiver<bool>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The task that turns the raw cache's events into typed ones.
struct Relay<T, S> {
    shared: Arc<Shared<T>>,
    template: ZPath,
    serializer: S,
    initialized: watch::Sender<bool>,
}

impl<T, S: ValueSerializer<T>> Relay<T, S> {
    async fn run(self, mut raw_events: EventStream<CacheEvent>) {
        while let Some(event) = raw_events.next().await {
            let told = match event {
                CacheEvent::Added(node) | CacheEvent::Updated { new: node, .. } => {
                    self.take(&node.path, Some(&node));
                    continue;
                }
                CacheEvent::Removed(node) => {
                    self.take(&node.path, None);
                    continue;
                }
                CacheEvent::Lagged { .. } => {
                    // The raw events in between are lost, not the raw view: take it whole. If
                    // the raw `Initialized` was among them, the raw cache said so before any
                    // later event (the one that pushed it out), so `is_initialized` is true.
                    self.resync();
                    if self.shared.raw.is_initialized() {
                        self.tell_initialized();
                    }
                    continue;
                }
                CacheEvent::Initialized => {
                    self.tell_initialized();
                    continue;
                }
                CacheEvent::Suspended => TypedCacheEvent::Suspended,
                CacheEvent::Reconnected => TypedCacheEvent::Reconnected,
                CacheEvent::Lost => TypedCacheEvent::Lost,
                CacheEvent::Failed(error) => TypedCacheEvent::Failed(error),
                // The raw cache holds no value it could not decode.
                CacheEvent::Skipped { .. } => continue,
            };
            self.shared.listeners.send(told);
        }
        self.shared.listeners.close();
    }

    /// Tells `Initialized` once.
    fn tell_initialized(&self) {
        if !*self.initialized.borrow() {
            self.initialized.send_replace(true);
            self.shared.listeners.send(TypedCacheEvent::Initialized);
        }
    }

    /// Takes in the raw view whole: each path known or cached is taken as it is now.
    fn resync(&self) {
        let snapshot = self.shared.raw.snapshot();
        let mut paths: Vec<String> = lock(&self.shared.known).keys().cloned().collect();
        paths.extend(snapshot.keys().cloned());
        paths.sort();
        paths.dedup();
        for path in paths {
            self.take(&path, snapshot.get(&path).map(|n| &**n));
        }
    }

    /// Takes in the raw state of `path` (`None`: gone), decoding it if it is a new version of
    /// a node of the template, and tells what changed.
    fn take(&self, path: &str, node: Option<&ChildData>) {
        if self.template.captures(path).is_none() {
            return;
        }
        let shared = &*self.shared;
        let mut known = lock(&shared.known);
        let Some(node) = node else {
            if known.remove(path).is_some() {
                let old = Arc::make_mut(&mut lock(&shared.view)).remove(path);
                drop(known);
                if let Some(old) = old {
                    shared.listeners.send(TypedCacheEvent::Removed(old));
                }
            }
            return;
        };
        let version = (node.stat.czxid, node.stat.mzxid);
        if known.insert(path.to_string(), version) == Some(version) {
            return;
        }
        let mut events = Vec::new();
        {
            let mut view = lock(&shared.view);
            match decode(&self.serializer, path, node.bytes()) {
                Ok(value) => {
                    let new = Arc::new(TypedData::new(path, node.stat, value));
                    match Arc::make_mut(&mut view).insert(path.to_string(), new.clone()) {
                        None => events.push(TypedCacheEvent::Added(new)),
                        // Deleted and created again between two reads: a new node.
                        Some(old) if old.stat.czxid != new.stat.czxid => {
                            events.push(TypedCacheEvent::Removed(old));
                            events.push(TypedCacheEvent::Added(new));
                        }
                        Some(old) => events.push(TypedCacheEvent::Updated { old, new }),
                    }
                }
                Err(error) => {
                    zkrs_client::__log!(warn, path = %path, error = %error, "undecodable node: skipped");
                    if let Some(old) = Arc::make_mut(&mut view).remove(path) {
                        events.push(TypedCacheEvent::Removed(old));
                    }
                    events.push(TypedCacheEvent::Skipped {
                        path: path.to_string(),
                        error,
                    });
                }
            }
        }
        drop(known);
        for event in events {
            shared.listeners.send(event);
        }
    }
}

impl<T> TypedCache<T> {
    /// Waits until the first read is complete. Fails (kind `Closed`) if the cache is closed
    /// first.
    pub async fn initialized(&self) -> Result<()> {
        let mut initialized = self.shared.initialized.clone();
        initialized
            .wait_for(|done| *done)
            .await
            .map(drop)
            .map_err(|_| Error::closed())
    }

    /// A stream of the events from now on. Taken right after `start`, it sees the first
    /// read's events too. Any number of streams; each is bounded.
    pub fn events(&self) -> EventStream<TypedCacheEvent<T>> {
        self.shared.listeners.subscribe()
    }

    /// Every decoded node by path: an `Arc` of the current map, taken without copying it or
    /// waiting on the network, and consistent while held.
    pub fn snapshot(&self) -> TypedSnapshot<T> {
        lock(&self.shared.view).clone()
    }

    /// One decoded node, by its full path (for a template's node of some id:
    /// `cache.get(&cache.template().resolve(&[id])?)`).
    pub fn get(&self, path: &str) -> Option<Arc<TypedData<T>>> {
        lock(&self.shared.view).get(path).cloned()
    }

    /// How many nodes are cached (decoded).
    pub fn len(&self) -> usize {
        lock(&self.shared.view).len()
    }

    /// Whether no node is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The template the cache follows.
    pub fn template(&self) -> &ZPath {
        &self.template
    }

    /// Stops the cache and waits for its task: its watch is removed from the server and its
    /// event streams end. Dropping the cache does the same without waiting.
    pub async fn close(mut self) {
        self.shared.raw.shut().await;
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.shared.listeners.close();
    }
}

impl<T> Drop for TypedCache<T> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
        self.shared.listeners.close();
    }
}

impl<T> std::fmt::Debug for TypedCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedCache")
            .field("template", &self.template.as_str())
            .field("nodes", &self.len())
            .finish()
    }
}

impl<T, S> std::fmt::Debug for TypedCacheBuilder<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedCacheBuilder")
            .field("template", &self.template)
            .field("value", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}
