//! [`LeaderLatch`]: Curator's leader latch, on the same znodes.
//!
//! Each participant has an ephemeral-sequential node `<path>/_c_<uuid>-latch-<seq>` holding
//! its id (UTF-8). The participant whose node sorts first leads; every other one watches the
//! node just before its own (getData with a watch), so a departure wakes exactly one waiter.
//!
//! Beyond Curator: before acting as leader, the latch checks that its node belongs to the
//! current session (CURATOR-696: after a lost session the old node may still sort first until
//! the server expires it; leading with it would give two leaders), and the leader watches its
//! own node, so it notices when the node is deleted under it.
//!
//! A hand-off costs one notification: when the node we wait for was the only one before ours
//! in our last listing, its deletion (or a read that finds it gone) makes us first without
//! listing again, as in the locks' acquire loop, whose module documentation
//! (`lock::internals`) says why that holds: latch nodes are all sequential, so none can sort
//! before ours once our listing is made. The checks stay: the node must be the current
//! session's, and anything but a deletion (a data change, a connection-state change) lists
//! again. A waiting participant watches its own node too (set with its predecessor's watch,
//! and kept once it leads, so the hand-off itself sends no request): a deletion of our node
//! by someone else before the predecessor's arrives first (the server notifies a session in
//! the order of its changes) and is looked at first, so it never reads as a hand-off; one
//! after it ends leadership as it does for any leader. Deeper in line,
//! a participant also watches the node before its predecessor's (the look-ahead, as the
//! locks do) and lists again when it leaves, so the listing a deep line needs is made while
//! the predecessor still leads or waits, not after its deletion.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use tokio::task::JoinHandle;
use zkrs_client::{
    Client, ConnectionState, CreateMode, CreateOptions, Error, ErrorCode, EventType, OneshotWatch,
    Result,
};

use super::handle::leader_handle_methods;
use super::leadership::{leadership_by_inherent_methods, LeaderFlag, LeadershipEvent};
use super::options::{leader_builder_setters, LeaderOptions};
use crate::line::is_stale;
use crate::line::watch::{watch_line, watch_own};

use crate::framework::{
    create_parents, delete_for_sure, find_protected, guaranteed_delete,
    guaranteed_delete_protected, join, join_all, lost_in, lost_now, node_name, watch_or_state,
    Backoff, ConnectionStatePolicy, FencingToken, PolicyChanges, ProtectedName, Wake, Watched,
};
use crate::line::place::{place, Order, Rule, Standing};
use crate::lock::internals::{participants as lock_participants, LockSpec};

/// The lock name of latch nodes.
pub const LATCH_NAME: &str = "latch-";

/// How [`LeaderLatch::close_with`] treats leadership listeners.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CloseMode {
    /// Listeners are not told (Curator's `SILENT`).
    #[default]
    Silent,
    /// Listeners are told leadership ended (Curator's `NOTIFY_LEADER`).
    NotifyLeader,
}

/// A participant of an election, as its node says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participant {
    /// The id stored in its node.
    pub id: String,
    /// Whether it leads (its node sorts first).
    pub is_leader: bool,
    /// Its node's path.
    pub path: String,
}

#[derive(Debug, Default)]
struct NodeState {
    /// Our node, when it exists.
    path: Option<String>,
    /// The protected prefix of a create whose outcome is unknown.
    in_doubt: Option<String>,
    /// Our node's creation zxid (meaningful while `path` is set).
    czxid: i64,
    /// [`LeaderLatch::close_with`] took the node: the task, if a poll of it still runs,
    /// neither creates a node nor leads.
    closing: bool,
}

#[derive(Debug)]
struct Shared {
    client: Client,
    path: String,
    id: String,
    policy: ConnectionStatePolicy,
    flag: LeaderFlag,
    node: Mutex<NodeState>,
}

impl Shared {
    /// Ends the latch for good with `error`.
    fn fail(&self, error: Error) {
        self.set_leader(false, true);
        self.flag.end(error);
    }

    fn set_leader(&self, is_leader: bool, notify: bool) {
        if self.flag.set(is_leader, notify) {
            zkrs_client::__log!(info, path = %self.path, id = %self.id, leader = is_leader, "latch leadership changed");
        }
    }

