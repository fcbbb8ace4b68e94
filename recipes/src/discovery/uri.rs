//! An instance's URI: a [`UriSpec`]'s variables filled from a [`ServiceInstance`]'s fields
//! (Curator's `UriSpec.build`). Kept apart from both so that each stands alone: an instance
//! holds a template, and the template knows nothing of instances.

use std::fmt::Write as _;

use super::instance::ServiceInstance;
use super::uri_spec::UriSpec;

impl<P> ServiceInstance<P> {
    /// The instance's URI from its [`UriSpec`], if it has one.
    pub fn uri(&self) -> Option<String> {
        self.uri_spec.as_ref().map(|spec| spec.build(self))
    }
}

impl UriSpec {
    /// The URI for `instance`: its fields fill the variables.
    pub fn build<P>(&self, instance: &ServiceInstance<P>) -> String {
        self.build_with(Some(instance), |_| None)
    }

    /// The URI with `lookup` filling variables first (it overrides the instance's fields,
    /// as Curator's variables map does), then `instance` if given.
    pub fn build_with<P>(
        &self,
        instance: Option<&ServiceInstance<P>>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> String {
        let mut uri = String::new();
        for part in &self.parts {
            if !part.variable {
                uri.push_str(&part.value);
                continue;
            }
            if let Some(value) = lookup(&part.value) {
                uri.push_str(&value);
                continue;
            }
            match (part.value.as_str(), instance) {
                ("[", _) => uri.push('{'),
                ("]", _) => uri.push('}'),
                ("scheme", Some(i)) if i.ssl_port.is_some() => uri.push_str("https"),
                ("scheme", _) => uri.push_str("http"),
                ("name", Some(i)) => uri.push_str(&i.name),
                ("id", Some(i)) => uri.push_str(&i.id),
                ("address", Some(i)) => uri.push_str(i.address.as_deref().unwrap_or_default()),
                ("port", Some(i)) => push_some(&mut uri, i.port),
                ("ssl-port", Some(i)) => push_some(&mut uri, i.ssl_port),
                ("registration-time-utc", Some(i)) => {
                    push_some(&mut uri, Some(i.registration_time_utc))
                }
                ("service-type", Some(i)) => {
                    uri.push_str(&i.service_type.as_str().to_ascii_lowercase())
                }
                _ => {}
            }
        }
        uri
    }
}

fn push_some(uri: &mut String, value: Option<impl std::fmt::Display>) {
    if let Some(value) = value {
        let _ = write!(uri, "{value}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_from_the_instance() {
        let spec = UriSpec::parse(
            "{scheme}://{address}:{ssl-port}/{name}/{id}/{service-type}/{nope}{[}x{]}",
        )
        .unwrap();
        let instance = ServiceInstance::<()>::builder("api")
            .id("i1")
            .address("h")
            .ssl_port(443)
            .build()
            .unwrap();
        assert_eq!(spec.build(&instance), "https://h:443/api/i1/dynamic/{x}");
        assert_eq!(
            spec.build_with(Some(&instance), |v| (v == "scheme").then(|| "grpc".into())),
            "grpc://h:443/api/i1/dynamic/{x}"
        );
        assert_eq!(spec.build_with::<()>(None, |_| None), "http://:////{x}");
    }
}
