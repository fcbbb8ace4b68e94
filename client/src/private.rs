//! Plumbing for the workspace's own crates (the recipes, zkctl) and its tests, in the manner
//! of serde's `__private`: hidden from the docs, carrying no promise, free to change in any
//! release. Nothing here is part of the API.

pub use crate::event_stream::{event_stream, unbounded_event_stream, EventSender};
pub use crate::listeners::Listeners;
/// For the `__log!` macro.
#[cfg(feature = "tracing")]
pub use tracing;
pub use zkrs_session::__private::{ErrorInternals, Rng};

use crate::Current;

/// A [`Current`] that reads a `tokio::sync::watch` channel.
pub fn current_from_watch<T: Clone>(rx: tokio::sync::watch::Receiver<T>) -> Current<T> {
    Current::from_watch(rx)
}
