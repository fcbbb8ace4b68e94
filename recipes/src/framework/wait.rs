//! Waiting for whichever comes first: a node event on a watch, or a connection-state change
//! that matters to the recipe. Every recipe's task waits this way.

use std::future::Future;
use std::pin::Pin;

use zkrs_client::{Client, ConnectionState, EventType, OneshotWatch, StateChange, WatchedEvent};

use super::{ConnectionStatePolicy, PolicyChanges};

/// Which watch a [`Wake::Node`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Watched {
    /// The node just before ours in line.
    Predecessor,
    /// The node before the predecessor's (the look-ahead).
    Ahead,
    /// Our own node.
    Own,
    /// The one node a recipe watches (a master's, a leader's own offer).
    Node,
}

/// Why a wait of a recipe's task ended: the one wake type of every recipe that waits on a
/// watch (the locks' line, the latch, the election, the master).
#[derive(Debug)]
pub(crate) enum Wake {
    /// A watch fired (`EventType::None`: a session event, which only the locks see), or the
    /// watched node was found gone (`NodeDeleted`).
    Node(Watched, EventType),
    /// A connection-state change that matters (as the caller's filter says), not yet
    /// applied.
    State(StateChange),
    /// The connection had trouble and is back (the trouble applied): look again.
    Reset,
    /// The caller's deadline passed.
    TimedOut,
    /// The client is gone.
    Closed,
}

/// Waits for a node event on `watch` (a watch labelled with what it watches, see
/// [`labelled`]), or a state change for which `matters` is true.
///
/// A session event on the watch (the session expired, the client closed) is not returned as
/// such: the state changes say what happened, and the wait goes on for them.
pub(crate) async fn watch_or_state<W>(
    watch: W,
    changes: &mut PolicyChanges,
    matters: impl Fn(ConnectionState) -> bool,
) -> Wake
where
    W: Future<Output = (Watched, WatchedEvent)> + Unpin,
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
            Ok((_, event)) if event.is_session_event() => watch = None,
            Ok((which, event)) => return Wake::Node(which, event.event_type),
            Err(None) => return Wake::Closed,
            Err(Some(change)) if matters(change.state) => return Wake::State(change),
            Err(Some(_)) => {}
        }
    }
}

/// Applies the queued connection-state changes with `on_change` (which returns false to stop:
/// the client is closed), then waits until the client is connected, applying the changes on
/// the way. False when the client is closed. Every recipe's task recovers this way after
/// connection trouble, before it looks at its nodes again.
pub(crate) async fn recover(
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

/// `watch`, its event labelled `which` (for [`watch_or_state`]).
fn labelled(
    which: Watched,
    mut watch: impl Future<Output = WatchedEvent> + Unpin,
) -> impl Future<Output = (Watched, WatchedEvent)> + Unpin {
    std::future::poll_fn(move |cx| Pin::new(&mut watch).poll(cx).map(|event| (which, event)))
}

/// Waits for the watch, or for connection trouble as `policy` sees it; after trouble,
/// applies the changes with `on_change` and [`recover`]s before returning [`Wake::Reset`].
/// A node event is [`Watched::Node`]'s.
pub(crate) async fn wait_or_recover(
    client: &Client,
    policy: ConnectionStatePolicy,
    watch: OneshotWatch,
    changes: &mut PolicyChanges,
    mut on_change: impl FnMut(StateChange) -> bool,
) -> Wake {
    let matters = |state| policy.is_error_state(state);
    match watch_or_state(labelled(Watched::Node, watch), changes, matters).await {
        Wake::State(change) => {
            if !on_change(change) || !recover(client, changes, &mut on_change).await {
                Wake::Closed
            } else {
                Wake::Reset
            }
        }
        wake => wake,
    }
}
