//! [`LeaderSelector`]: Curator's leader selector, on the same znodes.
//!
//! Leadership is an [`InterProcessMutex`] at the selector's path (nodes
//! `<path>/_c_<uuid>-lock-<seq>`, data = the participant id, UTF-8), held while the user's
//! leadership task runs. When the task returns, the lock is released and the next participant
//! in line leads; with auto-requeue the selector gets back in line after every term.
//!
//! A term ends early ("leadership is taken away") when:
//! - [`LeaderSelector::interrupt_leadership`] is called,
//! - the connection is suspended (standard policy) or the session is lost (both policies),
//! - our lock node is deleted by someone else,
//! - the selector is closed or dropped.
//!
//! The task's future is then dropped (after an optional grace period in which it sees
//! [`LeaderContext::cancelled`] resolve), [`LeaderSelector::has_leadership`] turns false
//! *before* the lock is released, and the node is deleted.
//!
//! A leadership task that panics ends its term like one that returns (the panic is not
//! propagated; Curator likewise catches what `takeLeadership` throws).
//!
//! Like the lock it is built on, a term starts only with a node owned by the current session
//! (an old session's node that still sorts first is not leadership).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use zkrs_client::{Client, ConnectionState, EventType, Result};

use super::handle::leader_handle_methods;
use super::latch::{participants_of, Participant};
use super::leadership::{leadership_by_inherent_methods, LeaderFlag, LeadershipEvent};
use super::options::{leader_builder_setters, LeaderOptions};
use crate::framework::{
    lost_in, lost_now, Backoff, ConnectionStatePolicy, FencingToken, PolicyChanges,
};
use crate::line::watch::watch_own;
use crate::lock::{InterProcessMutex, LockGuard};

/// Why a term of leadership ended, as [`LeaderContext::cancelled`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancelReason {
    /// [`LeaderSelector::interrupt_leadership`] was called.
    Interrupted,
    /// The connection was suspended (standard policy), or stayed suspended until the
    /// session's deadline (session-deadline policy): the session may be alive, but
    /// leadership can no longer be counted on.
    Suspended,
    /// The session was lost: the lock node is gone (or goes at the session's expiry).
    SessionLost,
    /// Our lock node was deleted (by another process, or with the lock directory).
    NodeDeleted,
    /// The selector was closed or dropped, or the client closed.
    Closed,
    /// The leadership task returned on its own.
    Finished,
}

/// What a leadership task gets: who it is, and a way to learn that leadership is being taken
/// away. Cheap to clone; clones can be moved into helper tasks.
#[derive(Debug, Clone)]
pub struct LeaderContext {
    client: Client,
    id: Arc<str>,
    node: Arc<str>,
    term: u64,
    session_id: i64,
    token: FencingToken,
    policy: ConnectionStatePolicy,
    cancel: watch::Receiver<Option<CancelReason>>,
}

impl LeaderContext {
    /// The client the selector uses.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// This participant's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The lock node that holds leadership in this term.
    pub fn node_path(&self) -> &str {
        &self.node
    }

    /// The number of this term for this selector (1 for the first).
    pub fn term(&self) -> u64 {
        self.term
    }

    /// The session that owns the lock node.
    pub fn session_id(&self) -> i64 {
        self.session_id
    }

    /// Why the term ended, once it has ended (or is ending).
    pub fn cancel_reason(&self) -> Option<CancelReason> {
        *self.cancel.borrow()
    }

    /// Whether leadership is being (or has been) taken away.
    pub fn is_cancelled(&self) -> bool {
        self.cancel_reason().is_some()
    }

    /// Whether this term's leadership can still be counted on: not cancelled, same session,
    /// and connected (or, under the session-deadline policy, suspended for less than the
    /// session's deadline).
    pub fn is_leader(&self) -> bool {
        !self.is_cancelled()
            && self.client.session_id() == self.session_id
            && !lost_now(self.policy, &self.client)
    }

    /// This term's fencing token (its lock node's creation zxid): see [`FencingToken`].
    pub fn fencing_token(&self) -> FencingToken {
        self.token
    }

