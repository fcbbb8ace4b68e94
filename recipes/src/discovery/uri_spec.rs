//! [`UriSpec`]: Curator's URI template, `{scheme}://{address}:{port}`.

use std::fmt::Write as _;
use zkrs_client::__private::ErrorInternals;

use serde::{Deserialize, Serialize};
use zkrs_client::{Error, Result};

use super::ServiceInstance;

/// One piece of a [`UriSpec`]: literal text, or the name of a variable.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UriPart {
    /// The text, or the variable's name.
    #[serde(default)]
    pub value: String,
    /// Whether `value` names a variable.
    #[serde(default)]
    pub variable: bool,
}

/// A URI template with variables in braces, as Curator's `UriSpec`:
/// `{scheme}://{address}:{port}/path`. Stored in an instance's JSON as its parts.
///
/// Variables an instance fills in ([`UriSpec::build`]): `scheme` (`http`, or `https` when the
/// instance has an SSL port), `name`, `id`, `address`, `port`, `ssl-port`,
/// `registration-time-utc`, `service-type` (lower case); `[` and `]` stand for literal braces.
/// A variable with no value (an unknown name, or a field the instance lacks) becomes empty
/// text, as in Curator.
///
/// ```
/// use zkrs_recipes::discovery::{ServiceInstance, UriSpec};
/// let spec = UriSpec::parse("{scheme}://{address}:{port}/v1").unwrap();
/// let instance = ServiceInstance::<()>::builder("api")
///     .address("10.0.0.5")
///     .port(8080)
///     .uri_spec(spec.clone())
///     .build()
///     .unwrap();
/// assert_eq!(spec.build(&instance), "http://10.0.0.5:8080/v1");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UriSpec {
    /// The pieces, in order.
    #[serde(default)]
    pub parts: Vec<UriPart>,
}

impl UriSpec {
    /// Parses a template: text in braces is a variable (trimmed). A `{` inside a variable, a
    /// `}` without its `{`, or a variable left open is an error, as in Curator.
    pub fn parse(template: &str) -> Result<UriSpec> {
        let mut parts = Vec::new();
        let mut inside = false;
        let mut rest = template;
        while !rest.is_empty() {
            let (token, after) = match rest.find(['{', '}']) {
                Some(0) => rest.split_at(1),
                Some(i) => rest.split_at(i),
                None => (rest, ""),
            };
            rest = after;
            match token {
                "{" if inside => {
                    return Err(Error::invalid(format!(
                        "uri spec {template:?}: '{{' inside a variable"
                    )))
                }
                "{" => inside = true,
                "}" if !inside => {
                    return Err(Error::invalid(format!(
                        "uri spec {template:?}: '}}' without its '{{'"
                    )))
                }
                "}" => inside = false,
                text => parts.push(UriPart {
                    value: if inside { text.trim() } else { text }.to_string(),
                    variable: inside,
                }),
            }
        }
        if inside {
            return Err(Error::invalid(format!(
                "uri spec {template:?}: a variable is not closed"
            )));
        }
        Ok(UriSpec { parts })
    }

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

    fn part(value: &str, variable: bool) -> UriPart {
        UriPart {
            value: value.into(),
            variable,
        }
    }

    #[test]
    fn parses_as_curator_does() {
        let spec = UriSpec::parse("{scheme}://{ address }:{port}").unwrap();
        assert_eq!(
            spec.parts,
            vec![
                part("scheme", true),
                part("://", false),
                part("address", true),
                part(":", false),
                part("port", true),
            ]
        );
        // Empty braces add nothing (Java's StringTokenizer skips empty tokens).
        assert_eq!(UriSpec::parse("a{}b").unwrap().parts.len(), 2);
        assert!(UriSpec::parse("{a{b}}").is_err());
        assert!(UriSpec::parse("a}").is_err());
        assert!(UriSpec::parse("{open").is_err());
        assert_eq!(UriSpec::parse("").unwrap(), UriSpec::default());
    }

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
