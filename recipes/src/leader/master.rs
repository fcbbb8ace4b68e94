//! [`MasterElection`]: the single-node master election.
//!
//! Every contender tries to create one ephemeral node (`/master` by default) holding its id;
//! the one that succeeds is master until its node goes (resignation, close, session loss).
//! The others watch the node and try again when it is deleted. Not fair (whoever creates
//! first after a deletion wins) and every deletion wakes every contender, but simple and
//! readable by anything that can read a node.
//!
//! The hard part is a create whose reply is lost (connection loss): it may have happened.
//! After reconnecting, the contender reads the node: it won if the node's data is its id AND
//! the node's `ephemeralOwner` is its current session. A node with our id but an old session
//! is not ours to lead with; it is left to vanish at that session's expiry (deleting it
//! could delete a newer master's node of the same path: ZooKeeper's delete checks a version,
//! not an owner).

use crate::error::ErrorExt;
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;
use zkrs_client::__private::delete_in_session;
use zkrs_client::{
    Client, ConnectionState, CreateMode, CreateOptions, Error, ErrorCode, EventType, OneshotWatch,
    Result, Stat, StateChange,
};

use super::handle::leader_handle_methods;
use super::latch::Participant;
use super::leadership::{leadership_by_inherent_methods, LeaderFlag, LeadershipEvent};
use super::options::{leader_builder_setters, LeaderOptions};

use crate::framework::{
    self, create_parents, lost_now, parent, Backoff, ConnectionStatePolicy, FencingToken,
    PolicyChanges, Wake,
};

/// The usual path of the master node, for [`MasterElection::builder`].
pub const DEFAULT_MASTER_PATH: &str = "/master";

/// Who a master node belongs to, as far as one contender can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// There is no node.
    Absent,
    /// Ours: our id, owned by our current session.
    Ours,
    /// Someone else's, or ours from a session that is gone.
    Theirs,
}

/// Decides whether a master node (its data and Stat, `None` if absent) is ours: its data is
/// `id` and its owner is `session` (the current session; 0 when there is none).
pub(crate) fn claim(node: Option<(&[u8], &Stat)>, id: &[u8], session: i64) -> Claim {
    match node {
        None => Claim::Absent,
        Some((data, stat)) if session != 0 && stat.ephemeral_owner == session && data == id => {
            Claim::Ours
        }
        Some(_) => Claim::Theirs,
    }
}

#[derive(Debug)]
struct Shared {
    client: Client,
    path: String,
    id: String,
    policy: ConnectionStatePolicy,
    flag: LeaderFlag,
    /// A session under which we may own the node (won, or a create in doubt): cleanup looks.
    maybe_owner: Mutex<Option<i64>>,
    /// The creation zxid of the master node we last claimed.
    czxid: std::sync::atomic::AtomicI64,
}

impl Shared {
    fn set_master(&self, is_master: bool) {
        self.flag.set(is_master, true);
    }

    fn maybe_owner(&self) -> std::sync::MutexGuard<'_, Option<i64>> {
        self.maybe_owner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A contender for mastership through a single ephemeral node.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::leader::{MasterElection, DEFAULT_MASTER_PATH};
/// let contender = MasterElection::builder(&client, DEFAULT_MASTER_PATH)
///     .id("worker-7")
///     .start()?;
/// contender.await_leadership().await?;
/// // ... act as master while `contender.is_leader()` ...
/// contender.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct MasterElection {
    shared: Arc<Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
}

/// Settings for a [`MasterElection`]; [`MasterElectionBuilder::start`] starts it.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `start`"]
pub struct MasterElectionBuilder {
    options: LeaderOptions,
}

impl MasterElectionBuilder {
    leader_builder_setters!(
        MasterElectionBuilder,
        /// This contender's id, stored in the node (default: empty). Make it unique among
        /// contenders: a node with our id and our session is ours.
        id,
        /// The connection-state policy (default: standard): under the standard one mastership is
        /// lost as soon as the connection is suspended (and regained on reconnecting to the same
        /// session if the node is still ours); under session-only, when the session is lost.
        policy,
    );

