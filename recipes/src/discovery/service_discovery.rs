//! [`ServiceDiscovery`]: registering instances and querying the registry.

use crate::error::ErrorExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::de::DeserializeOwned;
use serde::Serialize;
use zkrs_client::{Client, CreateMode, Error, ErrorCode, Result};

use super::json::{from_json, to_json};
use super::{
    JsonFormat, ServiceCacheBuilder, ServiceInstance, ServiceProviderBuilder, ServiceType,
};
use crate::framework::{
    create_parents, delete_until_gone, join, join_all, DeleteOnDrop, ParentMode,
};
use crate::node::PersistentNode;

/// The registry of services under a base path, shared with Curator's `ServiceDiscovery`:
/// instance `id` of service `name` is the node `<base>/<name>/<id>`, holding the instance's
/// JSON as Curator writes it.
///
/// Registered instances are kept: after a reconnect the node is checked and made again only
/// if it is gone; on a new session it is made again at once (an ephemeral node left by the
/// lost session is deleted first, not left to vanish later). Unregister and close stop that
/// keeping before deleting, so an instance never comes back after it (CURATOR-164); a
/// [`ServiceType::Permanent`] instance outlives close (CURATOR-94); a reconnect to the same
/// session writes nothing (CURATOR-320's re-registration loops).
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::discovery::{ServiceDiscovery, ServiceInstance};
/// let discovery = ServiceDiscovery::<serde_json::Value>::builder(&client, "/services").build()?;
/// let me = ServiceInstance::builder("api").address("10.0.0.5").port(8080).build()?;
/// discovery.register(&me).await?;
/// for instance in discovery.query_for_instances("api").await? {
///     println!("{} at {:?}:{:?}", instance.id, instance.address, instance.port);
/// }
/// discovery.close().await?; // unregisters `me`
/// # Ok(()) }
/// ```
#[must_use = "dropping it unregisters its instances at once"]
pub struct ServiceDiscovery<P = serde_json::Value> {
    inner: Arc<Inner<P>>,
}

struct Inner<P> {
    client: Client,
    base_path: String,
    format: JsonFormat,
    /// What we registered, by id.
    registered: Mutex<HashMap<String, Registered<P>>>,
}

struct Registered<P> {
    instance: ServiceInstance<P>,
    /// Keeps the node in place; `None` for a permanent instance, which needs no keeping and
    /// must outlive us.
    keeper: Option<Arc<PersistentNode>>,
    /// The node's path (with its sequence number for `DYNAMIC_SEQUENTIAL`).
    path: String,
}

impl<P> Inner<P> {
    fn registered(&self) -> MutexGuard<'_, HashMap<String, Registered<P>>> {
        self.registered.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Settings for a [`ServiceDiscovery`]; [`ServiceDiscoveryBuilder::build`] makes it.
#[must_use = "a builder does nothing until built"]
pub struct ServiceDiscoveryBuilder<P = serde_json::Value> {
    client: Client,
    base_path: String,
    format: JsonFormat,
    _payload: std::marker::PhantomData<fn() -> P>,
}

impl<P> std::fmt::Debug for ServiceDiscoveryBuilder<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceDiscoveryBuilder")
            .field("base_path", &self.base_path)
            .field("format", &self.format)
            .finish()
    }
}

impl<P> ServiceDiscoveryBuilder<P>
where
    P: Serialize + DeserializeOwned + Clone + Send + Sync + 'static,
{
    /// How instances are written (default: Curator's, [`JsonFormat::Compatible`]).
    pub fn format(mut self, format: JsonFormat) -> ServiceDiscoveryBuilder<P> {
        self.format = format;
        self
    }

    /// The registry (nothing is sent before [`ServiceDiscovery::register`]).
    /// `InvalidInput` for a bad base path.
    pub fn build(self) -> Result<ServiceDiscovery<P>> {
        zkrs_client::validate_path(&self.base_path)?;
        Ok(ServiceDiscovery {
            inner: Arc::new(Inner {
                client: self.client,
                base_path: self.base_path,
                format: self.format,
                registered: Mutex::new(HashMap::new()),
            }),
        })
    }
}

