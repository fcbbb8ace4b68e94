//! The watch registry: which watchers wait on which server paths, what an event triggers, and
//! what must be re-registered after a reconnect.
//!
//! The rules are the Java client's (`ZKWatchManager`): a data or exist watch fires on
//! NodeCreated / NodeDataChanged / NodeDeleted, a child watch on NodeChildrenChanged /
//! NodeDeleted; one-shot watches are removed when they fire; persistent ones stay; recursive
//! ones cover the subtree but never see NodeChildrenChanged.

use std::collections::HashMap;

use zkrs_codec::{EventType, WatcherType};

use crate::WatcherId;

/// The kind of a watch registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WatchKind {
    /// Left by `getData`, or by `exists` on a node that exists.
    Data,
    /// Left by `exists`: becomes [`WatchKind::Data`] if the node exists, else waits for it.
    Exist,
    /// Left by `getChildren`.
    Child,
    /// `addWatch` persistent.
    Persistent,
    /// `addWatch` persistent recursive.
    PersistentRecursive,
}

#[derive(Debug, Default)]
struct Table(HashMap<String, Vec<WatcherId>>);

impl Table {
    fn add(&mut self, path: &str, id: WatcherId) {
        match self.0.get_mut(path) {
            Some(ids) => ids.push(id),
            None => {
                self.0.insert(path.to_string(), vec![id]);
            }
        }
    }

    fn take(&mut self, path: &str, out: &mut Vec<WatcherId>) {
        if let Some(ids) = self.0.remove(path) {
            out.extend(ids);
        }
    }

    fn copy(&self, path: &str, out: &mut Vec<WatcherId>) {
        if let Some(ids) = self.0.get(path) {
            out.extend_from_slice(ids);
        }
    }

    /// Removes `id` from `path`'s watchers; returns whether it was there.
    fn remove_at(&mut self, path: &str, id: WatcherId) -> bool {
        let Some(ids) = self.0.get_mut(path) else {
            return false;
        };
        let Some(at) = ids.iter().position(|&i| i == id) else {
            return false;
        };
        ids.swap_remove(at);
        if ids.is_empty() {
            self.0.remove(path);
        }
        true
    }

    /// Removes `id`; returns the path if no watcher is left on it.
    fn forget(&mut self, id: WatcherId) -> Option<Option<String>> {
        let path = self
            .0
            .iter()
            .find(|(_, ids)| ids.contains(&id))
            .map(|(p, _)| p.clone())?;
        let ids = self.0.get_mut(&path)?;
        ids.retain(|&i| i != id);
        if ids.is_empty() {
            self.0.remove(&path);
            Some(Some(path))
        } else {
            Some(None)
        }
    }
}

/// All watch registrations of a session, keyed by server path.
#[derive(Debug, Default)]
pub struct WatchRegistry {
    data: Table,
    exist: Table,
    child: Table,
    persistent: Table,
    recursive: Table,
}

/// The paths of one SetWatches / SetWatches2 request.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct WatchBatch<'a> {
    /// Data watches.
    pub data: Vec<&'a str>,
    /// Exist watches.
    pub exist: Vec<&'a str>,
    /// Child watches.
    pub child: Vec<&'a str>,
    /// Persistent watches.
    pub persistent: Vec<&'a str>,
    /// Persistent recursive watches.
    pub recursive: Vec<&'a str>,
}

impl WatchBatch<'_> {
    /// Whether the batch needs SetWatches2 (it has persistent watches).
    pub fn needs_v2(&self) -> bool {
        !self.persistent.is_empty() || !self.recursive.is_empty()
    }
}

impl WatchRegistry {
    /// Records a watch the server confirmed.
    pub fn add(&mut self, kind: WatchKind, path: &str, id: WatcherId) {
        match kind {
            WatchKind::Data => self.data.add(path, id),
            WatchKind::Exist => self.exist.add(path, id),
            WatchKind::Child => self.child.add(path, id),
            WatchKind::Persistent => self.persistent.add(path, id),
            WatchKind::PersistentRecursive => self.recursive.add(path, id),
        }
    }

