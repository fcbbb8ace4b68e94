//! Plumbing for the workspace's own crates (the client, the recipes, zkctl) and its tests,
//! in the manner of serde's `__private`: hidden from the docs, carrying no promise, free to
//! change in any release. Nothing here is part of the API.

pub use crate::hosts::Rng;

use crate::Session;

/// Whether the session holds any watch registration (for tests).
pub fn has_watches<T>(session: &Session<T>) -> bool {
    !session.watches.is_empty()
}

/// How many one-shot watchers the session holds: live ones, and abandoned ones not yet swept
/// (for a simulation's check).
pub fn one_shot_watchers<T>(session: &Session<T>) -> usize {
    session.watchers.one_shot()
}

/// [`Event`](crate::Event) without `#[non_exhaustive]`, for the workspace's own driver: it
/// matches every event, so an event added to the core is a compile error there rather than
/// an instruction silently dropped. Made by [`exhaustive`]; the variants are
/// [`Event`](crate::Event)'s.
#[derive(Debug)]
#[allow(missing_docs)]
pub enum ExhaustiveEvent<T> {
    Connect {
        host: usize,
        timeout: std::time::Duration,
        shuffle: u64,
    },
    Disconnect,
    ConnectSpare {
        host: usize,
        timeout: std::time::Duration,
        shuffle: u64,
    },
    DropSpare,
    UseSpare,
    DropRetiring,
    RestoreRetiring,
    Moved {
        host: usize,
    },
    ProbeReadWrite {
        host: usize,
    },
    Reply {
        token: T,
        result: Result<crate::Reply, crate::Error>,
    },
    Watch {
        watcher: crate::WatcherId,
        event: crate::WatchEvent,
    },
    WatcherUnused(crate::WatcherId),
    State(crate::StateChange),
    Closed,
}

/// `event` as an [`ExhaustiveEvent`] (this match, in the core's own crate, lists every
/// event: a new one must be added here, and then to the driver).
pub fn exhaustive<T>(event: crate::Event<T>) -> ExhaustiveEvent<T> {
    use crate::Event;
    match event {
        Event::Connect {
            host,
            timeout,
            shuffle,
        } => ExhaustiveEvent::Connect {
            host,
            timeout,
            shuffle,
        },
        Event::Disconnect => ExhaustiveEvent::Disconnect,
        Event::ConnectSpare {
            host,
            timeout,
            shuffle,
        } => ExhaustiveEvent::ConnectSpare {
            host,
            timeout,
            shuffle,
        },
        Event::DropSpare => ExhaustiveEvent::DropSpare,
        Event::UseSpare => ExhaustiveEvent::UseSpare,
        Event::DropRetiring => ExhaustiveEvent::DropRetiring,
        Event::RestoreRetiring => ExhaustiveEvent::RestoreRetiring,
        Event::Moved { host } => ExhaustiveEvent::Moved { host },
        Event::ProbeReadWrite { host } => ExhaustiveEvent::ProbeReadWrite { host },
        Event::Reply { token, result } => ExhaustiveEvent::Reply { token, result },
        Event::Watch { watcher, event } => ExhaustiveEvent::Watch { watcher, event },
        Event::WatcherUnused(watcher) => ExhaustiveEvent::WatcherUnused(watcher),
        Event::State(change) => ExhaustiveEvent::State(change),
        Event::Closed => ExhaustiveEvent::Closed,
    }
}
