//! [`LeaderElection`]: the state machine of ZooKeeper's own election recipe
//! (`LeaderElectionSupport`), on the same znodes.
//!
//! Each participant makes an *offer*: an ephemeral-sequential node `<root>/n_<seq>` holding
//! its host name. The offer with the lowest sequence number leads (first offered, first
//! elected); every other one watches the offer just before its own, so a departure wakes
//! exactly one participant. The election goes through the recipe's states, and tells
//! subscribers about each step with the recipe's events:
//!
//! ```text
//! start    → START
//!          → OFFER_START, OFFER_COMPLETE            (the node is created)
//!          → DETERMINE_START, DETERMINE_COMPLETE    (where do we stand?)
//!          → ELECTED_START, ELECTED_COMPLETE        (first in line)
//!          | READY_START, READY_COMPLETE            (behind someone: watching it)
//! predecessor leaves → DETERMINE_START, ... again
//! trouble  → FAILED → (DETERMINE again, or OFFER again if the node is gone)
//! close    → STOP_START, STOP_COMPLETE              (the node is deleted)
//! ```
//!
//! Beyond the Java recipe:
//! - A participant is only ELECTED with a node owned by the current session, and the leader
//!   watches its own node: if it is deleted, FAILED, then a new offer.
//! - Connection states: under the standard policy a suspended connection is already FAILED
//!   (leadership can no longer be counted on), then DETERMINE again once reconnected to the
//!   same session; under the session-deadline policy the same happens at the suspension's
//!   deadline, if the session is not back by then; under every policy a lost session is
//!   FAILED, then a new OFFER.
//! - A create whose outcome is unknown (connection loss) is resolved by looking for a node of
//!   this session with our host name: adopted if it is the only one, deleted otherwise. This
//!   assumes one offer per session and root, as in the Java recipe.
//! - A hand-off without a listing: when the offer we watched was the only one before ours in
//!   our last listing, its deletion (or an `exists` that finds it gone) makes us first, and
//!   DETERMINE completes without asking again (the Java recipe lists the offers). Offers are
//!   all sequential, so none can sort before ours once our listing is made; the locks'
//!   acquire loop (`lock::internals`) has the whole argument. What stays is the check before
//!   ELECTED: our own node watched, and owned by our session (one round trip). Deeper in
//!   line, the offer before our predecessor's is watched too (`getData`) and its departure
//!   makes us list again while our predecessor still leads or waits (the look-ahead, as in
//!   the locks), so the predecessor's deletion alone hands over there too.

mod events;
mod offers;

use crate::error::ErrorExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use zkrs_client::{
    Client, ConnectionState, CreateMode, CreateOptions, ErrorCode, EventStream, EventType,
    OneshotWatch, Result, StateChange,
};

use super::latch::Participant;
use super::leadership::{leadership_by_inherent_methods, LeaderFlag};
use crate::framework::Listeners;
use crate::framework::{
    self, create_parents, delete_for_sure, guaranteed_delete, join, lost_now, node_name, Backoff,
    ConnectionStatePolicy, FencingToken, PolicyChanges, Wake,
};
use crate::leader::handle::leader_handle_methods;
use crate::leader::options::{leader_builder_setters, LeaderOptions};
use crate::line::is_stale;
use crate::line::watch::{watch_own, watch_predecessor, PredecessorWatch};

use crate::line::place::{place, Order, Place, Rule, Standing};
pub use events::{ElectionEvent, ElectionState};
use offers::{cleanup_in_doubt, offers, resolve_in_doubt};
pub use offers::{LeaderOffer, OFFER_PREFIX};

#[derive(Debug, Default)]
struct Offer {
    /// Our node, when it exists.
    path: Option<String>,
    /// The session that owns it.
    session: i64,
    /// A create was sent under this session and its outcome is unknown.
    in_doubt: Option<i64>,
    /// Its creation zxid (meaningful while `path` is set).
    czxid: i64,
    /// `close` has taken the offer: a poll of the task still running makes no new one and
    /// keeps none it made.
    closing: bool,
}

#[derive(Debug)]
struct Shared {
    client: Client,
    root: String,
    id: String,
    policy: ConnectionStatePolicy,
    state: watch::Sender<ElectionState>,
    listeners: Listeners<ElectionEvent>,
    /// ELECTED or not, for the leader recipes' shared vocabulary.
    flag: LeaderFlag,
    offer: Mutex<Offer>,
    /// STOP_START was told: no event but STOP_COMPLETE follows it (read and written only under
    /// the listeners' lock, in `dispatch` and `stop_start`).
    stopping: AtomicBool,
}

