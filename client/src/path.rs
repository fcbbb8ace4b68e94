//! Path rules (ZooKeeper's `PathUtils.validatePath`) and the chroot.
//!
//! Paths are checked before anything is sent, so a bad path is a clear local error rather than
//! a server-side `BadArguments` (or worse, a path the user did not mean).

use crate::error::ErrorExt;
use crate::error::{Error, Result};
use zkrs_codec::CreateMode;

/// Checks a node path: non-empty, absolute, no trailing `/`, no empty, `.` or `..` segment,
/// and no control or reserved characters (the ranges ZooKeeper refuses: its
/// `PathUtils.validatePath`). Every operation checks its paths so before sending; a recipe or
/// a tool can check a path it was given up front.
///
/// ```
/// use zkrs_client::validate_path;
/// assert!(validate_path("/app/config").is_ok());
/// let err = validate_path("app").unwrap_err();
/// assert_eq!(err.to_string(), "invalid input: path must start with '/': app");
/// ```
pub fn validate_path(path: &str) -> Result<()> {
    check_path(path, false)
}

/// Checks the path given to a create with `mode`: as [`validate_path`], except that a
/// sequential mode's path may end with `/`, since the server appends the sequence digits.
///
/// ```
/// use zkrs_client::{validate_create_path, CreateMode};
/// assert!(validate_create_path("/app/lock-", CreateMode::EphemeralSequential).is_ok());
/// assert!(validate_create_path("/app/", CreateMode::PersistentSequential).is_ok());
/// assert!(validate_create_path("/app/", CreateMode::Persistent).is_err());
/// ```
pub fn validate_create_path(path: &str, mode: CreateMode) -> Result<()> {
    check_path(path, mode.is_sequential())
}

/// The rules of both; `sequential`: the path may end with `/` (a sequential create's, or
/// `getEphemerals`' prefix).
pub(crate) fn check_path(path: &str, sequential: bool) -> Result<()> {
    let bad = |why: &str| Err(Error::invalid(format!("{why}: {path}")));
    if path.is_empty() {
        return Err(Error::invalid("path must not be empty"));
    }
    if !path.starts_with('/') {
        return bad("path must start with '/'");
    }
    if path.len() == 1 {
        return Ok(());
    }
    if path.ends_with('/') && !sequential {
        return bad("path must not end with '/'");
    }
    // With a sequential create the last segment may be empty: the server appends digits.
    let checked = if sequential && path.ends_with('/') {
        &path[..path.len() - 1]
    } else {
        path
    };
    for segment in checked[1..].split('/') {
        match segment {
            "" => return bad("empty node name (\"//\")"),
            "." | ".." => return bad("relative paths ('.' and '..') are not allowed"),
            _ => {}
        }
    }
    if let Some(c) = path.chars().find(|&c| is_forbidden(c)) {
        return Err(Error::invalid(format!(
            "invalid character {:?} (U+{:04X}) in path: {}",
            c,
            c as u32,
            path.escape_debug()
        )));
    }
    Ok(())
}

/// Characters ZooKeeper refuses in paths: NUL, control characters, and the ranges
/// U+007F-U+009F, U+D800-U+F8FF (surrogates are not `char`s in Rust), U+FFF0-U+FFFF.
fn is_forbidden(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{e000}'..='\u{f8ff}' | '\u{fff0}'..='\u{ffff}')
}

/// The chroot of a connect string (`h1:2181/app`): prepended to every path sent, stripped
/// from every path received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chroot(Option<String>);

impl Chroot {
    /// No chroot.
    pub fn none() -> Chroot {
        Chroot(None)
    }

    /// A chroot at `path` (`/` alone means none).
    pub fn new(path: &str) -> Result<Chroot> {
        validate_path(path)?;
        Ok(if path == "/" {
            Chroot(None)
        } else {
            Chroot(Some(path.to_string()))
        })
    }

    /// The chroot path, if any.
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The server path for a client path: `/` maps to the chroot itself.
    pub fn to_server(&self, path: &str) -> std::borrow::Cow<'_, str> {
        match &self.0 {
            None => std::borrow::Cow::Owned(path.to_string()),
            Some(root) if path == "/" => std::borrow::Cow::Borrowed(root.as_str()),
            Some(root) => std::borrow::Cow::Owned(format!("{root}{path}")),
        }
    }

    /// Writes the server path for `path` where the codec wants a `&str`, without allocating
    /// when there is no chroot.
    pub fn with_server_path<R>(&self, path: &str, f: impl FnOnce(&str) -> R) -> R {
        match &self.0 {
            None => f(path),
            Some(root) if path == "/" => f(root),
            Some(root) => f(&format!("{root}{path}")),
        }
    }

    /// The client path for a server path: the chroot is removed (the chroot itself is `/`).
    /// A path outside the chroot (which a well-behaved server never sends) is kept whole.
    pub fn to_client<'p>(&self, server_path: &'p str) -> &'p str {
        match &self.0 {
            None => server_path,
            Some(root) => match server_path.strip_prefix(root.as_str()) {
                Some("") => "/",
                Some(rest) if rest.starts_with('/') => rest,
                _ => server_path,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_paths() {
        for p in [
            "/",
            "/a",
            "/a/b",
            "/zookeeper",
            "/ünï/€",
            "/a.b",
            "/..a",
            "/a/.b/c",
        ] {
            assert!(validate_path(p).is_ok(), "{p}");
        }
    }

    #[test]
    fn refuses_bad_paths_with_a_reason() {
        let cases = [
            ("", "must not be empty"),
            ("a/b", "must start with '/'"),
            ("/a/", "must not end with '/'"),
            ("/a//b", "empty node name"),
            ("/a/./b", "relative paths"),
            ("/a/..", "relative paths"),
            ("/a\0b", "invalid character"),
            ("/a\u{1}", "invalid character"),
            ("/a\u{7f}", "invalid character"),
            ("/a\u{fff5}", "invalid character"),
        ];
        for (path, why) in cases {
            let err = validate_path(path).unwrap_err();
            assert!(err.to_string().contains(why), "{path:?}: {err}");
            assert!(err.is_invalid_input());
            assert_eq!(err.code(), None);
        }
    }

    #[test]
    fn sequential_paths_may_end_with_a_slash() {
        assert!(check_path("/locks/", true).is_ok());
        assert!(check_path("/locks//", true).is_err());
        assert!(validate_path("/locks/").is_err());
    }

    #[test]
    fn chroot_maps_both_ways() {
        let c = Chroot::new("/app").unwrap();
        assert_eq!(c.to_server("/"), "/app");
        assert_eq!(c.to_server("/x/y"), "/app/x/y");
        assert_eq!(c.to_client("/app"), "/");
        assert_eq!(c.to_client("/app/x"), "/x");
        assert_eq!(c.to_client("/apple"), "/apple");
        assert_eq!(Chroot::new("/").unwrap(), Chroot::none());
        assert_eq!(Chroot::none().to_client("/x"), "/x");
        c.with_server_path("/q", |p| assert_eq!(p, "/app/q"));
    }
}
