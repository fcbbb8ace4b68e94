//! What the data suites (`watches`, `sessions`, `caches`, `queues`) share: the list of
//! violations a run found, and the small steps every participant takes (waiting briefly for
//! its connection, telling connection trouble from a refusal, making a node through faults).
//!
//! The suites are the real-server fault suites `recipes/tests/invariants.rs` (watches,
//! sessions) and `recipes/tests/invariants_data.rs` (caches, queues), with their invariants
//! unchanged; what differs is only what a simulated run needs: the faults come from the
//! seed's plan and last until [`World::healed`], every wait is on virtual time, and what the
//! real suites `panic!` on (an error they do not expect) is a violation here, so a
//! campaign reports it with its seed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use zkrs_client::{Client, CreateMode, ErrorCode};

use zkrs_sim::World;

use crate::participant::Sink;

/// The violations a run found, each also a trace line.
#[derive(Debug)]
pub struct Problems {
    world: World,
    list: Mutex<Vec<String>>,
}

impl Problems {
    /// None yet.
    pub fn new(world: &World) -> Problems {
        Problems {
            world: world.clone(),
            list: Mutex::new(Vec::new()),
        }
    }

    /// Records a violation (and traces it).
    pub fn add(&self, text: String) {
        self.world.trace(&format!("violation: {text}"));
        self.list.lock().unwrap().push(text);
    }

    /// A trace line (not a violation).
    pub fn trace(&self, text: &str) {
        self.world.trace(text);
    }

    /// How many so far.
    pub fn len(&self) -> usize {
        self.list.lock().unwrap().len()
    }

    /// Whether none so far.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `Ok` if none, else every violation, one a line.
    pub fn verdict(&self) -> Result<(), String> {
        let list = self.list.lock().unwrap();
        if list.is_empty() {
            Ok(())
        } else {
            Err(list.join("\n"))
        }
    }
}

impl Sink for Problems {
    fn violation(&self, text: String) {
        self.add(text);
    }
    fn note(&self, text: &str) {
        self.trace(text);
    }
}

/// Whether `e` is connection trouble (the outcome of a write unknown), not a refusal.
pub fn trouble(e: &zkrs_client::Error) -> bool {
    e.is_retryable() || e.is_session_expired()
}

/// Waits briefly (at most 500 ms, as the real suites do) for the connection to come back.
pub async fn settle_briefly(client: &Client) {
    let _ = tokio::time::timeout(
        Duration::from_millis(500),
        zkrs_recipes::framework::wait_connected(client),
    )
    .await;
}

/// Creates the persistent node `path` with `data` unless it exists, retrying through
/// connection trouble (the real suites make their nodes before the faults start; here the
/// faults may already be on). `Err` on a refusal.
pub async fn make_node(client: &Client, path: &str, data: &[u8]) -> Result<(), String> {
    for _ in 0..1000 {
        match client.create(path, data, CreateMode::Persistent).await {
            Ok(_) => return Ok(()),
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => return Ok(()),
            Err(e) if trouble(&e) => settle_briefly(client).await,
            Err(e) => return Err(format!("creating {path}: {e}")),
        }
    }
    Err(format!("creating {path}: not done in 1000 attempts"))
}

/// A flag set once every planned fault has started and ended ([`World::healed`]): the
/// participants work through the faults until then.
pub fn healed_flag(world: &World) -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let (world, set) = (world.clone(), flag.clone());
    tokio::spawn(async move {
        world.healed().await;
        world.trace("healed");
        set.store(true, Ordering::Relaxed);
    });
    flag
}
