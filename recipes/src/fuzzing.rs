//! The body of the `sequence` fuzz target (feature `fuzzing`): Curator's ordering rules
//! (`crate::sequence`) on arbitrary child names, checked against plain reference versions.
//! Hidden from the docs: for `fuzz/` and the seed replay test only.

use crate::sequence::{
    first_blocker_before, key_fn, rank, read_write_sort_key, sequence_number, sort_key, sorted,
    LOCK_NAME, READ_LOCK_NAME, WRITE_LOCK_NAME,
};

/// Input: a lock name, then child names, separated by `\n` (bytes read as UTF-8, lossily);
/// the first byte also picks which child is "ours". Panics on any disagreement.
pub fn sequence(data: &[u8]) {
    let pick = data.first().copied().unwrap_or(0) as usize;
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\n');
    let lock_name = parts.next().unwrap_or("");
    let children: Vec<&str> = parts.collect();

    for &name in &children {
        for lock in [lock_name, LOCK_NAME, READ_LOCK_NAME, WRITE_LOCK_NAME] {
            // The fast path must agree with the definition: the text after the last
            // occurrence of the lock name.
            let reference = match name.rfind(lock) {
                Some(i) => &name[i + lock.len()..],
                None => name,
            };
            assert_eq!(
                sort_key(name, lock),
                reference,
                "sort_key({name:?}, {lock:?})"
            );
        }
        let _ = read_write_sort_key(name);
        let expected = name
            .len()
            .checked_sub(10)
            .and_then(|start| name.get(start..))
            .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))
            .map(|d| d.parse::<u32>().ok());
        match expected {
            Some(number) => assert_eq!(sequence_number(name), number, "{name:?}"),
            None => assert_eq!(sequence_number(name), None, "{name:?}"),
        }
    }

    let key = key_fn(|n| sort_key(n, lock_name));
    let listed = sorted(children.iter().copied(), key);
    assert_eq!(listed.len(), children.len());
    assert!(
        listed.windows(2).all(|w| key(w[0]) <= key(w[1])),
        "{listed:?}"
    );

    let Some(&ours) = children.get(pick % children.len().max(1)) else {
        assert!(rank(children.iter().copied(), "x", key).is_none());
        return;
    };
    let our_key = key(ours);
    let others: Vec<&str> = children.iter().copied().filter(|&c| c != ours).collect();
    let r = rank(children.iter().copied(), ours, key).expect("ours is among the children");
    assert_eq!(r.count, children.len());
    assert_eq!(
        r.index,
        others.iter().filter(|&&c| key(c) < our_key).count()
    );
    let max_before = others
        .iter()
        .map(|&c| key(c))
        .filter(|&k| k < our_key)
        .max();
    assert_eq!(
        r.predecessor.map(key),
        max_before,
        "predecessor of {ours:?}"
    );
    let mut before: Vec<&str> = others
        .iter()
        .map(|&c| key(c))
        .filter(|&k| k < our_key)
        .collect();
    before.sort_unstable();
    assert_eq!(
        r.before_predecessor.map(key),
        before.len().checked_sub(2).map(|i| before[i]),
        "the one before the predecessor of {ours:?}"
    );
    let min = children.iter().map(|&c| key(c)).min();
    assert_eq!(Some(key(r.first)), min, "first");

    let writes = |n: &str| n.contains(WRITE_LOCK_NAME);
    let blocker = first_blocker_before(children.iter().copied(), ours, key, writes)
        .expect("ours is among the children");
    let min_blocking = others
        .iter()
        .filter(|&&c| writes(c))
        .map(|&c| key(c))
        .filter(|&k| k < our_key)
        .min();
    assert_eq!(blocker.map(key), min_blocking, "blocker of {ours:?}");
}
