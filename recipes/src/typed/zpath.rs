//! [`ZPath`]: a path template with named parameters (`/users/{id}/profile`), checked when
//! parsed and when resolved, so a bad id is refused before anything is sent.

use std::fmt;

use zkrs_client::{validate_path, Error, Result};

use crate::error::ErrorExt;

/// A path template whose segments are fixed names or parameters written `{name}`, as
/// Curator's `ZPath` (`ZPath.parseWithIds`): `/users/{id}/profile` is resolved for one user
/// with [`ZPath::resolve`].
///
/// Both steps refuse bad input with kind [`InvalidInput`](zkrs_client::ErrorKind::InvalidInput):
/// a template that is not a valid path once its parameters are filled in, a brace that is not
/// a whole segment (`/a/x{id}`), a parameter value that is empty, holds a `/`, is `.` or `..`,
/// or the wrong number of values.
///
/// ```
/// use zkrs_recipes::typed::ZPath;
/// let profile = ZPath::parse("/users/{id}/profile")?;
/// assert_eq!(profile.resolve(&["42"])?, "/users/42/profile");
/// assert_eq!(profile.captures("/users/7/profile"), Some(vec!["7"]));
/// assert!(profile.resolve(&["a/b"]).unwrap_err().is_invalid_input());
/// assert!(profile.resolve(&[""]).unwrap_err().is_invalid_input());
/// # Ok::<(), zkrs_client::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ZPath {
    template: String,
    /// The segments below the root, in order.
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Segment {
    Fixed(String),
    Parameter(String),
}

impl ZPath {
    /// Parses a template. `InvalidInput` unless it is a valid path (braces are legal in node
    /// names) whose every brace belongs to a whole segment `{name}` with a name.
    pub fn parse(template: &str) -> Result<ZPath> {
        // Braces are legal in node names, so the template checks as a path itself; what is
        // left to check of a resolved path is each value.
        validate_path(template)?;
        let bad = |why: &str| Err(Error::invalid(format!("path template {template:?}: {why}")));
        let mut segments = Vec::new();
        if template != "/" {
            for segment in template[1..].split('/') {
                match segment
                    .strip_prefix('{')
                    .and_then(|rest| rest.strip_suffix('}'))
                {
                    Some("") => return bad("a parameter without a name"),
                    Some(name) if name.contains(['{', '}']) => {
                        return bad("a brace inside a parameter's name")
                    }
                    Some(name) => segments.push(Segment::Parameter(name.to_string())),
                    None if segment.contains(['{', '}']) => {
                        return bad("a brace that is not a whole `{name}` segment")
                    }
                    None => segments.push(Segment::Fixed(segment.to_string())),
                }
            }
        }
        Ok(ZPath {
            template: template.to_string(),
            segments,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.template
    }

    /// The parameters' names, in order.
    pub fn parameters(&self) -> impl Iterator<Item = &str> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Parameter(name) => Some(name.as_str()),
            Segment::Fixed(_) => None,
        })
    }

    /// Whether the template has no parameter: it is one path (Curator: `isResolved`).
    pub fn is_resolved(&self) -> bool {
        self.parameters().next().is_none()
    }

    /// The path with each parameter replaced by the value at its position (Curator:
    /// `resolved`). `InvalidInput` for the wrong number of values, or a value that is empty,
    /// holds a `/`, is `.` or `..`, or makes an invalid path (a control character, say).
    pub fn resolve<V: AsRef<str>>(&self, values: &[V]) -> Result<String> {
        let wanted = self.parameters().count();
        if values.len() != wanted {
            return Err(Error::invalid(format!(
                "path template {:?} has {wanted} parameter(s), given {} value(s)",
                self.template,
                values.len()
            )));
        }
        for (name, value) in self.parameters().zip(values) {
            let value = value.as_ref();
            if value.is_empty() || value.contains('/') || value == "." || value == ".." {
                return Err(Error::invalid(format!(
                    "path template {:?}: {value:?} is not a node name (parameter {name})",
                    self.template
                )));
            }
        }
        let values: Vec<&str> = values.iter().map(AsRef::as_ref).collect();
        let path = self.fill(&values);
        validate_path(&path)?;
        Ok(path)
    }

    /// The values of the parameters if `path` fits the template (same depth, fixed segments
    /// equal), in order; `None` if it does not.
    pub fn captures<'p>(&self, path: &'p str) -> Option<Vec<&'p str>> {
        let rest = path.strip_prefix('/')?;
        let parts: Vec<&str> = if rest.is_empty() {
            Vec::new()
        } else {
            rest.split('/').collect()
        };
        if parts.len() != self.segments.len() {
            return None;
        }
        let mut values = Vec::new();
        for (segment, part) in self.segments.iter().zip(parts) {
            match segment {
                Segment::Fixed(name) if name != part => return None,
                Segment::Fixed(_) => {}
                Segment::Parameter(_) if part.is_empty() => return None,
                Segment::Parameter(_) => values.push(part),
            }
        }
        Some(values)
    }

    /// The longest leading part without a parameter (`/users` for `/users/{id}/profile`,
    /// the whole path when resolved): where a cache of the template is rooted.
    pub(crate) fn fixed_prefix(&self) -> String {
        let fixed: Vec<&str> = self
            .segments
            .iter()
            .map_while(|s| match s {
                Segment::Fixed(name) => Some(name.as_str()),
                Segment::Parameter(_) => None,
            })
            .collect();
        format!("/{}", fixed.join("/"))
    }

    /// The path with the parameters replaced by `values`, in order (as many as there are).
    fn fill(&self, values: &[&str]) -> String {
        let mut path = String::with_capacity(self.template.len());
        let mut values = values.iter();
        for segment in &self.segments {
            path.push('/');
            path.push_str(match segment {
                Segment::Fixed(name) => name,
                Segment::Parameter(_) => values.next().copied().unwrap_or_default(),
            });
        }
        if path.is_empty() {
            path.push('/');
        }
        path
    }
}

