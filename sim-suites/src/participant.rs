//! What every suite's participants share, and the real-server suites with them: where a
//! participant reports ([`Sink`]), how long one step may take, and the two waits on a
//! connection (a session through the faults, connected again after an error).

use std::time::Duration;

use zkrs_client::{Client, ConnectionState};
use zkrs_sim::World;

/// Where a participant shared with the real-server suites reports: the violations it
/// finds, and notes for the trace (a real-server run may drop them).
pub trait Sink: Send + Sync {
    /// Records a violation.
    fn violation(&self, text: String);
    /// A line for the trace.
    fn note(&self, _text: &str) {}
}

/// The violations, in order; notes dropped (for real-server runs).
impl Sink for std::sync::Mutex<Vec<String>> {
    fn violation(&self, text: String) {
        self.lock().unwrap().push(text);
    }
}

/// No single step of a participant may take longer; one that does is a hang.
pub const STEP_DEADLINE: Duration = Duration::from_secs(30);

/// A session, however long the faults keep it from being made: one client of the world
/// (one number for single-client faults), however many attempts it takes.
pub async fn connect(world: &World) -> Result<Client, String> {
    let builder = world.client_builder();
    for _ in 0..100 {
        match builder.clone().connect().await {
            Ok(client) => return Ok(client),
            Err(e) => world.trace(&format!("connect failed: {e}")),
        }
    }
    Err("no session after 100 attempts".into())
}

/// Waits (at most 5 s) for `client` to be connected again after an error.
pub async fn settle(client: &Client) {
    let mut states = client.state_changes();
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if matches!(
                client.state(),
                ConnectionState::Connected | ConnectionState::Reconnected
            ) {
                return;
            }
            if states.next().await.is_none() {
                return;
            }
        }
    })
    .await;
}
