//! The one place that knows Curator's ordering rules for sequential contender nodes.
//!
//! A contender's node is `_c_<uuid>-<lockname><10 digits>`. Contenders are ordered by their
//! *sort key*: the text after the LAST occurrence of the lock name (a child without the lock
//! name sorts by its whole name), compared as strings; the 10-digit zero padding makes that
//! numeric. Every child of the lock directory is a contender.
//!
//! Everything here works on names borrowed from a getChildren reply and allocates nothing:
//! finding our rank and our predecessor is one pass, not a sort.

/// The sort key of `name` for `lock_name` (Curator's `standardFixForSorting`).
///
/// ```
/// use zkrs_recipes::sequence::sort_key;
/// assert_eq!(sort_key("_c_0f5c-lock-0000000007", "lock-"), "0000000007");
/// assert_eq!(sort_key("foreign", "lock-"), "foreign");
/// ```
pub fn sort_key<'a>(name: &'a str, lock_name: &str) -> &'a str {
    // Fast path for the usual `...<lock_name><10 digits>`: if the lock name sits right before
    // ten trailing digits and ends with a non-digit, no later occurrence can exist (it would
    // end inside the digits), so this is the last one. Saves setting up a substring search
    // per child, which dominates the scan of a large lock directory.
    let bytes = name.as_bytes();
    let ln = lock_name.len();
    if bytes.len() >= ln + 10
        && lock_name
            .as_bytes()
            .last()
            .is_some_and(|b| !b.is_ascii_digit())
        && bytes[bytes.len() - 10..].iter().all(u8::is_ascii_digit)
        && &bytes[bytes.len() - 10 - ln..bytes.len() - 10] == lock_name.as_bytes()
    {
        return &name[name.len() - 10..];
    }
    match name.rfind(lock_name) {
        Some(i) => &name[i + lock_name.len()..],
        None => name,
    }
}

/// The lock name of Curator's mutex nodes.
pub const LOCK_NAME: &str = "lock-";
/// The lock name of read-lock nodes (same length as the write one: Curator relies on it).
pub const READ_LOCK_NAME: &str = "__READ__";
/// The lock name of write-lock nodes.
pub const WRITE_LOCK_NAME: &str = "__WRIT__";

/// Curator's read/write lock key: fixed for `__READ__`, then for `__WRIT__`, so readers and
/// writers in one directory share one order.
pub fn read_write_sort_key(name: &str) -> &str {
    sort_key(sort_key(name, READ_LOCK_NAME), WRITE_LOCK_NAME)
}

/// The 10-digit sequence number at the end of a sequential node's name.
///
/// ```
/// use zkrs_recipes::sequence::sequence_number;
/// assert_eq!(sequence_number("_c_x-latch-0000000042"), Some(42));
/// assert_eq!(sequence_number("latch-42"), None);
/// ```
pub fn sequence_number(name: &str) -> Option<u32> {
    let digits = name.get(name.len().checked_sub(10)?..)?;
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()
    } else {
        None
    }
}

/// Where a contender stands among the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rank<'a> {
    /// How many contenders sort before it (0: it is first).
    pub index: usize,
    /// The contender just before it: the one to watch while waiting.
    pub predecessor: Option<&'a str>,
    /// The contender just before the predecessor: once it is gone, a new listing can show
    /// the predecessor as the only one left before us, so that the predecessor's deletion
    /// alone hands over the turn (the locks watch it for that).
    pub before_predecessor: Option<&'a str>,
    /// The first contender overall.
    pub first: &'a str,
    /// Number of contenders.
    pub count: usize,
}