    /// The watchers an event on `path` triggers, in `out`; one-shot ones are removed.
    pub fn trigger(&mut self, event: EventType, path: &str, out: &mut Vec<WatcherId>) {
        match event {
            EventType::NodeCreated | EventType::NodeDataChanged => {
                self.data.take(path, out);
                self.exist.take(path, out);
            }
            EventType::NodeChildrenChanged => self.child.take(path, out),
            EventType::NodeDeleted => {
                self.data.take(path, out);
                self.exist.take(path, out);
                self.child.take(path, out);
            }
            _ => {}
        }
        if matches!(
            event,
            EventType::NodeCreated
                | EventType::NodeDataChanged
                | EventType::NodeChildrenChanged
                | EventType::NodeDeleted
        ) {
            self.persistent.copy(path, out);
            if event != EventType::NodeChildrenChanged && !self.recursive.0.is_empty() {
                for ancestor in ancestors(path) {
                    self.recursive.copy(ancestor, out);
                }
            }
        }
    }

    /// Forgets a watcher whose receiver is gone. Returns the path and kind if that left no
    /// watcher of its kind on the path (the server's watch could then be removed).
    pub fn forget(&mut self, id: WatcherId) -> Option<(String, WatchKind)> {
        let tables = [
            (WatchKind::Persistent, &mut self.persistent),
            (WatchKind::PersistentRecursive, &mut self.recursive),
            (WatchKind::Data, &mut self.data),
            (WatchKind::Exist, &mut self.exist),
            (WatchKind::Child, &mut self.child),
        ];
        for (kind, table) in tables {
            if let Some(emptied) = table.forget(id) {
                return emptied.map(|path| (path, kind));
            }
        }
        None
    }

    /// Forgets one one-shot registration whose path and kind the caller knows (no search).
    /// `None` if it is not registered; else which kind of server watch on `path` no watcher
    /// of this session needs any more, if any. A persistent watch on the same path keeps the
    /// server's watches: removing a data or child watch on the server would remove it too.
    pub fn forget_one_shot(
        &mut self,
        kind: WatchKind,
        path: &str,
        id: WatcherId,
    ) -> Option<Option<WatcherType>> {
        let removed = match kind {
            WatchKind::Data | WatchKind::Exist => {
                self.data.remove_at(path, id) || self.exist.remove_at(path, id)
            }
            WatchKind::Child => self.child.remove_at(path, id),
            WatchKind::Persistent | WatchKind::PersistentRecursive => false,
        };
        if !removed {
            return None;
        }
        if self.persistent.0.contains_key(path) || self.recursive.0.contains_key(path) {
            return Some(None);
        }
        Some(match kind {
            WatchKind::Data | WatchKind::Exist
                if !self.data.0.contains_key(path) && !self.exist.0.contains_key(path) =>
            {
                Some(WatcherType::Data)
            }
            WatchKind::Child if !self.child.0.contains_key(path) => Some(WatcherType::Children),
            _ => None,
        })
    }

    /// Whether any watch of any kind remains on `path`.
    pub fn has_any(&self, path: &str) -> bool {
        [
            &self.data,
            &self.exist,
            &self.child,
            &self.persistent,
            &self.recursive,
        ]
        .iter()
        .any(|t| t.0.contains_key(path))
    }

