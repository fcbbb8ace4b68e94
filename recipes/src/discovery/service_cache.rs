//! [`ServiceCache`]: the live instances of one service, parsed once per change.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::framework::Listeners;
use serde::de::DeserializeOwned;
use zkrs_client::{Client, EventStream, Result, DEFAULT_EVENT_CAPACITY};

use super::json::from_json;
use super::ServiceInstance;
use crate::cache::{CacheEvent, PathChildrenCache, StartMode};

/// The instances of a service at one moment, in node-name order: an `Arc`, taken without
/// copying or waiting on the network.
pub type Instances<P> = Arc<[Arc<ServiceInstance<P>>]>;

/// What a [`ServiceCache`] tells, in the order the server applied the changes: a
/// [`CacheEvent`] over instances. `Added`, `Updated` and `Removed` for instances registered,
/// written and unregistered (or no longer readable as one); [`CacheEvent::Skipped`] for a
/// node under the service that is not an instance's JSON (or not of this payload type),
/// left out of the cache and told once per version of the node; `Suspended`, `Reconnected`,
/// `Lost` and `Lagged` as for any cache. The instances found by the first read are not told.
pub type ServiceCacheEvent<P> = CacheEvent<ServiceInstance<P>>;

/// A live view of one service's instances, as Curator's `ServiceCache`: a
/// [`PathChildrenCache`] of `<base>/<name>` (with its guarantees: convergence after faults,
/// identity by `czxid`, server order), each node parsed once per version into a
/// [`ServiceInstance`]. Reading the instances touches no network and copies nothing.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::discovery::{ServiceCacheEvent, ServiceDiscovery};
/// let discovery = ServiceDiscovery::<serde_json::Value>::builder(&client, "/services").build()?;
/// let cache = discovery.service_cache("api").start()?;
/// let mut events = cache.events();
/// cache.initialized().await?;
/// println!("{} instances", cache.instances().len());
/// while let Some(event) = events.next().await {
///     if let ServiceCacheEvent::Added(instance) = event {
///         println!("new instance {} at {:?}", instance.id, instance.address);
///     }
/// }
/// # Ok(()) }
/// ```
#[must_use = "dropping a cache stops it"]
pub struct ServiceCache<P> {
    shared: Arc<Shared<P>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// Settings for a [`ServiceCache`]:
/// [`ServiceDiscovery::service_cache`](super::ServiceDiscovery::service_cache);
/// [`ServiceCacheBuilder::start`] starts it.
#[must_use = "a builder does nothing until started"]
pub struct ServiceCacheBuilder<P> {
    client: Client,
    path: String,
    _payload: PhantomData<fn() -> P>,
}

impl<P> std::fmt::Debug for ServiceCacheBuilder<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceCacheBuilder")
            .field("path", &self.path)
            .finish()
    }
}

impl<P> ServiceCacheBuilder<P>
where
    P: DeserializeOwned + Send + Sync + 'static,
{
    /// Settings for a cache of the instances under `service_path` (`<base>/<name>`).
    pub(crate) fn new(client: &Client, service_path: &str) -> ServiceCacheBuilder<P> {
        ServiceCacheBuilder {
            client: client.clone(),
            path: service_path.to_string(),
            _payload: PhantomData,
        }
    }

    /// Starts reading every instance, then following changes (in tasks: needs a tokio
    /// runtime); returns at once: [`ServiceCache::initialized`] waits for the first read.
    /// The instances found first are not told as events; nodes that are not instances are,
    /// as `Skipped`. `InvalidInput` for a bad path.
    pub fn start(self) -> Result<ServiceCache<P>> {
        let children = PathChildrenCache::builder(&self.client, &self.path)
            .start_mode(StartMode::BuildInitialCache)
            .start()?;
        let mut changes = children.events();
        let shared = Arc::new(Shared {
            children,
            first_read: Mutex::new(false),
            known: Mutex::new(BTreeMap::new()),
            views: Mutex::new(Views {
                all: Arc::from(Vec::new()),
                enabled: Arc::from(Vec::new()),
            }),
            listeners: Listeners::new(DEFAULT_EVENT_CAPACITY),
            _payload: PhantomData,
        });
        // The stream a user takes right after `start` sees the first read's events.
        shared.listeners.keep_first();
        let relay = shared.clone();
        let task = tokio::spawn(async move {
            if relay.first_read().await.is_ok() {
                while let Some(first) = changes.next().await {
                    let mut changed = relay.relay(first);
                    while let Some(more) = changes.try_next() {
                        changed |= relay.relay(more);
                    }
                    if changed {
                        relay.resync(true);
                    }
                }
            }
            relay.listeners.close();
        });
        Ok(ServiceCache {
            shared,
            task: Some(task),
        })
    }
}

struct Shared<P> {
    children: PathChildrenCache,
    /// Whether the first read was taken in (by the relay task or by `initialized`, whichever
    /// comes first).
    first_read: Mutex<bool>,
    /// Node path -> what we made of its current version.
    known: Mutex<BTreeMap<String, Known<P>>>,
    /// Every instance, and the enabled ones (a provider's candidates when it has no filter
    /// and no instance down: picked by index, without a walk).
    views: Mutex<Views<P>>,
    listeners: Listeners<ServiceCacheEvent<P>>,
    _payload: PhantomData<fn() -> P>,
}