impl Shared {
    fn offer(&self) -> std::sync::MutexGuard<'_, Offer> {
        self.offer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves to the event's state and tells every subscriber, in one step (so the state
    /// and the events are seen in the same order).
    fn dispatch(&self, event: ElectionEvent) {
        self.listeners.send_with(|| {
            if self.stopping.load(Ordering::Relaxed) && event != ElectionEvent::StopComplete {
                // A poll of the task still running while the election stops.
                return None;
            }
            Some(self.enter(event))
        });
    }

    /// Tells STOP_START, after which no event of the task's gets through.
    fn stop_start(&self) {
        self.listeners.send_with(|| {
            self.stopping.store(true, Ordering::Relaxed);
            Some(self.enter(ElectionEvent::StopStart))
        });
    }

    /// Moves to the event's state (under the listeners' lock).
    fn enter(&self, event: ElectionEvent) -> ElectionEvent {
        let state = event.state();
        self.state.send_if_modified(|current| {
            let changed = *current != state;
            *current = state;
            changed
        });
        self.flag.set(state == ElectionState::Elected, false);
        event
    }

    fn current(&self) -> ElectionState {
        *self.state.borrow()
    }

    /// Takes the node and the create in doubt, for cleanup, and keeps the task from making
    /// or keeping another.
    fn take_offer(&self) -> (Option<String>, Option<i64>) {
        let mut offer = self.offer();
        offer.closing = true;
        (offer.path.take(), offer.in_doubt.take())
    }

    /// Records the offer the task made or found, unless the election is closing: then it is
    /// deleted (false).
    fn keep_offer(&self, path: String, session: i64, czxid: i64) -> bool {
        let mut offer = self.offer();
        offer.in_doubt = None;
        if offer.closing {
            guaranteed_delete(&self.client, path);
            return false;
        }
        offer.path = Some(path);
        offer.session = session;
        offer.czxid = czxid;
        true
    }
}

/// A participant in the election at a root node, following ZooKeeper's own election recipe
/// (`LeaderElectionSupport`): a process built on it and a Java process using the recipe take
/// part in the same election.
///
/// Subscribe on the builder to see every event from START:
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::leader::{ElectionEvent, LeaderElection};
/// let builder = LeaderElection::builder(&client, "/services/reports").id("host-a.example.com");
/// let mut events = builder.events();
/// let election = builder.start()?;
/// while let Some(event) = events.next().await {
///     if event == ElectionEvent::ElectedComplete {
///         break; // ... lead while `election.is_leader()` ...
///     }
/// }
/// election.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct LeaderElection {
    shared: Arc<Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
}

/// Settings for a [`LeaderElection`]; [`LeaderElectionBuilder::start`] starts it.
#[derive(Debug)]
#[must_use = "a builder does nothing until `start`"]
pub struct LeaderElectionBuilder {
    options: LeaderOptions,
    listeners: Listeners<ElectionEvent>,
}

impl LeaderElectionBuilder {
    leader_builder_setters!(
        LeaderElectionBuilder,
        /// This participant's id, stored in its offer (the Java recipe's host name; default:
        /// empty).
        id,
        /// The connection-state policy (default: standard): under the standard one a suspended
        /// connection is FAILED at once; under session-only, only a lost session is.
        policy,
    );

    /// The election's events, from START on: a stream taken here sees every event of the
    /// election this builder starts (one taken from [`LeaderElection::events`] sees those
    /// from then on). None is dropped.
    pub fn events(&self) -> EventStream<ElectionEvent> {
        self.listeners.subscribe()
    }

    /// Starts the election: START, then the election's task starts on the current tokio
    /// runtime and makes an offer (the root is created, as a container, if missing). Fails
    /// (kind `InvalidInput`) if the root is not a valid znode path, before anything is sent.
    /// Needs a tokio runtime.
    pub fn start(self) -> Result<LeaderElection> {
        let (client, root, id, policy) = self.options.validated()?;
        let (state, _) = watch::channel(ElectionState::Stop);
        let shared = Arc::new(Shared {
            client,
            root,
            id,
            policy,
            state,
            listeners: self.listeners,
            flag: LeaderFlag::new(),
            offer: Mutex::new(Offer::default()),
            stopping: AtomicBool::new(false),
        });
        shared.dispatch(ElectionEvent::Start);
        let task = tokio::spawn(run(shared.clone()));
        Ok(LeaderElection {
            shared,
            task: Mutex::new(Some(task)),
        })
    }
}

