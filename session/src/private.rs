//! Plumbing for the workspace's own crates (the client, the recipes, zkctl) and its tests,
//! in the manner of serde's `__private`: hidden from the docs, carrying no promise, free to
//! change in any release. Nothing here is part of the API.

pub use crate::hosts::Rng;

use crate::Session;

/// Whether the session holds any watch registration (for tests).
pub fn has_watches<T>(session: &Session<T>) -> bool {
    !session.watches.is_empty()
}
