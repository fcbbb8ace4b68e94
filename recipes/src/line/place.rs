//! Where a node stands in its line, from one listing: the placement rule of every queue on
//! ephemeral-sequential nodes (the locks, the latch, the election), without I/O.
//!
//! Three things are decided here and nowhere else: who must go before us (the standing),
//! whether that one's departure alone makes us first (`sole`, the hand-off rule of
//! `line`'s module documentation), and which node before it is worth watching too (the
//! look-ahead).

use crate::sequence::{
    blockers_before, key_fn, rank, read_write_sort_key, sequence_number, sort_key, WRITE_LOCK_NAME,
};

/// Where a candidate's node stands among the candidates, in line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Not among them: deleted, or gone with its session. The candidate needs a new node.
    Gone,
    /// First in line (for a read lock: no writer ahead): its turn, if the node is not
    /// stale (of a session that is no longer the client's).
    First,
    /// Behind the candidate whose node has this name: the one to watch.
    Behind(String),
}

/// How a line's nodes sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// Curator's key for one lock name (`lock-`, `latch-`): every child takes part.
    Lock(&'static str),
    /// Curator's read/write lock key: readers and writers in one order. A write node may
    /// still get a read node with its key (a downgrade, CURATOR-621), so no hand-off happens
    /// behind one.
    ReadWrite,
    /// ZooKeeper's election offers: only `<prefix><10 digits>` children, by number.
    Offers(&'static str),
}

/// Which contenders must go before us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Exclusive: we hold it when we sort first (mutex, write lock, latch, election).
    Exclusive,
    /// Shared: we hold it when no writer sorts before us (read lock). `holds_write`: the
    /// caller holds the write lock, so it may read at once (Curator's downgrade rule).
    Read { holds_write: bool },
}

/// Where our node stands under a rule, and what a departure ahead of us would tell us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// [`Standing::Gone`] (session lost, directory deleted), [`Standing::First`] (our turn,
    /// if the node is this session's), or behind the contender to wait for.
    pub(crate) standing: Standing,
    /// That contender is the only one in the listing that must go before us, and no node
    /// created later can take its place: its deletion makes us first.
    pub(crate) sole: bool,
    /// The name of the contender before that one, when it is worth watching too: once it is
    /// gone, a new listing (taken while the one before us still waits or holds) can show
    /// that one as the only one left, so that its deletion alone makes us first.
    pub(crate) lookahead: Option<String>,
}

impl Place {
    fn new(standing: Standing, sole: bool, lookahead: Option<&str>) -> Place {
        Place {
            standing,
            sole,
            lookahead: lookahead.map(str::to_string),
        }
    }

    fn behind(predecessor: &str, sole: bool, lookahead: Option<&str>) -> Place {
        Place::new(Standing::Behind(predecessor.to_string()), sole, lookahead)
    }
}

/// Where `ours` (a node name) stands among `children` (a listing's names) in `order`, under
/// `rule`. Offers are exclusive whatever the rule.
pub(crate) fn place<'a>(
    order: Order,
    rule: Rule,
    children: impl IntoIterator<Item = &'a str>,
    ours: &str,
) -> Place {
    let (lock_name, read_write) = match order {
        Order::Offers(prefix) => return place_offer(children, prefix, ours),
        Order::Lock(lock_name) => (lock_name, false),
        Order::ReadWrite => ("", true),
    };
    let key = key_fn(|n| {
        if read_write {
            read_write_sort_key(n)
        } else {
            sort_key(n, lock_name)
        }
    });
    let writer = |n: &str| n.contains(WRITE_LOCK_NAME);
    match rule {
        Rule::Exclusive => match rank(children, ours, key) {
            None => Place::new(Standing::Gone, false, None),
            Some(r) => match r.predecessor {
                None => Place::new(Standing::First, false, None),
                // A write node may still get a read node with its key (a downgrade), so
                // after its deletion we look again.
                Some(p) if read_write && writer(p) => Place::behind(p, false, None),
                Some(p) => Place::behind(p, r.index == 1, r.before_predecessor),
            },
        },
        Rule::Read { holds_write } => match blockers_before(children, ours, key, writer) {
            None => Place::new(Standing::Gone, false, None),
            Some(_) if holds_write => Place::new(Standing::First, false, None),
            Some((None, _)) => Place::new(Standing::First, false, None),
            Some((Some(w), writers)) => Place::behind(w, writers == 1, None),
        },
    }
}