    /// Leads, unless the latch is closing (checked under the node's lock, which the close
    /// takes to start: a poll of the task still running while the latch closes never leads
    /// after the close said it does not).
    fn lead(&self) {
        let node = self.node();
        if !node.closing {
            self.set_leader(true, true);
        }
        drop(node);
    }

    fn node(&self) -> std::sync::MutexGuard<'_, NodeState> {
        self.node.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Cleans up after the task: our node, or a create in doubt, in the background.
    fn cleanup_in_background(&self) {
        let mut node = self.node();
        if let Some(path) = node.path.take() {
            guaranteed_delete(&self.client, path);
        }
        if let Some(prefix) = node.in_doubt.take() {
            guaranteed_delete_protected(&self.client, self.path.clone(), prefix);
        }
    }
}

/// A participant in a leader election at a path, compatible with Curator's `LeaderLatch`.
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::leader::LeaderLatch;
/// let latch = LeaderLatch::builder(&client, "/election/reports")
///     .id("host-a")
///     .start()?;
/// latch.await_leadership().await?;
/// // ... lead; watch `latch.is_leader()` or `latch.events()` ...
/// latch.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct LeaderLatch {
    shared: Arc<Shared>,
    task: Option<JoinHandle<()>>,
}

/// Settings for a [`LeaderLatch`]; [`LeaderLatchBuilder::start`] starts it.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `start`"]
pub struct LeaderLatchBuilder {
    options: LeaderOptions,
}

impl LeaderLatchBuilder {
    leader_builder_setters!(
        LeaderLatchBuilder,
        /// The participant id stored in the node (default: empty, like Curator's).
        id,
        /// The connection-state policy (default: standard): under the standard one leadership
        /// ends as soon as the connection is suspended; under session-only, when the session is
        /// lost.
        policy,
    );

    /// Joins the election: the latch's task starts on the current tokio runtime and gets in
    /// line at once ([`LeaderLatch::await_leadership`] waits for leadership). Fails (kind
    /// `InvalidInput`) if the path is not a valid znode path, before anything is sent.
    /// Needs a tokio runtime.
    pub fn start(self) -> Result<LeaderLatch> {
        let (client, path, id, policy) = self.options.validated()?;
        let shared = Arc::new(Shared {
            client,
            path,
            id,
            policy,
            flag: LeaderFlag::new(),
            node: Mutex::new(NodeState::default()),
        });
        let task = tokio::spawn(run(shared.clone()));
        Ok(LeaderLatch {
            shared,
            task: Some(task),
        })
    }
}

impl LeaderLatch {
    /// A builder for a participant in the election at `path`.
    pub fn builder(client: &Client, path: &str) -> LeaderLatchBuilder {
        LeaderLatchBuilder {
            options: LeaderOptions::new(client, path),
        }
    }

    leader_handle_methods!(
        /// The latch path.
        path,
        /// This participant's id.
        id,
        /// Whether this participant leads now (Curator's `hasLeadership`).
        is_leader,
        /// Waits until this participant leads. Fails if the latch stopped for good (see
        /// [`LeaderLatch::failure`]).
        await_leadership,
        /// Waits at most `timeout` for leadership: `Ok(true)` once leading, `Ok(false)` if the
        /// time ran out, the error that stopped the latch for good otherwise.
        await_leadership_timeout,
        /// Every leadership transition from now on; none is dropped (they come at the pace of
        /// elections, so the stream is not bounded).
        events,
        /// The current leadership value, to read or wait on (coalesces quick changes; use
        /// [`LeaderLatch::events`] to see every one).
        leadership,
    );

    /// The error that stopped the latch for good, if one did: an error no retry can fix (e.g.
    /// `NoAuth` creating under the path). Connection trouble never stops a latch.
    pub fn failure(&self) -> Option<Error> {
        self.shared.flag.ended()
    }

    /// The fencing token of the current leadership (the creation zxid of our node) while
    /// this participant leads, `None` otherwise: larger than every earlier leader's, see
    /// [`FencingToken`].
    pub fn fencing_token(&self) -> Option<FencingToken> {
        let leads = self.is_leader();
        let node = self.shared.node();
        node.path
            .as_ref()
            .filter(|_| leads)
            .map(|_| FencingToken::from_zxid(node.czxid))
    }