    /// Removes the watches a successful `removeWatches(path, kind)` removed on the server;
    /// returns each watcher with the event that tells it so.
    pub fn remove(&mut self, path: &str, kind: WatcherType) -> Vec<(WatcherId, EventType)> {
        let mut out = Vec::new();
        let mut take = |table: &mut Table, event: EventType| {
            if let Some(ids) = table.0.remove(path) {
                out.extend(ids.into_iter().map(|id| (id, event)));
            }
        };
        let data = matches!(kind, WatcherType::Data | WatcherType::Any);
        let child = matches!(kind, WatcherType::Children | WatcherType::Any);
        if data {
            take(&mut self.data, EventType::DataWatchRemoved);
            take(&mut self.exist, EventType::DataWatchRemoved);
        }
        if child {
            take(&mut self.child, EventType::ChildWatchRemoved);
        }
        if matches!(kind, WatcherType::Persistent | WatcherType::Any) {
            take(&mut self.persistent, EventType::PersistentWatchRemoved);
        }
        if matches!(kind, WatcherType::PersistentRecursive | WatcherType::Any) {
            take(&mut self.recursive, EventType::PersistentWatchRemoved);
        }
        out
    }

    /// Lowers each table's capacity to `min` or its length, whichever is more: a burst of
    /// watches does not stay allocated once they have fired.
    pub(crate) fn shrink_to(&mut self, min: usize) {
        for table in self.tables_mut() {
            table.0.shrink_to(min);
        }
    }

    fn tables_mut(&mut self) -> [&mut Table; 5] {
        [
            &mut self.data,
            &mut self.exist,
            &mut self.child,
            &mut self.persistent,
            &mut self.recursive,
        ]
    }

    /// Removes every registration (session lost or closed) and returns the watchers, in
    /// the order they were made (not the tables' hash order, so a run repeats exactly).
    pub fn drain(&mut self) -> Vec<WatcherId> {
        let mut out = Vec::new();
        for table in self.tables_mut() {
            for (_, ids) in table.0.drain() {
                out.extend(ids);
            }
        }
        out.sort_unstable();
        out
    }

    /// Whether a persistent (or persistent recursive) watch is registered.
    pub fn has_persistent(&self) -> bool {
        !self.persistent.0.is_empty() || !self.recursive.0.is_empty()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        [
            &self.data,
            &self.exist,
            &self.child,
            &self.persistent,
            &self.recursive,
        ]
        .iter()
        .all(|t| t.0.is_empty())
    }

    /// Splits every registered path into SetWatches batches whose path bytes stay near
    /// `max_bytes` (the Java client's 128 KiB), so no request nears the packet limit.
    pub fn batches(&self, max_bytes: usize) -> Vec<WatchBatch<'_>> {
        let mut batches = Vec::new();
        let mut batch = WatchBatch::default();
        let mut size = 0;
        let tables = [
            &self.data,
            &self.exist,
            &self.child,
            &self.persistent,
            &self.recursive,
        ];
        for (which, table) in tables.into_iter().enumerate() {
            // Sorted, not in the table's hash order: the same watches make the same bytes.
            let mut paths: Vec<&String> = table.0.keys().collect();
            paths.sort_unstable();
            for path in paths {
                let cost = path.len() + 4;
                if size > 0 && size + cost > max_bytes {
                    batches.push(std::mem::take(&mut batch));
                    size = 0;
                }
                let list = match which {
                    0 => &mut batch.data,
                    1 => &mut batch.exist,
                    2 => &mut batch.child,
                    3 => &mut batch.persistent,
                    _ => &mut batch.recursive,
                };
                list.push(path.as_str());
                size += cost;
            }
        }
        if size > 0 {
            batches.push(batch);
        }
        batches
    }
}