impl LeaderElection {
    /// A builder for a participant in the election at `root`.
    pub fn builder(client: &Client, root: &str) -> LeaderElectionBuilder {
        LeaderElectionBuilder {
            options: LeaderOptions::new(client, root),
            listeners: Listeners::unbounded(),
        }
    }

    fn task(&self) -> std::sync::MutexGuard<'_, Option<JoinHandle<()>>> {
        self.task.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Leaves the election for good (the Java recipe's `stop`): STOP_START, the offer is
    /// deleted (retrying through connection loss), STOP_COMPLETE; the event streams end. If
    /// this future is dropped, the offer is still deleted, in the background; so is an offer
    /// whose create was under way (its outcome unknown) when stopped.
    pub async fn close(self) -> Result<()> {
        // The offer's delete is what hands leadership to the next in line, so it goes out
        // before the task is waited for (as `LeaderLatch::close` does). A poll of the task
        // that still runs meanwhile neither makes nor keeps an offer (`take_offer` marked the
        // offer closing) nor tells an event after STOP_START.
        let task = self.task().take();
        self.shared.stop_start();
        let (path, in_doubt) = self.shared.take_offer();
        let client = &self.shared.client;
        if let Some(session) = in_doubt {
            cleanup_in_doubt(client, &self.shared.root, &self.shared.id, session);
        }
        let deleted = async {
            match path {
                // Deleted in the background if this future is dropped half-way.
                Some(path) => delete_for_sure(client, path).await,
                None => Ok(()),
            }
        };
        let stopped = async {
            if let Some(task) = task {
                task.abort();
                let _ = task.await;
            }
        };
        // The delete's request first, then the task's abort.
        let (result, ()) = tokio::join!(biased; deleted, stopped);
        self.shared.dispatch(ElectionEvent::StopComplete);
        self.shared.flag.end(zkrs_client::Error::closed());
        result
    }

    /// Every event from now on, in order; none is dropped (they come at the pace of
    /// elections, so the stream is not bounded).
    pub fn events(&self) -> EventStream<ElectionEvent> {
        self.shared.listeners.subscribe()
    }

    leader_handle_methods!(
        /// Waits until this participant leads (ELECTED). Fails once the election is stopped.
        await_leadership,
        /// Waits at most `timeout` for leadership: `Ok(true)` once ELECTED, `Ok(false)` if the
        /// time ran out; fails once stopped.
        await_leadership_timeout,
        /// Whether ELECTED, to read or wait on (coalesces quick changes).
        leadership,
        /// This participant's id (the Java recipe's host name).
        id,
    );

    /// The current state.
    pub fn state(&self) -> ElectionState {
        self.shared.current()
    }

    /// The current state, to read or wait on (coalesces quick changes;
    /// [`LeaderElection::events`] sees every event).
    pub fn states(&self) -> zkrs_client::Current<ElectionState> {
        zkrs_client::__private::current_from_watch(self.shared.state.subscribe())
    }

    /// Whether this participant leads: ELECTED, with its node owned by the current session,
    /// and connected (or, under the session-deadline policy, suspended for less than the
    /// session's deadline).
    pub fn is_leader(&self) -> bool {
        let client = &self.shared.client;
        self.shared.current() == ElectionState::Elected
            && self.shared.offer().session == client.session_id()
            && !lost_now(self.shared.policy, client)
    }

    /// The fencing token of the current leadership (the creation zxid of our offer) while
    /// this participant leads, `None` otherwise: larger than every earlier leader's, see
    /// [`FencingToken`].
    pub fn fencing_token(&self) -> Option<FencingToken> {
        let leads = self.is_leader();
        let offer = self.shared.offer();
        offer
            .path
            .as_ref()
            .filter(|_| leads)
            .map(|_| FencingToken::from_zxid(offer.czxid))
    }

    /// Waits at most `timeout` until the election is in `state`; whether it is.
    pub async fn await_state(&self, state: ElectionState, timeout: Duration) -> bool {
        let mut rx = self.shared.state.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|s| *s == state))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// The root node.
    pub fn root(&self) -> &str {
        &self.shared.root
    }

    /// Our offer's node path, when it exists.
    pub fn node_path(&self) -> Option<String> {
        self.shared.offer().path.clone()
    }

    /// Every offer in election order, the leader's first (ids read from the nodes).
    pub async fn offers(&self) -> Result<Vec<LeaderOffer>> {
        offers(&self.shared.client, &self.shared.root, usize::MAX).await
    }