    /// This participant's node, when it has one (Curator: `getOurPath`).
    pub fn node_path(&self) -> Option<String> {
        self.shared.node().path.clone()
    }

    /// Every participant in election order, the leader first.
    pub async fn participants(&self) -> Result<Vec<Participant>> {
        participants(&self.shared.client, &self.shared.path).await
    }

    /// The current leader, if any participant is there.
    pub async fn leader(&self) -> Result<Option<Participant>> {
        Ok(self.participants().await?.into_iter().next())
    }

    /// Leaves the election: stops the latch's task and deletes its node (retrying through
    /// connection loss). Listeners are not told leadership ends (Curator's default,
    /// [`CloseMode::Silent`]); their streams end.
    pub async fn close(self) -> Result<()> {
        self.close_with(CloseMode::Silent).await
    }

    /// [`LeaderLatch::close`], choosing whether listeners hear leadership end
    /// ([`CloseMode::NotifyLeader`]).
    pub async fn close_with(mut self, mode: CloseMode) -> Result<()> {
        // The node's delete is what hands leadership to the next in line, so it goes out
        // before the task is waited for (waking the task to drop it costs a scheduler round
        // or two, which was a third of a hand-off). A poll of the task that still runs
        // meanwhile finds `closing` set: it neither creates a node nor leads.
        let task = self.task.take();
        let (path, in_doubt) = {
            let mut node = self.shared.node();
            node.closing = true;
            (node.path.take(), node.in_doubt.take())
        };
        // Before the delete can reach the server: never two leaders in our own beliefs.
        let notify = mode == CloseMode::NotifyLeader;
        self.shared.set_leader(false, notify);
        self.shared.flag.close(notify);
        if let Some(prefix) = in_doubt {
            guaranteed_delete_protected(&self.shared.client, self.shared.path.clone(), prefix);
        }
        let deleted = async {
            match path {
                // Deleted in the background if this future is dropped half-way (a close
                // bounded by a timeout): the path is no longer in the state `Drop` cleans up.
                Some(path) => delete_for_sure(&self.shared.client, path).await,
                None => Ok(()),
            }
        };
        let stopped = async {
            if let Some(task) = task {
                task.abort();
                let _ = task.await;
            }
        };
        // The delete's request first, then the task's abort (whose wake-up would otherwise
        // go before the request to the connection's task).
        tokio::join!(biased; deleted, stopped).0
    }
}

leadership_by_inherent_methods!(LeaderLatch, LeadershipEvent);

impl Drop for LeaderLatch {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            self.shared.set_leader(false, false);
            self.shared.flag.close(false);
        }
        // Whether or not a close took the task: a close dropped while it waited for the
        // task (before it took the node out of the state) leaves the node here (found by
        // the simulation's cancellation suite, seed 44: a close cut short at its first
        // await left the latch node for the session's life, leading forever).
        self.shared.cleanup_in_background();
    }
}

/// Every participant of the election at `path`, leader first (ids read from the nodes).
pub async fn participants(client: &Client, path: &str) -> Result<Vec<Participant>> {
    let spec = LockSpec {
        dir: path.to_string(),
        lock_name: LATCH_NAME,
        read_write: false,
    };
    participants_of(client, lock_participants(client, &spec).await?).await
}