/// `path` and each of its ancestors up to `/`.
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(path);
    std::iter::from_fn(move || {
        let current = next?;
        next = match current.rfind('/') {
            Some(0) if current.len() > 1 => Some("/"),
            Some(0) | None => None,
            Some(i) => Some(&current[..i]),
        };
        Some(current)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(out: &[WatcherId]) -> Vec<u64> {
        out.iter().map(|w| w.get()).collect()
    }

    #[test]
    fn ancestors_go_up_to_root() {
        let a: Vec<_> = ancestors("/a/b/c").collect();
        assert_eq!(a, ["/a/b/c", "/a/b", "/a", "/"]);
        assert_eq!(ancestors("/").collect::<Vec<_>>(), ["/"]);
    }

    #[test]
    fn one_shot_watches_fire_once_and_persistent_ones_stay() {
        let mut r = WatchRegistry::default();
        r.add(WatchKind::Data, "/a", WatcherId::new(1));
        r.add(WatchKind::Child, "/a", WatcherId::new(2));
        r.add(WatchKind::Persistent, "/a", WatcherId::new(3));
        r.add(WatchKind::PersistentRecursive, "/", WatcherId::new(4));
        let mut out = Vec::new();
        r.trigger(EventType::NodeDataChanged, "/a", &mut out);
        assert_eq!(ids(&out), [1, 3, 4]);
        out.clear();
        r.trigger(EventType::NodeDataChanged, "/a", &mut out);
        assert_eq!(ids(&out), [3, 4]);
        out.clear();
        r.trigger(EventType::NodeChildrenChanged, "/a", &mut out);
        assert_eq!(
            ids(&out),
            [2, 3],
            "recursive watches never see child events"
        );
        out.clear();
        r.trigger(EventType::NodeDeleted, "/a/b", &mut out);
        assert_eq!(ids(&out), [4]);
    }

    #[test]
    fn batches_stay_under_the_limit() {
        let mut r = WatchRegistry::default();
        let paths: Vec<String> = (0..1000).map(|i| format!("/node/{i:06}")).collect();
        for (i, p) in paths.iter().enumerate() {
            r.add(WatchKind::Data, p, WatcherId::new(i as u64));
        }
        r.add(WatchKind::Persistent, "/p", WatcherId::new(5000));
        let batches = r.batches(1024);
        let total: usize = batches
            .iter()
            .map(|b| b.data.len() + b.persistent.len())
            .sum();
        assert_eq!(total, 1001);
        for b in &batches {
            let bytes: usize = b
                .data
                .iter()
                .chain(&b.persistent)
                .map(|p| p.len() + 4)
                .sum();
            assert!(bytes <= 1024, "{bytes}");
        }
        assert_eq!(batches.iter().filter(|b| b.needs_v2()).count(), 1);
    }

    #[test]
    fn forgetting_the_last_one_shot_watch_of_a_kind_frees_the_server_watch() {
        let mut r = WatchRegistry::default();
        r.add(WatchKind::Data, "/a", WatcherId::new(1));
        r.add(WatchKind::Exist, "/a", WatcherId::new(2));
        r.add(WatchKind::Child, "/a", WatcherId::new(3));
        r.add(WatchKind::Child, "/b", WatcherId::new(4));
        r.add(WatchKind::Persistent, "/b", WatcherId::new(5));
        assert_eq!(
            r.forget_one_shot(WatchKind::Data, "/a", WatcherId::new(1)),
            Some(None),
            "exist left"
        );
        assert_eq!(
            r.forget_one_shot(WatchKind::Data, "/a", WatcherId::new(1)),
            None,
            "not registered"
        );
        assert_eq!(
            r.forget_one_shot(WatchKind::Exist, "/a", WatcherId::new(2)),
            Some(Some(WatcherType::Data))
        );
        assert_eq!(
            r.forget_one_shot(WatchKind::Child, "/a", WatcherId::new(3)),
            Some(Some(WatcherType::Children))
        );
        assert_eq!(
            r.forget_one_shot(WatchKind::Child, "/b", WatcherId::new(4)),
            Some(None),
            "persistent"
        );
        let mut out = Vec::new();
        r.trigger(EventType::NodeDeleted, "/a", &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn forget_reports_emptied_paths() {
        let mut r = WatchRegistry::default();
        r.add(WatchKind::Persistent, "/p", WatcherId::new(1));
        r.add(WatchKind::Persistent, "/p", WatcherId::new(2));
        assert_eq!(r.forget(WatcherId::new(1)), None);
        assert_eq!(
            r.forget(WatcherId::new(2)),
            Some(("/p".into(), WatchKind::Persistent))
        );
        assert!(r.is_empty());
    }
}
