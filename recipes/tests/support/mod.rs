//! Helpers shared by the recipe tests: deadlines on every wait, and a client per session.
#![allow(dead_code)] // each test file uses some of these

use std::time::Duration;

use zkrs_client::{Client, ConnectionState, ErrorCode, OpCode, StateChanges};
use zkrs_testkit::{four_letter_word, TestingServer};

pub mod tree;

/// The longest any single wait in these tests may take.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Runs `f`, failing the test if it takes longer than [`DEADLINE`].
pub async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: not done within {DEADLINE:?}"))
}

/// Polls `check` until it holds, failing after [`DEADLINE`].
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether `mutex` is refused for 200 ms: another session holds it.
pub async fn refused(mutex: &zkrs_recipes::lock::InterProcessMutex) -> bool {
    let attempt = mutex.try_acquire(Duration::from_millis(200)).await;
    attempt.unwrap().is_none()
}

/// A new session on `zk` with this session timeout.
pub async fn connect_with_timeout(zk: &TestingServer, timeout: Duration) -> Client {
    let builder = Client::builder(&zk.connect_string()).session_timeout(timeout);
    builder.connect().await.unwrap()
}

/// The children's names of `path`, none if it is missing.
pub async fn child_names(client: &Client, path: &str) -> Vec<String> {
    let children = client.get_children(path).await;
    children.map(|c| c.to_vec()).unwrap_or_default()
}

/// A latch with the id "a" at `path`, once it leads.
pub async fn leading_latch(client: &Client, path: &str) -> zkrs_recipes::leader::LeaderLatch {
    let latch = zkrs_recipes::leader::LeaderLatch::builder(client, path)
        .id("a")
        .start()
        .unwrap();
    within("leadership", latch.await_leadership())
        .await
        .unwrap();
    latch
}

/// A queue at `/q` whose consumers lock each item they take under `/q-locks`.
pub fn locked_queue(client: &Client) -> zkrs_recipes::queue::DistributedQueue {
    let builder = zkrs_recipes::queue::DistributedQueue::builder(client, "/q");
    builder.lock_path("/q-locks").build().unwrap()
}

/// A new session on `zk`.
pub async fn connect(zk: &TestingServer) -> Client {
    Client::connect(&zk.connect_string()).await.unwrap()
}

/// Number of children of `path` (0 if it does not exist).
pub async fn children(client: &Client, path: &str) -> usize {
    match client.get_children(path).await {
        Ok(c) => c.len(),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => 0,
        Err(e) => panic!("listing {path}: {e}"),
    }
}

/// The paths this session watches on the server (`wchc`).
pub fn server_watches(zk: &TestingServer, session_id: i64) -> Vec<String> {
    let answer = four_letter_word(zk.address(), "wchc", Duration::from_secs(5)).unwrap();
    let mut ours = false;
    let mut paths = Vec::new();
    for l in answer.lines() {
        if let Some(id) = l.strip_prefix("0x") {
            ours = i64::from_str_radix(id.trim(), 16).ok() == Some(session_id);
        } else if ours && !l.trim().is_empty() {
            paths.push(l.trim().to_string());
        }
    }
    paths
}

/// Waits for the next change to `want` (within [`DEADLINE`]); its session id.
pub async fn next_state(states: &mut StateChanges, want: ConnectionState) -> i64 {
    within(&format!("state {want:?}"), async {
        loop {
            match states.next().await {
                Some(c) if c.state == want => return c.session_id,
                Some(_) => {}
                None => panic!("the client is gone"),
            }
        }
    })
    .await
}

/// Requests `client` sent and had answered, pings left out (`only`: of that operation
/// alone). A request is counted when its answer reaches the caller.
pub fn requests(client: &Client, only: Option<OpCode>) -> u64 {
    client
        .metrics()
        .operations
        .iter()
        .filter(|o| o.op != OpCode::Ping && only.is_none_or(|op| o.op == op))
        .map(|o| o.requests)
        .sum()
}

/// Listings `client` sent and had answered.
pub fn listings(client: &Client) -> u64 {
    requests(client, Some(OpCode::GetChildren)) + requests(client, Some(OpCode::GetChildren2))
}
