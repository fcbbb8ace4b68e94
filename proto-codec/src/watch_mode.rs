//! Which watches an `addWatch`, `removeWatches` or `checkWatches` request is about.

closed_enum! {
    /// The mode of an `addWatch` request.
    pub enum AddWatchMode as "addWatch mode" {
        /// Fires on every change of the node (data, children, deletion) until removed.
        Persistent = 0 => "PERSISTENT",
        /// Like [`AddWatchMode::Persistent`], for the node and its whole subtree.
        PersistentRecursive = 1 => "PERSISTENT_RECURSIVE",
    }
}

closed_enum! {
    /// The kind of watch to remove or check (`Watcher.WatcherType`).
    pub enum WatcherType as "watcher type" {
        /// Child watches.
        Children = 1 => "Children",
        /// Data (and exist) watches.
        Data = 2 => "Data",
        /// Every kind.
        Any = 3 => "Any",
        /// Persistent watches (ZooKeeper 3.9+).
        Persistent = 4 => "Persistent",
        /// Persistent recursive watches (ZooKeeper 3.9+).
        PersistentRecursive = 5 => "PersistentRecursive",
    }
}

int_field!(closed AddWatchMode);
int_field!(closed WatcherType);
