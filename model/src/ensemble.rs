//! An ensemble at the level of operations: a leader that orders writes into one committed log
//! (zxids `epoch << 32 | counter`, as ZooKeeper numbers them), members that apply the log with
//! a lag the caller controls and answer reads from their own tree (so a follower can be
//! behind), `sync` catching a member up, crash and restart, a new leader elected from the
//! committed log, and partitioned members that stop serving.
//!
//! It reuses the data tree and the write rules of the single server, so a write means the same
//! thing here as there. What it leaves out: the wire (no client connects to a member yet),
//! watches, and ACLs (every member's session is unauthenticated and nodes are open).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use zkrs_codec::{Acl, CreateMode, ErrorCode, List, OpCode, Stat};

use crate::acl::AuthProviders;
use crate::tree::DataTree;
use crate::write::{self, Create, WriteContext};

/// A write, as a client asks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnsembleWrite {
    /// `create` with an open ACL.
    Create {
        /// Path (a prefix, for sequential modes).
        path: String,
        /// Data; `None` sends null data (length -1), kept apart from empty data.
        data: Option<Vec<u8>>,
        /// Mode (TTL modes are refused).
        mode: CreateMode,
    },
    /// `delete`.
    Delete {
        /// Path.
        path: String,
        /// Expected version, -1 for any.
        version: i32,
    },
    /// `setData`.
    SetData {
        /// Path.
        path: String,
        /// New data; `None` sends null data (length -1), kept apart from empty data.
        data: Option<Vec<u8>>,
        /// Expected version, -1 for any.
        version: i32,
    },
}

/// One committed transaction of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Txn {
    /// Its zxid.
    pub zxid: i64,
    /// Leader's time when ordered, milliseconds.
    pub time: i64,
    /// What it does.
    pub kind: TxnKind,
}

/// What a transaction does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnKind {
    /// A client write of `session` (a failed one too: ZooKeeper logs an error txn).
    Write {
        /// The writing session.
        session: i64,
        /// The write.
        write: EnsembleWrite,
    },
    /// A session was created.
    CreateSession(i64),
    /// A session ended (closed or expired): its ephemerals go.
    CloseSession(i64),
}

/// Why a member cannot do what was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnsembleError {
    /// The member is down or partitioned away: a client gets ConnectionLoss.
    NotServing,
    /// Fewer than a quorum of members can take part: writes stall (ConnectionLoss).
    NoQuorum,
}

/// The outcome of a write, as the client sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    /// The zxid the leader gave it.
    pub zxid: i64,
    /// `Ok` with the created path or the new Stat, or ZooKeeper's error code.
    pub result: WriteResult,
}

/// What a write answered: the created path and/or Stat, or the error code.
type WriteResult = Result<(Option<String>, Option<Stat>), ErrorCode>;

#[derive(Debug, Clone)]
struct Member {
    tree: DataTree,
    /// Outcomes of the writes it applied, by zxid (so the member that took a write answers it).
    results: BTreeMap<i64, WriteResult>,
    applied: usize,
    up: bool,
    partitioned: bool,
}

/// A ZooKeeper ensemble of `n` members driven by operations (no wire: the caller writes,
/// reads and syncs through a member by method calls), deterministic and in-process. For an
/// ensemble that clients reach through the wire protocol, see
/// [`WireEnsemble`](crate::WireEnsemble).
#[derive(Debug, Clone)]
pub struct OperationEnsemble {
    members: Vec<Member>,
    log: Vec<Txn>,
    leader: usize,
    epoch: i64,
    counter: i64,
    next_session: i64,
    /// When the ensemble started: the leader's clock is measured from it.
    start: Instant,
    now: Duration,
    epoch_ms: i64,
}

impl OperationEnsemble {
    /// `n` members started at `now`, member 0 leading, epoch 1.
    ///
    /// # Panics
    ///
    /// If `n` is 0.
    pub fn new(n: usize, now: Instant) -> Self {
        assert!(n > 0, "an ensemble has members");
        let member = Member {
            tree: DataTree::new(true),
            results: BTreeMap::new(),
            applied: 0,
            up: true,
            partitioned: false,
        };
        OperationEnsemble {
            members: vec![member; n],
            log: Vec::new(),
            leader: 0,
            epoch: 1,
            counter: 0,
            next_session: 0x0100_0000_0000_0001,
            start: now,
            now: Duration::ZERO,
            epoch_ms: 1_700_000_000_000,
        }
    }

    /// Moves the leader's clock to `now` (it stamps ctime/mtime; never backwards).
    pub fn advance(&mut self, now: Instant) {
        self.now = self.now.max(now.saturating_duration_since(self.start));
    }