    /// Contends: the contender's task starts on the current tokio runtime
    /// ([`MasterElection::await_leadership`] waits for mastership). Fails (kind
    /// `InvalidInput`) if the path is not a valid znode path, before anything is sent.
    /// Needs a tokio runtime.
    pub fn start(self) -> Result<MasterElection> {
        let (client, path, id, policy) = self.options.validated()?;
        let election = MasterElection {
            shared: Arc::new(Shared {
                client,
                path,
                id,
                policy,
                flag: LeaderFlag::new(),
                maybe_owner: Mutex::new(None),
                czxid: std::sync::atomic::AtomicI64::new(0),
            }),
            task: Mutex::new(None),
        };
        election.rejoin();
        Ok(election)
    }
}

impl MasterElection {
    /// A builder for a contender for the node at `path` ([`DEFAULT_MASTER_PATH`], `/master`,
    /// is the usual one).
    pub fn builder(client: &Client, path: &str) -> MasterElectionBuilder {
        MasterElectionBuilder {
            options: LeaderOptions::new(client, path),
        }
    }

    fn task(&self) -> std::sync::MutexGuard<'_, Option<JoinHandle<()>>> {
        self.task.lock().unwrap_or_else(|e| e.into_inner())
    }

    leader_handle_methods!(
        /// The master node's path.
        path,
        /// This contender's id.
        id,
        /// Waits until this contender is master. Fails once it resigned or closed.
        await_leadership,
        /// Waits at most `timeout` to be master: `Ok(true)` once master, `Ok(false)` if the time
        /// ran out; fails once it resigned.
        await_leadership_timeout,
        /// The mastership value, to read or wait on (coalesces quick changes).
        leadership,
        /// Every mastership transition from now on (none is dropped).
        events,
    );

    /// Whether this contender is master now: it created the node, the node is owned by the
    /// current session, and the connection is up (or, under the session-deadline policy,
    /// suspended for less than the session's deadline).
    pub fn is_leader(&self) -> bool {
        self.shared.flag.get()
            && self
                .shared
                .maybe_owner()
                .is_some_and(|s| s == self.shared.client.session_id())
            && !lost_now(self.shared.policy, &self.shared.client)
    }

    /// The fencing token of the current mastership (the master node's creation zxid) while
    /// this contender is master, `None` otherwise: larger than every earlier master's, see
    /// [`FencingToken`].
    pub fn fencing_token(&self) -> Option<FencingToken> {
        let czxid = self.shared.czxid.load(std::sync::atomic::Ordering::SeqCst);
        self.is_leader().then(|| FencingToken::from_zxid(czxid))
    }

    /// The current master, if there is one: its id (the node's data) and the node's path.
    pub async fn leader(&self) -> Result<Option<Participant>> {
        match self.shared.client.get_data(&self.shared.path).await {
            Ok((data, _)) => Ok(Some(Participant {
                id: String::from_utf8_lossy(&data).into_owned(),
                is_leader: true,
                path: self.shared.path.clone(),
            })),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Steps down and leaves the contest: stops contending, and deletes the node if it is
    /// ours (retrying through connection loss). [`MasterElection::rejoin`] contends again.
    /// If this future is dropped, the node is still deleted, in the background.
    pub async fn resign(&self) -> Result<()> {
        let task = self.task().take();
        if let Some(task) = task {
            task.abort();
            let _ = task.await;
        }
        self.shared.set_master(false);
        self.shared.flag.end(Error::closed());
        let session = self.shared.maybe_owner().take();
        match session {
            Some(session) => {
                let mut pending = PendingCleanup {
                    shared: &self.shared,
                    session: Some(session),
                };
                let result = delete_if_ours(&self.shared, session).await;
                pending.session = None;
                result
            }
            None => Ok(()),
        }
    }

    /// Contends again after [`MasterElection::resign`]. False if already contending. Needs a
    /// tokio runtime.
    pub fn rejoin(&self) -> bool {
        let mut task = self.task();
        if task.as_ref().is_some_and(|t| !t.is_finished()) {
            return false;
        }
        self.shared.flag.reopen();
        *task = Some(tokio::spawn(run(self.shared.clone())));
        true
    }

    /// Leaves the contest for good: [`MasterElection::resign`], consuming the contender; its
    /// event streams end.
    pub async fn close(self) -> Result<()> {
        let result = self.resign().await;
        self.shared.flag.close(true);
        result
    }
}

leadership_by_inherent_methods!(MasterElection, LeadershipEvent);

impl Drop for MasterElection {
    /// Leaves the contest; the node, if ours, is deleted in the background.
    fn drop(&mut self) {
        if let Some(task) = self.task().take() {
            task.abort();
        }
        self.shared.flag.close(true);
        if let Some(session) = self.shared.maybe_owner().take() {
            delete_if_ours_in_background(&self.shared, session);
        }
    }
}

/// Deletes the node in the background if dropped before disarmed.
struct PendingCleanup<'a> {
    shared: &'a Arc<Shared>,
    session: Option<i64>,
}

