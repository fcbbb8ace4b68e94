//! Path rules, as ZooKeeper's `PathUtils.validatePath` and the request processors apply them.

/// Why a path is refused (ZooKeeper answers `BadArguments` for every reason).
pub(crate) fn is_valid(path: &str) -> bool {
    // Every path the simulation's suites write is ASCII: checked byte by byte, with no
    // vector of chars per request (a measurable part of a busy simulated run).
    if path.is_ascii() {
        valid_chars(path.as_bytes())
    } else {
        valid_chars(&path.chars().collect::<Vec<char>>())
    }
}

/// [`is_valid`] over the path's characters (bytes when it is ASCII: the same characters).
fn valid_chars<C: Copy + Into<char>>(chars: &[C]) -> bool {
    let at = |i: usize| -> char { chars[i].into() };
    if chars.is_empty() || at(0) != '/' {
        return false;
    }
    if chars.len() == 1 {
        return true;
    }
    if at(chars.len() - 1) == '/' {
        return false;
    }
    let mut last = '/';
    for i in 1..chars.len() {
        let c = at(i);
        let next_ends = i + 1 == chars.len() || at(i + 1) == '/';
        if c == '\0' || (c == '/' && last == '/') {
            return false;
        }
        if c == '.' && last == '.' {
            if at(i - 2) == '/' && next_ends {
                return false;
            }
        } else if c == '.' {
            if at(i - 1) == '/' && next_ends {
                return false;
            }
        } else if is_forbidden_char(c) {
            return false;
        }
        last = c;
    }
    true
}

/// Java checks UTF-16 code units: every character outside the Basic Multilingual Plane is a
/// surrogate pair there, and surrogates fall in a refused range.
fn is_forbidden_char(c: char) -> bool {
    let u = c as u32;
    (0x01..=0x1f).contains(&u)
        || (0x7f..=0x9f).contains(&u)
        || (0xd800..=0xf8ff).contains(&u)
        || (0xfff0..=0xffff).contains(&u)
        || u > 0xffff
}

/// The parent part of a path as ZooKeeper cuts it (`path.substring(0, lastSlash)`): `""` for
/// children of the root; `None` when there is no slash at all.
pub(crate) fn parent_of(path: &str) -> Option<&str> {
    path.rfind('/').map(|i| &path[..i])
}

/// The last component (`path.substring(lastSlash + 1)`).
pub(crate) fn name_of(path: &str) -> &str {
    path.rfind('/').map_or(path, |i| &path[i + 1..])
}

/// The name a watch on the parent is keyed by: ZooKeeper turns `""` back into `"/"`.
pub(crate) fn watch_key(parent: &str) -> &str {
    if parent.is_empty() {
        "/"
    } else {
        parent
    }
}

/// The path and each of its ancestors up to `/`, nearest first.
pub(crate) fn self_and_ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(path);
    std::iter::from_fn(move || {
        let current = next?;
        next = if current == "/" || current.is_empty() {
            None
        } else {
            match current.rfind('/') {
                Some(0) => Some("/"),
                Some(i) => Some(&current[..i]),
                None => None,
            }
        };
        Some(current)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_like_path_utils() {
        for ok in [
            "/",
            "/a",
            "/a/b",
            "/a.b",
            "/..a",
            "/a/...",
            "/zookeeper",
            "/caf\u{e9}",
        ] {
            assert!(is_valid(ok), "{ok}");
        }
        for bad in [
            "",
            "a",
            "/a/",
            "//a",
            "/a//b",
            "/.",
            "/..",
            "/a/./b",
            "/a/../b",
            "/a\0",
            "/a\u{1}",
            "/\u{1F600}",
            "/\u{e9}/..",
        ] {
            assert!(!is_valid(bad), "{bad:?}");
        }
    }

    #[test]
    fn walks_ancestors() {
        let all: Vec<&str> = self_and_ancestors("/a/b/c").collect();
        assert_eq!(all, ["/a/b/c", "/a/b", "/a", "/"]);
        assert_eq!(self_and_ancestors("/").collect::<Vec<_>>(), ["/"]);
        assert_eq!(parent_of("/a"), Some(""));
        assert_eq!(name_of("/a/b"), "b");
    }
}
