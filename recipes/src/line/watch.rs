//! The watches of a candidate in line: on the node before its own (the predecessor, and
//! deeper in line the look-ahead), and, leading, on its own node, so that a deletion under
//! it is noticed.

use zkrs_client::{Client, ErrorCode, OneshotWatch, Result, Stat};

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
