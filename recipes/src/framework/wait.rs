//! Waiting for whichever comes first: a node event on a watch, or a connection-state change
//! that matters to the recipe. Every recipe's task waits this way.

use std::future::Future;

use zkrs_client::{Client, ConnectionState, EventType, OneshotWatch, StateChange, WatchedEvent};

use super::{ConnectionStatePolicy, PolicyChanges};

/// What ended a [`watch_or_state`] wait.
#[derive(Debug)]
#[non_exhaustive]
pub enum Woke {
    /// The watched node changed.
    Node(WatchedEvent),
    /// A connection-state change that matters (as the caller's filter says).
    State(StateChange),
    /// The client is gone.
    Closed,
}

/// Waits for a node event on `watch` (a [`OneshotWatch`], or `&mut` one to keep it when
/// the wait ends otherwise), or a state change for which `matters` is true.
///
/// A session event on the watch (the session expired, the client closed) is not returned as
/// such: the state changes say what happened, and the wait goes on for them.
pub async fn watch_or_state<W>(
    watch: W,
    changes: &mut PolicyChanges,
    matters: impl Fn(ConnectionState) -> bool,
) -> Woke
where
    W: Future<Output = WatchedEvent> + Unpin,
{
    let mut watch = Some(watch);
    loop {
        let node_event = async {
            match watch.as_mut() {
                Some(w) => w.await,
                None => std::future::pending().await,
            }
        };
        let woke = tokio::select! {
            biased;
            event = node_event => Ok(event),
            change = changes.next() => Err(change),
        };
        match woke {
            Ok(event) if event.is_session_event() => watch = None,
            Ok(event) => return Woke::Node(event),
            Err(None) => return Woke::Closed,
            Err(Some(change)) if matters(change.state) => return Woke::State(change),
            Err(Some(_)) => {}
        }
    }
}

/// Applies the queued connection-state changes with `on_change` (which returns false to stop:
/// the client is closed), then waits until the client is connected, applying the changes on
/// the way. False when the client is closed. Every recipe's task recovers this way after
/// connection trouble, before it looks at its nodes again.
pub async fn recover(
    client: &Client,
    changes: &mut PolicyChanges,
    mut on_change: impl FnMut(StateChange) -> bool,
) -> bool {
    loop {
        let change = match changes.try_next() {
            Some(change) => change,
            None => {
                if client.state().is_connected() {
                    return true;
                }
                match changes.next().await {
                    Some(change) => change,
                    None => return false,
                }
            }
        };
        if !on_change(change) {
            return false;
        }
    }
}

/// Why a [`wait_or_recover`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Wake {
    /// The watched node changed.
    Node(EventType),
    /// The connection had trouble (as the policy sees it) and is back: look again.
    Reset,
    /// The client is closed.
    Closed,
}

/// Waits for the watch, or for connection trouble as `policy` sees it; after trouble,
/// applies the changes with `on_change` and [`recover`]s before returning [`Wake::Reset`].
pub async fn wait_or_recover(
    client: &Client,
    policy: ConnectionStatePolicy,
    watch: OneshotWatch,
    changes: &mut PolicyChanges,
    mut on_change: impl FnMut(StateChange) -> bool,
) -> Wake {
    let matters = |state| policy.is_error_state(state);
    match watch_or_state(watch, changes, matters).await {
        Woke::Node(event) => Wake::Node(event.event_type),
        Woke::Closed => Wake::Closed,
        Woke::State(change) => {
            if !on_change(change) || !recover(client, changes, &mut on_change).await {
                Wake::Closed
            } else {
                Wake::Reset
            }
        }
    }
}
