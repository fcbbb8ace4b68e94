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
//! start()  → START
//!          → OFFER_START, OFFER_COMPLETE            (the node is created)
//!          → DETERMINE_START, DETERMINE_COMPLETE    (where do we stand?)
//!          → ELECTED_START, ELECTED_COMPLETE        (first in line)
//!          | READY_START, READY_COMPLETE            (behind someone: watching it)
//! predecessor leaves → DETERMINE_START, ... again
//! trouble  → FAILED → (DETERMINE again, or OFFER again if the node is gone)
//! stop()   → STOP_START, STOP_COMPLETE              (the node is deleted)
//! ```
//!
//! Beyond the Java recipe:
//! - A participant is only ELECTED with a node owned by the current session, and the leader
//!   watches its own node: if it is deleted, FAILED, then a new offer.
//! - Connection states: under the standard policy a suspended connection is already FAILED
//!   (leadership can no longer be counted on), then DETERMINE again once reconnected to the
//!   same session; under either policy a lost session is FAILED, then a new OFFER.
//! - A create whose outcome is unknown (connection loss) is resolved by looking for a node of
//!   this session with our host name: adopted if it is the only one, deleted otherwise. This
//!   assumes one offer per session and root, as in the Java recipe.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use zkrs_client::__private::ErrorInternals;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use zkrs_client::{
    Client, ConnectionState, CreateMode, CreateOptions, ErrorCode, EventStream, EventType,
    OneshotWatch, Result, StateChange, StateChanges,
};

use crate::framework::Listeners;

use super::leadership::{backoff, leadership_by_inherent_methods, LeaderFlag, Leadership};
use crate::framework::{
    self, create_parents, delete_for_sure, delete_until_gone, guaranteed_delete, join, join_all,
    node_name, wait_connected, ConnectionStatePolicy, Wake,
};
use crate::sequence::sequence_number;

/// The name of offer nodes before their sequence number (the Java recipe's `n_`).
pub const OFFER_PREFIX: &str = "n_";

/// The states of the election (the Java recipe's `State`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElectionState {
    /// Started; no offer yet.
    Start,
    /// Making an offer (creating the node).
    Offer,
    /// Working out where the offer stands.
    Determine,
    /// Leading.
    Elected,
    /// Not leading: watching the offer just before ours.
    Ready,
    /// Something went wrong (connection, session, our node deleted); the election recovers on
    /// its own unless stopped.
    Failed,
    /// Stopped (also the state before the first start).
    Stop,
}

/// The events of the election, in the order they happen (the Java recipe's `EventType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElectionEvent {
    /// [`LeaderElection::start`] was called.
    Start,
    /// Creating an offer.
    OfferStart,
    /// The offer exists.
    OfferComplete,
    /// Working out where the offer stands.
    DetermineStart,
    /// Done: ELECTED or READY follows.
    DetermineComplete,
    /// Becoming leader.
    ElectedStart,
    /// Leading.
    ElectedComplete,
    /// Becoming a follower.
    ReadyStart,
    /// Following: watching the offer just before ours.
    ReadyComplete,
    /// Something went wrong; recovery follows.
    Failed,
    /// [`LeaderElection::stop`] was called.
    StopStart,
    /// Stopped: the offer is deleted.
    StopComplete,
}

impl ElectionEvent {
    /// The state the election is in once this event is dispatched.
    pub fn state(self) -> ElectionState {
        match self {
            ElectionEvent::Start => ElectionState::Start,
            ElectionEvent::OfferStart | ElectionEvent::OfferComplete => ElectionState::Offer,
            ElectionEvent::DetermineStart | ElectionEvent::DetermineComplete => {
                ElectionState::Determine
            }
            ElectionEvent::ElectedStart | ElectionEvent::ElectedComplete => ElectionState::Elected,
            ElectionEvent::ReadyStart | ElectionEvent::ReadyComplete => ElectionState::Ready,
            ElectionEvent::Failed => ElectionState::Failed,
            ElectionEvent::StopStart | ElectionEvent::StopComplete => ElectionState::Stop,
        }
    }
}

/// One participant's offer, as its node says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderOffer {
    /// The sequence number of the node (the order of the election).
    pub sequence: u32,
    /// The node's path.
    pub path: String,
    /// The host name stored in the node (its data, read as UTF-8).
    pub host_name: String,
    /// The node's data as stored.
    pub data: zkrs_client::Bytes,
}

#[derive(Debug, Default)]
struct Offer {
    /// Our node, when it exists.
    path: Option<String>,
    /// The session that owns it.
    session: i64,
    /// A create was sent under this session and its outcome is unknown.
    in_doubt: Option<i64>,
}

