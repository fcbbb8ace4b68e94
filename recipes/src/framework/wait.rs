//! Waiting for whichever comes first: a node event on a watch, or a connection-state change
//! that matters to the recipe. Every recipe's task waits this way.

use zkr_client::{ConnectionState, OneshotWatch, StateChange, StateChanges, WatchedEvent};

/// What ended a [`watch_or_state`] wait.
#[derive(Debug)]
pub enum Woke {
    /// The watched node changed.
    Node(WatchedEvent),
    /// A connection-state change that matters (as the caller's filter says).
    State(StateChange),
    /// The client is gone.
    Closed,
}

/// Waits for a node event on `watch`, or a state change for which `matters` is true.
///
/// A session event on the watch (the session expired, the client closed) is not returned as
/// such: the state changes say what happened, and the wait goes on for them.
pub async fn watch_or_state(
    watch: OneshotWatch,
    changes: &mut StateChanges,
    matters: impl Fn(ConnectionState) -> bool,
) -> Woke {
    let mut watch = Some(watch);
    loop {
        let node_event = async {
            match watch.as_mut() {
                Some(w) => w.await,
                None => std::future::pending().await,
            }
        };
        let woke = tokio::select! {
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
