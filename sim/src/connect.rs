//! A session however long the faults keep it from being made: what a service does at
//! start (try, wait, try again), for a participant's first line.

use std::time::Duration;

use zkrs_client::Client;

use crate::world::World;

/// The wait between two attempts.
const RETRY: Duration = Duration::from_millis(500);

impl World {
    /// A client of the ensemble ([`World::client_builder`]'s settings), trying again every
    /// 500 ms (virtual) until a session is made; each failed attempt is a trace line. The
    /// faults end, so it ends; a world that never takes a session is reported as a hang at
    /// the run's limit ([`Simulation::limit`](crate::Simulation::limit)).
    pub async fn connect(&self) -> Client {
        loop {
            match self.client_builder().connect().await {
                Ok(client) => return client,
                Err(e) => {
                    self.trace(&format!("connect failed: {e}"));
                    tokio::time::sleep(RETRY).await;
                }
            }
        }
    }
}