    /// Resolves when leadership is being taken away, with the reason. By default the
    /// leadership task's future is dropped at that moment, so this is for helper tasks that
    /// hold a clone of the context; with [`LeaderSelectorBuilder::cancel_grace`] the task
    /// itself sees it resolve and has the grace period to wind down.
    pub async fn cancelled(&self) -> CancelReason {
        let mut rx = self.cancel.clone();
        let result = rx.wait_for(Option::is_some).await.map(|r| *r);
        match result {
            Ok(Some(reason)) => reason,
            // The term is over and its sender gone.
            _ => self.cancel_reason().unwrap_or(CancelReason::Finished),
        }
    }
}

type LeaderFn = dyn Fn(LeaderContext) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync;

#[derive(Debug, Default)]
struct Control {
    /// An attempt is queued or under way (Curator's `ourTask != null`).
    busy: bool,
    /// Closed: no more attempts.
    closed: bool,
    /// The current term's cancellation, while leading.
    term: Option<watch::Sender<Option<CancelReason>>>,
}

struct Shared {
    client: Client,
    path: String,
    id: Arc<str>,
    policy: ConnectionStatePolicy,
    auto_requeue: std::sync::atomic::AtomicBool,
    cancel_grace: Duration,
    flag: LeaderFlag,
    control: Mutex<Control>,
    wake: Notify,
    closed: watch::Sender<bool>,
    terms: AtomicU64,
    on_leadership: Arc<LeaderFn>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderSelector")
            .field("path", &self.path)
            .field("id", &self.id)
            .field("policy", &self.policy)
            .field("leader", &self.flag.get())
            .field("terms", &self.terms.load(Ordering::Relaxed))
            .finish()
    }
}

impl Shared {
    fn control(&self) -> std::sync::MutexGuard<'_, Control> {
        self.control.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_leader(&self, is_leader: bool) {
        if self.flag.set(is_leader, true) {
            zkrs_client::__log!(info, leader = is_leader, "selector leadership changed");
        }
    }

    /// Marks the selector closed and cancels the term under way, if any.
    fn close(&self) {
        let term = {
            let mut control = self.control();
            control.closed = true;
            control.term.clone()
        };
        self.set_leader(false);
        self.flag.close(true);
        if let Some(term) = term {
            cancel(&term, CancelReason::Closed);
        }
        self.closed.send_replace(true);
        self.wake.notify_one();
    }
}

/// Sets the term's reason, unless one is set already.
fn cancel(term: &watch::Sender<Option<CancelReason>>, reason: CancelReason) -> bool {
    term.send_if_modified(|current| {
        if current.is_none() {
            *current = Some(reason);
            true
        } else {
            false
        }
    })
}

/// Settings for a [`LeaderSelector`]; [`LeaderSelectorBuilder::start`] starts it.
#[derive(Clone)]
#[must_use = "a builder does nothing until `start`"]
pub struct LeaderSelectorBuilder {
    options: LeaderOptions,
    auto_requeue: bool,
    cancel_grace: Duration,
    on_leadership: Arc<LeaderFn>,
}

impl std::fmt::Debug for LeaderSelectorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderSelectorBuilder")
            .field("path", &self.options.path)
            .field("id", &self.options.id)
            .field("policy", &self.options.policy)
            .field("auto_requeue", &self.auto_requeue)
            .field("cancel_grace", &self.cancel_grace)
            .finish_non_exhaustive()
    }
}

impl LeaderSelectorBuilder {
    leader_builder_setters!(
        LeaderSelectorBuilder,
        /// The participant id stored in the lock node (default: empty, like Curator's).
        id,
        /// The connection-state policy (default: standard, where a suspended connection already
        /// ends the term).
        policy,
    );

    /// Get back in line after every term (Curator's `autoRequeue`; default: off, one term,
    /// then [`LeaderSelector::requeue`] to try again).
    pub fn auto_requeue(mut self, on: bool) -> LeaderSelectorBuilder {
        self.auto_requeue = on;
        self
    }

    /// How long a cancelled leadership task may keep running after
    /// [`LeaderContext::cancelled`] resolves before its future is dropped (default: zero,
    /// dropped at once). The lock is kept meanwhile, so no other participant leads while it
    /// winds down, unless the session is gone. Leadership is reported lost at the start of the
    /// grace period.
    pub fn cancel_grace(mut self, grace: Duration) -> LeaderSelectorBuilder {
        self.cancel_grace = grace;
        self
    }

