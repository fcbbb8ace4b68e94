//! Watch management: `setWatches`, `setWatches2`, `addWatch`, `removeWatches`,
//! `checkWatches`.

use crate::common_types::*;
use crate::watch_mode::{AddWatchMode, WatcherType};

record! {
    /// `SetWatches`: re-registers standard watches after a reconnect (xid -8, opcode 101).
    pub struct SetWatches<'a> {
        /// The last zxid the client saw: the server fires any watch whose node changed since.
        pub relative_zxid: i64,
        /// Paths with a data watch.
        pub data_watches: List<'a, &'a str>,
        /// Paths with an exist watch (node absent when set).
        pub exist_watches: List<'a, &'a str>,
        /// Paths with a child watch.
        pub child_watches: List<'a, &'a str>,
    }
}

record! {
    /// `SetWatches2`: like [`SetWatches`], plus persistent watches (opcode 105).
    pub struct SetWatches2<'a> {
        /// The last zxid the client saw.
        pub relative_zxid: i64,
        /// Paths with a data watch.
        pub data_watches: List<'a, &'a str>,
        /// Paths with an exist watch.
        pub exist_watches: List<'a, &'a str>,
        /// Paths with a child watch.
        pub child_watches: List<'a, &'a str>,
        /// Paths with a persistent watch.
        pub persistent_watches: List<'a, &'a str>,
        /// Paths with a persistent recursive watch.
        pub persistent_recursive_watches: List<'a, &'a str>,
    }
}

record! {
    /// `AddWatchRequest`: a persistent or persistent recursive watch.
    pub struct AddWatchRequest<'a> {
        /// The node (or subtree root).
        pub path: &'a str,
        /// Persistent or recursive.
        pub mode: AddWatchMode,
    }
}

record! {
    /// `RemoveWatchesRequest` and `CheckWatchesRequest`.
    pub struct WatchesRequest<'a> {
        /// The node.
        pub path: &'a str,
        /// Which kind of watch.
        pub watcher_type: WatcherType,
    }
}

/// `RemoveWatchesRequest {path, type}`.
pub type RemoveWatchesRequest<'a> = WatchesRequest<'a>;
/// `CheckWatchesRequest {path, type}`.
pub type CheckWatchesRequest<'a> = WatchesRequest<'a>;