impl Drop for PendingCleanup<'_> {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            delete_if_ours_in_background(self.shared, session);
        }
    }
}

fn delete_if_ours_in_background(shared: &Arc<Shared>, session: i64) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let shared = shared.clone();
        runtime.spawn(async move {
            let _ = delete_if_ours(&shared, session).await;
        });
    }
}

/// Deletes the master node if it is ours under `session` and that session is still the
/// current one; retries through connection loss. A node of a lost session goes with it.
async fn delete_if_ours(shared: &Shared, session: i64) -> Result<()> {
    let client = &shared.client;
    let mut backoff = Backoff::new();
    loop {
        if client.session_id() != session && client.state().is_connected() {
            return Ok(()); // That session is gone, and its node with it.
        }
        let (data, stat) = match client.get_data(&shared.path).await {
            Ok(found) => found,
            Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(()),
            Err(e) if e.is_session_expired() => return Ok(()),
            Err(e) if e.is_retryable() => {
                backoff.pause(client).await?;
                continue;
            }
            Err(e) => return Err(e),
        };
        if claim(Some((&data, &stat)), shared.id.as_bytes(), session) != Claim::Ours {
            return Ok(());
        }
        // Bound to `session` (the version alone would not tell a node made since by another
        // contender, at version 0 as ours may be): it goes out under that session or fails
        // with `SessionExpired`, so the node it deletes is still ours.
        if client.session_id() != session {
            continue;
        }
        let deleted = delete_in_session(client, &shared.path, Some(stat.version), session);
        match deleted.await {
            Ok(()) => return Ok(()),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(()),
            Err(e) if e.is_session_expired() => return Ok(()),
            Err(e) if e.code() == Some(ErrorCode::BadVersion) => {}
            Err(e) if e.is_retryable() => backoff.pause(client).await?,
            Err(e) => return Err(e),
        }
    }
}

/// Applies queued connection-state changes until connected (mastership is dropped on the
/// way as the policy says). False when the client is closed.
async fn recover(shared: &Shared, changes: &mut PolicyChanges) -> bool {
    framework::recover(&shared.client, changes, |c| on_change(shared, c)).await
}

/// One connection-state change. False when the client is closed.
fn on_change(shared: &Shared, change: StateChange) -> bool {
    if shared.policy.is_error_state(change.state) {
        shared.set_master(false);
    }
    match change.state {
        ConnectionState::Closed => false,
        ConnectionState::Lost => {
            // Our node is gone with the session (or goes at its expiry).
            let mut owner = shared.maybe_owner();
            if owner.is_some_and(|s| s != shared.client.session_id()) {
                *owner = None;
            }
            true
        }
        _ => true,
    }
}

async fn wait_on(shared: &Shared, watch: OneshotWatch, changes: &mut PolicyChanges) -> Wake {
    let on_change = |c| on_change(shared, c);
    framework::wait_or_recover(&shared.client, shared.policy, watch, changes, on_change).await
}

/// The contender's task: create, or watch and wait; as master, watch our own node.
async fn run(shared: Arc<Shared>) {
    let client = shared.client.clone();
    let mut changes = PolicyChanges::new(&client, shared.policy);
    let options = CreateOptions::new(CreateMode::Ephemeral).with_stat();
    let mut backoff = Backoff::default();
    loop {
        if !recover(&shared, &mut changes).await {
            return;
        }
        match create(&shared, &options, &mut backoff).await {
            Attempt::Watch => {}
            Attempt::Again => continue,
            Attempt::Closed => return,
        }
        if !watch(&shared, &mut changes, &mut backoff).await {
            return;
        }
    }
}

/// What a create leaves the contender to do.
enum Attempt {
    /// Read and watch the node: ours (made, or in doubt) or another's.
    Watch,
    /// Create again (after a pause, or once the parents are made).
    Again,
    /// The client is closed.
    Closed,
}

