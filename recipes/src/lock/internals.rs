//! The acquire loop shared by every lock: create a protected ephemeral-sequential node, find
//! our place among the contenders, wait on the one that must go first, repeat.
//!
//! Compared with Curator's `LockInternals`:
//! - The create and the first listing go out pipelined on the same session: ZooKeeper applies
//!   a session's requests in order, so the listing already contains our node. An uncontended
//!   acquire is one round trip, acquire + release two (Curator: three).
//! - The create returns the node's Stat (create2), and a node that sorts first is only taken
//!   as held if it belongs to the current session: after a lost session, an old node may sort
//!   first until the server expires it (CURATOR-604); holding the lock with it would give two
//!   holders. Such a node is deleted and a new one created.
//! - Every way out (error, timeout, a dropped future) deletes our node, or, when the create's
//!   outcome is unknown, whatever node carries our protected prefix.
//! - A hand-off costs one notification, not a notification and a listing: when the contender
//!   we wait for was, in our last listing, the only one that had to go before us, its
//!   deletion makes us first without asking again (Curator lists the children again).
//! - Deeper in line, we also watch the contender before our predecessor (the look-ahead).
//!   When it leaves, we list again while our predecessor still waits or holds; that listing
//!   usually shows the predecessor as the only one left, so its deletion then hands us the
//!   lock in one notification too. The listing a deep line needs is taken one turn early,
//!   off the hand-off's path, instead of after the predecessor's deletion: a line of 1,000
//!   hands over as a line of 2 does.
//!
//! # Why the hand-off rule holds
//!
//! Our last listing contains our node, so the member that answered it had applied our create,
//! and with it every create before ours. Sequential nodes get their numbers in the order the
//! creates are applied, so every contender that sorts before us and still existed then is in
//! the listing, and none can be created later: the contenders before us only ever leave. When
//! the listing shows one, and we learn it is gone (its deletion's notification, or a read
//! that finds no node), nobody is before us, whatever made it leave (a release, a timeout,
//! an expired session). The remaining question is whether our node is still there:
//! - The notification came over our session's connection, so the session was alive when the
//!   server applied the deletion, and its ephemeral node with it. We check that the session
//!   is still the one that owns our node ([`is_stale`]): after a new session, our node is
//!   gone or going (CURATOR-604), and we start again, as with a listing.
//! - The notification proves that the server writes to us, not that it hears us: with our
//!   requests lost on the way, the server may be expiring the session. The session restarts
//!   its read timeout on replies alone (not on notifications), so such a connection is
//!   suspended within two thirds of the session timeout of its last reply, before the server
//!   can expire the session, and the connection-state policy ends the hold as for any holder
//!   (the simulation found the gap: a holder whose requests vanished kept the connection on
//!   the strength of notifications).
//! - A watch that ends with a session event (expired, closed) or a data change is not a
//!   deletion: we list again. So do errors and a predecessor that was not the only one (the
//!   others may still be there; finding out costs a round trip either way, and a listing
//!   answers it at once).
//! - The look-ahead changes nothing in this reasoning: its departure only makes us list again
//!   (keeping the predecessor's watch, set before that listing was asked for, so a deletion
//!   in between is still heard), and only a listing decides where we stand and whether the
//!   predecessor is the only one left.
//! - Two exceptions to "none can be created later", both nodes with a chosen name: the read
//!   node a write-lock holder takes with its write node's number (a downgrade, CURATOR-621),
//!   and a child someone else creates with a name of their choosing. For the first, the
//!   deletion of a write node never hands over the write lock without a listing; a reader
//!   waits only for writers, whose nodes are sequential. The second is outside the lock's
//!   promise, as is a contender's node deleted by someone else (a holder's node so deleted
//!   already lets the next one in, here as in Curator).

use tokio::time::Instant;

use zkrs_client::{Client, CreateMode, CreateOptions, ErrorCode, EventType, OneshotWatch, Result};