pub(crate) struct Views<P> {
    pub(crate) all: Instances<P>,
    pub(crate) enabled: Instances<P>,
}

impl<P> Clone for Views<P> {
    fn clone(&self) -> Self {
        Views {
            all: self.all.clone(),
            enabled: self.enabled.clone(),
        }
    }
}

struct Known<P> {
    czxid: i64,
    mzxid: i64,
    /// `None`: not an instance (told as `Skipped`).
    instance: Option<Arc<ServiceInstance<P>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl<P> ServiceCache<P>
where
    P: DeserializeOwned + Send + Sync + 'static,
{
    /// Waits until the first read is in: the instances are then those of the registry.
    /// Fails if the cache is closed first.
    pub async fn initialized(&self) -> Result<()> {
        self.shared.first_read().await
    }

    /// The instances now, in node-name order.
    pub fn instances(&self) -> Instances<P> {
        lock(&self.shared.views).all.clone()
    }

    /// Every instance and the enabled ones, taken together.
    pub(crate) fn views(&self) -> Views<P> {
        lock(&self.shared.views).clone()
    }

    /// A stream of the events from now on. Any number of streams; each is bounded.
    pub fn events(&self) -> EventStream<ServiceCacheEvent<P>> {
        self.shared.listeners.subscribe()
    }

    /// The service's path, `<base>/<name>`.
    pub fn path(&self) -> &str {
        self.shared.children.path()
    }

    /// Stops following: the watches are removed from the server, the event streams end.
    /// Dropping the cache does the same without waiting.
    pub async fn close(mut self) {
        self.shared.children.shut().await;
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.shared.listeners.close();
    }
}

impl<P: DeserializeOwned> Shared<P> {
    /// Waits for the children's first read and takes it in (once: the instances found are
    /// not told as events).
    async fn first_read(&self) -> Result<()> {
        self.children.initialized().await?;
        let mut done = lock(&self.first_read);
        if !*done {
            self.resync(false);
            *done = true;
        }
        Ok(())
    }

    /// Passes on connection events; says whether the children may have changed.
    fn relay(&self, event: CacheEvent) -> bool {
        let told = match event {
            CacheEvent::Suspended => ServiceCacheEvent::Suspended,
            CacheEvent::Reconnected => ServiceCacheEvent::Reconnected,
            CacheEvent::Lost => ServiceCacheEvent::Lost,
            _ => return true,
        };
        self.listeners.send(told);
        false
    }

    /// Brings the parsed instances in line with the children cache: a node is parsed again
    /// only when its version changed (`czxid`, `mzxid`). With `tell`, each difference is an
    /// event.
    fn resync(&self, tell: bool) {
        let snapshot = self.children.snapshot();
        let mut known = lock(&self.known);
        let mut events = Vec::new();
        known.retain(|path, entry| {
            let path_gone = snapshot
                .get(path)
                .is_none_or(|c| c.stat.czxid != entry.czxid);
            if path_gone {
                if let Some(instance) = &entry.instance {
                    events.push(ServiceCacheEvent::Removed(instance.clone()));
                }
            }
            !path_gone
        });
        for child in snapshot.values() {
            if let Some(entry) = known.get(&child.path) {
                if entry.mzxid == child.stat.mzxid {
                    continue;
                }
            }
            let parsed = from_json::<P>(child.bytes());
            let instance = match parsed {
                Ok(instance) => Some(Arc::new(instance)),
                Err(e) => {
                    zkrs_client::__log!(warn, path = %child.path, error = %e, "not a service instance: skipped");
                    events.push(ServiceCacheEvent::Skipped {
                        path: child.path.clone(),
                        error: e,
                    });
                    None
                }
            };
            let old = known.insert(
                child.path.clone(),
                Known {
                    czxid: child.stat.czxid,
                    mzxid: child.stat.mzxid,
                    instance: instance.clone(),
                },
            );
            match (old.and_then(|o| o.instance), instance) {
                (None, Some(new)) => events.push(ServiceCacheEvent::Added(new)),
                (Some(old), Some(new)) => events.push(ServiceCacheEvent::Updated { old, new }),
                (Some(old), None) => events.push(ServiceCacheEvent::Removed(old)),
                (None, None) => {}
            }
        }
        let all: Vec<_> = known.values().filter_map(|k| k.instance.clone()).collect();
        let enabled: Vec<_> = all.iter().filter(|i| i.enabled).cloned().collect();
        *lock(&self.views) = Views {
            all: Arc::from(all),
            enabled: Arc::from(enabled),
        };
        drop(known);
        for event in events {
            // The first read tells only the nodes it had to skip: a reader subscribed
            // right after `start` learns of them, as it would of any later one.
            if tell || matches!(event, ServiceCacheEvent::Skipped { .. }) {
                self.listeners.send(event);
            }
        }
    }
}

impl<P> Drop for ServiceCache<P> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
        self.shared.listeners.close();
    }
}

impl<P> std::fmt::Debug for ServiceCache<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceCache")
            .field("path", &self.shared.children.path())
            .field("instances", &lock(&self.shared.views).all.len())
            .finish()
    }
}
