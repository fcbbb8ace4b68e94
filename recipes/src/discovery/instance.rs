//! [`ServiceInstance`]: one registered instance of a service, with Curator's fields.

use crate::error::ErrorExt;

use serde::{Deserialize, Serialize};
use zkrs_client::{Error, Result};

use super::uri_spec::UriSpec;
use crate::framework::Uuid;

/// How an instance's node lives, as Curator's `ServiceType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ServiceType {
    /// An ephemeral node: gone when the registering session ends (the default).
    #[default]
    Dynamic,
    /// An ephemeral sequential node: `<id><10-digit sequence>`.
    DynamicSequential,
    /// A persistent node, deleted when the registration ends (unregister, or close).
    Static,
    /// A persistent node that outlives the registering process: close leaves it in place;
    /// only [`unregister`](super::ServiceDiscovery::unregister) deletes it.
    Permanent,
}

impl ServiceType {
    /// The name Curator writes: `DYNAMIC`, `DYNAMIC_SEQUENTIAL`, `STATIC`, `PERMANENT`.
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceType::Dynamic => "DYNAMIC",
            ServiceType::DynamicSequential => "DYNAMIC_SEQUENTIAL",
            ServiceType::Static => "STATIC",
            ServiceType::Permanent => "PERMANENT",
        }
    }

    /// Whether the node is ephemeral (tied to the registering session).
    pub fn is_dynamic(self) -> bool {
        matches!(self, ServiceType::Dynamic | ServiceType::DynamicSequential)
    }
}

impl std::fmt::Display for ServiceType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One instance of a service: where it can be reached, with a payload of the caller's type.
/// The fields are Curator's `ServiceInstance`'s, so Java services read what Rust services
/// register and the other way round.
///
/// `P` is the payload: any serde type (a struct, `String`, [`serde_json::Value`] to accept
/// anything), or [`JavaTyped`](super::JavaTyped) to write the `@class` a Java reader
/// expects. A missing payload is `None` (JSON `null`).
///
/// ```
/// use zkrs_recipes::discovery::{ServiceInstance, ServiceType};
/// let instance = ServiceInstance::builder("api")
///     .address("10.0.0.5")
///     .port(8080)
///     .payload(serde_json::json!({"zone": "a"}))
///     .service_type(ServiceType::Dynamic)
///     .build()
///     .unwrap();
/// assert_eq!(instance.id.len(), 36); // a random UUID unless given
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServiceInstance<P> {
    /// The service's name: the node `<base path>/<name>` holds its instances.
    pub name: String,
    /// The instance's id: its node's name (a random UUID unless given).
    pub id: String,
    /// Host name or address (Curator's builder guesses a local address; ours does not).
    pub address: Option<String>,
    /// Port.
    pub port: Option<u16>,
    /// TLS port.
    pub ssl_port: Option<u16>,
    /// The caller's data.
    pub payload: Option<P>,
    /// When the instance was built, in milliseconds since the Unix epoch (UTC).
    pub registration_time_utc: i64,
    /// How its node lives.
    pub service_type: ServiceType,
    /// A URI template for the instance.
    pub uri_spec: Option<UriSpec>,
    /// Whether providers may pick it (an instance without the field is enabled).
    pub enabled: bool,
}

impl<P> ServiceInstance<P> {
    /// A builder for an instance of `name`, with a random id, registered now, `DYNAMIC`,
    /// enabled.
    pub fn builder(name: &str) -> ServiceInstanceBuilder<P> {
        let now = zkrs_client::__private::unix_time_ms() as i64;
        ServiceInstanceBuilder {
            instance: ServiceInstance {
                name: name.to_string(),
                id: Uuid::new_v4().to_string(),
                address: None,
                port: None,
                ssl_port: None,
                payload: None,
                registration_time_utc: now,
                service_type: ServiceType::Dynamic,
                uri_spec: None,
                enabled: true,
            },
        }
    }

    /// Checks that the name and id can be node names.
    pub(crate) fn validate(&self) -> Result<()> {
        for (what, value) in [("service name", &self.name), ("instance id", &self.id)] {
            if value.is_empty() || value.contains('/') || value == "." || value == ".." {
                return Err(Error::invalid(format!(
                    "a {what} is a node name (not empty, no '/', not . or ..): {value:?}"
                )));
            }
        }
        Ok(())
    }
}

/// Builds a [`ServiceInstance`]: [`ServiceInstance::builder`].
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until built"]
pub struct ServiceInstanceBuilder<P> {
    instance: ServiceInstance<P>,
}

impl<P> ServiceInstanceBuilder<P> {
    /// The id (default: a random UUID).
    pub fn id(mut self, id: &str) -> Self {
        self.instance.id = id.to_string();
        self
    }

    /// The address.
    pub fn address(mut self, address: &str) -> Self {
        self.instance.address = Some(address.to_string());
        self
    }

    /// The port.
    pub fn port(mut self, port: u16) -> Self {
        self.instance.port = Some(port);
        self
    }

    /// The TLS port.
    pub fn ssl_port(mut self, port: u16) -> Self {
        self.instance.ssl_port = Some(port);
        self
    }

    /// The payload.
    pub fn payload(mut self, payload: P) -> Self {
        self.instance.payload = Some(payload);
        self
    }

    /// The registration time, in milliseconds since the Unix epoch (default: now).
    pub fn registration_time_utc(mut self, millis: i64) -> Self {
        self.instance.registration_time_utc = millis;
        self
    }

    /// The service type (default: [`ServiceType::Dynamic`]).
    pub fn service_type(mut self, service_type: ServiceType) -> Self {
        self.instance.service_type = service_type;
        self
    }

    /// The URI template.
    pub fn uri_spec(mut self, spec: UriSpec) -> Self {
        self.instance.uri_spec = Some(spec);
        self
    }

    /// Whether providers may pick the instance (default: yes).
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.instance.enabled = enabled;
        self
    }

    /// The instance; fails if its name or id cannot be a node name.
    pub fn build(self) -> Result<ServiceInstance<P>> {
        self.instance.validate()?;
        Ok(self.instance)
    }
}