use crate::candidacy::{is_stale, watch_line};
use crate::framework::{
    create_parents, find_protected, guaranteed_delete, guaranteed_delete_protected, join,
    node_name, Backoff, FencingToken, ProtectedName, Wake, Watched,
};
pub(crate) use crate::line::place::Rule;
use crate::line::place::{place, Order, Standing};
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

/// Deletes what an abandoned attempt left behind, whatever the way out. Also used by the
/// semaphore for its lease node.
pub(crate) struct Cleanup<'a> {
    pub(crate) client: &'a Client,
    pub(crate) dir: &'a str,
    pub(crate) protected: &'a ProtectedName,
    /// Our node, once known.
    pub(crate) node: Option<String>,
    /// A create was sent and its outcome is unknown.
    pub(crate) in_doubt: bool,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        if let Some(node) = self.node.take() {
            guaranteed_delete(self.client, node);
        } else if self.in_doubt {
            guaranteed_delete_protected(
                self.client,
                self.dir.to_string(),
                self.protected.prefix().to_string(),
            );
        }
    }
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
    let protected = ProtectedName::new();
    let mode = match sequence {
        None => CreateMode::EphemeralSequential,
        Some(_) => CreateMode::Ephemeral,
    };
    let create_path = || match sequence {
        None => protected.path(&spec.dir, spec.lock_name),
        Some(seq) => protected.path(&spec.dir, &format!("{}{seq}", spec.lock_name)),
    };
    // The path asked for becomes the created node's path: one `String` per acquire (it has
    // room for the sequence the server appends), made again only if an attempt starts over.
    let mut asked = create_path();
    let options = CreateOptions::new(mode).with_stat();
    let mut cleanup = Cleanup {
        client,
        dir: &spec.dir,
        protected: &protected,
        node: None,
        in_doubt: false,
    };
    let mut backoff = Backoff::until(deadline);
    'attempt: loop {
        cleanup.in_doubt = true;
        if asked.is_empty() {
            asked = create_path();
        }
        // Pipelined: the listing is applied after the create, so it includes our node.
        let (created, listed) = tokio::join!(
            zkrs_client::__private::create_in_reply(client, &asked, data, &options),
            client.get_children(&spec.dir)
        );
        let (ours, owner, czxid, mut children) = match created {
            Ok((created, stat)) => {
                let owner = stat.map_or(0, |s| s.ephemeral_owner);
                let czxid = stat.map_or(0, |s| s.czxid);
                let mut path = std::mem::take(&mut asked);
                path.clear();
                path.push_str(created.as_str());
                (path, owner, czxid, listed.ok())
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                cleanup.in_doubt = false;
                create_parents(client, &spec.dir, crate::framework::ParentMode::Container).await?;
                continue 'attempt;
            }
            Err(e) if e.is_retryable() || e.is_session_expired() => {
                match backoff.pause(client).await {
                    Ok(()) => {}
                    Err(_) if backoff.is_deadline() => return Ok(None), // `cleanup` looks.
                    Err(e) => return Err(e),
                }
                match find_protected(client, &spec.dir, &protected, mode).await? {
                    Some((path, stat)) => (path, stat.ephemeral_owner, stat.czxid, None),
                    None => continue 'attempt,
                }
            }
            Err(e) => {
                cleanup.in_doubt = false;
                return Err(e);
            }
        };
        cleanup.in_doubt = false;
        cleanup.node = Some(ours);
        let ours = cleanup.node.as_deref().expect("just set");
        // The predecessor's watch, kept while it stays our predecessor: a listing after the
        // look-ahead's departure does not ask for it again.
        let mut kept: Option<(String, OneshotWatch)> = None;
        loop {
            let list = match children.take() {
                Some(list) => list,
                None => match client.get_children(&spec.dir).await {
                    Ok(list) => list,
                    // The directory is gone, and our node with it.
                    Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                        cleanup.node = None;
                        continue 'attempt;
                    }
                    Err(e) if e.is_retryable() => match backoff.pause(client).await {
                        Ok(()) => continue,
                        Err(_) if backoff.is_deadline() => return Ok(None),
                        Err(e) => return Err(e),
                    },
                    Err(e) => return Err(e),
                },
            };
            let place = place(spec.order(), rule, list.iter(), node_name(ours));
            drop(list);
            let name = match place.standing {
                Standing::Gone => {
                    cleanup.node = None;
                    continue 'attempt;
                }
                Standing::First => None,
                Standing::Behind(name) => Some(name),
            };
            if let Some(name) = name {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(None); // `cleanup` deletes our node.
                }
                let predecessor = join(&spec.dir, &name);
                let lookahead = place.lookahead.map(|n| join(&spec.dir, &n));
                let waited = wait_in_line(client, predecessor, lookahead, &mut kept, &mut backoff);
                match waited.await? {
                    Wake::TimedOut => return Ok(None),
                    // With `sole`, the lock is ours without a new listing.
                    Wake::Node(Watched::Predecessor, EventType::NodeDeleted) if place.sole => {}
                    // Anything else (the look-ahead's departure too, with the predecessor's
                    // watch in `kept`): list again.
                    _ => continue,
                }
            }
            // First in line: in the listing, or by the hand-off rule.
            if is_stale(owner, client) {
                // Our node, but from a session that is gone: not a lock we hold.
                if let Some(old) = cleanup.node.take() {
                    guaranteed_delete(client, old);
                }
                continue 'attempt;
            }
            let path = cleanup.node.take().expect("our node");
            zkrs_client::__log!(debug, path = %path, dir = %spec.dir, "lock acquired");
            return Ok(Some(Acquired {
                path,
                session_id: owner,
                token: FencingToken::from_zxid(czxid),
            }));
        }
    }
}

