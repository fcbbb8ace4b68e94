//! The acquire loop shared by every lock: a [`Runner`] of the line (`crate::line`, whose
//! module documentation compares it with Curator's `LockInternals` and says why its
//! hand-off holds) and the lock's reactions to it: hold the node that is first, give up at
//! the deadline, return the errors no retry fixes.

use tokio::time::Instant;

use zkrs_client::{Client, ErrorCode, Result};

use crate::framework::{guaranteed_delete, join, FencingToken};
use crate::line::place::Order;
pub(crate) use crate::line::place::Rule;
use crate::line::run::{LineSpec, Runner};
use crate::line::Became;
use crate::sequence::{key_fn, read_write_sort_key, sort_key};

/// Where a lock's nodes live and how they sort.
#[derive(Debug, Clone)]
pub(crate) struct LockSpec {
    /// The lock's directory.
    pub dir: String,
    /// The name after the protected prefix: `lock-`, `__READ__`, `__WRIT__`, `latch-`.
    pub lock_name: &'static str,
    /// Sort with the read/write lock's combined key.
    pub read_write: bool,
}

impl LockSpec {
    /// How its nodes sort.
    pub(crate) fn order(&self) -> Order {
        if self.read_write {
            Order::ReadWrite
        } else {
            Order::Lock(self.lock_name)
        }
    }

    pub(crate) fn key<'a>(&self, name: &'a str) -> &'a str {
        if self.read_write {
            read_write_sort_key(name)
        } else {
            sort_key(name, self.lock_name)
        }
    }
}

/// A node that holds the lock.
#[derive(Debug)]
pub(crate) struct Acquired {
    /// Its path.
    pub path: String,
    /// The session that owns it.
    pub session_id: i64,
    /// Its creation zxid, as a fencing token.
    pub token: FencingToken,
}

/// Takes the lock, waiting until `deadline` (forever if `None`). `Ok(None)`: timed out, and
/// our node is deleted.
pub(crate) async fn acquire(
    client: &Client,
    spec: &LockSpec,
    rule: Rule,
    data: &[u8],
    deadline: Option<Instant>,
) -> Result<Option<Acquired>> {
    acquire_with_sequence(client, spec, rule, data, deadline, None).await
}

/// [`acquire`], with the node's sequence chosen by the caller when `sequence` is given: the
/// node `_c_<uuid>-<lock name><sequence>` is then created ephemeral, not sequential, so that
/// it sorts where the caller wants (the read lock taken while holding the write lock sorts
/// with the write node: CURATOR-621).
pub(crate) async fn acquire_with_sequence(
    client: &Client,
    spec: &LockSpec,
    rule: Rule,
    data: &[u8],
    deadline: Option<Instant>,
    sequence: Option<&str>,
) -> Result<Option<Acquired>> {
    // Checked here so the error names the lock's path, not an internal node's.
    zkrs_client::validate_path(&spec.dir)?;
    let line = LineSpec {
        dir: &spec.dir,
        lock_name: spec.lock_name,
        sequence,
        order: spec.order(),
        rule,
    };
    let mut run = Runner::new(client, line, data, deadline);
    loop {
        match run.step().await {
            Became::First => {
                let (owner, czxid) = run.node().expect("first with a node");
                let path = run.take_path().expect("first with a node");
                zkrs_client::__log!(debug, path = %path, dir = %spec.dir, "lock acquired");
                return Ok(Some(Acquired {
                    path,
                    session_id: owner,
                    token: FencingToken::from_zxid(czxid),
                }));
            }
            // Our node, but from a session that is gone: not a lock we hold.
            Became::Stale { old } => guaranteed_delete(client, old),
            Became::InDoubt | Became::Retry => match run.backoff().pause(client).await {
                Ok(()) => {}
                // The runner, dropped, deletes our node or looks for the one in doubt.
                Err(_) if run.backoff().is_deadline() => return Ok(None),
                Err(e) => return Err(e),
            },
            Became::Behind => {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(None); // The runner deletes our node.
                }
            }
            Became::TimedOut => return Ok(None),
            Became::Failed(e) => return Err(e),
            Became::Joined | Became::Gone => {}
        }
    }
}

/// The contenders' paths in lock order.
pub(crate) async fn participants(client: &Client, spec: &LockSpec) -> Result<Vec<String>> {
    let children = match client.get_children(&spec.dir).await {
        Ok(c) => c,
        Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(
        crate::sequence::sorted(children.iter(), key_fn(|n| spec.key(n)))
            .into_iter()
            .map(|n| join(&spec.dir, n))
            .collect(),
    )
}
