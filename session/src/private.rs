//! Plumbing for the workspace's own crates (the client, the recipes, zkctl) and its tests,
//! in the manner of serde's `__private`: hidden from the docs, carrying no promise, free to
//! change in any release. Nothing here is part of the API.

pub use crate::hosts::Rng;

use crate::Session;

/// Whether the session holds any watch registration (for tests).
pub fn has_watches<T>(session: &Session<T>) -> bool {
    !session.watching.registry.is_empty()
}

/// How many one-shot watchers the session holds: live ones, and abandoned ones not yet swept
/// (for a simulation's check).
pub fn one_shot_watchers<T>(session: &Session<T>) -> usize {
    session.watching.watchers.one_shot()
}

/// The connections the core has named, by role (current, spare, retiring), for tests that
/// play the driver without keeping the names from the events.
pub fn connections<T>(
    session: &Session<T>,
) -> (
    Option<crate::ConnId>,
    Option<crate::ConnId>,
    Option<crate::ConnId>,
) {
    session.connections.by_role()
}
