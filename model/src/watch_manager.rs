//! One of the server's two watch tables (data, child), as ZooKeeper's `WatchManager` keeps it:
//! per path, the connections watching it, each with its modes. How modes combine is the
//! release's ([`ZooKeeperVersion::watch_modes_side_by_side`]): 3.8 keeps one mode per
//! connection and path, so a later standard watch replaces a persistent one (ZOOKEEPER-4466),
//! and its `containsWatcher` answers for any connection's watch on the path; 3.9 keeps each
//! mode side by side and answers for the asking connection's watch of one mode.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use zkrs_codec::EventType;

use crate::connection_id::ConnectionId;
use crate::path::self_and_ancestors;
use crate::version::ZooKeeperVersion;

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

impl WatchMode {
    fn bit(self) -> u8 {
        match self {
            WatchMode::Standard => 1,
            WatchMode::Persistent => 2,
            WatchMode::PersistentRecursive => 4,
        }
    }
}

/// The modes one connection holds on one path (`WatchStats`): a set of [`WatchMode`] bits,
/// never empty while the connection is in the path's entry of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Modes(u8);

impl Modes {
    fn has(self, mode: WatchMode) -> bool {
        self.0 & mode.bit() != 0
    }
}

/// A watch table.
#[derive(Debug, Default)]
pub(crate) struct WatchManager {
    table: BTreeMap<String, BTreeSet<ConnectionId>>,
    modes: HashMap<(ConnectionId, String), Modes>,
    recursive: usize,
}

impl WatchManager {
    /// Adds the watch of `conn` on `path` (replacing its mode, on 3.8).
    pub(crate) fn add(
        &mut self,
        path: &str,
        conn: ConnectionId,
        mode: WatchMode,
        version: ZooKeeperVersion,
    ) {
        self.table.entry(path.to_owned()).or_default().insert(conn);
        let key = (conn, path.to_owned());
        let old = self.modes.get(&key).copied().unwrap_or(Modes(0));
        let new = if version.watch_modes_side_by_side() {
            Modes(old.0 | mode.bit())
        } else {
            Modes(mode.bit())
        };
        self.set(key, old, new);
    }

    /// Stores `new` for `key` (dropping it when empty) and keeps the count of recursive
    /// watches, which decides whether a trigger walks the ancestors.
    fn set(&mut self, key: (ConnectionId, String), old: Modes, new: Modes) {
        let was = old.has(WatchMode::PersistentRecursive);
        let is = new.has(WatchMode::PersistentRecursive);
        if was && !is {
            self.recursive -= 1;
        } else if is && !was {
            self.recursive += 1;
        }
        if new.0 == 0 {
            self.modes.remove(&key);
        } else {
            self.modes.insert(key, new);
        }
    }

    fn modes(&self, conn: ConnectionId, path: &str) -> Modes {
        self.modes
            .get(&(conn, path.to_owned()))
            .copied()
            .unwrap_or(Modes(0))
    }