/// Finds `ours` among `children` in one pass: its index in key order, its predecessor, and
/// the first contender. `None` when `ours` is not among them (its node is gone).
///
/// ```
/// use zkrs_recipes::sequence::{rank, sort_key};
/// let children = ["_c_a-lock-0000000003", "_c_b-lock-0000000001", "_c_c-lock-0000000002"];
/// let r = rank(children, "_c_c-lock-0000000002", |n| sort_key(n, "lock-")).unwrap();
/// assert_eq!(r.index, 1);
/// assert_eq!(r.predecessor, Some("_c_b-lock-0000000001"));
/// assert_eq!(r.first, "_c_b-lock-0000000001");
/// ```
pub fn rank<'a, I, K>(children: I, ours: &str, key: K) -> Option<Rank<'a>>
where
    I: IntoIterator<Item = &'a str>,
    K: Fn(&str) -> &str,
{
    let our_key = Key::new(key(ours));
    let mut found = false;
    let mut index = 0;
    let mut count = 0;
    let mut predecessor: Option<(Key<'a>, &'a str)> = None;
    let mut before_predecessor: Option<(Key<'a>, &'a str)> = None;
    let mut first: Option<(Key<'a>, &'a str)> = None;
    for child in children {
        count += 1;
        let k = Key::new(key(child));
        if first.is_none_or(|(fk, _)| k < fk) {
            first = Some((k, child));
        }
        match k.cmp(&our_key) {
            std::cmp::Ordering::Less => {
                index += 1;
                if predecessor.is_none_or(|(pk, _)| k > pk) {
                    before_predecessor = predecessor;
                    predecessor = Some((k, child));
                } else if before_predecessor.is_none_or(|(bk, _)| k > bk) {
                    before_predecessor = Some((k, child));
                }
            }
            // Names are compared only where keys tie: mostly never, ours once.
            std::cmp::Ordering::Equal if child == ours => found = true,
            _ => {}
        }
    }
    found.then(|| Rank {
        index,
        predecessor: predecessor.map(|(_, n)| n),
        before_predecessor: before_predecessor.map(|(_, n)| n),
        // `first` is set whenever `ours` was found (it is among the children).
        first: first.map(|(_, n)| n).unwrap_or_default(),
        count,
    })
}

/// A contender's sort key. The usual key is ten characters (Curator's sequence number), and
/// two keys of the same length compare as text exactly as their bytes do as one big-endian
/// integer: so ten-character keys are compared as integers, any other pair as text. The order
/// is the text's either way. The scan of a large directory is mostly comparisons, and
/// comparing text costs a call to `memcmp` each.
#[derive(Debug, Clone, Copy)]
struct Key<'a> {
    text: &'a str,
    /// The ten bytes as a big-endian integer, for a key of ten bytes.
    ten: Option<u128>,
}

impl<'a> Key<'a> {
    #[inline]
    fn new(text: &'a str) -> Key<'a> {
        let ten = match text.as_bytes() {
            &[a, b, c, d, e, f, g, h, i, j] => Some(
                u128::from(u64::from_be_bytes([a, b, c, d, e, f, g, h])) << 16
                    | u128::from(u16::from_be_bytes([i, j])),
            ),
            _ => None,
        };
        Key { text, ten }
    }
}

impl PartialEq for Key<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Key<'_> {}

impl PartialOrd for Key<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key<'_> {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self.ten, other.ten) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => self.text.cmp(other.text),
        }
    }
}

/// For a reader: `Some(blocker)` where `blocker` is the first (lowest) contender before `ours`
/// that `blocks` (a writer), if any; `None` when `ours` is not among the children (its node is
/// gone). One pass, no allocation.
pub fn first_blocker_before<'a, I, K, B>(
    children: I,
    ours: &str,
    key: K,
    blocks: B,
) -> Option<Option<&'a str>>
where
    I: IntoIterator<Item = &'a str>,
    K: Fn(&str) -> &str,
    B: Fn(&str) -> bool,
{
    blockers_before(children, ours, key, blocks).map(|(first, _)| first)
}

/// [`first_blocker_before`], with how many contenders before `ours` block (for the
/// hand-off: the first blocker's deletion leaves none only when it was the only one).
pub(crate) fn blockers_before<'a, I, K, B>(
    children: I,
    ours: &str,
    key: K,
    blocks: B,
) -> Option<(Option<&'a str>, usize)>
where
    I: IntoIterator<Item = &'a str>,
    K: Fn(&str) -> &str,
    B: Fn(&str) -> bool,
{
    let our_key = key(ours);
    let mut found = false;
    let mut count = 0;
    let mut blocker: Option<(&'a str, &'a str)> = None;
    for child in children {
        if child == ours {
            found = true;
            continue;
        }
        let k = key(child);
        if k < our_key && blocks(child) {
            count += 1;
            if blocker.is_none_or(|(bk, _)| k < bk) {
                blocker = Some((k, child));
            }
        }
    }
    found.then(|| (blocker.map(|(_, n)| n), count))
}

/// Gives a closure the higher-ranked type the functions here take (`for<'x> Fn(&'x str) ->
/// &'x str`), which closure inference does not find on its own.
pub fn key_fn<F: for<'x> Fn(&'x str) -> &'x str>(f: F) -> F {
    f
}