/// The participants whose nodes are `nodes` (in order, the first leading), with the ids their
/// nodes hold; a node gone meanwhile is left out.
pub(crate) async fn participants_of(
    client: &Client,
    nodes: Vec<String>,
) -> Result<Vec<Participant>> {
    let reads = nodes.iter().map(|p| client.get_data(p));
    let mut out = Vec::with_capacity(nodes.len());
    for (path, read) in nodes.iter().zip(join_all(reads).await) {
        match read {
            Ok((data, _)) => out.push(Participant {
                id: String::from_utf8_lossy(&data).into_owned(),
                is_leader: out.is_empty(),
                path: path.clone(),
            }),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {} // left meanwhile
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Waits for our own node's watch, the predecessor's (none while leading) or any
/// connection-state change. Ours is looked at first: if our node went before our
/// predecessor, both events can be waiting, and the predecessor's must not read as a
/// hand-off. A watch that fires (with any event, a session's too) is taken out of its
/// `Option`, even if this wait is then dropped: what is left can be waited on again.
async fn wait_watches_or_state(
    own: &mut Option<OneshotWatch>,
    predecessor: &mut Option<OneshotWatch>,
    changes: &mut PolicyChanges,
) -> Wake {
    let either = std::future::poll_fn(|cx| {
        for (watch, which) in [
            (&mut *own, Watched::Own),
            (&mut *predecessor, Watched::Predecessor),
        ] {
            if let Some(Poll::Ready(event)) = watch.as_mut().map(|w| Pin::new(w).poll(cx)) {
                *watch = None;
                return Poll::Ready((which, event));
            }
        }
        Poll::Pending
    });
    watch_or_state(either, changes, |_| true).await
}

/// Our own node's watch: `held` if we have it (set while we waited), else a new one.
/// `Ok(None)`: our node is gone.
async fn watch_own_unless_held(
    client: &Client,
    ours: &str,
    held: Option<OneshotWatch>,
) -> Result<Option<OneshotWatch>> {
    match held {
        Some(watch) => Ok(Some(watch)),
        None => Ok(watch_own(client, ours).await?.map(|(_, watch)| watch)),
    }
}

/// The latch's task: keeps a node, works out who leads, reacts to watches and the connection.
async fn run(shared: Arc<Shared>) {
    let client = shared.client.clone();
    let mut changes = PolicyChanges::new(&client, shared.policy);
    let mut owner = 0i64;
    // The node we waited for was the only one before ours in our last listing, and it is
    // gone: we are first without listing again (the hand-off rule, in the module's
    // documentation).
    let mut handed_over = false;
    // The predecessor's watch, kept while it stays our predecessor (see the look-ahead).
    let mut kept: Option<(String, OneshotWatch)> = None;
    // Our own node's watch, set while we wait (beside the predecessor's) and kept until it
    // fires: a deletion of our node is heard while we wait, and the hand-off leads without
    // a request of its own.
    let mut own: Option<(String, OneshotWatch)> = None;
    let mut backoff = Backoff::new();
    loop {
        // Our node, created (with its listing, pipelined) if we have none.
        let mut listed = None;
        if shared.node().path.is_none() {
            match create_node(&shared, &mut changes).await {
                Some((path, session, czxid, children)) => {
                    let mut node = shared.node();
                    node.path = Some(path);
                    node.czxid = czxid;
                    drop(node);
                    owner = session;
                    listed = children;
                    handed_over = false; // A new node: it stands where its listing says.
                }
                None => return, // closed
            }
        }
        let ours = shared.node().path.clone().expect("our node");
        let held = own
            .take()
            .filter(|(path, _)| *path == ours)
            .map(|(_, watch)| watch);
        let (standing, sole, lookahead) = if std::mem::take(&mut handed_over) {
            (Standing::First, false, None)
        } else {
            let children = match listed {
                Some(c) => c,
                None => match client.get_children(&shared.path).await {
                    Ok(c) => c,
                    Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                        // The latch directory is gone, and our node with it.
                        shared.node().path = None;
                        shared.set_leader(false, true);
                        continue;
                    }
                    Err(e) if e.is_closed() => return,
                    Err(_) => {
                        if backoff.pause(&client).await.is_err() {
                            return;
                        }
                        continue;
                    }
                },
            };
            let order = Order::Lock(LATCH_NAME);
            let place = place(order, Rule::Exclusive, children.iter(), node_name(&ours));
            let lookahead = place.lookahead.map(|n| join(&shared.path, &n));
            (place.standing, place.sole, lookahead)
        };
        if !matches!(standing, Standing::Behind(_)) {
            kept = None;
        }
        let wake = match standing {
            Standing::Gone => {
                // Our node is gone (session lost, or deleted by someone): make a new one.
                shared.node().path = None;
                shared.set_leader(false, true);
                continue;
            }
            Standing::First if is_stale(owner, &client) => {
                // First, but from a session that is gone: not ours to lead with.
                shared.node().path = None;
                guaranteed_delete(&client, ours);
                shared.set_leader(false, true);
                continue;
            }
            Standing::First => 'first: {
                // Lead at once: the listing just showed our node first, from this session
                // (waiting for the watch below first would add a round trip to every
                // hand-off). Our own node stays watched, so a deletion under us is noticed;
                // one between the listing and the watch ends leadership as one after it
                // would. The watch was set while we waited, unless we led at once.
                if !lost_now(shared.policy, &client) {
                    shared.lead();
                }
                let mut mine = match watch_own_unless_held(&client, &ours, held).await {
                    Ok(Some(watch)) => Some(watch),
                    Ok(None) => {
                        shared.set_leader(false, true);
                        break 'first Ok(Wake::Node(Watched::Own, EventType::NodeDeleted));
                    }
                    Err(e) if e.is_closed() => return,
                    Err(e) => break 'first Err(e),
                };
                let wake = wait_watches_or_state(&mut mine, &mut None, &mut changes).await;
                own = mine.map(|watch| (ours, watch));
                Ok(wake)
            }
            Standing::Behind(predecessor) => 'behind: {
                shared.set_leader(false, true);
                let predecessor = join(&shared.path, &predecessor);
                // Deeper in line, the one before our predecessor is watched too (the
                // look-ahead, as the locks do): once it leaves we list again while our
                // predecessor still leads or waits, so its deletion alone hands over.
                // The predecessor's watch is kept across a listing made because the
                // look-ahead left. Our own node's watch goes out with them.
                let ((watch, ahead), mine) = tokio::join!(
                    watch_line(&client, &predecessor, lookahead.as_deref(), kept.take()),
                    watch_own_unless_held(&client, &ours, held)
                );
                let mut mine = match mine {
                    Ok(Some(mine)) => Some(mine),
                    // Our node is gone: the listing will say so.
                    Ok(None) => break 'behind Ok(Wake::Node(Watched::Own, EventType::NodeDeleted)),
                    Err(e) if e.is_closed() => return,
                    Err(e) => break 'behind Err(e),
                };
                let wake = match (watch, ahead) {
                    (Err(e), _) | (_, Some(Err(e))) if e.is_closed() => return,
                    (Ok(None), _) => Ok(Wake::Node(Watched::Predecessor, EventType::NodeDeleted)),
                    (Err(e), _) => Err(e),
                    // Gone already: a listing says where we stand.
                    (Ok(Some(watch)), Some(Ok(None))) => {
                        kept = Some((predecessor, watch));
                        Ok(Wake::Node(Watched::Ahead, EventType::NodeDeleted))
                    }
                    (Ok(Some(watch)), ahead) => {
                        let mut watch = Some(watch);
                        let ahead = async {
                            match ahead {
                                Some(Ok(Some(ahead))) => ahead.await,
                                _ => std::future::pending().await,
                            }
                        };
                        let woke = tokio::select! {
                            biased;
                            wake = wait_watches_or_state(&mut mine, &mut watch, &mut changes) => {
                                wake
                            }
                            event = ahead => Wake::Node(Watched::Ahead, event.event_type),
                        };
                        if matches!(woke, Wake::Node(Watched::Ahead, _)) {
                            // Still waited for unless it fired meanwhile (a session's event).
                            kept = watch.map(|watch| (predecessor, watch));
                        }
                        Ok(woke)
                    }
                };
                own = mine.map(|watch| (ours, watch));
                wake
            }
        };
        if wake.is_ok() {
            backoff.reset();
        }
        match wake {
            // Only worth anything while waiting, as the one before us was the only one.
            Ok(Wake::Node(Watched::Predecessor, EventType::NodeDeleted)) => handed_over = sole,
            // Anything else that fired or is gone (our own node's too): look again.
            Ok(Wake::Node(..) | Wake::Reset | Wake::TimedOut) => {}
            // A request failed: back off, then look again once connected.
            Err(_) => {
                backoff.sleep().await;
                if !handle_state(&shared, client.state(), &mut changes).await {
                    return;
                }
            }
            Ok(Wake::Closed) => {
                shared.set_leader(false, true);
                return;
            }
            Ok(Wake::State(change)) => {
                if !handle_state(&shared, change.state, &mut changes).await {
                    return;
                }
            }
        }
    }
}