    /// The leader, if there is any offer: its id and its offer's node (the Java recipe's
    /// `getLeaderHostName`, with the node).
    pub async fn leader(&self) -> Result<Option<Participant>> {
        election_leader(&self.shared.client, &self.shared.root).await
    }
}

/// The leader of the election at `root`, if there is any offer: its id and its offer's node
/// ([`LeaderElection::leader`], without taking part in the election).
pub async fn election_leader(client: &Client, root: &str) -> Result<Option<Participant>> {
    Ok(offers(client, root, 1)
        .await?
        .into_iter()
        .next()
        .map(|offer| Participant {
            id: offer.id,
            is_leader: true,
            path: offer.path,
        }))
}

leadership_by_inherent_methods!(LeaderElection, ElectionEvent);

impl Drop for LeaderElection {
    /// Stops the election in the background: the offer is deleted by a background task.
    fn drop(&mut self) {
        if let Some(task) = self.task().take() {
            task.abort();
        }
        if self.shared.current() != ElectionState::Stop {
            self.shared.dispatch(ElectionEvent::StopStart);
            self.shared.dispatch(ElectionEvent::StopComplete);
        }
        let (path, in_doubt) = self.shared.take_offer();
        let client = &self.shared.client;
        if let Some(path) = path {
            guaranteed_delete(client, path);
        }
        if let Some(session) = in_doubt {
            cleanup_in_doubt(client, &self.shared.root, &self.shared.id, session);
        }
    }
}

/// Applies one connection-state change. False when the client is closed.
fn on_change(shared: &Shared, change: StateChange) -> bool {
    if shared.policy.is_error_state(change.state)
        && !matches!(
            shared.current(),
            ElectionState::Failed | ElectionState::Stop
        )
    {
        shared.dispatch(ElectionEvent::Failed);
    }
    match change.state {
        ConnectionState::Closed => false,
        ConnectionState::Lost => {
            // The session is gone, and our offer with it (or at the server's expiry): a new
            // one is needed. The old one is deleted if it still exists (its path is unique).
            let mut offer = shared.offer();
            if offer.session != shared.client.session_id() || offer.session == 0 {
                if let Some(old) = offer.path.take() {
                    guaranteed_delete(&shared.client, old);
                }
            }
            true
        }
        _ => true,
    }
}

/// Applies the queued connection-state changes until connected. False when the client is
/// closed.
async fn recover(shared: &Shared, changes: &mut PolicyChanges) -> bool {
    framework::recover(&shared.client, changes, |c| on_change(shared, c)).await
}

/// After a failed request: the back-off's sleep (a server that throttles, or a lasting error
/// such as no permission, is not asked again at once), then waits for the connection
/// (applying the state changes on the way). False when the client is closed.
async fn settle(shared: &Shared, changes: &mut PolicyChanges, backoff: &mut Backoff) -> bool {
    backoff.sleep().await;
    recover(shared, changes).await
}

/// Waits for the watch or a connection-state change that matters.
async fn wait_on(shared: &Shared, watch: OneshotWatch, changes: &mut PolicyChanges) -> Wake {
    let on_change = |c| on_change(shared, c);
    framework::wait_or_recover(&shared.client, shared.policy, watch, changes, on_change).await
}

