//! [`ServiceProvider`]: one instance of a service on demand, from a live cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::time::Instant;

use serde::de::DeserializeOwned;
use zkrs_client::{EventStream, Result};

use super::strategy::{Candidates, ProviderStrategy, RoundRobin};
use super::{Instances, ServiceCache, ServiceCacheBuilder, ServiceCacheEvent, ServiceInstance};

/// When an instance is taken as down, as Curator's `DownInstancePolicy`: after `threshold`
/// errors noted ([`ServiceProvider::note_error`]), it is left out of that provider's picks
/// until `timeout` after its first error. Default: 30 s and 2 errors, as in Curator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DownInstancePolicy {
    /// How long an instance stays down, from its first error.
    pub timeout: Duration,
    /// How many errors make it down.
    pub threshold: u32,
}

impl DownInstancePolicy {
    /// Down after `threshold` errors, for `timeout` from the first.
    pub fn new(timeout: Duration, threshold: u32) -> DownInstancePolicy {
        DownInstancePolicy { timeout, threshold }
    }
}

impl Default for DownInstancePolicy {
    fn default() -> Self {
        DownInstancePolicy::new(Duration::from_secs(30), 2)
    }
}

type Filter<P> = Box<dyn Fn(&ServiceInstance<P>) -> bool + Send + Sync>;

/// Builds a [`ServiceProvider`]: [`ServiceDiscovery::provider`](super::ServiceDiscovery::provider).
#[must_use = "a builder does nothing until started"]
pub struct ServiceProviderBuilder<P> {
    cache: ServiceCacheBuilder<P>,
    strategy: Box<dyn ProviderStrategy<P>>,
    filters: Vec<Filter<P>>,
    policy: DownInstancePolicy,
}

impl<P> ServiceProviderBuilder<P>
where
    P: DeserializeOwned + Send + Sync + 'static,
{
    pub(crate) fn new(cache: ServiceCacheBuilder<P>) -> ServiceProviderBuilder<P> {
        ServiceProviderBuilder {
            cache,
            strategy: Box::new(RoundRobin::new()),
            filters: Vec::new(),
            policy: DownInstancePolicy::default(),
        }
    }

    /// How to pick (default: [`RoundRobin`]).
    pub fn strategy(mut self, strategy: impl ProviderStrategy<P> + 'static) -> Self {
        self.strategy = Box::new(strategy);
        self
    }

    /// Only instances for which `filter` is true (any number of filters; all must pass).
    pub fn filter(
        mut self,
        filter: impl Fn(&ServiceInstance<P>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.filters.push(Box::new(filter));
        self
    }

    /// When an instance counts as down (default: [`DownInstancePolicy::default`]).
    pub fn down_instance_policy(mut self, policy: DownInstancePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Starts the provider's cache (in tasks: needs a tokio runtime); returns at once:
    /// [`ServiceProvider::initialized`] waits until the instances are read.
    pub fn start(self) -> Result<ServiceProvider<P>> {
        Ok(ServiceProvider {
            cache: self.cache.start()?,
            strategy: self.strategy,
            filters: self.filters,
            policy: self.policy,
            errors: Mutex::new(HashMap::new()),
        })
    }
}

struct Errors {
    count: u32,
    first: Instant,
}

/// One instance of a service on demand, as Curator's `ServiceProvider`: the cache's
/// instances, through the caller's filters, the down-instance policy and "enabled only",
/// then the strategy's pick. Picking reads the cache's snapshot: no network, no allocation.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::discovery::{Random, ServiceDiscovery};
/// let discovery = ServiceDiscovery::<serde_json::Value>::builder(&client, "/services").build()?;
/// let provider = discovery
///     .provider("api")
///     .strategy(Random::new())
///     .filter(|i| i.port.is_some())
///     .start()?;
/// provider.initialized().await?;
/// if let Some(instance) = provider.instance() {
///     // ... call it; on failure:
///     provider.note_error(&instance);
/// }
/// provider.close().await;
/// # Ok(()) }
/// ```
#[must_use = "dropping a provider stops its cache"]
pub struct ServiceProvider<P> {
    cache: ServiceCache<P>,
    strategy: Box<dyn ProviderStrategy<P>>,
    filters: Vec<Filter<P>>,
    policy: DownInstancePolicy,
    /// Errors noted, by instance id.
    errors: Mutex<HashMap<String, Errors>>,
}

impl<P> ServiceProvider<P>
where
    P: DeserializeOwned + Send + Sync + 'static,
{
    /// Waits until the instances are read. Fails if the provider is closed first.
    pub async fn initialized(&self) -> Result<()> {
        self.cache.initialized().await
    }

    /// One instance, as the strategy picks it among the allowed ones; `None` if there are
    /// none.
    pub fn instance(&self) -> Option<Arc<ServiceInstance<P>>> {
        let views = self.cache.views();
        let errors = self.errors();
        if self.filters.is_empty() && errors.is_empty() {
            // Nothing to filter but `enabled`, done once per change by the cache.
            return self
                .strategy
                .pick(&Candidates::every(&views.enabled))
                .cloned();
        }
        let now = Instant::now();
        let allowed = |i: &ServiceInstance<P>| self.allowed(i, &errors, now);
        let candidates = Candidates::new(&views.all, &allowed);
        self.strategy.pick(&candidates).cloned()
    }

    /// Every allowed instance (the caller's filters, not down, enabled), in node-name order.
    pub fn all_instances(&self) -> Vec<Arc<ServiceInstance<P>>> {
        let all = self.cache.instances();
        let errors = self.errors();
        let now = Instant::now();
        all.iter()
            .filter(|i| self.allowed(i, &errors, now))
            .cloned()
            .collect()
    }

    /// Every instance the cache holds, unfiltered.
    pub fn cached_instances(&self) -> Instances<P> {
        self.cache.instances()
    }

    /// Notes that `instance` failed; at the policy's threshold it is left out until the
    /// policy's timeout after its first error.
    pub fn note_error(&self, instance: &ServiceInstance<P>) {
        let now = Instant::now();
        let mut errors = self.errors();
        let timeout = self.policy.timeout;
        errors.retain(|_, e| now.duration_since(e.first) < timeout);
        errors
            .entry(instance.id.clone())
            .or_insert(Errors {
                count: 0,
                first: now,
            })
            .count += 1;
    }

    /// The cache's events (instances added, updated, removed, and connection changes).
    pub fn events(&self) -> EventStream<ServiceCacheEvent<P>> {
        self.cache.events()
    }

    /// Stops the provider's cache. Dropping it does the same without waiting.
    pub async fn close(self) {
        self.cache.close().await
    }

    fn errors(&self) -> MutexGuard<'_, HashMap<String, Errors>> {
        self.errors.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn allowed(
        &self,
        instance: &ServiceInstance<P>,
        errors: &HashMap<String, Errors>,
        now: Instant,
    ) -> bool {
        instance.enabled
            && self.filters.iter().all(|f| f(instance))
            && !errors.get(&instance.id).is_some_and(|e| {
                e.count >= self.policy.threshold
                    && now.duration_since(e.first) < self.policy.timeout
            })
    }
}

impl<P> std::fmt::Debug for ServiceProvider<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceProvider")
            .field("cache", &self.cache)
            .field("policy", &self.policy)
            .finish()
    }
}