    /// Fires the watches an event on `path` concerns; returns the connections to notify (each
    /// once), leaving out `suppress`. One-shot watches on the path itself are consumed. (Both
    /// releases agree here: 3.9 never puts a recursive watch where a children event looks.)
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
        let recursive_fires = event != EventType::NodeChildrenChanged;
        for (i, local) in walk.iter().enumerate() {
            let at_parent = i > 0;
            let Some(conns) = self.table.get(local) else {
                continue;
            };
            let mut consumed = Vec::new();
            for &conn in conns {
                let modes = self.modes(conn, local);
                let recursive = recursive_fires && modes.has(WatchMode::PersistentRecursive);
                let here = modes.has(WatchMode::Standard) || modes.has(WatchMode::Persistent);
                if recursive || (here && !at_parent) {
                    fired.insert(conn);
                }
                if !at_parent && modes.has(WatchMode::Standard) {
                    consumed.push((conn, modes));
                }
            }
            for (conn, modes) in consumed {
                let new = Modes(modes.0 & !WatchMode::Standard.bit());
                self.set((conn, local.clone()), modes, new);
                if new.0 == 0 {
                    self.drop_entry(local, conn);
                }
            }
        }
        fired.retain(|c| !suppress.contains(c));
        fired
    }

    fn drop_entry(&mut self, path: &str, conn: ConnectionId) {
        if let Some(conns) = self.table.get_mut(path) {
            conns.remove(&conn);
            if conns.is_empty() {
                self.table.remove(path);
            }
        }
    }

    /// `containsWatcher`: on 3.8, true when any connection watches `path` (the connection is
    /// only looked at for its recursive mode, which implies a watch on the path anyway); on
    /// 3.9, when `conn` watches it in `mode` (any mode for `None`).
    pub(crate) fn contains(
        &self,
        path: &str,
        conn: ConnectionId,
        mode: Option<WatchMode>,
        version: ZooKeeperVersion,
    ) -> bool {
        let modes = self.modes(conn, path);
        if version.watch_modes_side_by_side() {
            modes.0 != 0 && mode.is_none_or(|m| modes.has(m))
        } else {
            self.table.contains_key(path) || modes.has(WatchMode::PersistentRecursive)
        }
    }

    /// Removes the watch of `conn` on `path`: on 3.8 whatever its mode, on 3.9 the `mode`
    /// given (every mode for `None`); false when nothing was removed.
    pub(crate) fn remove(
        &mut self,
        path: &str,
        conn: ConnectionId,
        mode: Option<WatchMode>,
        version: ZooKeeperVersion,
    ) -> bool {
        if !self.table.get(path).is_some_and(|c| c.contains(&conn)) {
            return false;
        }
        let old = self.modes(conn, path);
        let new = match mode {
            Some(m) if version.watch_modes_side_by_side() => Modes(old.0 & !m.bit()),
            _ => Modes(0),
        };
        if new == old {
            return false;
        }
        self.set((conn, path.to_owned()), old, new);
        if new.0 == 0 {
            self.drop_entry(path, conn);
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
            let old = self.modes(conn, &p);
            self.set((conn, p.clone()), old, Modes(0));
            self.drop_entry(&p, conn);
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
    const V38: ZooKeeperVersion = ZooKeeperVersion::V3_8_0;
    const V39: ZooKeeperVersion = ZooKeeperVersion::V3_9_5;

    #[test]
    fn standard_fires_once_persistent_keeps_firing() {
        let mut m = WatchManager::default();
        let none = BTreeSet::new();
        m.add("/x", A, WatchMode::Standard, V38);
        m.add("/x", B, WatchMode::Persistent, V38);
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
        m.add("/a", A, WatchMode::PersistentRecursive, V38);
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
        m.add("/x", A, WatchMode::Persistent, V38);
        m.add("/x", A, WatchMode::Standard, V38);
        assert_eq!(m.trigger("/x", EventType::NodeDataChanged, &none).len(), 1);
        assert!(m
            .trigger("/x", EventType::NodeDataChanged, &none)
            .is_empty());
    }

    #[test]
    fn on_3_9_a_standard_watch_sits_beside_a_persistent_one() {
        // ZOOKEEPER-4466, fixed in 3.9: the standard watch is used up, the persistent one stays.
        let mut m = WatchManager::default();
        let none = BTreeSet::new();
        m.add("/x", A, WatchMode::Persistent, V39);
        m.add("/x", A, WatchMode::Standard, V39);
        assert_eq!(
            m.trigger("/x", EventType::NodeDataChanged, &none),
            BTreeSet::from([A])
        );
        assert_eq!(
            m.trigger("/x", EventType::NodeDataChanged, &none),
            BTreeSet::from([A])
        );
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn contains_is_per_connection_and_mode_on_3_9_any_connection_on_3_8() {
        let mut m = WatchManager::default();
        m.add("/x", B, WatchMode::Standard, V38);
        assert!(m.contains("/x", A, None, V38));
        assert!(!m.contains("/x", A, None, V39));
        m.add("/x", A, WatchMode::Persistent, V39);
        assert!(m.contains("/x", A, Some(WatchMode::Persistent), V39));
        assert!(!m.contains("/x", A, Some(WatchMode::Standard), V39));
        assert!(!m.contains("/x", A, Some(WatchMode::PersistentRecursive), V39));
    }

    #[test]
    fn remove_takes_one_mode_on_3_9_every_mode_on_3_8() {
        let mut m = WatchManager::default();
        let none = BTreeSet::new();
        for version in [V38, V39] {
            m.add("/x", A, WatchMode::PersistentRecursive, V39);
            m.add("/x", A, WatchMode::Standard, V39);
            assert!(!m.remove("/x", A, Some(WatchMode::Persistent), V39));
            assert!(m.remove("/x", A, Some(WatchMode::Standard), version));
            let left = m.trigger("/x/y", EventType::NodeCreated, &none);
            if version == V39 {
                assert_eq!(left, BTreeSet::from([A]), "the recursive watch stays");
                assert!(m.remove("/x", A, None, V39));
            } else {
                assert!(
                    left.is_empty(),
                    "3.8 removes the path's watch whatever its mode"
                );
            }
            assert_eq!((m.len(), m.recursive), (0, 0));
        }
    }
}
