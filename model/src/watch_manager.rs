//! One of the server's two watch tables (data, child), as ZooKeeper 3.8's `WatchManager`
//! keeps it: per path, the connections watching it, each with one mode. A later standard watch
//! on the same path and connection replaces a persistent mode (ZOOKEEPER-4466, fixed in 3.9),
//! and `containsWatcher` answers for any connection's watch on the path (3.8's behaviour).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use zkrs_codec::EventType;

use crate::connection_id::ConnectionId;
use crate::path::self_and_ancestors;

/// How a connection watches one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WatchMode {
    /// Fires once.
    Standard,
    /// Fires until removed.
    Persistent,
    /// Fires until removed, for the path and its subtree (never for children changes).
    PersistentRecursive,
}

/// A watch table.
#[derive(Debug, Default)]
pub(crate) struct WatchManager {
    table: BTreeMap<String, BTreeSet<ConnectionId>>,
    modes: HashMap<(ConnectionId, String), WatchMode>,
    recursive: usize,
}

impl WatchManager {
    /// Adds or replaces the watch of `conn` on `path`.
    pub(crate) fn add(&mut self, path: &str, conn: ConnectionId, mode: WatchMode) {
        self.table.entry(path.to_owned()).or_default().insert(conn);
        let key = (conn, path.to_owned());
        let old = if mode == WatchMode::Standard {
            self.modes.remove(&key)
        } else {
            self.modes.insert(key, mode)
        };
        if old == Some(WatchMode::PersistentRecursive) {
            self.recursive -= 1;
        }
        if mode == WatchMode::PersistentRecursive {
            self.recursive += 1;
        }
    }

    fn mode(&self, conn: ConnectionId, path: &str) -> WatchMode {
        self.modes
            .get(&(conn, path.to_owned()))
            .copied()
            .unwrap_or(WatchMode::Standard)
    }

    /// Fires the watches an event on `path` concerns; returns the connections to notify (each
    /// once), leaving out `suppress`. One-shot watches on the path itself are consumed.
    pub(crate) fn trigger(
        &mut self,
        path: &str,
        event: EventType,
        suppress: &BTreeSet<ConnectionId>,
    ) -> BTreeSet<ConnectionId> {
        let mut fired = BTreeSet::new();
        // Without recursive watches ZooKeeper looks at the path alone.
        let walk: Vec<String> = if self.recursive == 0 {
            vec![path.to_owned()]
        } else {
            self_and_ancestors(path).map(str::to_owned).collect()
        };
        for (i, local) in walk.iter().enumerate() {
            let at_parent = i > 0;
            let Some(conns) = self.table.get(local) else {
                continue;
            };
            let mut consumed = Vec::new();
            for &conn in conns {
                match self.mode(conn, local) {
                    WatchMode::PersistentRecursive if event != EventType::NodeChildrenChanged => {
                        fired.insert(conn);
                    }
                    WatchMode::PersistentRecursive => {}
                    mode if !at_parent => {
                        fired.insert(conn);
                        if mode == WatchMode::Standard {
                            consumed.push(conn);
                        }
                    }
                    _ => {}
                }
            }
            if !consumed.is_empty() {
                let conns = self.table.get_mut(local).expect("looked up above");
                for conn in consumed {
                    conns.remove(&conn);
                }
                if conns.is_empty() {
                    self.table.remove(local);
                }
            }
        }
        fired.retain(|c| !suppress.contains(c));
        fired
    }

    /// `containsWatcher` of 3.8: true when any connection watches `path` (the connection is
    /// only looked at for its recursive mode, which implies a watch on the path anyway).
    pub(crate) fn contains(&self, path: &str, conn: ConnectionId) -> bool {
        self.table.contains_key(path) || self.mode(conn, path) == WatchMode::PersistentRecursive
    }

    /// Removes the watch of `conn` on `path`, whatever its mode; false when there was none.
    pub(crate) fn remove(&mut self, path: &str, conn: ConnectionId) -> bool {
        let Some(conns) = self.table.get_mut(path) else {
            return false;
        };
        if !conns.remove(&conn) {
            return false;
        }
        if conns.is_empty() {
            self.table.remove(path);
        }
        if self.modes.remove(&(conn, path.to_owned())) == Some(WatchMode::PersistentRecursive) {
            self.recursive -= 1;
        }
        true
    }

    /// Drops every watch of a connection that went away.
    pub(crate) fn remove_connection(&mut self, conn: ConnectionId) {
        let paths: Vec<String> = self
            .table
            .iter()
            .filter(|(_, c)| c.contains(&conn))
            .map(|(p, _)| p.clone())
            .collect();
        for p in paths {
            self.remove(&p, conn);
        }
    }

    /// Number of watches (path, connection).
    pub(crate) fn len(&self) -> usize {
        self.table.values().map(BTreeSet::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: ConnectionId = ConnectionId(1);
    const B: ConnectionId = ConnectionId(2);

    #[test]
    fn standard_fires_once_persistent_keeps_firing() {
        let mut m = WatchManager::default();
        let none = BTreeSet::new();
        m.add("/x", A, WatchMode::Standard);
        m.add("/x", B, WatchMode::Persistent);
        assert_eq!(m.trigger("/x", EventType::NodeDataChanged, &none).len(), 2);
        assert_eq!(
            m.trigger("/x", EventType::NodeDataChanged, &none),
            BTreeSet::from([B])
        );
    }

    #[test]
    fn recursive_covers_subtree_but_not_children_events() {
        let mut m = WatchManager::default();
        let none = BTreeSet::new();
        m.add("/a", A, WatchMode::PersistentRecursive);
        assert_eq!(
            m.trigger("/a/b/c", EventType::NodeCreated, &none),
            BTreeSet::from([A])
        );
        assert!(m
            .trigger("/a", EventType::NodeChildrenChanged, &none)
            .is_empty());
    }

    #[test]
    fn standard_watch_downgrades_persistent_one() {
        // ZOOKEEPER-4466: 3.8 keeps one mode per (connection, path).
        let mut m = WatchManager::default();
        let none = BTreeSet::new();
        m.add("/x", A, WatchMode::Persistent);
        m.add("/x", A, WatchMode::Standard);
        assert_eq!(m.trigger("/x", EventType::NodeDataChanged, &none).len(), 1);
        assert!(m
            .trigger("/x", EventType::NodeDataChanged, &none)
            .is_empty());
    }
}