#[derive(Debug)]
struct Shared {
    client: Client,
    root: String,
    host_name: String,
    policy: ConnectionStatePolicy,
    state: watch::Sender<ElectionState>,
    listeners: Listeners<ElectionEvent>,
    /// ELECTED or not, for the leader recipes' shared vocabulary.
    flag: LeaderFlag,
    offer: Mutex<Offer>,
}

impl Shared {
    fn offer(&self) -> std::sync::MutexGuard<'_, Offer> {
        self.offer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves to the event's state and tells every subscriber, in one step (so the state
    /// and the events are seen in the same order).
    fn dispatch(&self, event: ElectionEvent) {
        self.listeners.send_with(|| {
            let state = event.state();
            self.state.send_if_modified(|current| {
                let changed = *current != state;
                *current = state;
                changed
            });
            self.flag.set(state == ElectionState::Elected, false);
            Some(event)
        });
    }

    fn current(&self) -> ElectionState {
        *self.state.borrow()
    }

    /// Takes the node and the create in doubt, for cleanup.
    fn take_offer(&self) -> (Option<String>, Option<i64>) {
        let mut offer = self.offer();
        (offer.path.take(), offer.in_doubt.take())
    }
}

/// A participant in the election at a root node, following ZooKeeper's own election recipe
/// (`LeaderElectionSupport`): a process built on it and a Java process using the recipe take
/// part in the same election.
///
/// Subscribe before starting to see every event:
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::{ElectionEvent, LeaderElection};
/// let election = LeaderElection::new(&client, "/services/reports", "host-a.example.com");
/// let mut events = election.events();
/// election.start();
/// while let Some(event) = events.next().await {
///     if event == ElectionEvent::ElectedComplete {
///         break; // ... lead while `election.is_leader()` ...
///     }
/// }
/// election.stop().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct LeaderElection {
    shared: Arc<Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl LeaderElection {
    /// An election at `root` (created, as a container, if missing) for a process named
    /// `host_name` (stored in the offer), under the standard connection-state policy. Not
    /// started yet: the state is STOP.
    pub fn new(client: &Client, root: &str, host_name: &str) -> LeaderElection {
        LeaderElection::with_policy(client, root, host_name, ConnectionStatePolicy::Standard)
    }

    /// Like [`LeaderElection::new`], with a connection-state policy: under the standard one a
    /// suspended connection is FAILED at once; under session-only, only a lost session is.
    pub fn with_policy(
        client: &Client,
        root: &str,
        host_name: &str,
        policy: ConnectionStatePolicy,
    ) -> LeaderElection {
        let (state, _) = watch::channel(ElectionState::Stop);
        LeaderElection {
            shared: Arc::new(Shared {
                client: client.clone(),
                root: root.to_string(),
                host_name: host_name.to_string(),
                policy,
                state,
                listeners: Listeners::unbounded(),
                flag: LeaderFlag::new(),
                offer: Mutex::new(Offer::default()),
            }),
            task: Mutex::new(None),
        }
    }

    fn task(&self) -> std::sync::MutexGuard<'_, Option<JoinHandle<()>>> {
        self.task.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts the election (START, then an offer in the background). False if it is running
    /// already. Needs a tokio runtime.
    pub fn start(&self) -> bool {
        let mut task = self.task();
        if task.as_ref().is_some_and(|t| !t.is_finished()) {
            return false;
        }
        self.shared.flag.reopen();
        self.shared.dispatch(ElectionEvent::Start);
        *task = Some(tokio::spawn(run(self.shared.clone())));
        true
    }

    /// Stops the election: STOP_START, the offer is deleted (retrying through connection
    /// loss), STOP_COMPLETE. It can be started again. If this future is dropped, the offer
    /// is still deleted, in the background; so is an offer whose create was under way (its
    /// outcome unknown) when stopped.
    pub async fn stop(&self) -> Result<()> {
        let task = self.task().take();
        if let Some(task) = task {
            task.abort();
            let _ = task.await;
        }
        self.shared.dispatch(ElectionEvent::StopStart);
        let (path, in_doubt) = self.shared.take_offer();
        let client = &self.shared.client;
        if let Some(session) = in_doubt {
            cleanup_in_doubt(client, &self.shared.root, &self.shared.host_name, session);
        }
        let result = match path {
            // Deleted in the background if this future is dropped half-way.
            Some(path) => delete_for_sure(client, path).await,
            None => Ok(()),
        };
        self.shared.dispatch(ElectionEvent::StopComplete);
        self.shared.flag.end(zkrs_client::Error::closed());
        result
    }

    /// Stops the election for good ([`LeaderElection::stop`], consuming it).
    pub async fn close(self) -> Result<()> {
        self.stop().await
    }

    /// Every event from now on, in order; none is dropped (they come at the pace of
    /// elections, so the stream is not bounded).
    pub fn events(&self) -> EventStream<ElectionEvent> {
        self.shared.listeners.subscribe()
    }

    /// Waits until this participant leads (ELECTED). Fails once the election is stopped.
    pub async fn await_leadership(&self) -> Result<()> {
        self.shared.flag.wait().await
    }

    /// Waits at most `timeout` for leadership: `Ok(true)` once ELECTED, `Ok(false)` if the
    /// time ran out; fails once stopped.
    pub async fn await_leadership_timeout(&self, timeout: Duration) -> Result<bool> {
        Leadership::await_leadership_timeout(self, timeout).await
    }

    /// Whether ELECTED, to read or wait on (coalesces quick changes).
    pub fn leadership(&self) -> zkrs_client::Current<bool> {
        self.shared.flag.current()
    }

    /// The current state.
    pub fn state(&self) -> ElectionState {
        self.shared.current()
    }

    /// The current state, to read or wait on (coalesces quick changes;
    /// [`LeaderElection::events`] sees every event).
    pub fn states(&self) -> zkrs_client::Current<ElectionState> {
        zkrs_client::Current::from_watch(self.shared.state.subscribe())
    }

    /// Whether this participant leads: ELECTED, with its node owned by the current session,
    /// and (under the standard policy) connected.
    pub fn is_leader(&self) -> bool {
        let client = &self.shared.client;
        self.shared.current() == ElectionState::Elected
            && self.shared.offer().session == client.session_id()
            && !self.shared.policy.is_error_state(client.state())
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

    /// This participant's host name.
    pub fn host_name(&self) -> &str {
        &self.shared.host_name
    }

    /// Our offer's node path, when it exists.
    pub fn node_path(&self) -> Option<String> {
        self.shared.offer().path.clone()
    }

    /// Every offer in election order, the leader's first (host names read from the nodes).
    pub async fn offers(&self) -> Result<Vec<LeaderOffer>> {
        offers(&self.shared.client, &self.shared.root, usize::MAX).await
    }

    /// The leader's offer, if there is any offer.
    pub async fn leader_offer(&self) -> Result<Option<LeaderOffer>> {
        Ok(offers(&self.shared.client, &self.shared.root, 1)
            .await?
            .into_iter()
            .next())
    }

    /// The leader's host name (the Java recipe's `getLeaderHostName`), if there is any offer.
    pub async fn leader_host_name(&self) -> Result<Option<String>> {
        Ok(self.leader_offer().await?.map(|o| o.host_name))
    }
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
            cleanup_in_doubt(client, &self.shared.root, &self.shared.host_name, session);
        }
    }
}

