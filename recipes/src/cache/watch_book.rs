//! [`WatchBook`]: which one-shot watches of a cache the server holds, per path, so that a
//! read leaves a watch exactly when one is needed.
//!
//! Two facts make it right:
//! - A watched read leaves a watch only if it succeeds. While it is in flight it may still
//!   fail (the node is deleted first, say), so only an answered read counts as a watch set;
//!   a read made meanwhile leaves its own. (Counting a read in flight as a watch lost every
//!   later change of a node: the simulation's caches seed 3002873.)
//! - The engine handles every answer the server sent before an event before that event (its
//!   answers are taken in send order, ahead of events). So a watched read still in flight
//!   when an event comes was served after the change: it already reads what the event is
//!   about, and leaves the next watch. Reading again would only pile up duplicate watches,
//!   each of which fires a read of its own at the next change.

use std::collections::HashMap;

#[derive(Debug, Default, Clone, Copy)]
struct Entry {
    /// Watched reads sent and not answered yet.
    in_flight: u32,
    /// A watched read succeeded and its watch has not fired since.
    set: bool,
}

/// The watches of one kind (data or child) a cache has on the server, per path.
#[derive(Debug, Default)]
pub(crate) struct WatchBook {
    paths: HashMap<String, Entry>,
}

impl WatchBook {
    /// A read of `path` is about to be sent: whether it should leave a watch (counted in
    /// flight if so). It should unless a watch is known to be set.
    pub(crate) fn start_read(&mut self, path: &str) -> bool {
        let entry = self.paths.entry(path.to_owned()).or_default();
        if entry.set {
            return false;
        }
        entry.in_flight += 1;
        true
    }

    /// Whether nothing watches `path` and no watched read of it is in flight.
    pub(crate) fn is_unwatched(&self, path: &str) -> bool {
        self.paths
            .get(path)
            .is_none_or(|e| !e.set && e.in_flight == 0)
    }

    /// A watched read of `path` was answered; `watch_set` when the answer left a watch.
    pub(crate) fn answered(&mut self, path: &str, watch_set: bool) {
        if let Some(entry) = self.paths.get_mut(path) {
            entry.in_flight = entry.in_flight.saturating_sub(1);
            entry.set |= watch_set;
            self.tidy(path);
        }
    }

    /// The watch on `path` fired (or was removed). Returns whether a watched read is in
    /// flight, which then reads the change and leaves the next watch.
    pub(crate) fn fired(&mut self, path: &str) -> bool {
        let Some(entry) = self.paths.get_mut(path) else {
            return false;
        };
        entry.set = false;
        let reading = entry.in_flight > 0;
        self.tidy(path);
        reading
    }

    /// The session ended: the server holds none of its watches. Reads in flight will fail
    /// and be answered as such.
    pub(crate) fn session_lost(&mut self) {
        self.paths.retain(|_, e| {
            e.set = false;
            e.in_flight > 0
        });
    }

    fn tidy(&mut self, path: &str) {
        if self
            .paths
            .get(path)
            .is_some_and(|e| !e.set && e.in_flight == 0)
        {
            self.paths.remove(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_in_flight_is_not_a_watch_set() {
        let mut book = WatchBook::default();
        assert!(book.start_read("/a"));
        // Another read while the first is in flight: it may fail, so this one watches too.
        assert!(book.start_read("/a"));
        book.answered("/a", false);
        book.answered("/a", true);
        assert!(!book.start_read("/a"), "a watch is set");
        assert!(!book.fired("/a"), "nothing in flight");
        assert!(book.start_read("/a"));
        assert!(book.fired("/a"), "the read in flight reads the change");
        book.answered("/a", true);
        book.session_lost();
        assert!(book.is_unwatched("/a"));
        assert!(book.paths.is_empty());
    }
}