    /// Starts the selector: its task starts on the current tokio runtime and gets in line at
    /// once, and runs the leadership task each time it becomes leader, holding leadership
    /// until the returned future completes or is cancelled. Fails (kind `InvalidInput`) if
    /// the path is not a valid znode path, before anything is sent. Needs a tokio runtime.
    pub fn start(self) -> Result<LeaderSelector> {
        let (client, path, id, policy) = self.options.validated()?;
        let (closed, closed_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            client,
            path,
            id: id.into(),
            policy,
            auto_requeue: self.auto_requeue.into(),
            cancel_grace: self.cancel_grace,
            flag: LeaderFlag::new(),
            control: Mutex::new(Control {
                busy: true,
                ..Control::default()
            }),
            wake: Notify::new(),
            closed,
            terms: AtomicU64::new(0),
            on_leadership: self.on_leadership,
        });
        let task = tokio::spawn(run(shared.clone(), closed_rx));
        Ok(LeaderSelector {
            shared,
            task: Some(task),
        })
    }
}

/// A participant in a leader election that holds leadership while a task runs, compatible
/// with Curator's `LeaderSelector` on the same path (a Java and a Rust process take turns).
///
/// ```no_run
/// # async fn demo(client: zkrs_client::Client) -> zkrs_client::Result<()> {
/// use zkrs_recipes::leader::LeaderSelector;
/// let selector = LeaderSelector::builder(&client, "/election/reports", |ctx| async move {
///     println!("term {} of {}", ctx.term(), ctx.id());
///     // ... lead; this future is dropped if leadership is taken away ...
/// })
/// .id("host-a")
/// .auto_requeue(true)
/// .start()?;
/// // ...
/// selector.close().await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "dropping it gives up what it holds (its node, or its watch) at once"]
pub struct LeaderSelector {
    shared: Arc<Shared>,
    task: Option<JoinHandle<Result<()>>>,
}

impl LeaderSelector {
    /// A builder for a selector at `path` that runs `on_leadership` each time it becomes
    /// leader (Curator's `takeLeadership`), holding leadership until the returned future
    /// completes or is cancelled. By default: an empty id, the standard policy, no
    /// auto-requeue (one term; see [`LeaderSelector::requeue`]).
    pub fn builder<F, Fut>(client: &Client, path: &str, on_leadership: F) -> LeaderSelectorBuilder
    where
        F: Fn(LeaderContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        LeaderSelectorBuilder {
            options: LeaderOptions::new(client, path),
            auto_requeue: false,
            cancel_grace: Duration::ZERO,
            on_leadership: Arc::new(move |ctx| Box::pin(on_leadership(ctx))),
        }
    }

    leader_handle_methods!(
        /// The election path (the lock directory).
        path,
        /// This participant's id.
        id,
        /// Whether this participant leads now (its leadership task is running and not being
        /// cancelled; Curator's `hasLeadership`).
        is_leader,
        /// The leadership value, to read or wait on (coalesces quick changes).
        leadership,
        /// Waits until this participant leads (its term has started). Fails once the selector is
        /// closed.
        await_leadership,
        /// Waits at most `timeout` for leadership: `Ok(true)` once leading, `Ok(false)` if the
        /// time ran out; fails once closed.
        await_leadership_timeout,
        /// Every leadership transition (a term starting, a term ending) from now on; none is
        /// dropped.
        events,
    );

    /// How many terms this selector has started.
    pub fn terms(&self) -> u64 {
        self.shared.terms.load(Ordering::SeqCst)
    }

    /// Turns auto-requeue on or off from now on.
    pub fn set_auto_requeue(&self, on: bool) {
        self.shared.auto_requeue.store(on, Ordering::SeqCst);
    }

    /// Gets back in line for another term. False when already in line or leading, or
    /// closed (Curator's `requeue`).
    pub fn requeue(&self) -> bool {
        let mut control = self.shared.control();
        if control.busy || control.closed {
            return false;
        }
        control.busy = true;
        drop(control);
        self.shared.wake.notify_one();
        true
    }

    /// Ends the current term, if this participant leads: the leadership task is cancelled and
    /// the lock released (then, with auto-requeue, it gets back in line). False when it does
    /// not lead.
    pub fn interrupt_leadership(&self) -> bool {
        let term = self.shared.control().term.clone();
        match term {
            Some(term) => {
                let interrupted = cancel(&term, CancelReason::Interrupted);
                if interrupted {
                    self.shared.set_leader(false);
                }
                interrupted
            }
            None => false,
        }
    }