/// The offer children of `root` (name, sequence), sorted by sequence.
fn sorted_offers<'a>(children: impl IntoIterator<Item = &'a str>) -> Vec<(&'a str, u32)> {
    let mut offers: Vec<(&str, u32)> = children
        .into_iter()
        .filter_map(|name| {
            let digits = name.strip_prefix(OFFER_PREFIX)?;
            if digits.len() != 10 {
                return None;
            }
            Some((name, sequence_number(name)?))
        })
        .collect();
    offers.sort_by_key(|&(_, seq)| seq);
    offers
}

/// Up to `limit` offers in election order, with their host names.
async fn offers(client: &Client, root: &str, limit: usize) -> Result<Vec<LeaderOffer>> {
    let children = match client.get_children(root).await {
        Ok(c) => c,
        Err(e) if e.code() == ErrorCode::NoNode => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let sorted = sorted_offers(children.iter());
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
                    host_name: String::from_utf8_lossy(&data).into_owned(),
                    data,
                }),
                Err(e) if e.code() == ErrorCode::NoNode => {}
                Err(e) => return Err(e),
            }
            if out.len() >= limit {
                return Ok(out);
            }
        }
    }
    Ok(out)
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
async fn recover(shared: &Shared, changes: &mut StateChanges) -> bool {
    framework::recover(&shared.client, changes, |c| on_change(shared, c)).await
}

/// After a failed request: waits for the connection (applying the state changes on the way)
/// and, after an error the connection does not explain, a moment, so that a lasting one (no
/// permission, say) does not spin. False when the client is closed.
async fn settle(shared: &Shared, changes: &mut StateChanges, error: &zkrs_client::Error) -> bool {
    if !error.is_retryable() && error.code() != ErrorCode::SessionExpired {
        tokio::time::sleep(ERROR_PAUSE).await;
    }
    recover(shared, changes).await
}

