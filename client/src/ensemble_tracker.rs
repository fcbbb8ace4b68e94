//! The ensemble tracker ([`ClientBuilder::follow_ensemble`](crate::ClientBuilder::follow_ensemble),
//! Curator's `EnsembleTracker`): a task that watches `/zookeeper/config` and gives the
//! members' client addresses to [`Client::update_hosts`].
//!
//! It holds the client only weakly between reads, so it never keeps a client alive that its
//! owner dropped: when every handle is gone the driver closes the session, the watch and the
//! state stream end, and so does the task.

use std::sync::{Arc, Weak};

use crate::client::{Client, Inner};
use crate::session::{ConnectionState, HostChange};

/// Starts tracking for `client`.
pub(crate) fn spawn(client: &Client) {
    let weak = Arc::downgrade(&client.inner);
    let states = client.state_changes();
    tokio::spawn(track(weak, states));
}

async fn track(weak: Weak<Inner>, mut states: crate::StateChanges) {
    let mut connected = states.initial().state.is_connected();
    // The configuration version last applied: the first reading only completes the host
    // list (the client is on a member already: no move); each later change rebalances.
    let mut applied: Option<i64> = None;
    loop {
        // Read (and watch) the configuration whenever connected: at start, after every
        // change, and after every new connection (a change may have been missed meanwhile).
        let watch = if connected {
            let Some(inner) = weak.upgrade() else { return };
            let client = Client { inner };
            match client.get_config_and_watch().await {
                Ok((config, _, watch)) => {
                    let hosts = config.client_addresses();
                    let version = Some(config.version());
                    // The first reading is news to this client, not to the ensemble.
                    let change = if applied.is_some() && applied != version {
                        HostChange::Rebalance
                    } else {
                        HostChange::Replace
                    };
                    if !hosts.is_empty() && applied != version {
                        applied = version;
                        match client.change_hosts(&hosts.join(","), change).await {
                            Ok(moved) => {
                                crate::__log!(debug, hosts = ?hosts, moved, "following the ensemble");
                                let _ = moved;
                            }
                            Err(e) => {
                                crate::__log!(warn, error = %e, "could not follow the ensemble");
                                let _ = e;
                            }
                        }
                    }
                    Some(watch)
                }
                Err(e) => {
                    crate::__log!(debug, error = %e, "could not read the ensemble's configuration");
                    let _ = e;
                    None
                }
            }
        } else {
            None
        };
        // Then wait for the watch, or for the next new connection.
        let fired = async {
            match watch {
                Some(watch) => Some(watch.await),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            event = fired => {
                if event.is_some_and(|e| e.is_session_event()) {
                    // Expired or closed: the state stream says what comes next.
                    connected = false;
                }
            }
            change = states.next() => match change {
                None => return,
                Some(change) => match change.state {
                    ConnectionState::Closed => return,
                    ConnectionState::Connected | ConnectionState::Reconnected => connected = true,
                    // Read-only servers serve the configuration too.
                    ConnectionState::ReadOnly => connected = true,
                    _ => {
                        connected = false;
                    }
                },
            },
        }
    }
}
