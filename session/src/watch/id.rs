//! [`WatcherId`] and [`WatcherGroup`]: how a driver names its watchers to the core (the
//! registrations in `registry.rs` and the watchers held in `watchers.rs` both use them).

/// Identifies one watcher (one waiting future, one stream, or one registration made through a
/// [`WatcherGroup`]) to the driver. The driver picks the values; each must be new to the
/// session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WatcherId(u64);

impl WatcherId {
    /// The watcher numbered `raw`.
    pub const fn new(raw: u64) -> WatcherId {
        WatcherId(raw)
    }

    /// Its number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl std::fmt::Display for WatcherId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Identifies a group of one-shot registrations that hear each notification once, as the
/// registrations of one Java `Watcher` object do (the client's `Watcher`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WatcherGroup(u64);

impl WatcherGroup {
    /// The group numbered `raw`.
    pub const fn new(raw: u64) -> WatcherGroup {
        WatcherGroup(raw)
    }

    /// Its number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl std::fmt::Display for WatcherGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}