/// Waits until the predecessor or the look-ahead leaves: watches both (pipelined, the
/// predecessor's watch reused from `kept` when it is the same node), each with `getData`
/// (Curator's way: no watch is left behind on a node that is gone already). When the wait
/// ends with the look-ahead ([`Watched::Ahead`]), the predecessor's watch is left in `kept`
/// (the predecessor still waits or holds: a listing says where we stand).
async fn wait_in_line(
    client: &Client,
    predecessor: String,
    lookahead: Option<String>,
    kept: &mut Option<(String, OneshotWatch)>,
    backoff: &mut Backoff,
) -> Result<Wake> {
    let deadline = backoff.deadline();
    let (watch, ahead) = watch_line(client, &predecessor, lookahead.as_deref(), kept.take()).await;
    let mut watch = match watch {
        Ok(Some(watch)) => watch,
        Ok(None) => return Ok(Wake::Node(Watched::Predecessor, EventType::NodeDeleted)),
        Err(e) if e.is_retryable() => {
            return match backoff.pause(client).await {
                Ok(()) => Ok(Wake::Reset),
                Err(_) if backoff.is_deadline() => Ok(Wake::TimedOut),
                Err(e) => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    let ahead = match ahead {
        Some(Ok(Some(ahead))) => Some(ahead),
        Some(Ok(None)) => {
            *kept = Some((predecessor, watch));
            return Ok(Wake::Node(Watched::Ahead, EventType::NodeDeleted));
        }
        None => None,
        // The predecessor's watch alone still says what we need.
        Some(Err(e)) if e.is_retryable() => None,
        Some(Err(e)) => return Err(e),
    };
    let woke = async {
        match ahead {
            Some(ahead) => tokio::select! {
                biased;
                event = &mut watch => (Watched::Predecessor, event),
                event = ahead => (Watched::Ahead, event),
            },
            None => (Watched::Predecessor, (&mut watch).await),
        }
    };
    let (which, event) = match deadline {
        None => woke.await,
        Some(d) => match tokio::time::timeout_at(d, woke).await {
            Ok(woke) => woke,
            Err(_) => return Ok(Wake::TimedOut),
        },
    };
    // Whatever ended the look-ahead's watch (its deletion, a session event), a listing
    // tells where we stand, with the predecessor's watch kept. A session event (expired,
    // closed) or a data change on the predecessor's says nothing about the line: look again.
    if which == Watched::Ahead {
        *kept = Some((predecessor, watch));
    }
    Ok(Wake::Node(which, event.event_type))
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