/// The children in key order (allocates the vector; for listings, not for the hot path).
pub fn sorted<'a, I, K>(children: I, key: K) -> Vec<&'a str>
where
    I: IntoIterator<Item = &'a str>,
    K: Fn(&str) -> &str,
{
    let mut v: Vec<&str> = children.into_iter().collect();
    v.sort_by(|a, b| key(a).cmp(key(b)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_path_agrees_with_the_general_rule() {
        let general = |name: &str, lock: &str| match name.rfind(lock) {
            Some(i) => name[i + lock.len()..].to_string(),
            None => name.to_string(),
        };
        let names = [
            "_c_x-lock-0000000001",
            "lock-0000000001",
            "0000000001",
            "x-lock-lock-0000000001",
            "_c_x-latch-0000000002",
            "_c_x-lock-000000001",
            "_c_x-lock-00000000010",
            "a0-0000000000",
            "weird-lock-12345678901lock-0000000009",
        ];
        for lock in ["lock-", "latch-", "0-", "-0", "__READ__"] {
            for name in names {
                assert_eq!(sort_key(name, lock), general(name, lock), "{name} / {lock}");
            }
        }
    }

    #[test]
    fn key_uses_the_last_occurrence() {
        assert_eq!(sort_key("_c_lock--lock-0000000001", "lock-"), "0000000001");
        assert_eq!(sort_key("lock-", "lock-"), "");
        assert_eq!(read_write_sort_key("_c_x-__READ__0000000004"), "0000000004");
        assert_eq!(read_write_sort_key("_c_x-__WRIT__0000000003"), "0000000003");
    }

    #[test]
    fn rank_matches_a_full_sort() {
        let names: Vec<String> = [7, 3, 9, 1, 5]
            .iter()
            .map(|i| format!("_c_{i}-lock-{i:010}"))
            .collect();
        let key = key_fn(|n| sort_key(n, "lock-"));
        let sorted = sorted(names.iter().map(String::as_str), key);
        for (i, ours) in sorted.iter().enumerate() {
            let r = rank(names.iter().map(String::as_str), ours, key).unwrap();
            assert_eq!(r.index, i);
            assert_eq!(r.predecessor, i.checked_sub(1).map(|p| sorted[p]));
            assert_eq!(r.before_predecessor, i.checked_sub(2).map(|p| sorted[p]));
            assert_eq!(r.first, sorted[0]);
            assert_eq!(r.count, 5);
        }
        assert!(rank(names.iter().map(String::as_str), "absent", key).is_none());
    }

    #[test]
    fn keys_compare_as_their_text_does() {
        // Ten digits, other lengths, non-digits, and the bytes around '0' and '9'.
        let texts = [
            "0000000001",
            "0000000010",
            "9999999999",
            "000000000/",
            "000000000:",
            "00000000001",
            "000000001",
            "abcdefghij",
            "",
            "0000000001x",
        ];
        for a in texts {
            for b in texts {
                assert_eq!(
                    Key::new(a).cmp(&Key::new(b)),
                    a.cmp(b),
                    "{a:?} against {b:?}"
                );
            }
        }
    }

    #[test]
    fn readers_wait_for_the_first_writer_before_them() {
        let children = [
            "_c_a-__READ__0000000001",
            "_c_b-__WRIT__0000000002",
            "_c_c-__READ__0000000003",
            "_c_d-__WRIT__0000000004",
            "_c_e-__READ__0000000005",
        ];
        let writer = |n: &str| n.contains(WRITE_LOCK_NAME);
        let b = first_blocker_before(children, children[4], read_write_sort_key, writer);
        assert_eq!(b, Some(Some(children[1])));
        let b = first_blocker_before(children, children[0], read_write_sort_key, writer);
        assert_eq!(b, Some(None));
        assert!(first_blocker_before(children, "x", read_write_sort_key, writer).is_none());
    }
}
