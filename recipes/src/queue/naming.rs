//! Node names and their order, for each queue kind (Curator's, so both sides agree on what an
//! item is and which comes first).
//!
//! | kind | node | order |
//! |---|---|---|
//! | plain | `queue-<seq>` | name |
//! | priority | `queue-` + `1` (p >= 0) or `0` + `%08X` of p as u32, then `<seq>` | name: lower p first |
//! | delay | `queue-\|<%08X epoch ms>\|<seq>` | due time, then name |
//! | id | `queue-\|<id, '/' and '\|' made '_'>\|<seq>` | sequence (the name without `\|id\|`) |
//! | simple | `qn-<seq>` | name |
//!
//! A child of the queue node without the kind's prefix is not an item: it is skipped.

/// The prefix of every `DistributedQueue` item node (and of the other kinds built on it).
pub const QUEUE_ITEM_PREFIX: &str = "queue-";
/// The prefix of `SimpleDistributedQueue` item nodes.
pub const SIMPLE_ITEM_PREFIX: &str = "qn-";
/// The separator around a delay queue's due time and an id queue's id.
pub const SEPARATOR: char = '|';

/// How a queue kind names and orders its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// `queue-<seq>`, by name.
    Plain,
    /// `queue-<1|0><%08X>`, by name.
    Priority,
    /// `queue-|<epoch>|<seq>`, by due time then name; not taken before it is due.
    Delay,
    /// `queue-|<id>|<seq>`, by sequence.
    Id,
    /// `qn-<seq>`, by name.
    Simple,
}

impl Order {
    /// The prefix an item node must have.
    pub(crate) fn item_prefix(self) -> &'static str {
        match self {
            Order::Simple => SIMPLE_ITEM_PREFIX,
            _ => QUEUE_ITEM_PREFIX,
        }
    }

    /// Whether `name` is an item of this kind.
    pub(crate) fn is_item(self, name: &str) -> bool {
        name.starts_with(self.item_prefix())
    }

    /// The due time of an item in ms since the epoch (0: now). Only the delay queue has one.
    pub(crate) fn due_ms(self, name: &str) -> u64 {
        match self {
            Order::Delay => delay_epoch_ms(name),
            _ => 0,
        }
    }

    /// Sorts names (items only: filter first) in the order consumers take them.
    pub(crate) fn sort(self, names: &mut [String]) {
        match self {
            Order::Plain | Order::Priority | Order::Simple => names.sort_unstable(),
            Order::Delay => names.sort_by_cached_key(|n| (delay_epoch_ms(n), n.clone())),
            Order::Id => names.sort_by(|a, b| {
                id_sort_key(a)
                    .cmp(id_sort_key(b))
                    .then_with(|| a.as_str().cmp(b.as_str()))
            }),
        }
    }
}

/// `queue-` + `1` or `0` + the priority as 8 upper-case hex digits (of its u32 bits), as
/// Curator's `DistributedPriorityQueue` names items: lower priorities sort first.
///
/// ```
/// use zkrs_recipes::queue::priority_prefix;
/// assert_eq!(priority_prefix(5), "queue-100000005");
/// assert_eq!(priority_prefix(-1), "queue-0FFFFFFFF");
/// ```
pub fn priority_prefix(priority: i32) -> String {
    let sign = if priority >= 0 { '1' } else { '0' };
    format!("{QUEUE_ITEM_PREFIX}{sign}{:08X}", priority as u32)
}

/// `queue-|<due ms, upper-case hex, at least 8 digits>|`, as Curator's `DistributedDelayQueue`
/// names items.
///
/// ```
/// use zkrs_recipes::queue::delay_prefix;
/// assert_eq!(delay_prefix(0x18BCFE56800), "queue-|18BCFE56800|");
/// assert_eq!(delay_prefix(255), "queue-|000000FF|");
/// ```
pub fn delay_prefix(due_epoch_ms: u64) -> String {
    format!("{QUEUE_ITEM_PREFIX}{SEPARATOR}{due_epoch_ms:08X}{SEPARATOR}")
}

/// `queue-|<id>|` with `/` and `|` in the id made `_`, as Curator's `DistributedIdQueue`
/// names items.
///
/// ```
/// use zkrs_recipes::queue::id_prefix;
/// assert_eq!(id_prefix("job/7|a"), "queue-|job_7_a|");
/// ```
pub fn id_prefix(id: &str) -> String {
    format!("{QUEUE_ITEM_PREFIX}{SEPARATOR}{}{SEPARATOR}", clean_id(id))
}

/// The id as stored in a node name: `/` and `|` replaced by `_`.
pub(crate) fn clean_id(id: &str) -> String {
    id.replace(['/', SEPARATOR], "_")
}

/// The id of an id-queue node (between the first two `|`), if it has one.
///
/// ```
/// use zkrs_recipes::queue::item_id;
/// assert_eq!(item_id("queue-|job-7|0000000003"), Some("job-7"));
/// assert_eq!(item_id("queue-0000000003"), None);
/// ```
pub fn item_id(name: &str) -> Option<&str> {
    let first = name.find(SEPARATOR)?;
    let rest = &name[first + 1..];
    let second = rest.find(SEPARATOR)?;
    Some(&rest[..second])
}

