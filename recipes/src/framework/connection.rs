//! Waiting for the connection to come back.

use crate::error::ErrorExt;
use zkrs_client::{Client, ConnectionState, Error, Result};

/// Waits until the client is connected (returns the state: Connected, Reconnected or
/// ReadOnly), or fails if the client is closed. Returns at once when already connected.
pub async fn wait_connected(client: &Client) -> Result<ConnectionState> {
    // Subscribe before looking, so a transition between the two is not missed.
    let mut changes = client.state_changes();
    loop {
        let state = client.state();
        if state.is_connected() {
            return Ok(state);
        }
        if state == ConnectionState::Closed {
            return Err(Error::closed());
        }
        match changes.next().await {
            Some(change) if change.state.is_connected() => return Ok(change.state),
            Some(change) if change.state == ConnectionState::Closed => return Err(Error::closed()),
            Some(_) => {}
            None => return Err(Error::closed()),
        }
    }
}