    /// Every participant in election order, the leader first (ids read from the nodes).
    pub async fn participants(&self) -> Result<Vec<Participant>> {
        let mutex = InterProcessMutex::internal(&self.shared.client, &self.shared.path);
        let nodes = mutex.participant_nodes().await?;
        participants_of(&self.shared.client, nodes).await
    }

    /// The current leader, if any participant is there.
    pub async fn leader(&self) -> Result<Option<Participant>> {
        Ok(self.participants().await?.into_iter().next())
    }

    /// Leaves the election. When leading: cancels the term (the leadership task's future is
    /// dropped, after the grace period if one is set), then releases the lock, waiting until
    /// the node is deleted (retrying through connection loss; while the server is unreachable
    /// this waits, so bound it with a timeout if needed). When waiting in line: the wait is
    /// abandoned and its node deleted in the background, as after a dropped
    /// [`InterProcessMutex::acquire`] (so it may still be listed for a moment). Either way no
    /// leadership follows, and dropping this future does not stop the cleanup.
    pub async fn close(mut self) -> Result<()> {
        self.shared.close();
        match self.task.take() {
            Some(task) => task.await.unwrap_or(Ok(())),
            None => Ok(()),
        }
    }
}

leadership_by_inherent_methods!(LeaderSelector, LeadershipEvent);

impl Drop for LeaderSelector {
    /// Like [`LeaderSelector::close`], in the background: leadership is reported lost at
    /// once, the leadership task is cancelled and the node deleted by the selector's task.
    fn drop(&mut self) {
        if self.task.take().is_some() {
            self.shared.close();
        }
    }
}

/// The selector's task: waits to be queued, acquires, runs a term, releases; until closed.
async fn run(shared: Arc<Shared>, mut closed: watch::Receiver<bool>) -> Result<()> {
    let client = shared.client.clone();
    let mutex = InterProcessMutex::internal(&client, &shared.path)
        .with_data(shared.id.as_bytes().to_vec())
        .with_policy(shared.policy);
    let mut backoff = Backoff::default();
    loop {
        // Wait until an attempt is queued.
        loop {
            {
                let control = shared.control();
                if control.closed {
                    return Ok(());
                }
                if control.busy {
                    break;
                }
            }
            tokio::select! {
                biased;
                _ = closed.wait_for(|c| *c) => return Ok(()),
                _ = shared.wake.notified() => {}
            }
        }

        // Get in line. A close drops the acquire, whose cleanup deletes our node.
        let acquired = tokio::select! {
            biased;
            _ = closed.wait_for(|c| *c) => return Ok(()),
            acquired = mutex.acquire() => acquired,
        };
        let guard = match acquired {
            Ok(guard) => {
                backoff.reset();
                guard
            }
            Err(e) if e.is_closed() => return Ok(()),
            Err(_) => {
                // Not retryable by the lock itself (e.g. no permission): back off, then try
                // again if requeueing, like Curator.
                tokio::select! {
                    biased;
                    _ = closed.wait_for(|c| *c) => return Ok(()),
                    _ = backoff.sleep() => {}
                }
                end_attempt(&shared);
                continue;
            }
        };

        let released = lead(&shared, guard).await;
        end_attempt(&shared);
        if shared.control().closed {
            return released;
        }
        if let Err(e) = released {
            if e.is_closed() {
                return Err(e);
            }
        }
    }
}

/// After an attempt: in line again with auto-requeue, idle otherwise.
fn end_attempt(shared: &Shared) {
    let mut control = shared.control();
    control.term = None;
    control.busy = shared.auto_requeue.load(Ordering::SeqCst) && !control.closed;
}