    /// The current leader.
    pub fn leader(&self) -> usize {
        self.leader
    }

    /// The committed log.
    pub fn log(&self) -> &[Txn] {
        &self.log
    }

    /// A member's tree, as it has applied the log so far.
    pub fn tree(&self, member: usize) -> &DataTree {
        &self.members[member].tree
    }

    /// The last zxid a member applied.
    pub fn applied_zxid(&self, member: usize) -> i64 {
        self.members[member].tree.last_zxid
    }

    fn serving(&self, member: usize) -> bool {
        let m = &self.members[member];
        m.up && !m.partitioned
    }

    fn has_quorum(&self) -> bool {
        let reachable = (0..self.members.len()).filter(|m| self.serving(*m)).count();
        reachable * 2 > self.members.len() && self.serving(self.leader)
    }

    fn order(&mut self, kind: TxnKind) -> i64 {
        self.counter += 1;
        let zxid = (self.epoch << 32) | self.counter;
        let time = self.epoch_ms + self.now.as_millis() as i64;
        self.log.push(Txn { zxid, time, kind });
        // The leader applies what it commits at once.
        self.replicate(self.leader, usize::MAX);
        zxid
    }

    /// Applies up to `count` more committed transactions on `member` (the lag is the caller's).
    pub fn replicate(&mut self, member: usize, count: usize) {
        let OperationEnsemble { members, log, .. } = self;
        let m = &mut members[member];
        if !m.up {
            return;
        }
        let until = log.len().min(m.applied.saturating_add(count));
        for txn in &log[m.applied..until] {
            if let Some(result) = apply(&mut m.tree, txn) {
                m.results.insert(txn.zxid, result);
            }
        }
        m.applied = until;
    }

    /// Every serving member applies the whole log.
    pub fn catch_up_all(&mut self) {
        for m in 0..self.members.len() {
            if self.serving(m) {
                self.replicate(m, usize::MAX);
            }
        }
    }

    /// Opens a session through `via` (a createSession transaction).
    pub fn open_session(&mut self, via: usize) -> Result<i64, EnsembleError> {
        if !self.serving(via) {
            return Err(EnsembleError::NotServing);
        }
        if !self.has_quorum() {
            return Err(EnsembleError::NoQuorum);
        }
        let id = self.next_session;
        self.next_session += 1;
        let zxid = self.order(TxnKind::CreateSession(id));
        self.catch_up_to(via, zxid);
        Ok(id)
    }

    /// Ends a session (closeSession, or the leader expiring it): its ephemerals are deleted.
    pub fn close_session(&mut self, via: usize, session: i64) -> Result<i64, EnsembleError> {
        if !self.serving(via) {
            return Err(EnsembleError::NotServing);
        }
        if !self.has_quorum() {
            return Err(EnsembleError::NoQuorum);
        }
        let zxid = self.order(TxnKind::CloseSession(session));
        self.catch_up_to(via, zxid);
        Ok(zxid)
    }

    fn catch_up_to(&mut self, member: usize, zxid: i64) {
        while self.members[member].tree.last_zxid < zxid
            && self.members[member].applied < self.log.len()
        {
            self.replicate(member, 1);
        }
    }

    /// A write sent to `via`: forwarded to the leader, ordered, committed by a quorum, and
    /// answered by `via` once it has applied it (so the session reads its own write there).
    pub fn write(
        &mut self,
        via: usize,
        session: i64,
        write: EnsembleWrite,
    ) -> Result<WriteOutcome, EnsembleError> {
        if !self.serving(via) {
            return Err(EnsembleError::NotServing);
        }
        if !self.has_quorum() {
            return Err(EnsembleError::NoQuorum);
        }
        let zxid = self.order(TxnKind::Write { session, write });
        self.catch_up_to(via, zxid);
        let result = self.members[via]
            .results
            .get(&zxid)
            .cloned()
            .unwrap_or(Err(ErrorCode::SystemError));
        Ok(WriteOutcome { zxid, result })
    }

    /// getData on `via`'s own tree: `None` for NoNode, else the data (`None` when null) and
    /// Stat. A follower behind the leader answers from the past.
    #[allow(clippy::type_complexity)] // the two options mean NoNode and null data
    pub fn read(
        &self,
        via: usize,
        path: &str,
    ) -> Result<Option<(Option<Vec<u8>>, Stat)>, EnsembleError> {
        if !self.serving(via) {
            return Err(EnsembleError::NotServing);
        }
        Ok(self.members[via]
            .tree
            .get(path)
            .map(|n| (n.data.clone(), n.stat())))
    }

