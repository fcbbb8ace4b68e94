//! The offers: `<root>/n_<seq>` nodes holding a host name, as ZooKeeper's
//! `LeaderElectionSupport` makes them; their election order, reading them, and finding ours
//! after a create whose outcome is unknown.

use zkrs_client::{Client, ErrorCode, Result};

use crate::framework::{self, delete_until_gone, join, join_all, Backoff};
use crate::line::place::sorted_offers;

/// The name of offer nodes before their sequence number (the Java recipe's `n_`).
pub const OFFER_PREFIX: &str = "n_";

/// One participant's offer, as its node says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderOffer {
    /// The sequence number of the node (the order of the election).
    pub sequence: u32,
    /// The node's path.
    pub path: String,
    /// The participant's id stored in the node (its data, read as UTF-8; the Java recipe's
    /// host name).
    pub id: String,
    /// The node's data as stored.
    pub data: zkrs_client::Bytes,
}

/// Up to `limit` offers in election order, with their ids.
pub(super) async fn offers(client: &Client, root: &str, limit: usize) -> Result<Vec<LeaderOffer>> {
    let children = match client.get_children(root).await {
        Ok(c) => c,
        Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let sorted = sorted_offers(children.iter(), OFFER_PREFIX);
    let mut out = Vec::new();
    // Read in batches of `limit` (one round trip each), skipping offers that vanished.
    for batch in sorted.chunks(limit.clamp(1, 256)) {
        let paths: Vec<String> = batch.iter().map(|(n, _)| join(root, n)).collect();
        let reads = paths.iter().map(|p| client.get_data(p));
        let results = join_all(reads).await;
        for ((path, (_, sequence)), read) in paths.iter().zip(batch).zip(results) {
            match read {
                Ok((data, _)) => out.push(LeaderOffer {
                    sequence: *sequence,
                    path: path.clone(),
                    id: String::from_utf8_lossy(&data).into_owned(),
                    data,
                }),
                Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
                Err(e) => return Err(e),
            }
            if out.len() >= limit {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// After a create whose outcome is unknown, asked while `session` was the client's: our offers
/// are the nodes holding our host name owned by that session or by the current one (a create
/// asked for while the client was between sessions goes out on the next one: the simulation
/// found such an offer left first in line, for its session's life, behind which nobody led).
/// One, owned by the current session: adopted. Otherwise they are deleted (their paths are
/// unique) and `None` returned. An adopted offer comes with its owner and creation zxid.
pub(super) async fn resolve_in_doubt(
    client: &Client,
    root: &str,
    host_name: &str,
    session: i64,
) -> Result<Option<(String, i64, i64)>> {
    let Some(children) = framework::list_in_doubt(client, root).await? else {
        return Ok(None);
    };
    let paths: Vec<String> = sorted_offers(children.iter(), OFFER_PREFIX)
        .iter()
        .map(|(n, _)| join(root, n))
        .collect();
    let reads = paths.iter().map(|p| client.get_data(p));
    let current = client.session_id();
    let mut ours = Vec::new();
    for (path, read) in paths.iter().zip(join_all(reads).await) {
        match read {
            Ok((data, stat)) => {
                let owner = stat.ephemeral_owner;
                if owner != 0
                    && (owner == session || owner == current)
                    && data == host_name.as_bytes()
                {
                    ours.push((path.clone(), owner, stat.czxid));
                }
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
            Err(e) => return Err(e),
        }
    }
    if let [(_, owner, _)] = ours[..] {
        if owner == current {
            return Ok(ours.pop());
        }
    }
    for (path, _, _) in ours {
        delete_until_gone(client, &path).await?;
    }
    Ok(None)
}

/// [`resolve_in_doubt`] in the background, deleting whatever it finds (for stop and drop).
pub(super) fn cleanup_in_doubt(client: &Client, root: &str, host_name: &str, session: i64) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let client = client.clone();
        let root = root.to_string();
        let host_name = host_name.to_string();
        runtime.spawn(async move {
            let mut backoff = Backoff::new();
            loop {
                match resolve_in_doubt(&client, &root, &host_name, session).await {
                    Ok(Some((path, _, _))) => {
                        let _ = delete_until_gone(&client, &path).await;
                        return;
                    }
                    Ok(None) => return,
                    Err(e) if e.is_retryable() || e.is_session_expired() => {
                        if backoff.pause(&client).await.is_err() {
                            return;
                        }
                    }
                    // Closed, or an error no retry fixes.
                    Err(_) => return,
                }
            }
        });
    }
}