/// Reacts to a connection-state change; waits for the connection to return. False when the
/// client is closed.
async fn handle_state(
    shared: &Shared,
    mut state: ConnectionState,
    changes: &mut PolicyChanges,
) -> bool {
    loop {
        if lost_in(shared.policy, &shared.client, state) {
            shared.set_leader(false, true);
        }
        match state {
            ConnectionState::Closed => return false,
            ConnectionState::Lost => {
                // The session is gone: so is our node, or it will be at the server's expiry.
                if let Some(old) = shared.node().path.take() {
                    guaranteed_delete(&shared.client, old);
                }
            }
            s if s.is_connected() => return true,
            _ => {}
        }
        match changes.next().await {
            Some(change) => state = change.state,
            None => return false,
        }
    }
}

/// Creates our node (pipelined with a listing). Returns its path, owner session, creation
/// zxid and the listing; `None` when the client is closed.
async fn create_node(
    shared: &Shared,
    changes: &mut PolicyChanges,
) -> Option<(String, i64, i64, Option<zkrs_client::Children>)> {
    let client = &shared.client;
    let options = CreateOptions::new(CreateMode::EphemeralSequential).with_stat();
    let mut backoff = Backoff::new();
    loop {
        let protected = ProtectedName::new();
        let path = protected.path(&shared.path, LATCH_NAME);
        {
            let mut node = shared.node();
            if node.closing {
                return None; // closed; a poll still running as the latch closes
            }
            node.in_doubt = Some(protected.prefix().to_string());
        }
        let (created, listed) = tokio::join!(
            client.create_with(&path, shared.id.as_bytes(), &options),
            client.get_children(&shared.path)
        );
        let result = match created {
            Ok((path, stat)) => {
                let (owner, czxid) = stat.map_or((0, 0), |s| (s.ephemeral_owner, s.czxid));
                Some((path, owner, czxid, listed.ok()))
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                shared.node().in_doubt = None;
                match create_parents(
                    client,
                    &shared.path,
                    crate::framework::ParentMode::Container,
                )
                .await
                {
                    Ok(()) => {}
                    Err(e) if e.is_closed() => return None,
                    Err(e) if e.is_retryable() => backoff.sleep().await,
                    Err(e) => {
                        shared.fail(e);
                        return None;
                    }
                }
                continue;
            }
            Err(e) if e.is_closed() => return None,
            Err(e) if !e.is_retryable() && !e.is_session_expired() => {
                // No retry fixes this (no permission, a bad path): stop, and say why.
                shared.node().in_doubt = None;
                shared.fail(e);
                return None;
            }
            Err(_) => {
                // Connection loss (or the session): find out whether the create happened. The
                // same protected name is looked for until we know: a new attempt under a new
                // name would leave the first node, if it was made, for the session's life.
                match resolve_in_doubt(shared, changes, &protected, &mut backoff).await {
                    InDoubt::Found(path, owner, czxid) => Some((path, owner, czxid, None)),
                    InDoubt::NotMade => {
                        shared.node().in_doubt = None;
                        continue;
                    }
                    InDoubt::Stop => return None,
                }
            }
        };
        shared.node().in_doubt = None;
        return result;
    }
}