/// One term: runs the leadership task while the lock is held, until it returns or leadership
/// is taken away; then reports leadership lost and releases the lock.
async fn lead(shared: &Shared, guard: LockGuard) -> Result<()> {
    let client = &shared.client;
    let (cancel_tx, cancel_rx) = watch::channel(None);
    let closed = {
        let mut control = shared.control();
        if !control.closed {
            control.term = Some(cancel_tx.clone());
        }
        control.closed
    };
    if closed {
        return guard.release().await;
    }
    // Subscribe before looking, so a change between the look and the wait is not missed.
    let changes = PolicyChanges::new(client, shared.policy);
    if !guard.is_held() {
        return guard.release().await;
    }
    let term = shared.terms.fetch_add(1, Ordering::SeqCst) + 1;
    let ctx = LeaderContext {
        client: client.clone(),
        id: shared.id.clone(),
        node: guard.path().into(),
        term,
        session_id: guard.session_id(),
        token: guard.fencing_token(),
        policy: shared.policy,
        cancel: cancel_rx.clone(),
    };
    shared.set_leader(true);
    // The leadership task runs as a task of its own: a panic in it ends the term like a
    // return (Curator catches what `takeLeadership` throws), and aborting it drops it.
    let mut task = AbortOnDrop(tokio::spawn((shared.on_leadership)(ctx)));
    let ended = {
        let watchers = async {
            tokio::select! {
                biased;
                reason = connection_lost(client, guard.session_id(), shared.policy, changes) => reason,
                reason = node_deleted(client, guard.path()) => reason,
                reason = requested(cancel_rx.clone()) => reason,
            }
        };
        tokio::select! {
            biased;
            reason = watchers => Some(reason),
            _ = &mut task.0 => None,
        }
    };
    match ended {
        Some(reason) => {
            cancel(&cancel_tx, reason);
            shared.set_leader(false);
            let grace = shared.cancel_grace;
            let done = !grace.is_zero() && tokio::time::timeout(grace, &mut task.0).await.is_ok();
            if !done {
                // Once the aborted task's handle resolves, its future has been dropped.
                task.0.abort();
                let _ = (&mut task.0).await;
            }
        }
        None => {
            cancel(&cancel_tx, CancelReason::Finished);
        }
    }
    // The leadership task's code is over (its future is dropped) before anyone else can
    // lead: only then is the lock released.
    shared.set_leader(false);
    shared.control().term = None;
    guard.release().await
}

/// Aborts the leadership task if the term is abandoned half-way (the runtime shutting down).
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Resolves when `policy` says the connection can no longer be counted on, or the session
/// changed.
async fn connection_lost(
    client: &Client,
    session_id: i64,
    policy: ConnectionStatePolicy,
    mut changes: PolicyChanges,
) -> CancelReason {
    let verdict = |state: ConnectionState, session: i64| -> Option<CancelReason> {
        match state {
            ConnectionState::Closed => Some(CancelReason::Closed),
            ConnectionState::Lost => Some(CancelReason::SessionLost),
            _ if session != session_id && session != 0 => Some(CancelReason::SessionLost),
            ConnectionState::Suspended if lost_in(policy, client, state) => {
                Some(CancelReason::Suspended)
            }
            _ => None,
        }
    };
    if let Some(reason) = verdict(client.state(), client.session_id()) {
        return reason;
    }
    while let Some(change) = changes.next().await {
        if let Some(reason) = verdict(change.state, change.session_id) {
            return reason;
        }
    }
    CancelReason::Closed
}

/// Resolves when our lock node is deleted (or the session ends before it is): the leader's
/// watch on its own node.
async fn node_deleted(client: &Client, path: &str) -> CancelReason {
    let mut backoff = Backoff::new();
    loop {
        match watch_own(client, path).await {
            Ok(None) => return CancelReason::NodeDeleted,
            Ok(Some((_, watch))) => {
                let event = watch.await;
                match event.event_type {
                    EventType::NodeDeleted => return CancelReason::NodeDeleted,
                    EventType::None if event.state == zkrs_client::KeeperState::Closed => {
                        return CancelReason::Closed
                    }
                    EventType::None => return CancelReason::SessionLost,
                    _ => {} // Data changed (e.g. a revoke request): watch again.
                }
            }
            Err(e) if e.is_closed() => return CancelReason::Closed,
            Err(e) if e.is_session_expired() => return CancelReason::SessionLost,
            Err(_) => {
                if backoff.pause(client).await.is_err() {
                    return CancelReason::Closed;
                }
            }
        }
    }
}

/// Resolves when the term is cancelled from outside (interrupt, close).
async fn requested(mut rx: watch::Receiver<Option<CancelReason>>) -> CancelReason {
    match rx.wait_for(Option::is_some).await {
        Ok(reason) => reason.unwrap_or(CancelReason::Closed),
        Err(_) => CancelReason::Closed,
    }
}
