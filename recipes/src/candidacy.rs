//! The candidacy skeleton, in one place: the steps every recipe takes that queues with
//! ephemeral-sequential nodes, whoever sorts first going first. The locks' acquire loop
//! (Curator's `LockInternals`, under [`InterProcessMutex`](crate::lock::InterProcessMutex) and
//! so under [`LeaderSelector`](crate::leader::LeaderSelector), as in Curator),
//! [`LeaderLatch`](crate::leader::LeaderLatch) (Curator's `LeaderLatch`) and
//! [`LeaderElection`](crate::leader::LeaderElection) (ZooKeeper's `LeaderElectionSupport`)
//! each keep such a node and take the same steps with it: rank it among the candidates'
//! nodes ([`Standing`]); first in line, go (hold the lock, lead), but only with a node of the
//! current session ([`is_stale`]: after a lost session the old node may still sort first until
//! the server expires it, and going with it would give two holders or leaders, CURATOR-604,
//! CURATOR-696); behind someone, watch the node just before ours ([`watch_predecessor`]), so
//! that a departure wakes exactly one candidate. A leader (of a latch, an election, a
//! selector's term) also watches its own node ([`watch_own`]), so that a deletion under it
//! is noticed.
//!
//! What stays with each recipe is what tells them apart: node names and order (Curator's
//! `_c_<uuid>-lock-<seq>` and `_c_<uuid>-latch-<seq>`, the Java recipe's `n_<seq>`), who goes
//! before whom (a reader waits only for writers), how a create whose outcome is unknown is
//! settled, what it does while it leads or waits, its events and its connection-state policy.

use zkrs_client::{Client, ErrorCode, OneshotWatch, Result, Stat};

use crate::sequence::Rank;

/// Where a candidate's node stands among the candidates, in election order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Not among them: deleted, or gone with its session. The candidate needs a new node.
    Gone,
    /// First in line (for a read lock: no writer ahead): its turn, if the node is not
    /// [stale](is_stale).
    First,
    /// Behind the candidate whose node has this name: the one to watch.
    Behind(String),
}

impl Standing {
    /// From [`rank`](crate::sequence::rank)'s answer for our node.
    pub(crate) fn from_rank(rank: Option<Rank<'_>>) -> Standing {
        match rank {
            None => Standing::Gone,
            Some(rank) => match rank.predecessor {
                None => Standing::First,
                Some(predecessor) => Standing::Behind(predecessor.to_string()),
            },
        }
    }

    /// Where `ours` (a node name) stands among `ordered` (node names in election order).
    pub(crate) fn among<'a>(ordered: impl IntoIterator<Item = &'a str>, ours: &str) -> Standing {
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
}

/// Whether a node owned by the session `owner` is not ours to lead with: that session is no
/// longer the client's (it may sort first until the server expires it).
pub(crate) fn is_stale(owner: i64, client: &Client) -> bool {
    owner != client.session_id()
}

/// How a candidate watches the node before its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PredecessorWatch {
    /// `getData` with a watch, as Curator's `LeaderLatch`: no watch is left behind if the
    /// node is gone already.
    GetData,
    /// `exists` with a watch, as ZooKeeper's `LeaderElectionSupport` (a process of each kind
    /// sees the same requests).
    Exists,
}

/// Watches the node at `path`, the candidate just before ours. `Ok(None)`: it is gone already
/// (rank again).
pub(crate) async fn watch_predecessor(
    client: &Client,
    path: &str,
    how: PredecessorWatch,
) -> Result<Option<OneshotWatch>> {
    match how {
        PredecessorWatch::GetData => match client.get_data_and_watch(path).await {
            Ok((_, _, watch)) => Ok(Some(watch)),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(None),
            Err(e) => Err(e),
        },
        PredecessorWatch::Exists => match client.exists_and_watch(path).await {
            Ok((Some(_), watch)) => Ok(Some(watch)),
            Ok((None, _)) => Ok(None),
            Err(e) => Err(e),
        },
    }
}

/// The watches of a waiter in line, set together (pipelined): on its predecessor (`kept`'s
/// watch instead when it is on the same node: one set before a listing the look-ahead asked
/// for, so a deletion in between is still heard) and, deeper in line, on the look-ahead, the
/// node before the predecessor's (`None` without one). Both with `getData`: no watch is left
/// behind on a node gone already. `Ok(None)`: that node is gone.
pub(crate) async fn watch_line(
    client: &Client,
    predecessor: &str,
    lookahead: Option<&str>,
    kept: Option<(String, OneshotWatch)>,
) -> (
    Result<Option<OneshotWatch>>,
    Option<Result<Option<OneshotWatch>>>,
) {
    let kept = kept
        .filter(|(path, _)| path == predecessor)
        .map(|(_, watch)| watch);
    let how = PredecessorWatch::GetData;
    tokio::join!(
        async {
            match kept {
                Some(watch) => Ok(Some(watch)),
                None => watch_predecessor(client, predecessor, how).await,
            }
        },
        async {
            match lookahead {
                Some(path) => Some(watch_predecessor(client, path, how).await),
                None => None,
            }
        }
    )
}

/// Watches our own node while leading, so that its deletion is noticed; with its Stat (who
/// owns it). `Ok(None)`: it is gone already.
pub(crate) async fn watch_own(client: &Client, path: &str) -> Result<Option<(Stat, OneshotWatch)>> {
    match client.exists_and_watch(path).await {
        Ok((Some(stat), watch)) => Ok(Some((stat, watch))),
        Ok((None, _)) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standing_among_names_in_election_order() {
        let ordered = ["n_0000000001", "n_0000000004", "n_0000000009"];
        assert_eq!(Standing::among(ordered, "n_0000000001"), Standing::First);
        assert_eq!(
            Standing::among(ordered, "n_0000000009"),
            Standing::Behind("n_0000000004".into())
        );
        assert_eq!(Standing::among(ordered, "n_0000000005"), Standing::Gone);
        assert_eq!(Standing::among([], "n_0000000001"), Standing::Gone);
    }

    #[test]
    fn standing_from_a_rank_agrees_with_the_order() {
        use crate::sequence::{key_fn, rank, sort_key, sorted};
        let key = key_fn(|n| sort_key(n, "latch-"));
        let children = [
            "_c_a-latch-0000000007",
            "_c_b-latch-0000000002",
            "_c_c-latch-0000000005",
        ];
        for ours in children.iter().chain(&["_c_d-latch-0000000003"]) {
            assert_eq!(
                Standing::from_rank(rank(children, ours, key)),
                Standing::among(sorted(children, key), ours),
                "{ours}"
            );
        }
    }
}