/// What became of a create whose reply was lost.
enum InDoubt {
    /// It was made: its path, owner and creation zxid.
    Found(String, i64, i64),
    /// It was not made (or was made by a session that is gone).
    NotMade,
    /// The latch is closing or has failed.
    Stop,
}

/// Looks for the node of the protected create `protected` once connected, as many times as the
/// connection is lost while looking.
async fn resolve_in_doubt(
    shared: &Shared,
    changes: &mut PolicyChanges,
    protected: &ProtectedName,
    backoff: &mut Backoff,
) -> InDoubt {
    let client = &shared.client;
    loop {
        backoff.sleep().await;
        while !client.state().is_connected() {
            match changes.next().await {
                Some(c) if c.state == ConnectionState::Closed => return InDoubt::Stop,
                Some(c) if lost_in(shared.policy, client, c.state) => {
                    shared.set_leader(false, true)
                }
                Some(_) => {}
                None => return InDoubt::Stop,
            }
        }
        let mode = CreateMode::EphemeralSequential;
        match find_protected(client, &shared.path, protected, mode).await {
            Ok(Some((path, stat))) => {
                return InDoubt::Found(path, stat.ephemeral_owner, stat.czxid)
            }
            Ok(None) => return InDoubt::NotMade,
            Err(e) if e.is_closed() => return InDoubt::Stop,
            Err(e) if e.is_retryable() || e.is_session_expired() => {}
            Err(e) => {
                shared.fail(e);
                return InDoubt::Stop;
            }
        }
    }
}