/// The election's task.
async fn run(shared: Arc<Shared>) {
    let client = shared.client.clone();
    let mut changes = PolicyChanges::new(&client, shared.policy);
    // The offer we waited for was the only one before ours in our last listing, and it is
    // gone: we are first without listing again (the hand-off rule, in the module's
    // documentation).
    let mut handed_over = false;
    // Reset once a watch is set: a wait for an event follows, not a retry.
    let mut backoff = Backoff::new();
    'election: loop {
        if shared.offer().path.is_none() {
            handed_over = false; // A new offer: it stands where a listing says.
            shared.dispatch(ElectionEvent::OfferStart);
            if !make_offer(&shared, &mut changes).await {
                return;
            }
            shared.dispatch(ElectionEvent::OfferComplete);
        }
        let (ours, owner) = {
            let offer = shared.offer();
            (offer.path.clone().unwrap_or_default(), offer.session)
        };

        shared.dispatch(ElectionEvent::DetermineStart);
        let listed = if std::mem::take(&mut handed_over) {
            None
        } else {
            Some(client.get_children(&shared.root).await)
        };
        let (standing, sole, lookahead) = match listed {
            None => (Standing::First, false, None),
            Some(Ok(children)) => {
                // Deeper in line, the offer before our predecessor's is watched too (the
                // look-ahead, as the locks do): once it leaves we list again while our
                // predecessor still leads or waits, so its deletion alone hands over.
                let place = place_offer(&children, &ours);
                let lookahead = place.lookahead.map(|n| join(&shared.root, &n));
                (place.standing, place.sole, lookahead)
            }
            Some(Err(e)) if e.code() == Some(ErrorCode::NoNode) => (Standing::Gone, false, None),
            Some(Err(e)) if e.is_closed() => return,
            Some(Err(_)) => {
                if !settle(&shared, &mut changes, &mut backoff).await {
                    return;
                }
                continue 'election;
            }
        };

        match standing {
            Standing::Gone => {
                // Deleted under us (or the session is gone): a new offer.
                shared.dispatch(ElectionEvent::Failed);
                shared.offer().path = None;
            }
            Standing::First => {
                shared.dispatch(ElectionEvent::DetermineComplete);
                let mut elected = false;
                loop {
                    if is_stale(owner, &client) {
                        // First, but with an old session's node: not ours to lead with.
                        shared.dispatch(ElectionEvent::Failed);
                        shared.offer().path = None;
                        guaranteed_delete(&client, ours);
                        continue 'election;
                    }
                    // Lead, and watch our own node so a deletion under us is noticed.
                    let watch = match watch_own(&client, &ours).await {
                        Ok(Some((stat, watch))) if stat.ephemeral_owner == owner => {
                            backoff.reset();
                            watch
                        }
                        Ok(_) => {
                            shared.dispatch(ElectionEvent::Failed);
                            shared.offer().path = None;
                            continue 'election;
                        }
                        Err(e) if e.is_closed() => return,
                        Err(_) => {
                            if !settle(&shared, &mut changes, &mut backoff).await {
                                return;
                            }
                            continue 'election;
                        }
                    };
                    if !elected {
                        if lost_now(shared.policy, &client) {
                            if !recover(&shared, &mut changes).await {
                                return;
                            }
                            continue 'election;
                        }
                        shared.dispatch(ElectionEvent::ElectedStart);
                        shared.dispatch(ElectionEvent::ElectedComplete);
                        elected = true;
                    }
                    match wait_on(&shared, watch, &mut changes).await {
                        Wake::Node(_, EventType::NodeDeleted) => {
                            shared.dispatch(ElectionEvent::Failed);
                            shared.offer().path = None;
                            continue 'election;
                        }
                        Wake::Node(..) => {} // Data changed: watch again.
                        // (`wait_on` applies a state change itself, and has no deadline.)
                        Wake::Reset | Wake::State(_) | Wake::TimedOut => continue 'election,
                        Wake::Closed => return,
                    }
                }
            }
            Standing::Behind(predecessor) => {
                shared.dispatch(ElectionEvent::DetermineComplete);
                let predecessor = join(&shared.root, &predecessor);
                let mut ready = false;
                let (mut sole, mut lookahead) = (sole, lookahead);
                // The look-ahead's watch (`getData`: none is left behind on a node gone
                // already). When it fires, a quiet listing (no events: our place is the
                // same unless the listing says otherwise) tells whether our predecessor is
                // now the only one before us.
                let mut ahead: Option<OneshotWatch> = None;
                loop {
                    if let (Some(path), None) = (&lookahead, &ahead) {
                        match watch_predecessor(&client, path, PredecessorWatch::GetData).await {
                            Ok(Some(watch)) => ahead = Some(watch),
                            Ok(None) => match behind_the_same(&shared, &ours, &predecessor).await {
                                Some(place) => {
                                    (sole, lookahead) = place;
                                    continue;
                                }
                                None => continue 'election,
                            },
                            Err(e) if e.is_closed() => return,
                            // The predecessor's watch alone still says what we need.
                            Err(_) => lookahead = None,
                        }
                    }
                    let how = PredecessorWatch::Exists;
                    let watch = match watch_predecessor(&client, &predecessor, how).await {
                        Ok(Some(watch)) => {
                            backoff.reset();
                            watch
                        }
                        // Gone between the listing and now: determine again.
                        Ok(None) => {
                            handed_over = sole;
                            continue 'election;
                        }
                        Err(e) if e.is_closed() => return,
                        Err(_) => {
                            if !settle(&shared, &mut changes, &mut backoff).await {
                                return;
                            }
                            continue 'election;
                        }
                    };
                    if !ready {
                        shared.dispatch(ElectionEvent::ReadyStart);
                        shared.dispatch(ElectionEvent::ReadyComplete);
                        ready = true;
                    }
                    let woke = match ahead.as_mut() {
                        Some(ahead) => tokio::select! {
                            biased;
                            wake = wait_on(&shared, watch, &mut changes) => Some(wake),
                            _ = ahead => None,
                        },
                        None => Some(wait_on(&shared, watch, &mut changes).await),
                    };
                    let Some(woke) = woke else {
                        ahead = None;
                        match behind_the_same(&shared, &ours, &predecessor).await {
                            Some(place) => (sole, lookahead) = place,
                            None => continue 'election,
                        }
                        continue;
                    };
                    match woke {
                        Wake::Node(_, EventType::NodeDeleted) => {
                            handed_over = sole;
                            continue 'election;
                        }
                        Wake::Node(..) => {} // Data changed: watch again.
                        // (`wait_on` applies a state change itself, and has no deadline.)
                        Wake::Reset | Wake::State(_) | Wake::TimedOut => continue 'election,
                        Wake::Closed => return,
                    }
                }
            }
        }
    }
}