impl<P> ServiceDiscovery<P>
where
    P: Serialize + DeserializeOwned + Clone + Send + Sync + 'static,
{
    /// Settings for the registry under `base_path`.
    pub fn builder(client: &Client, base_path: &str) -> ServiceDiscoveryBuilder<P> {
        ServiceDiscoveryBuilder {
            client: client.clone(),
            base_path: base_path.to_string(),
            format: JsonFormat::Compatible,
            _payload: std::marker::PhantomData,
        }
    }

    /// The base path.
    pub fn base_path(&self) -> &str {
        &self.inner.base_path
    }

    /// The path of instance `id` of service `name`.
    pub fn path_for(&self, name: &str, id: &str) -> String {
        join(&join(&self.inner.base_path, name), id)
    }

    /// Registers `instance` (or registers it again with these fields, if its id is
    /// registered already): its node is created (with missing parents as containers), and
    /// kept until [`unregister`](Self::unregister), [`close`](Self::close) or drop. A node
    /// already at its path that is not ours (a crashed process's ephemeral node, an old
    /// persistent one) is deleted and created again, as Curator does, so watchers see it.
    ///
    /// Errors: a name or id that is not a node name, a payload that is not JSON, and any
    /// error of the first create (`NoAuth`, say), after which nothing is kept. Cancel-safe:
    /// dropped half-way, it leaves no node behind.
    pub async fn register(&self, instance: &ServiceInstance<P>) -> Result<()> {
        instance.validate()?;
        let data = to_json(instance, self.inner.format)?;
        if self.inner.registered().contains_key(&instance.id) {
            return self.update(instance).await;
        }
        let client = &self.inner.client;
        let path = self.path_for(&instance.name, &instance.id);
        let mode = create_mode(instance.service_type);
        // Armed before the create is sent, for a known path: if this future is dropped with
        // the create in flight, the delete follows it on the same session.
        let mut guard = (!mode.is_sequential()).then(|| DeleteOnDrop::new(client, path.clone()));
        let actual = match first_create(client, &path, mode, &data).await {
            Ok(actual) => actual,
            Err(e) => {
                // Refused for sure: nothing of ours to delete. Outcome unknown (connection
                // lost): the guard deletes what may have been made.
                if !e.is_retryable() {
                    if let Some(guard) = guard.as_mut() {
                        guard.disarm();
                    }
                }
                return Err(e);
            }
        };
        let keeper = if instance.service_type == ServiceType::Permanent {
            None
        } else {
            Some(Arc::new(PersistentNode::adopt(
                client, &actual, mode, &data,
            )?))
        };
        let registered = Registered {
            instance: instance.clone(),
            keeper,
            path: actual,
        };
        if let Some(old) = self
            .inner
            .registered()
            .insert(instance.id.clone(), registered)
        {
            // Registered twice at once: the other's keeper goes (its node is ours now).
            if let Some(node) = old.keeper {
                node.forget();
            }
        }
        if let Some(guard) = guard.as_mut() {
            guard.disarm();
        }
        zkrs_client::__log!(info, name = %instance.name, id = %instance.id, "service registered");
        Ok(())
    }

    /// Writes `instance`'s new fields to its node; re-creations use them too. The instance
    /// must be registered here (by id).
    pub async fn update(&self, instance: &ServiceInstance<P>) -> Result<()> {
        instance.validate()?;
        let data = to_json(instance, self.inner.format)?;
        let target = {
            let mut registered = self.inner.registered();
            let Some(entry) = registered.get_mut(&instance.id) else {
                return Err(Error::invalid(format!(
                    "service instance {}/{} is not registered here",
                    instance.name, instance.id
                )));
            };
            entry.instance = instance.clone();
            match &entry.keeper {
                Some(node) => Ok(node.clone()),
                None => Err(entry.path.clone()),
            }
        };
        match target {
            Ok(node) => node.set_data(&data).await,
            Err(path) => self
                .inner
                .client
                .set_data(&path, &data, None)
                .await
                .map(|_| ()),
        }
    }

    /// Unregisters `instance` (by id): stops keeping its node, then deletes it, retrying
    /// through connection loss. An instance not registered here (a permanent one from an
    /// earlier run, say) has its node at `<base>/<name>/<id>` deleted if there.
    pub async fn unregister(&self, instance: &ServiceInstance<P>) -> Result<()> {
        let entry = self.inner.registered().remove(&instance.id);
        match entry {
            Some(Registered {
                keeper: Some(node), ..
            }) => node.shut().await,
            Some(Registered {
                keeper: None, path, ..
            }) => delete_until_gone(&self.inner.client, &path).await,
            None => {
                instance.validate()?;
                let path = self.path_for(&instance.name, &instance.id);
                delete_until_gone(&self.inner.client, &path).await
            }
        }
    }

    /// The instances registered here, by id order.
    pub fn registered(&self) -> Vec<ServiceInstance<P>> {
        let registered = self.inner.registered();
        let mut all: Vec<_> = registered.values().map(|r| r.instance.clone()).collect();
        all.sort_by(|a, b| a.id.cmp(&b.id));
        all
    }

    /// The names of every service (the base path's children), sorted. None if the base
    /// path does not exist.
    pub async fn query_for_names(&self) -> Result<Vec<String>> {
        match self.inner.client.get_children(&self.inner.base_path).await {
            Ok(children) => {
                let mut names: Vec<String> = children.iter().map(str::to_string).collect();
                names.sort();
                Ok(names)
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Every instance of `name`, read from the server (all reads in flight at once), in
    /// node-name order. A node that is not an instance's JSON is skipped (logged with the
    /// `tracing` feature), never hiding the others.
    pub async fn query_for_instances(&self, name: &str) -> Result<Vec<ServiceInstance<P>>> {
        let parent = join(&self.inner.base_path, name);
        let children = match self.inner.client.get_children(&parent).await {
            Ok(children) => children,
            Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut ids: Vec<String> = children.iter().map(str::to_string).collect();
        ids.sort();
        let reads = join_all(ids.iter().map(|id| self.read_instance(join(&parent, id)))).await;
        let mut instances = Vec::with_capacity(reads.len());
        for read in reads {
            if let Some(instance) = read? {
                instances.push(instance);
            }
        }
        Ok(instances)
    }

    /// Instance `id` of `name`, if registered and readable.
    pub async fn query_for_instance(
        &self,
        name: &str,
        id: &str,
    ) -> Result<Option<ServiceInstance<P>>> {
        self.read_instance(self.path_for(name, id)).await
    }

    async fn read_instance(&self, path: String) -> Result<Option<ServiceInstance<P>>> {
        match self.inner.client.get_data(&path).await {
            Ok((data, _)) => match from_json(&data) {
                Ok(instance) => Ok(Some(instance)),
                Err(e) => {
                    zkrs_client::__log!(warn, path = %path, error = %e, "not a service instance: skipped");
                    let _ = e;
                    Ok(None)
                }
            },
            Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Settings for a live cache of `name`'s instances.
    pub fn service_cache(&self, name: &str) -> ServiceCacheBuilder<P> {
        ServiceCacheBuilder::new(&self.inner.client, &join(&self.inner.base_path, name))
    }

    /// A provider of `name`'s instances: strategies, filters and a down-instance policy.
    pub fn provider(&self, name: &str) -> ServiceProviderBuilder<P> {
        ServiceProviderBuilder::new(self.service_cache(name))
    }

    /// Unregisters every instance registered here except permanent ones, which stay
    /// registered for good (CURATOR-94). Dropping the registry does the same without
    /// waiting.
    pub async fn close(self) -> Result<()> {
        let entries: Vec<Registered<P>> = self.inner.registered().drain().map(|(_, r)| r).collect();
        let mut result = Ok(());
        for entry in entries {
            if let Some(node) = entry.keeper {
                if let Err(e) = node.shut().await {
                    result = Err(e);
                }
            }
        }
        result
    }
}

/// Curator's create mode for each service type.
fn create_mode(service_type: ServiceType) -> CreateMode {
    match service_type {
        ServiceType::Dynamic => CreateMode::Ephemeral,
        ServiceType::DynamicSequential => CreateMode::EphemeralSequential,
        ServiceType::Static | ServiceType::Permanent => CreateMode::Persistent,
    }
}

/// The first create of a registration, with its exact error: parents made as containers;
/// a node at the path that is not this session's is deleted and made again (Curator's
/// "delete then re-create so that watchers fire"); this session's own is given our data.
async fn first_create(
    client: &Client,
    path: &str,
    mode: CreateMode,
    data: &[u8],
) -> Result<String> {
    for _ in 0..8 {
        match client.create(path, data, mode).await {
            Ok(actual) => return Ok(actual),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                create_parents(
                    client,
                    crate::framework::parent(path),
                    ParentMode::Container,
                )
                .await?;
            }
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => {
                let Some(stat) = client.exists(path).await? else {
                    continue;
                };
                if stat.ephemeral_owner != 0 && stat.ephemeral_owner == client.session_id() {
                    client.set_data(path, data, None).await?;
                    return Ok(path.to_string());
                }
                match client.delete(path, Some(stat.version)).await {
                    Ok(()) => {}
                    Err(e)
                        if matches!(e.code(), Some(ErrorCode::NoNode | ErrorCode::BadVersion)) => {}
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
    // Another writer keeps putting a node there: the server's own answer, after 8 tries.
    Err(Error::from(ErrorCode::NodeExists)
        .with_detail("could not register: the node kept coming back")
        .with_path(path))
}

impl<P> std::fmt::Debug for ServiceDiscovery<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceDiscovery")
            .field("base_path", &self.inner.base_path)
            .field("registered", &self.inner.registered().len())
            .finish()
    }
}
