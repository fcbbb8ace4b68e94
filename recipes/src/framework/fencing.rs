//! [`FencingToken`]: a number that only grows from one holder of a lock (or one leader) to
//! the next, for the resources the holder acts on to refuse a holder that is no longer one.

use std::fmt;

/// A fencing token: the creation zxid (`czxid`) of the znode that made its holder the
/// holder (a lock node, a lease node, a latch's or an election's node, the master node).
///
/// Why it only grows from one holder to the next: zxids are ZooKeeper's total order of
/// writes, larger for every later write, across leader changes (the epoch is the high half).
/// A lock or an election hands over from the node that sorts first to the next one, and a
/// sequential node that sorts later was created later (its sequence number is the parent's
/// child-creation count at its create); a node made again (after a session expiry, by a
/// Curator peer or by anyone on the same path) is a new create with a larger zxid. So a
/// later holder's token is larger than every earlier holder's, whatever client made the
/// nodes. A holder that keeps its node through a suspension keeps its token.
///
/// How a resource uses it: the holder sends its token with every action; the resource keeps
/// the largest token it has seen, and refuses an action that carries a smaller one (a
/// holder that lost the lock without knowing it yet, paused or cut off, while another took
/// over). Equal is the same holder. `zkctl lock` and `zkctl elect` hand it to their command
/// in `ZKRS_FENCING_TOKEN`.
///
/// ```
/// use zkrs_recipes::framework::FencingToken;
/// let (old, new) = (FencingToken::from_zxid(0x1_0000_0007), FencingToken::from_zxid(0x1_0000_0009));
/// assert!(new > old);
/// assert_eq!(new.to_string(), "4294967305");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FencingToken(i64);

impl FencingToken {
    /// The token of a node created by the write with this zxid (its Stat's `czxid`).
    pub fn from_zxid(czxid: i64) -> FencingToken {
        FencingToken(czxid)
    }

    /// The zxid: compare tokens as these numbers.
    pub fn zxid(self) -> i64 {
        self.0
    }
}

impl fmt::Display for FencingToken {
    /// The zxid in decimal (as `ZKRS_FENCING_TOKEN` carries it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