/// An id-queue name without its `|id|` part (Curator's sort key): `queue-<seq>`.
fn id_sort_key(name: &str) -> &str {
    // Everything after the second separator is the sequence; the prefix before the first is
    // the same `queue-` for every item, so the sequence alone orders them.
    match name.find(SEPARATOR) {
        Some(first) => match name[first + 1..].find(SEPARATOR) {
            Some(second) => &name[first + 1 + second + 1..],
            None => name,
        },
        None => name,
    }
}

/// The due time of a delay-queue node: the hex between the last two `|` (0 if there is none
/// or it does not parse: due now, as in Curator).
///
/// ```
/// use zkrs_recipes::queue::delay_epoch_ms;
/// assert_eq!(delay_epoch_ms("queue-|18BCFE56800|0000000000"), 0x18BCFE56800);
/// assert_eq!(delay_epoch_ms("queue-0000000000"), 0);
/// ```
pub fn delay_epoch_ms(name: &str) -> u64 {
    let Some(last) = name.rfind(SEPARATOR) else {
        return 0;
    };
    let Some(first) = name[..last].rfind(SEPARATOR) else {
        return 0;
    };
    if first == 0 || last <= first + 1 {
        return 0;
    }
    let hex = &name[first + 1..last];
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return 0;
    }
    u64::from_str_radix(hex, 16)
        .ok()
        .filter(|&v| v <= i64::MAX as u64)
        .unwrap_or(0)
}

/// What an item is put back under after a failed handler: its own name without the
/// sequence (so an id item keeps its id, as in Curator, and a priority or delay item keeps
/// its priority or due time, where Curator makes it a plain `queue-` item that sorts among
/// the wrong priorities).
pub(crate) fn requeue_prefix(name: &str) -> &str {
    match crate::sequence::sequence_number(name) {
        Some(_) => &name[..name.len() - 10],
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curator_names() {
        // From the facts sheet (Curator 5.4 live).
        assert_eq!(
            format!("{}0000000000", priority_prefix(5)),
            "queue-1000000050000000000"
        );
        assert_eq!(
            format!("{}0000000001", priority_prefix(-1)),
            "queue-0FFFFFFFF0000000001"
        );
        assert_eq!(delay_prefix(0x018B_CFE5_6800), "queue-|18BCFE56800|");
        assert_eq!(id_prefix("a/b|c"), "queue-|a_b_c|");
    }

    #[test]
    fn orders() {
        let mut names: Vec<String> = [-5, 7, 0, -1, i32::MIN, i32::MAX, 3]
            .iter()
            .enumerate()
            .map(|(seq, p)| format!("{}{seq:010}", priority_prefix(*p)))
            .collect();
        Order::Priority.sort(&mut names);
        let priorities: Vec<i64> = names
            .iter()
            .map(|n| {
                let bits = u32::from_str_radix(&n[7..15], 16).unwrap();
                bits as i32 as i64
            })
            .collect();
        assert_eq!(
            priorities,
            [i32::MIN as i64, -5, -1, 0, 3, 7, i32::MAX as i64]
        );

        let mut names = vec![
            format!("{}0000000000", delay_prefix(3000)),
            format!("{}0000000001", delay_prefix(1000)),
            "queue-0000000002".to_string(),
            format!("{}0000000003", delay_prefix(0x1_0000_0000)),
            format!("{}0000000004", delay_prefix(1000)),
        ];
        Order::Delay.sort(&mut names);
        assert_eq!(
            names,
            [
                "queue-0000000002",
                "queue-|000003E8|0000000001",
                "queue-|000003E8|0000000004",
                "queue-|00000BB8|0000000000",
                "queue-|100000000|0000000003",
            ]
        );

        let mut names = vec![
            "queue-|zz|0000000002".to_string(),
            "queue-|a|0000000003".to_string(),
            "queue-|m|0000000001".to_string(),
        ];
        Order::Id.sort(&mut names);
        assert_eq!(
            names,
            [
                "queue-|m|0000000001",
                "queue-|zz|0000000002",
                "queue-|a|0000000003"
            ]
        );
        assert!(Order::Simple.is_item("qn-0000000001"));
        assert!(!Order::Simple.is_item("queue-0000000001"));
        assert!(!Order::Plain.is_item("qn-0000000001"));
    }

    #[test]
    fn parsing_odd_names() {
        assert_eq!(delay_epoch_ms("queue-|zz|0000000000"), 0);
        assert_eq!(delay_epoch_ms("queue-||0000000000"), 0);
        assert_eq!(delay_epoch_ms("|10|0000000000"), 0); // Curator needs index1 > 0
        assert_eq!(delay_epoch_ms("queue-|FFFFFFFFFFFFFFFFFF|0000000000"), 0);
        assert_eq!(item_id("queue-|only"), None);
        assert_eq!(item_id("queue-||0000000001"), Some(""));
        assert_eq!(requeue_prefix("queue-|id|0000000012"), "queue-|id|");
        assert_eq!(
            requeue_prefix("queue-1000000050000000012"),
            "queue-100000005"
        );
        assert_eq!(requeue_prefix("odd"), "odd");
    }
}