/// A listing after the look-ahead left: `Some((sole, lookahead))` while our offer is still
/// right behind `predecessor` (whether that one is now the only one before us, and the new
/// look-ahead); `None` when anything else is the case or the listing failed (determine
/// again, with its events).
async fn behind_the_same(
    shared: &Shared,
    ours: &str,
    predecessor: &str,
) -> Option<(bool, Option<String>)> {
    let children = shared.client.get_children(&shared.root).await.ok()?;
    let place = place_offer(&children, ours);
    match place.standing {
        Standing::Behind(before) if before == node_name(predecessor) => {
            let lookahead = place.lookahead.map(|n| join(&shared.root, &n));
            Some((place.sole, lookahead))
        }
        _ => None,
    }
}

/// Where our offer (its path) stands in a listing of the root.
fn place_offer(children: &zkrs_client::Children, ours: &str) -> Place {
    let order = Order::Offers(OFFER_PREFIX);
    place(order, Rule::Exclusive, children.iter(), node_name(ours))
}

/// Creates our offer. False when the client is closed.
async fn make_offer(shared: &Shared, changes: &mut PolicyChanges) -> bool {
    let client = &shared.client;
    let options = CreateOptions::new(CreateMode::EphemeralSequential).with_stat();
    let path = join(&shared.root, OFFER_PREFIX);
    let mut backoff = Backoff::new();
    loop {
        let session = client.session_id();
        {
            let mut offer = shared.offer();
            if offer.closing {
                return false; // a poll still running as the election closes
            }
            offer.in_doubt = Some(session);
        }
        match client
            .create_with(&path, shared.id.as_bytes(), &options)
            .await
        {
            Ok((created, stat)) => {
                let (owner, czxid) = stat.map_or((0, 0), |s| (s.ephemeral_owner, s.czxid));
                return shared.keep_offer(created, owner, czxid);
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                shared.offer().in_doubt = None;
                match create_parents(
                    client,
                    &shared.root,
                    crate::framework::ParentMode::Container,
                )
                .await
                {
                    Err(e) if e.is_closed() => return false,
                    Err(_) => {
                        if !settle(shared, changes, &mut backoff).await {
                            return false;
                        }
                    }
                    Ok(()) => {}
                }
            }
            Err(e) if e.is_closed() => return false,
            Err(e) if e.is_retryable() || e.is_session_expired() => {
                // Settle the doubt before creating again: a second offer made while the first
                // may exist would leave the first, first in line, for the session's life
                // (found by the simulation: the look after a lost create failed too, on a
                // member that lagged, and the offer was made again).
                loop {
                    if !settle(shared, changes, &mut backoff).await {
                        return false;
                    }
                    match resolve_in_doubt(client, &shared.root, &shared.id, session).await {
                        Ok(Some((found, owner, czxid))) => {
                            return shared.keep_offer(found, owner, czxid);
                        }
                        Ok(None) => {
                            shared.offer().in_doubt = None;
                            break;
                        }
                        Err(e) if e.is_closed() => return false,
                        Err(_) => {} // Still in doubt: look again.
                    }
                }
            }
            Err(_) => {
                // Not retryable as such (e.g. no permission): try again, slowly.
                shared.offer().in_doubt = None;
                if backoff.pause(client).await.is_err() {
                    return false;
                }
            }
        }
    }
}