/// [`place`] among offers (the offers sorted by number, foreign children left out).
fn place_offer<'a>(children: impl IntoIterator<Item = &'a str>, prefix: &str, ours: &str) -> Place {
    let sorted = sorted_offers(children, prefix);
    match sorted.iter().position(|(n, _)| *n == ours) {
        None => Place::new(Standing::Gone, false, None),
        Some(0) => Place::new(Standing::First, false, None),
        Some(index) => Place::behind(
            sorted[index - 1].0,
            index == 1,
            index.checked_sub(2).map(|i| sorted[i].0),
        ),
    }
}

/// The offers among `children` (name, sequence): `<prefix><10 digits>`, sorted by sequence.
pub(crate) fn sorted_offers<'a>(
    children: impl IntoIterator<Item = &'a str>,
    prefix: &str,
) -> Vec<(&'a str, u32)> {
    let mut offers: Vec<(&str, u32)> = children
        .into_iter()
        .filter_map(|name| {
            let digits = name.strip_prefix(prefix)?;
            if digits.len() != 10 {
                return None;
            }
            Some((name, sequence_number(name)?))
        })
        .collect();
    offers.sort_by_key(|&(_, seq)| seq);
    offers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sequence::{Rank, READ_LOCK_NAME};
    use zkrs_client::__private::splitmix64;

    /// The three codings this module replaces, kept for one step as the property test's
    /// oracle: the locks' `standing` (`lock/internals.rs`), the latch's rank block and the
    /// election's (`leader/latch.rs`, `leader/election/mod.rs`).
    mod oracle {
        use super::super::{sorted_offers, Place, Rule, Standing};
        use crate::sequence::{
            blockers_before, key_fn, rank, read_write_sort_key, sort_key, Rank, WRITE_LOCK_NAME,
        };

        pub(super) fn from_rank(rank: Option<Rank<'_>>) -> Standing {
            match rank {
                None => Standing::Gone,
                Some(rank) => match rank.predecessor {
                    None => Standing::First,
                    Some(predecessor) => Standing::Behind(predecessor.to_string()),
                },
            }
        }

        fn among<'a>(ordered: impl IntoIterator<Item = &'a str>, ours: &str) -> Standing {
            let mut predecessor: Option<&str> = None;
            for name in ordered {
                if name == ours {
                    return match predecessor {
                        None => Standing::First,
                        Some(p) => Standing::Behind(p.to_string()),
                    };
                }
                predecessor = Some(name);
            }
            Standing::Gone
        }

        pub(super) fn lock(
            lock_name: &'static str,
            read_write: bool,
            rule: Rule,
            children: &[&str],
            ours: &str,
        ) -> Place {
            let key = key_fn(|n| {
                if read_write {
                    read_write_sort_key(n)
                } else {
                    sort_key(n, lock_name)
                }
            });
            let writer = |n: &str| n.contains(WRITE_LOCK_NAME);
            let place = |standing, sole, lookahead: Option<&str>| Place {
                standing,
                sole,
                lookahead: lookahead.map(str::to_string),
            };
            match rule {
                Rule::Exclusive => match rank(children.iter().copied(), ours, key) {
                    None => place(Standing::Gone, false, None),
                    Some(r) => match r.predecessor {
                        None => place(Standing::First, false, None),
                        Some(p) if read_write && writer(p) => {
                            place(Standing::Behind(p.to_string()), false, None)
                        }
                        Some(p) => place(
                            Standing::Behind(p.to_string()),
                            r.index == 1,
                            r.before_predecessor,
                        ),
                    },
                },
                Rule::Read { holds_write } => {
                    match blockers_before(children.iter().copied(), ours, key, writer) {
                        None => place(Standing::Gone, false, None),
                        Some(_) if holds_write => place(Standing::First, false, None),
                        Some((None, _)) => place(Standing::First, false, None),
                        Some((Some(w), writers)) => {
                            place(Standing::Behind(w.to_string()), writers == 1, None)
                        }
                    }
                }
            }
        }

        pub(super) fn latch(lock_name: &str, children: &[&str], ours: &str) -> Place {
            let rank = rank(
                children.iter().copied(),
                ours,
                key_fn(|n| sort_key(n, lock_name)),
            );
            Place {
                standing: from_rank(rank),
                sole: rank.is_some_and(|r| r.index == 1),
                lookahead: rank.and_then(|r| r.before_predecessor).map(str::to_string),
            }
        }

        pub(super) fn election(prefix: &str, children: &[&str], ours: &str) -> Place {
            let sorted = sorted_offers(children.iter().copied(), prefix);
            let names = sorted.iter().map(|(name, _)| *name);
            let index = names.clone().position(|n| n == ours);
            let lookahead = index
                .and_then(|i| i.checked_sub(2))
                .map(|i| sorted[i].0.to_string());
            Place {
                standing: among(names, ours),
                sole: index == Some(1),
                lookahead,
            }
        }

        /// The election's `behind_the_same`: `Some((sole, lookahead))` while ours is right
        /// behind `predecessor`.
        pub(super) fn behind_the_same(
            prefix: &str,
            children: &[&str],
            ours: &str,
            predecessor: &str,
        ) -> Option<(bool, Option<String>)> {
            let sorted = sorted_offers(children.iter().copied(), prefix);
            let index = sorted.iter().position(|(n, _)| *n == ours)?;
            let before = sorted.get(index.checked_sub(1)?)?.0;
            (before == predecessor).then(|| {
                let lookahead = index.checked_sub(2).map(|i| sorted[i].0.to_string());
                (index == 1, lookahead)
            })
        }
    }

    /// A random listing: names of every kind a directory can hold (each order's own, the
    /// others', foreign ones, ties of key), some sequence numbers shared.
    fn listing(state: &mut u64) -> Vec<String> {
        let mut next = |n: u64| splitmix64(state) % n;
        let count = next(9) as usize;
        let mut names = Vec::new();
        for _ in 0..count {
            let seq = next(12);
            let uuid = next(4);
            let name = match next(9) {
                0 | 1 => format!("_c_{uuid}-lock-{seq:010}"),
                2 => format!("_c_{uuid}-latch-{seq:010}"),
                3 => format!("_c_{uuid}-{READ_LOCK_NAME}{seq:010}"),
                4 => format!("_c_{uuid}-{WRITE_LOCK_NAME}{seq:010}"),
                5 | 6 => format!("n_{seq:010}"),
                7 => format!("n_{seq}"),
                _ => ["foreign", "lock", "_c_x-n_0000000001", "n_abc"][next(4) as usize].into(),
            };
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    #[test]
    fn place_agrees_with_the_three_codings_it_replaces() {
        let mut state = 47;
        let rules = [
            Rule::Exclusive,
            Rule::Read { holds_write: false },
            Rule::Read { holds_write: true },
        ];
        for _ in 0..20_000 {
            let names = listing(&mut state);
            let children: Vec<&str> = names.iter().map(String::as_str).collect();
            // Ours: one of the listing, or one that is not in it.
            let missing = format!("_c_9-lock-{:010}", splitmix64(&mut state) % 12);
            let candidates = children
                .iter()
                .copied()
                .chain([missing.as_str(), "n_0000000003"]);
            for ours in candidates {
                for rule in rules {
                    for (lock_name, read_write) in [("lock-", false), ("latch-", false), ("", true)]
                    {
                        let order = match read_write {
                            true => Order::ReadWrite,
                            false => Order::Lock(lock_name),
                        };
                        assert_eq!(
                            place(order, rule, children.iter().copied(), ours),
                            oracle::lock(lock_name, read_write, rule, &children, ours),
                            "{order:?} {rule:?} {children:?} {ours}"
                        );
                    }
                }
                let latch = place(
                    Order::Lock("latch-"),
                    Rule::Exclusive,
                    children.clone(),
                    ours,
                );
                assert_eq!(
                    latch,
                    oracle::latch("latch-", &children, ours),
                    "{children:?}"
                );
                let offer = place(Order::Offers("n_"), Rule::Exclusive, children.clone(), ours);
                assert_eq!(
                    offer,
                    oracle::election("n_", &children, ours),
                    "{children:?}"
                );
                for predecessor in children.iter().copied() {
                    let same = match &offer.standing {
                        Standing::Behind(p) if p == predecessor => {
                            Some((offer.sole, offer.lookahead.clone()))
                        }
                        _ => None,
                    };
                    assert_eq!(
                        same,
                        oracle::behind_the_same("n_", &children, ours, predecessor),
                        "{children:?} {ours} behind {predecessor}"
                    );
                }
            }
        }
    }

    #[test]
    fn offers_sort_by_sequence_and_skip_foreign_children() {
        let children = [
            "n_0000000012",
            "n_0000000003",
            "lock",
            "n_abc",
            "n_0000000007",
            "_c_x-n_0000000001",
        ];
        let sorted = sorted_offers(children, "n_");
        assert_eq!(
            sorted,
            [
                ("n_0000000003", 3),
                ("n_0000000007", 7),
                ("n_0000000012", 12)
            ]
        );
    }

    #[test]
    fn a_hand_off_only_from_the_sole_one_before_us() {
        let children = [
            "_c_a-lock-0000000001",
            "_c_b-lock-0000000002",
            "_c_c-lock-0000000003",
        ];
        let order = Order::Lock("lock-");
        let place = |ours| place(order, Rule::Exclusive, children, ours);
        assert_eq!(place("_c_a-lock-0000000001").standing, Standing::First);
        let second = place("_c_b-lock-0000000002");
        assert!(second.sole && second.lookahead.is_none());
        let third = place("_c_c-lock-0000000003");
        assert!(!third.sole);
        assert_eq!(third.lookahead.as_deref(), Some("_c_a-lock-0000000001"));
        assert_eq!(place("_c_d-lock-0000000004").standing, Standing::Gone);
    }

    #[test]
    fn no_hand_off_behind_a_write_node_nor_for_a_reader_behind_two_writers() {
        let children = [
            "_c_a-__WRIT__0000000001",
            "_c_b-__WRIT__0000000002",
            "_c_c-__READ__0000000003",
        ];
        let writer = place(
            Order::ReadWrite,
            Rule::Exclusive,
            children,
            "_c_b-__WRIT__0000000002",
        );
        assert_eq!(
            writer.standing,
            Standing::Behind("_c_a-__WRIT__0000000001".into())
        );
        assert!(!writer.sole);
        let reader = place(
            Order::ReadWrite,
            Rule::Read { holds_write: false },
            children,
            "_c_c-__READ__0000000003",
        );
        assert_eq!(
            reader.standing,
            Standing::Behind("_c_a-__WRIT__0000000001".into())
        );
        assert!(!reader.sole);
    }

    #[test]
    fn the_oracle_ranks_as_rank_does() {
        let r: Option<Rank<'_>> = None;
        assert_eq!(oracle::from_rank(r), Standing::Gone);
    }
}
