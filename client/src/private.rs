//! Plumbing for the workspace's own crates (the recipes, zkctl) and its tests, in the manner
//! of serde's `__private`: hidden from the docs, carrying no promise, free to change in any
//! release. Nothing here is part of the API.

pub use crate::event_stream::{event_stream, unbounded_event_stream, EventSender};
pub use crate::listeners::Listeners;
pub use crate::metrics::AtomicHistogram;
/// For the `__log!` macro.
#[cfg(feature = "tracing")]
pub use tracing;
/// SplitMix64, for the recipes' seeded picks (they depend on this crate, not on the codec).
pub use zkrs_codec::__private::{splitmix64, SPLITMIX64_GAMMA};
pub use zkrs_session::__private::Rng;

use crate::Current;

/// A [`Current`] that reads a `tokio::sync::watch` channel.
pub fn current_from_watch<T: Clone>(rx: tokio::sync::watch::Receiver<T>) -> Current<T> {
    Current::from_watch(rx)
}

/// The monotonic time now, on the client's clock (tokio's: virtual on a paused runtime).
pub fn now() -> std::time::Instant {
    crate::clock::now()
}

/// Milliseconds since the Unix epoch on the client's wall clock (the system's, or a
/// simulation's: [`set_thread_wall_clock`]).
pub fn unix_time_ms() -> u64 {
    crate::clock::unix_time_ms()
}

/// For a simulation: this thread's wall clock reads `epoch_ms` now and advances with the
/// runtime's (virtual) time; `None` puts the system clock back.
pub fn set_thread_wall_clock(epoch_ms: Option<u64>) {
    crate::clock::set_thread_wall_clock(epoch_ms)
}

/// 64 random bits through the library's one randomness seam (see [`seed_thread_randomness`]).
pub fn random_u64() -> u64 {
    crate::random::random_seed()
}

/// For a simulation: every later draw of the library on this thread (host shuffles, the
/// UUIDs of protected names, jitter, picks) comes from one stream seeded with `seed`; `None`
/// makes them random again. SASL's nonces never do.
pub fn seed_thread_randomness(seed: Option<u64>) {
    crate::random::seed_thread(seed)
}

pub use crate::history::{Answer, Recorded, Recorder};
pub use crate::memory_link::{memory_link, DialFuture, Dialer, LinkEnd, LinkPeer};

/// For a simulation's check of ZooKeeper's guarantees: `builder`'s driver tells `recorder`
/// each request it takes, each answer and each watch event it hands to the application.
pub fn with_recorder(
    mut builder: crate::ClientBuilder,
    recorder: std::sync::Arc<dyn Recorder>,
) -> crate::ClientBuilder {
    builder.settings.recorder = Some(recorder);
    builder
}

/// For a simulation's check: how many one-shot watches `client`'s driver holds (live ones,
/// and abandoned ones not yet swept); `None` if the driver is gone.
pub async fn one_shot_watches(client: &crate::Client) -> Option<usize> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    client
        .inner
        .commands
        .send(crate::protocol::Command::CountOneShotWatches(tx))
        .ok()?;
    rx.await.ok()
}

/// For a simulation: `builder`'s connections are made by `dialer` (in-memory links) instead
/// of DNS and TCP.
pub fn with_dialer(
    mut builder: crate::ClientBuilder,
    dialer: std::sync::Arc<dyn Dialer>,
) -> crate::ClientBuilder {
    builder.settings.dialer = Some(dialer);
    builder
}

/// The code the Java client would name `error` by: the server's, or for a local failure the
/// code Java reports for it (zkctl's messages and the client's error counts use it).
pub fn java_code(error: &crate::Error) -> zkrs_codec::ErrorCode {
    crate::metrics::counted_code(error)
}

pub use crate::created_path::CreatedPath;

/// [`crate::Client::delete`], sent on session `session_id` or not at all: if that session is
/// not the client's session when the request would go out (it was lost, and a new one made
/// or being made), it fails with kind `SessionExpired` and nothing is sent. For deleting an
/// ephemeral node the session holds (a lock): on a later session the same path may be
/// another client's node. A check of [`crate::Client::session_id`] before the call cannot
/// stand in for it: the request may wait (for a place in flight, for a connection) past a
/// session loss, then go out on the next session.
pub async fn delete_in_session(
    client: &crate::Client,
    path: &str,
    version: Option<i32>,
    session_id: i64,
) -> crate::Result<()> {
    client.delete_in(path, version, Some(session_id)).await
}

/// [`crate::Client::multi`], sent on session `session_id` or not at all (see
/// [`delete_in_session`]).
pub async fn multi_in_session(
    client: &crate::Client,
    ops: &[crate::Op],
    session_id: i64,
) -> crate::Result<Vec<crate::OpResult>> {
    client.multi_in(ops, Some(session_id)).await
}

/// [`crate::Client::create_with`], with the created path left in its reply instead of copied
/// into a new `String` (a lock's hot path puts it into the `String` it created the node with).
pub async fn create_in_reply(
    client: &crate::Client,
    path: &str,
    data: &[u8],
    options: &crate::CreateOptions<'_>,
) -> crate::Result<(CreatedPath, Option<crate::Stat>)> {
    client.create_in_reply(path, data, options).await
}
