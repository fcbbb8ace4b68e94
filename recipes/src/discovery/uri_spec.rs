//! [`UriSpec`]: Curator's URI template, `{scheme}://{address}:{port}`.

use crate::error::ErrorExt;

use serde::{Deserialize, Serialize};
use zkrs_client::{Error, Result};

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
}