    /// getChildren on `via`'s own tree.
    pub fn children(&self, via: usize, path: &str) -> Result<Option<Vec<String>>, EnsembleError> {
        if !self.serving(via) {
            return Err(EnsembleError::NotServing);
        }
        Ok(self.members[via]
            .tree
            .get(path)
            .map(|n| n.children.iter().cloned().collect()))
    }

    /// `sync` through `via`: it goes to the leader and comes back once `via` has applied
    /// everything the leader had committed when it got there.
    pub fn sync(&mut self, via: usize) -> Result<i64, EnsembleError> {
        if !self.serving(via) {
            return Err(EnsembleError::NotServing);
        }
        if !self.serving(self.leader) {
            return Err(EnsembleError::NoQuorum);
        }
        let target = self.log.len();
        let count = target - self.members[via].applied.min(target);
        self.replicate(via, count);
        Ok(self.members[via].tree.last_zxid)
    }

    /// A member crashes: it stops serving and forgets what it had not persisted (here: its
    /// whole state; it rebuilds from the log on restart).
    pub fn crash(&mut self, member: usize) {
        let m = &mut self.members[member];
        m.up = false;
        m.tree = DataTree::new(true);
        m.results.clear();
        m.applied = 0;
        if member == self.leader {
            self.elect();
        }
    }

    /// A crashed member comes back and syncs with the leader (DIFF/SNAP): it applies the
    /// committed log.
    pub fn restart(&mut self, member: usize) {
        self.members[member].up = true;
        self.replicate(member, usize::MAX);
    }

    /// A member is cut off from the others: it stops serving clients.
    pub fn partition(&mut self, member: usize) {
        self.members[member].partitioned = true;
        if member == self.leader {
            self.elect();
        }
    }

    /// The partition heals: the member syncs with the leader and serves again.
    pub fn heal(&mut self, member: usize) {
        self.members[member].partitioned = false;
        self.replicate(member, usize::MAX);
    }

    /// Leader election among the serving members: a quorum of them has every committed
    /// transaction, so the one that has applied most catches up from the log and leads, in a
    /// new epoch (zxids restart at `epoch << 32 | 1`). Without a quorum nobody leads.
    fn elect(&mut self) {
        let candidates: Vec<usize> = (0..self.members.len())
            .filter(|m| self.serving(*m))
            .collect();
        if candidates.len() * 2 <= self.members.len() {
            return;
        }
        let best = candidates
            .iter()
            .copied()
            .max_by_key(|m| (self.members[*m].applied, *m))
            .expect("candidates");
        self.leader = best;
        self.replicate(best, usize::MAX);
        self.epoch += 1;
        self.counter = 0;
    }

    /// Whether the ensemble can take writes now (the leader is serving and a quorum is).
    pub fn can_write(&self) -> bool {
        self.has_quorum()
    }
}

/// Applies one committed transaction to a member's tree (the same rules as the single
/// server; its outcome is kept so the member that took the request can answer it).
fn apply(tree: &mut DataTree, txn: &Txn) -> Option<WriteResult> {
    tree.last_zxid = txn.zxid;
    let providers = AuthProviders::default();
    let cx = |session| WriteContext {
        session,
        auth: &[],
        providers: &providers,
        zxid: txn.zxid,
        time: txn.time,
    };
    let mut changes = Vec::new();
    let result = match &txn.kind {
        TxnKind::CreateSession(_) => return None,
        TxnKind::CloseSession(session) => {
            write::kill_session(tree, *session, txn.zxid, &mut changes);
            return None;
        }
        TxnKind::Write { session, write } => match write {
            EnsembleWrite::Create { path, data, mode } => {
                let req = Create {
                    op: if mode.is_container() {
                        OpCode::CreateContainer
                    } else {
                        OpCode::Create2
                    },
                    path,
                    data: data.as_deref(),
                    acl: List::from(Acl::OPEN_ACL_UNSAFE),
                    flags: mode.code(),
                    ttl: -1,
                };
                write::create(tree, &cx(*session), &req, &mut changes)
                    .map(|(p, s)| (Some(p), Some(s)))
            }
            EnsembleWrite::Delete { path, version } => {
                write::delete(tree, &cx(*session), path, *version, &mut changes)
                    .map(|()| (None, None))
            }
            EnsembleWrite::SetData {
                path,
                data,
                version,
            } => write::set_data(
                tree,
                &cx(*session),
                path,
                data.as_deref(),
                *version,
                &mut changes,
            )
            .map(|s| (None, Some(s))),
        },
    };
    Some(result)
}