/// The pause after an error that is not about the connection.
const ERROR_PAUSE: Duration = Duration::from_millis(200);

/// Waits for the watch or a connection-state change that matters.
async fn wait_on(shared: &Shared, watch: OneshotWatch, changes: &mut StateChanges) -> Wake {
    let on_change = |c| on_change(shared, c);
    framework::wait_or_recover(&shared.client, shared.policy, watch, changes, on_change).await
}

/// Where our offer stands.
enum Position {
    /// Not among the offers: gone.
    Gone,
    /// First.
    First,
    /// Behind this offer (a path).
    Behind(String),
}

/// The election's task.
async fn run(shared: Arc<Shared>) {
    let client = shared.client.clone();
    let mut changes = client.state_changes();
    'election: loop {
        if shared.offer().path.is_none() {
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
        let position = match client.get_children(&shared.root).await {
            Ok(children) => {
                let sorted = sorted_offers(children.iter());
                match sorted.iter().position(|(n, _)| *n == node_name(&ours)) {
                    None => Position::Gone,
                    Some(0) => Position::First,
                    Some(i) => Position::Behind(join(&shared.root, sorted[i - 1].0)),
                }
            }
            Err(e) if e.code() == ErrorCode::NoNode => Position::Gone,
            Err(e) if e.is_closed() => return,
            Err(e) => {
                if !settle(&shared, &mut changes, &e).await {
                    return;
                }
                continue 'election;
            }
        };

        match position {
            Position::Gone => {
                // Deleted under us (or the session is gone): a new offer.
                shared.dispatch(ElectionEvent::Failed);
                shared.offer().path = None;
            }
            Position::First => {
                shared.dispatch(ElectionEvent::DetermineComplete);
                let mut elected = false;
                loop {
                    if owner != client.session_id() {
                        // First, but with an old session's node: not ours to lead with.
                        shared.dispatch(ElectionEvent::Failed);
                        shared.offer().path = None;
                        guaranteed_delete(&client, ours);
                        continue 'election;
                    }
                    // Lead, and watch our own node so a deletion under us is noticed.
                    let watch = match client.exists_and_watch(&ours).await {
                        Ok((Some(stat), watch)) if stat.ephemeral_owner == owner => watch,
                        Ok(_) => {
                            shared.dispatch(ElectionEvent::Failed);
                            shared.offer().path = None;
                            continue 'election;
                        }
                        Err(e) if e.is_closed() => return,
                        Err(e) => {
                            if !settle(&shared, &mut changes, &e).await {
                                return;
                            }
                            continue 'election;
                        }
                    };
                    if !elected {
                        if shared.policy.is_error_state(client.state()) {
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
                        Wake::Node(EventType::NodeDeleted) => {
                            shared.dispatch(ElectionEvent::Failed);
                            shared.offer().path = None;
                            continue 'election;
                        }
                        Wake::Node(_) => {} // Data changed: watch again.
                        Wake::Reset => continue 'election,
                        Wake::Closed => return,
                    }
                }
            }
            Position::Behind(predecessor) => {
                shared.dispatch(ElectionEvent::DetermineComplete);
                let mut ready = false;
                loop {
                    let watch = match client.exists_and_watch(&predecessor).await {
                        Ok((Some(_), watch)) => watch,
                        // Gone between the listing and now: determine again.
                        Ok((None, _)) => continue 'election,
                        Err(e) if e.is_closed() => return,
                        Err(e) => {
                            if !settle(&shared, &mut changes, &e).await {
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
                    match wait_on(&shared, watch, &mut changes).await {
                        Wake::Node(EventType::NodeDeleted) => continue 'election,
                        Wake::Node(_) => {} // Data changed: watch again.
                        Wake::Reset => continue 'election,
                        Wake::Closed => return,
                    }
                }
            }
        }
    }
}

/// Creates our offer. False when the client is closed.
async fn make_offer(shared: &Shared, changes: &mut StateChanges) -> bool {
    let client = &shared.client;
    let options = CreateOptions::new(CreateMode::EphemeralSequential).with_stat();
    let path = join(&shared.root, OFFER_PREFIX);
    let mut failures = 0u32;
    loop {
        let session = client.session_id();
        shared.offer().in_doubt = Some(session);
        match client
            .create_with(&path, shared.host_name.as_bytes(), &options)
            .await
        {
            Ok((created, stat)) => {
                let mut offer = shared.offer();
                offer.path = Some(created);
                offer.session = stat.map_or(0, |s| s.ephemeral_owner);
                offer.in_doubt = None;
                return true;
            }
            Err(e) if e.code() == ErrorCode::NoNode => {
                shared.offer().in_doubt = None;
                match create_parents(client, &shared.root, true).await {
                    Err(e) if e.is_closed() => return false,
                    Err(e) => {
                        if !settle(shared, changes, &e).await {
                            return false;
                        }
                    }
                    Ok(()) => {}
                }
            }
            Err(e) if e.is_closed() => return false,
            Err(e) if e.is_retryable() || e.code() == ErrorCode::SessionExpired => {
                if !recover(shared, changes).await {
                    return false;
                }
                match resolve_in_doubt(client, &shared.root, &shared.host_name, session).await {
                    Ok(Some((found, owner))) => {
                        let mut offer = shared.offer();
                        offer.path = Some(found);
                        offer.session = owner;
                        offer.in_doubt = None;
                        return true;
                    }
                    Ok(None) => shared.offer().in_doubt = None,
                    Err(e) if e.is_closed() => return false,
                    Err(_) => {} // Still in doubt: the next look finds it.
                }
            }
            Err(_) => {
                // Not retryable as such (e.g. no permission): try again, slowly.
                shared.offer().in_doubt = None;
                failures = failures.saturating_add(1);
                tokio::time::sleep(backoff(failures)).await;
                if wait_connected(client).await.is_err() {
                    return false;
                }
            }
        }
    }
}

/// After a create under `session` whose outcome is unknown: our offers are the nodes of that
/// session holding our host name. One, with the session still current: adopted. Otherwise
/// they are deleted (their paths are unique) and `None` returned.
async fn resolve_in_doubt(
    client: &Client,
    root: &str,
    host_name: &str,
    session: i64,
) -> Result<Option<(String, i64)>> {
    let Some(children) = framework::list_in_doubt(client, root).await? else {
        return Ok(None);
    };
    let paths: Vec<String> = sorted_offers(children.iter())
        .iter()
        .map(|(n, _)| join(root, n))
        .collect();
    let reads = paths.iter().map(|p| client.get_data(p));
    let mut ours = Vec::new();
    for (path, read) in paths.iter().zip(join_all(reads).await) {
        match read {
            Ok((data, stat)) => {
                if stat.ephemeral_owner == session && session != 0 && data == host_name.as_bytes() {
                    ours.push(path.clone());
                }
            }
            Err(e) if e.code() == ErrorCode::NoNode => {}
            Err(e) => return Err(e),
        }
    }
    if ours.len() == 1 && session == client.session_id() {
        return Ok(ours.pop().map(|p| (p, session)));
    }
    for path in ours {
        delete_until_gone(client, &path).await?;
    }
    Ok(None)
}

/// [`resolve_in_doubt`] in the background, deleting whatever it finds (for stop and drop).
fn cleanup_in_doubt(client: &Client, root: &str, host_name: &str, session: i64) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let client = client.clone();
        let root = root.to_string();
        let host_name = host_name.to_string();
        runtime.spawn(async move {
            loop {
                match resolve_in_doubt(&client, &root, &host_name, session).await {
                    Ok(Some((path, _))) => {
                        let _ = delete_until_gone(&client, &path).await;
                        return;
                    }
                    Ok(None) => return,
                    Err(e) if e.is_closed() => return,
                    Err(_) => {
                        if wait_connected(&client).await.is_err() {
                            return;
                        }
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_sort_by_sequence_and_skip_foreign_children() {
        let children = [
            "n_0000000012",
            "n_0000000003",
            "lock",
            "n_abc",
            "n_0000000007",
            "_c_x-n_0000000001",
        ];
        let sorted = sorted_offers(children);
        assert_eq!(
            sorted,
            [
                ("n_0000000003", 3),
                ("n_0000000007", 7),
                ("n_0000000012", 12)
            ]
        );
    }

    #[test]
    fn every_event_has_its_state() {
        assert_eq!(ElectionEvent::Start.state(), ElectionState::Start);
        assert_eq!(ElectionEvent::OfferComplete.state(), ElectionState::Offer);
        assert_eq!(
            ElectionEvent::DetermineStart.state(),
            ElectionState::Determine
        );
        assert_eq!(
            ElectionEvent::ElectedComplete.state(),
            ElectionState::Elected
        );
        assert_eq!(ElectionEvent::ReadyStart.state(), ElectionState::Ready);
        assert_eq!(ElectionEvent::Failed.state(), ElectionState::Failed);
        assert_eq!(ElectionEvent::StopComplete.state(), ElectionState::Stop);
    }
}
