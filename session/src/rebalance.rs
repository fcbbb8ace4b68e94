//! ZOOKEEPER-1355's probabilistic rebalancing, pure: when the client's host list changes,
//! whether this client moves to another host, and the order in which it tries the new list.
//!
//! The rule (the Java client's `StaticHostProvider.updateServerList`): with `old` hosts
//! before and `new = kept + added` after,
//! - more hosts than before: a client whose host stays moves with probability
//!   `1 - old/new`, to one of the added hosts; a client whose host left moves to an added
//!   host too. The expected load is then even: each host ends with `1/new` of the clients.
//! - as many or fewer: a client whose host stays stays. A client whose host left moves to
//!   a kept host with probability `p_old = kept * (old - new) / (new * (old - kept))`,
//!   else to an added one, which again evens the expected load.
//!
//! A client that moves tries the added hosts (probability `p_new`) or the kept ones
//! (`p_old`) in shuffled order, drawing again before each attempt, until every host was
//! tried once; then it goes round the whole list as usual. Here that order is drawn up
//! front (the same distribution as drawing at each attempt), so the host picker stays a
//! plain round-robin over one order.

use crate::hosts::Rng;

/// What a change of the host list means for this client.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rebalance {
    /// Every host of the new list (indices into it), in the order to try them.
    pub order: Vec<usize>,
    /// Where in `order` to start: the current host's place when staying, 0 when moving.
    pub start: usize,
    /// Whether to leave the current host (or connection attempt) now.
    pub move_now: bool,
}

/// Decides for one client. `old_count`: hosts before; `kept[i]`: whether host `i` of the
/// new list was in the old one; `current`: the new index of the host the client is on (or
/// would try next), `None` if that host left. `kept` must not be empty.
pub fn rebalance(
    old_count: usize,
    kept: &[bool],
    current: Option<usize>,
    rng: &mut Rng,
) -> Rebalance {
    let total = kept.len();
    let mut old: Vec<usize> = (0..total).filter(|&i| kept[i]).collect();
    let mut added: Vec<usize> = (0..total).filter(|&i| !kept[i]).collect();
    shuffle(&mut old, rng);
    shuffle(&mut added, rng);
    let p_new = match current {
        Some(_) if total > old_count => {
            let leave = 1.0 - old_count as f64 / total as f64;
            if unit(rng) <= leave {
                Some(1.0)
            } else {
                None
            }
        }
        None if total > old_count => Some(1.0),
        Some(_) => None,
        None => {
            let numerator = (old.len() * (old_count - total)) as f64;
            let denominator = (total * old_count.saturating_sub(old.len())) as f64;
            // `old_count > old.len()` whenever the current host left; guard anyway.
            let p_old = if denominator > 0.0 {
                numerator / denominator
            } else {
                0.0
            };
            Some(1.0 - p_old)
        }
    };
    match (p_new, current) {
        (None, Some(current)) => {
            let mut order: Vec<usize> = (0..total).collect();
            shuffle(&mut order, rng);
            let start = order.iter().position(|&h| h == current).unwrap_or(0);
            Rebalance {
                order,
                start,
                move_now: false,
            }
        }
        (p_new, _) => {
            let p_new = p_new.unwrap_or(1.0);
            let (mut o, mut a) = (old.into_iter().peekable(), added.into_iter().peekable());
            let mut order = Vec::with_capacity(total);
            while o.peek().is_some() || a.peek().is_some() {
                let take_new = unit(rng) <= p_new;
                let next = if a.peek().is_some() && (take_new || o.peek().is_none()) {
                    a.next()
                } else {
                    o.next()
                };
                order.extend(next);
            }
            Rebalance {
                order,
                start: 0,
                move_now: true,
            }
        }
    }
}

/// A uniform value in [0, 1).
fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn shuffle(v: &mut [usize], rng: &mut Rng) {
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where `clients` clients end up (the first host each tries), when `before` hosts
    /// become the list `kept` (true: was there) and the clients were spread evenly over
    /// the `before` hosts; `map[h]` is host h's index in the new list, if kept.
    fn loads(clients: usize, before: usize, kept: &[bool], map: &[Option<usize>]) -> Vec<usize> {
        let mut rng = Rng::new(42);
        let mut load = vec![0; kept.len()];
        let mut moved = 0;
        for c in 0..clients {
            let current = map[c % before];
            let r = rebalance(before, kept, current, &mut rng);
            let mut sorted = r.order.clone();
            sorted.sort();
            assert_eq!(
                sorted,
                (0..kept.len()).collect::<Vec<_>>(),
                "every host once"
            );
            if r.move_now {
                moved += 1;
                load[r.order[0]] += 1;
            } else {
                assert_eq!(Some(r.order[r.start]), current);
                load[current.unwrap()] += 1;
            }
        }
        assert!(moved <= clients);
        load
    }

    /// Each load within `tolerance` (a fraction) of an even share.
    fn assert_even(load: &[usize], clients: usize, tolerance: f64) {
        let even = clients as f64 / load.len() as f64;
        for (host, &n) in load.iter().enumerate() {
            let off = (n as f64 - even).abs() / even;
            assert!(
                off <= tolerance,
                "host {host}: {n} clients, even is {even}: {load:?}"
            );
        }
    }

    #[test]
    fn growing_from_three_to_five_moves_two_fifths_to_the_new_hosts() {
        // Hosts 0..3 stay at 0..3; 3 and 4 are new.
        let kept = [true, true, true, false, false];
        let map = [Some(0), Some(1), Some(2)];
        let load = loads(30_000, 3, &kept, &map);
        assert_even(&load, 30_000, 0.05);
    }

    #[test]
    fn shrinking_from_five_to_three_moves_only_the_clients_of_removed_hosts() {
        let kept = [true, true, true];
        let map = [Some(0), Some(1), Some(2), None, None];
        let mut rng = Rng::new(1);
        // A client of a kept host stays.
        let r = rebalance(5, &kept, Some(1), &mut rng);
        assert!(!r.move_now);
        assert_eq!(r.order[r.start], 1);
        let load = loads(30_000, 5, &kept, &map);
        assert_even(&load, 30_000, 0.05);
    }

    #[test]
    fn replacing_a_host_moves_its_clients_to_the_new_one() {
        // a, b, c -> b, c, d: b and c are 0 and 1, d is new (2); a's clients all go to d.
        let kept = [true, true, false];
        let map = [None, Some(0), Some(1)];
        let mut rng = Rng::new(3);
        for _ in 0..100 {
            let r = rebalance(3, &kept, None, &mut rng);
            assert!(r.move_now);
            assert_eq!(r.order[0], 2, "{r:?}");
        }
        let load = loads(30_000, 3, &kept, &map);
        assert_even(&load, 30_000, 0.0);
    }

    #[test]
    fn the_same_list_changes_nothing() {
        let mut rng = Rng::new(9);
        for current in 0..3 {
            let r = rebalance(3, &[true; 3], Some(current), &mut rng);
            assert!(!r.move_now);
            assert_eq!(r.order[r.start], current);
        }
    }

    #[test]
    fn a_client_whose_host_left_and_nothing_new_goes_to_a_kept_host() {
        let mut rng = Rng::new(5);
        let r = rebalance(2, &[true], None, &mut rng);
        assert_eq!((r.order, r.move_now), (vec![0], true));
        // Degenerate: a wholly new list.
        let r = rebalance(2, &[false, false], None, &mut rng);
        assert!(r.move_now);
        assert_eq!(r.order.len(), 2);
    }
}
