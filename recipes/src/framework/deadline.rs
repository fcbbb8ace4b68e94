//! The session deadline: when a suspension becomes a loss under
//! [`ConnectionStatePolicy::SessionDeadline`], and [`PolicyChanges`], the view of the
//! connection-state changes every recipe that holds something reads, which under that policy
//! holds a suspension back until its deadline.
//!
//! # The deadline, and why it is safe
//!
//! ZooKeeper restarts a session's timeout whenever a request of the session arrives
//! (`ZooKeeperServer.submitRequest` touches it; pings are requests too). Its expiry queue
//! (`ExpiryQueue.update`) then files the session under `arrival + timeout`, rounded *up* to
//! the next multiple of `tickTime`, and the session tracker (`SessionTrackerImpl.run`)
//! expires a bucket once its time has come, never before. So the server cannot expire the
//! session before `arrival + timeout` on its clock.
//!
//! The client does not know when a request arrived, but a reply proves that it did, and the
//! arrival came after the send: [`Client::last_heard`] is the send time of the newest
//! request, ping or handshake whose reply arrived. The deadline is that instant plus the
//! negotiated session timeout, minus a margin of a tenth of the timeout:
//!
//! - clock rates: the server measures the timeout on its monotonic clock, the client on its
//!   own. Clocks that NTP disciplines differ in rate by well under 0.05 %, free-running
//!   crystals by about 0.01 %: a tenth of the timeout covers a hundred times the worst.
//! - the server's tick: the expiry is rounded up to the next tick, so it only comes later
//!   than `arrival + timeout`; nothing to subtract for it.
//! - stopping: the holder hears "lost" at the deadline and needs time to stop acting (a
//!   task to notice, a command to be signalled and exit). What the clock-rate budget leaves
//!   of the margin is for that: about 3 s of a 30 s session, 1 s of a 10 s one.
//!
//! What it trusts: the server that answers speaks for the ensemble. A standalone server or
//! the leader touches the session as the request arrives. A follower records the touch and
//! reports it to the leader at the leader's next ping (every `tickTime / 2`); a follower
//! cut off from the leader keeps answering the client's pings until it notices, after
//! `syncLimit × tickTime`, and its last reports are the leader's only word on the session.
//! Then the leader may expire the session earlier than the deadline says, by up to about
//! `syncLimit × tickTime + tickTime / 2` plus the client's ping interval; the margin covers
//! that only when the session timeout is more than ten times as long. The standard policy
//! has the same blind spot, shorter by the time the deadline lets a suspension run.

use std::time::{Duration, Instant};

use zkrs_client::{Client, ConnectionState, StateChange, StateChanges};

use super::ConnectionStatePolicy;

/// The part of the session timeout kept back from the deadline (see the module's
/// documentation): a tenth of it.
pub(crate) fn margin(session_timeout: Duration) -> Duration {
    session_timeout / 10
}

/// The instant a suspension of the client's current session counts as a loss under
/// [`ConnectionStatePolicy::SessionDeadline`]: `last_heard + timeout - margin`. `None`
/// when the server is not known to have heard from a session (no session): already lost.
pub(crate) fn session_deadline(client: &Client) -> Option<Instant> {
    let timeout = client.session_timeout();
    let heard = client.last_heard()?;
    Some(heard + timeout - margin(timeout))
}

/// The monotonic time now, on the client's clock (tokio's: virtual on a paused runtime).
fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// Whether a suspension of the current session has reached its deadline.
fn deadline_passed(client: &Client) -> bool {
    session_deadline(client).is_none_or(|deadline| now() >= deadline)
}

/// Whether, under `policy`, what the recipe holds must be taken as lost now: the policy's
/// error states, where a suspension counts under
/// [`ConnectionStatePolicy::SessionDeadline`] from its deadline on.
pub(crate) fn lost_now(policy: ConnectionStatePolicy, client: &Client) -> bool {
    lost_in(policy, client, client.state())
}

/// Whether `state` (the client's now, or one told by [`PolicyChanges`]) means, under
/// `policy`, that what the recipe holds must be taken as lost now.
pub(crate) fn lost_in(
    policy: ConnectionStatePolicy,
    client: &Client,
    state: ConnectionState,
) -> bool {
    match (policy, state) {
        // A read-only server cannot keep the session alive on the ensemble (it does not touch
        // it there, and the core does not count its replies): its deadline stands.
        (
            ConnectionStatePolicy::SessionDeadline,
            ConnectionState::Suspended | ConnectionState::ReadOnly,
        ) => deadline_passed(client),
        _ => policy.is_error_state(state),
    }
}

/// The connection-state changes as a recipe under `policy` hears them. Under
/// [`ConnectionStatePolicy::SessionDeadline`] a suspension is held back: it is told at its
/// deadline if the connection has not come back by then (to a read-write server), and dropped
/// if the same session is back first (then the `Reconnected` that ended it is told alone).
/// Under the other policies every change is told as it comes.
#[derive(Debug)]
pub(crate) struct PolicyChanges {
    client: Client,
    policy: ConnectionStatePolicy,
    changes: StateChanges,
    /// The suspension held back, if any.
    held: Option<StateChange>,
}

impl PolicyChanges {
    /// Subscribes to `client`'s changes. A client suspended now counts as a suspension
    /// held back from now on.
    pub(crate) fn new(client: &Client, policy: ConnectionStatePolicy) -> PolicyChanges {
        let changes = client.state_changes();
        let initial = changes.initial();
        let held = (policy == ConnectionStatePolicy::SessionDeadline
            && initial.state == ConnectionState::Suspended)
            .then_some(initial);
        PolicyChanges {
            client: client.clone(),
            policy,
            changes,
            held,
        }
    }

    /// Takes `change` in: `Some` if it is to be told now.
    fn take(&mut self, change: StateChange) -> Option<StateChange> {
        if self.policy != ConnectionStatePolicy::SessionDeadline {
            return Some(change);
        }
        if change.state == ConnectionState::Suspended {
            // A second suspension while one is held (a connection attempt failed): the first
            // one's deadline stands, as the server has not heard from us since.
            self.held.get_or_insert(change);
            return None;
        }
        if change.state == ConnectionState::ReadOnly {
            // Connected, but to a read-only server, which does not keep the session alive
            // on the ensemble: a suspension held back keeps its deadline.
            return Some(change);
        }
        // Back (the suspension is forgotten: the session lives), or worse (told as it is).
        self.held = None;
        Some(change)
    }

    /// The held suspension, if its deadline has passed.
    fn due(&mut self) -> Option<StateChange> {
        if self.held.is_some() && deadline_passed(&self.client) {
            return self.held.take();
        }
        None
    }

    /// The next change to tell; `None` once the client is gone.
    pub(crate) async fn next(&mut self) -> Option<StateChange> {
        loop {
            if let Some(due) = self.due() {
                return Some(due);
            }
            let change = match (self.held, session_deadline(&self.client)) {
                (Some(_), Some(deadline)) => {
                    let at = tokio::time::Instant::from_std(deadline);
                    tokio::select! {
                        change = self.changes.next() => change?,
                        _ = tokio::time::sleep_until(at) => continue,
                    }
                }
                _ => self.changes.next().await?,
            };
            if let Some(change) = self.take(change) {
                return Some(change);
            }
        }
    }

    /// A change to tell now, without waiting.
    pub(crate) fn try_next(&mut self) -> Option<StateChange> {
        loop {
            if let Some(due) = self.due() {
                return Some(due);
            }
            let change = self.changes.try_next()?;
            if let Some(change) = self.take(change) {
                return Some(change);
            }
        }
    }
}
