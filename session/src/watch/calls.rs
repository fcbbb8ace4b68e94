//! The session's calls about the watchers a driver holds receivers for: the abandoned-watch
//! sweep and forgetting a watcher or a group (the rules are in `watchers.rs`).

use std::time::Instant;

use crate::{Session, WatcherGroup, WatcherId};

impl<T> Session<T> {
    /// The sweep for abandoned one-shot watches (see `watchers.rs`): call it after each
    /// [`Session::submit`] that hands in a watcher. When the watchers held have doubled
    /// since the last sweep, `abandoned` is asked about each one-shot watcher held (whether
    /// its receiver is gone), and those are forgotten as by [`Session::forget_watcher`], in
    /// the order they were made. Returns them, for the driver to drop their receivers;
    /// empty (and `abandoned` is not asked) when no sweep is due.
    pub fn sweep_abandoned(
        &mut self,
        abandoned: impl FnMut(WatcherId) -> bool,
        now: Instant,
    ) -> Vec<WatcherId> {
        let Some(gone) = self.watching.watchers.sweep(abandoned) else {
            return Vec::new();
        };
        for &watcher in &gone {
            self.forget_watcher(watcher, now);
        }
        gone
    }

    /// Forgets every watcher of `group` still held (its receiver is gone), as by
    /// [`Session::forget_watcher`], in the order they were made; returns them, for the driver
    /// to drop their senders.
    pub fn forget_group(&mut self, group: WatcherGroup, now: Instant) -> Vec<WatcherId> {
        let gone = self.watching.watchers.of_group(group);
        for &watcher in &gone {
            self.forget_watcher(watcher, now);
        }
        gone
    }

    /// The driver dropped a watcher's receiver: forget it, and remove the server's watch when
    /// no other watcher of the session needs it. A one-shot watch whose request is in flight
    /// is forgotten when its reply comes.
    pub fn forget_watcher(&mut self, watcher: WatcherId, now: Instant) {
        match self.watching.watchers.release(watcher) {
            Some((kind, path, true)) => self.forget_registration(watcher, kind, &path, now),
            _ => self.forget_persistent(watcher, now),
        }
    }
}
