//! Service discovery on Curator's registry (`curator-x-discovery`): services register where
//! they can be reached, others find them, with a live cache and a choice of instance. Rust
//! and Java services (plain Curator, Spring Cloud Zookeeper, Dubbo) share one registry.
//!
//! Needs the `discovery` feature (serde and serde_json, for the instances' JSON).
//!
//! - [`ServiceInstance`] (with [`UriSpec`]): one instance, Curator's fields, any payload.
//! - [`ServiceDiscovery`]: register, update, unregister, query; registrations kept across
//!   reconnects and sessions.
//! - [`ServiceCache`]: the live instances of one service, a snapshot without network.
//! - [`ServiceProvider`]: one instance on demand: [`RoundRobin`], [`Random`], [`Sticky`] or
//!   your own [`ProviderStrategy`], filters, a [`DownInstancePolicy`].
//!
//! The layout is Curator's: instance `id` of service `name` is the node
//! `<base>/<name>/<id>` (parents are containers), its data the instance's JSON exactly as
//! Curator 5.4's `JsonInstanceSerializer` writes it ([`JsonFormat`]); the node is ephemeral
//! for [`ServiceType::Dynamic`] (ephemeral sequential for `DynamicSequential`) and
//! persistent for `Static` and `Permanent`.
//!
//! ```no_run
//! # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
//! use zkrs_recipes::discovery::{ServiceDiscovery, ServiceInstance, UriSpec};
//!
//! let discovery = ServiceDiscovery::<serde_json::Value>::builder(&client, "/services").build()?;
//! let me = ServiceInstance::builder("api")
//!     .address("10.0.0.5")
//!     .port(8080)
//!     .uri_spec(UriSpec::parse("{scheme}://{address}:{port}")?)
//!     .build()?;
//! discovery.register(&me).await?;
//!
//! let provider = discovery.provider("api").start()?;
//! provider.initialized().await?;
//! if let Some(instance) = provider.instance() {
//!     println!("calling {}", instance.uri().unwrap_or_default());
//! }
//! # Ok(()) }
//! ```

mod instance;
mod json;
mod provider;
mod service_cache;
mod service_discovery;
mod strategy;
mod uri;
mod uri_spec;

pub use instance::{ServiceInstance, ServiceInstanceBuilder, ServiceType};
pub use json::{JavaTyped, JsonFormat};
pub use provider::{DownInstancePolicy, ServiceProvider, ServiceProviderBuilder};
pub use service_cache::{Instances, ServiceCache, ServiceCacheBuilder, ServiceCacheEvent};
pub use service_discovery::{ServiceDiscovery, ServiceDiscoveryBuilder};
pub use strategy::{Candidates, ProviderStrategy, Random, RoundRobin, Sticky};
pub use uri_spec::{UriPart, UriSpec};

use serde::de::DeserializeOwned;
use serde::Serialize;
use zkrs_client::Result;

/// Writes `instance` as Curator writes it in `format` (the bytes its node holds).
pub fn to_json<P: Serialize>(instance: &ServiceInstance<P>, format: JsonFormat) -> Result<Vec<u8>> {
    json::to_json(instance, format)
}

/// Reads an instance from a node's bytes (either of Curator's formats, unknown keys
/// ignored). Errors are [`is_invalid_input`](zkrs_client::Error::is_invalid_input).
pub fn from_json<P: DeserializeOwned>(bytes: &[u8]) -> Result<ServiceInstance<P>> {
    json::from_json(bytes)
}