/// Tries to create the node, as the current session.
async fn create(shared: &Shared, options: &CreateOptions<'_>, backoff: &mut Backoff) -> Attempt {
    let client = &shared.client;
    let session = client.session_id();
    *shared.maybe_owner() = Some(session);
    let created = client
        .create_with(&shared.path, shared.id.as_bytes(), options)
        .await;
    match created {
        // Won, or in doubt: either way the node is read below, and `claim` decides.
        Ok(_) => backoff.reset(),
        // Looked at after a pause: a server that throttles is not asked again at once.
        Err(e) if e.is_retryable() || e.is_session_expired() => backoff.sleep().await,
        Err(e) if e.code() == Some(ErrorCode::NodeExists) => *shared.maybe_owner() = None,
        Err(e) if e.code() == Some(ErrorCode::NoNode) => {
            *shared.maybe_owner() = None;
            match create_parents(
                client,
                parent(&shared.path),
                crate::framework::ParentMode::Container,
            )
            .await
            {
                Err(e) if e.is_closed() => return Attempt::Closed,
                Err(_) => {
                    backoff.sleep().await;
                    return Attempt::Again;
                }
                Ok(()) => return Attempt::Again,
            }
        }
        Err(e) if e.is_closed() => return Attempt::Closed,
        Err(_) => {
            // E.g. no permission: try again, slowly.
            *shared.maybe_owner() = None;
            backoff.sleep().await;
            return Attempt::Again;
        }
    }
    Attempt::Watch
}

/// Watches the node: as master, to notice losing it; otherwise, to try again when it goes.
/// Reading it also settles a create in doubt. Returns when the node is gone (true: create
/// again) or the client is closed (false).
async fn watch(shared: &Shared, changes: &mut PolicyChanges, backoff: &mut Backoff) -> bool {
    let client = &shared.client;
    loop {
        if !recover(shared, changes).await {
            return false;
        }
        let (node, watch) = match client.get_data_and_watch(&shared.path).await {
            Ok((data, stat, watch)) => (Some((data, stat)), Some(watch)),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => (None, None),
            Err(e) if e.is_closed() => return false,
            Err(_) => {
                backoff.sleep().await;
                continue; // `recover` waits for the connection.
            }
        };
        let session = client.session_id();
        let claim = claim(
            node.as_ref().map(|(d, s)| (&d[..], s)),
            shared.id.as_bytes(),
            session,
        );
        match claim {
            Claim::Absent => {
                shared.set_master(false);
                *shared.maybe_owner() = None;
                return true; // Try to create it.
            }
            Claim::Ours => {
                *shared.maybe_owner() = Some(session);
                if let Some((_, stat)) = &node {
                    shared
                        .czxid
                        .store(stat.czxid, std::sync::atomic::Ordering::SeqCst);
                }
                if !lost_now(shared.policy, client) {
                    shared.set_master(true);
                }
            }
            Claim::Theirs => {
                shared.set_master(false);
                *shared.maybe_owner() = None;
            }
        }
        let Some(watch) = watch else { return true };
        match wait_on(shared, watch, changes).await {
            Wake::Node(_, EventType::NodeDeleted) => {
                shared.set_master(false);
                *shared.maybe_owner() = None;
                return true;
            }
            // Read it again (`wait_on` applies a state change itself, and has no deadline).
            Wake::Node(..) | Wake::Reset | Wake::State(_) | Wake::TimedOut => {}
            Wake::Closed => {
                shared.set_master(false);
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(owner: i64) -> Stat {
        Stat {
            ephemeral_owner: owner,
            ..Stat::default()
        }
    }

    #[test]
    fn we_won_only_with_our_id_and_our_session() {
        let id = b"worker-1".as_slice();
        assert_eq!(claim(None, id, 7), Claim::Absent);
        assert_eq!(claim(Some((id, &stat(7))), id, 7), Claim::Ours);
        // Our id, another session: an old session of ours (about to expire) or another
        // process with the same id. Not ours.
        assert_eq!(claim(Some((id, &stat(8))), id, 7), Claim::Theirs);
        // Our session, another id: another contender sharing our session.
        assert_eq!(claim(Some((b"worker-2", &stat(7))), id, 7), Claim::Theirs);
        // A persistent node with our id: nobody's session; not ours.
        assert_eq!(claim(Some((id, &stat(0))), id, 7), Claim::Theirs);
        // No session now (disconnected, lost): nothing is ours.
        assert_eq!(claim(Some((id, &stat(0))), id, 0), Claim::Theirs);
        assert_eq!(claim(Some((id, &stat(7))), id, 0), Claim::Theirs);
    }
}