impl fmt::Display for ZPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.template)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_checked_when_parsed() {
        for bad in [
            "",
            "users",
            "/users/",
            "/users//{id}",
            "/users/{}",
            "/users/x{id}",
            "/users/{id}x",
            "/users/{i{d}",
            "/users/{id",
            "/a/./b",
        ] {
            assert!(
                ZPath::parse(bad).unwrap_err().is_invalid_input(),
                "{bad:?} accepted"
            );
        }
        let root = ZPath::parse("/").unwrap();
        assert!(root.is_resolved());
        assert_eq!(root.resolve::<&str>(&[]).unwrap(), "/");
        assert_eq!(root.captures("/"), Some(vec![]));
        assert_eq!(root.fixed_prefix(), "/");
    }

    #[test]
    fn values_are_checked_when_resolved() {
        let t = ZPath::parse("/t/{tenant}/users/{id}").unwrap();
        assert_eq!(t.parameters().collect::<Vec<_>>(), ["tenant", "id"]);
        assert!(!t.is_resolved());
        assert_eq!(t.resolve(&["a", "7"]).unwrap(), "/t/a/users/7");
        let owned = vec!["b".to_string(), "8".to_string()];
        assert_eq!(t.resolve(&owned).unwrap(), "/t/b/users/8");
        for bad in [
            &["a"][..],
            &["a", "7", "x"],
            &["", "7"],
            &["a/b", "7"],
            &["..", "7"],
            &[".", "7"],
            &["a", "x\u{0}y"],
        ] {
            assert!(
                t.resolve(bad).unwrap_err().is_invalid_input(),
                "{bad:?} accepted"
            );
        }
    }

    #[test]
    fn captures_and_the_fixed_prefix() {
        let t = ZPath::parse("/users/{id}/profile").unwrap();
        assert_eq!(t.captures("/users/42/profile"), Some(vec!["42"]));
        assert_eq!(t.captures("/users/42"), None);
        assert_eq!(t.captures("/users/42/profile/x"), None);
        assert_eq!(t.captures("/users/42/other"), None);
        assert_eq!(t.captures("/users"), None);
        assert_eq!(t.captures("users/42/profile"), None);
        assert_eq!(t.fixed_prefix(), "/users");
        assert_eq!(ZPath::parse("/{a}/b").unwrap().fixed_prefix(), "/");
        assert_eq!(ZPath::parse("/a/b").unwrap().fixed_prefix(), "/a/b");
        assert_eq!(ZPath::parse("/a/b").unwrap().to_string(), "/a/b");
    }
}
