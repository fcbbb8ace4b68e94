//! The cached view: a sorted map of path to [`ChildData`] that readers see as an `Arc`
//! snapshot, and the one place that decides which event a new read of a node means.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard};

use zkrs_client::{Bytes, Stat};

use crate::framework::Listeners;

use super::{CacheEvent, ChildData};

/// A cache's nodes by path, in byte order of the paths.
pub type Snapshot = Arc<BTreeMap<String, Arc<ChildData>>>;

/// The view shared between a cache's task (the only writer) and its handles (readers).
///
/// Readers take the current `Arc` under a short lock: no copy, no wait on the network. The
/// writer changes the map in place with `Arc::make_mut`, which copies the map only when a
/// reader still holds an older snapshot (at most once per burst of changes).
#[derive(Clone, Default)]
pub(crate) struct SharedView {
    map: Arc<Mutex<Snapshot>>,
}

impl SharedView {
    fn lock(&self) -> MutexGuard<'_, Snapshot> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        self.lock().clone()
    }

    pub(crate) fn get(&self, path: &str) -> Option<Arc<ChildData>> {
        self.lock().get(path).cloned()
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    pub(crate) fn clear(&self) {
        *self.lock() = Snapshot::default();
    }
}

/// Where the cache's task reports node changes: the view, and (while `announce` is on) the
/// event streams. Dropping it (the task ended) ends the streams.
pub(crate) struct ViewWriter {
    pub(crate) view: SharedView,
    listeners: Listeners<CacheEvent>,
    /// Off while a start mode builds silently (Curator's BUILD_INITIAL_CACHE).
    pub(crate) announce: bool,
}

impl Drop for ViewWriter {
    fn drop(&mut self) {
        self.listeners.close();
    }
}

impl ViewWriter {
    pub(crate) fn new(view: SharedView, listeners: Listeners<CacheEvent>) -> ViewWriter {
        ViewWriter {
            view,
            listeners,
            announce: true,
        }
    }

    pub(crate) fn emit(&self, event: CacheEvent) {
        crate::metrics::count::cache_event();
        self.listeners.send(event);
    }

    fn emit_node(&self, event: CacheEvent) {
        if self.announce {
            crate::metrics::count::cache_event();
            self.listeners.send(event);
        }
    }

    pub(crate) fn contains(&self, path: &str) -> bool {
        self.view.lock().contains_key(path)
    }

    pub(crate) fn get(&self, path: &str) -> Option<Arc<ChildData>> {
        self.view.get(path)
    }

    /// Records a read of `path`. Reads reach the cache in the order the server answered
    /// them, so the newest read wins; what it means is decided by identity first:
    /// - not cached: added;
    /// - another `czxid`: the node was deleted and created again: removed, then added;
    /// - `mzxid` moved: updated;
    /// - only the rest of the Stat moved (children changed): kept silently.
    ///
    /// `data` is `None` when the read carried no data (an `exists`, or a cache without data);
    /// then the cached data, if any, is kept when the node is the same and not rewritten.
    pub(crate) fn upsert(&self, path: &str, stat: Stat, data: Option<Bytes>) {
        let mut guard = self.view.lock();
        let old = guard.get(path).cloned();
        let data = match (&old, data) {
            (_, Some(d)) => Some(Bytes::copy_from_slice(&d)),
            (Some(old), None) if old.stat.czxid == stat.czxid && old.stat.mzxid == stat.mzxid => {
                old.data.clone()
            }
            (_, None) => None,
        };
        let new = || {
            Arc::new(ChildData {
                path: path.to_string(),
                stat,
                data: data.clone(),
            })
        };
        match old {
            None => {
                let new = new();
                Arc::make_mut(&mut guard).insert(path.to_string(), new.clone());
                drop(guard);
                self.emit_node(CacheEvent::Added(new));
            }
            Some(old) if old.stat.czxid != stat.czxid => {
                let new = new();
                Arc::make_mut(&mut guard).insert(path.to_string(), new.clone());
                drop(guard);
                self.emit_node(CacheEvent::Removed(old));
                self.emit_node(CacheEvent::Added(new));
            }
            Some(old) if old.stat.mzxid != stat.mzxid => {
                let new = new();
                Arc::make_mut(&mut guard).insert(path.to_string(), new.clone());
                drop(guard);
                self.emit_node(CacheEvent::Updated { old, new });
            }
            Some(old) if old.stat != stat || old.data != data => {
                Arc::make_mut(&mut guard).insert(path.to_string(), new());
            }
            Some(_) => {}
        }
    }

    /// Takes a newer Stat of the same node with the same data (from a listing of its
    /// children, or an `exists`): kept silently. A Stat that says the node was re-created or
    /// rewritten is left to the read of its data that its watch brings.
    pub(crate) fn refresh_stat(&self, path: &str, stat: Stat) {
        let mut guard = self.view.lock();
        let Some(old) = guard.get(path) else {
            return;
        };
        if old.stat == stat || old.stat.czxid != stat.czxid || old.stat.mzxid != stat.mzxid {
            return;
        }
        let new = Arc::new(ChildData {
            path: old.path.clone(),
            stat,
            data: old.data.clone(),
        });
        Arc::make_mut(&mut guard).insert(path.to_string(), new);
    }

    /// Removes `path` and everything below it, deepest first.
    pub(crate) fn remove_subtree(&self, path: &str) {
        let removed = {
            let mut guard = self.view.lock();
            let below = below(path);
            let mut paths: Vec<String> = Vec::new();
            if path != "/" && guard.contains_key(path) {
                paths.push(path.to_string());
            }
            paths.extend(
                guard
                    .range::<str, _>((Bound::Included(below.as_str()), Bound::Unbounded))
                    .map(|(p, _)| p)
                    .take_while(|p| p.starts_with(&below))
                    .cloned(),
            );
            if paths.is_empty() {
                return;
            }
            let map = Arc::make_mut(&mut guard);
            paths
                .iter()
                .rev()
                .filter_map(|p| map.remove(p))
                .collect::<Vec<_>>()
        };
        for node in removed {
            self.emit_node(CacheEvent::Removed(node));
        }
    }

    /// The cached paths directly below `parent`.
    pub(crate) fn children_of(&self, parent: &str) -> Vec<String> {
        let guard = self.view.lock();
        let below = below(parent);
        guard
            .range::<str, _>((Bound::Included(below.as_str()), Bound::Unbounded))
            .map(|(p, _)| p)
            .take_while(|p| p.starts_with(&below))
            // Not the parent itself (the root `/` starts with its own prefix).
            .filter(|p| p.len() > below.len() && !p[below.len()..].contains('/'))
            .cloned()
            .collect()
    }

    /// Every cached path.
    pub(crate) fn paths(&self) -> Vec<String> {
        self.view.lock().keys().cloned().collect()
    }
}

/// The prefix every path strictly below `path` starts with.
pub(crate) fn below(path: &str) -> String {
    if path == "/" {
        "/".to_string()
    } else {
        format!("{path}/")
    }
}

/// How many segments `path` is below `root` (0 for the root itself).
pub(crate) fn depth(root: &str, path: &str) -> usize {
    if path == root {
        0
    } else if root == "/" {
        path.matches('/').count()
    } else {
        path[root.len()..].matches('/').count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkrs_client::EventStream;

    fn writer() -> (ViewWriter, EventStream<CacheEvent>) {
        let listeners = Listeners::new(64);
        let rx = listeners.subscribe();
        (ViewWriter::new(SharedView::default(), listeners), rx)
    }

    fn stat(czxid: i64, mzxid: i64, version: i32) -> Stat {
        Stat {
            czxid,
            mzxid,
            version,
            ..Stat::default()
        }
    }

    fn kinds(rx: &mut EventStream<CacheEvent>) -> Vec<String> {
        std::iter::from_fn(|| rx.try_next())
            .map(|e| match e {
                CacheEvent::Added(d) => format!("added {} {}", d.path, d.stat.version),
                CacheEvent::Updated { new, .. } => {
                    format!("updated {} {}", new.path, new.stat.version)
                }
                CacheEvent::Removed(d) => format!("removed {}", d.path),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn identity_decides_before_version() {
        let (w, mut rx) = writer();
        w.upsert("/a", stat(1, 1, 0), Some(Bytes::from_static(b"x")));
        w.upsert("/a", stat(1, 1, 0), Some(Bytes::from_static(b"x")));
        w.upsert("/a", stat(1, 5, 1), Some(Bytes::from_static(b"y")));
        // Deleted and created again, landing on the same version: still a new node.
        w.upsert("/a", stat(9, 9, 1), Some(Bytes::from_static(b"y")));
        // Children changed: the Stat moves, no event.
        let mut s = stat(9, 9, 1);
        s.pzxid = 12;
        s.num_children = 1;
        w.upsert("/a", s, None);
        assert_eq!(
            kinds(&mut rx),
            ["added /a 0", "updated /a 1", "removed /a", "added /a 1"]
        );
        let kept = w.get("/a").unwrap();
        assert_eq!(kept.stat.pzxid, 12);
        assert_eq!(
            kept.bytes(),
            b"y",
            "a read without data keeps the data of the same node"
        );
    }

    #[test]
    fn subtrees_go_deepest_first_and_neighbours_stay() {
        let (w, mut rx) = writer();
        for (i, p) in ["/a", "/a/b", "/a/b/c", "/a-b", "/ab", "/a/d"]
            .iter()
            .enumerate()
        {
            w.upsert(p, stat(i as i64 + 1, 1, 0), None);
        }
        kinds(&mut rx);
        assert_eq!(w.children_of("/a"), ["/a/b", "/a/d"]);
        w.remove_subtree("/a/b");
        assert_eq!(kinds(&mut rx), ["removed /a/b/c", "removed /a/b"]);
        w.remove_subtree("/a");
        assert_eq!(kinds(&mut rx), ["removed /a/d", "removed /a"]);
        assert_eq!(w.paths(), ["/a-b", "/ab"]);
        assert_eq!(w.children_of("/"), ["/a-b", "/ab"]);
        // The root is nobody's child, its own included.
        w.upsert("/", stat(0, 0, 0), None);
        assert_eq!(w.children_of("/"), ["/a-b", "/ab"]);
        kinds(&mut rx);
        w.remove_subtree("/");
        assert_eq!(kinds(&mut rx), ["removed /ab", "removed /a-b", "removed /"]);
    }

    #[test]
    fn depth_counts_segments_below_the_root() {
        assert_eq!(depth("/", "/"), 0);
        assert_eq!(depth("/", "/a/b"), 2);
        assert_eq!(depth("/r", "/r"), 0);
        assert_eq!(depth("/r", "/r/a"), 1);
        assert_eq!(depth("/r", "/r/a/b"), 2);
    }

    #[test]
    fn every_listener_gets_every_event_and_the_streams_end_with_the_writer() {
        let (w, mut first) = writer();
        let mut second = w.listeners.subscribe();
        w.upsert("/a", stat(1, 1, 0), None);
        assert_eq!(kinds(&mut first), ["added /a 0"]);
        assert_eq!(kinds(&mut second), ["added /a 0"]);
        let listeners = w.listeners.clone();
        drop(w);
        let waker = std::task::Waker::from(Arc::new(NoWake));
        let mut cx = std::task::Context::from_waker(&waker);
        assert!(matches!(
            first.poll_event(&mut cx),
            std::task::Poll::Ready(None)
        ));
        let mut late = listeners.subscribe();
        assert!(matches!(
            late.poll_event(&mut cx),
            std::task::Poll::Ready(None)
        ));
    }

    struct NoWake;
    impl std::task::Wake for NoWake {
        fn wake(self: Arc<Self>) {}
    }

    #[test]
    fn readers_keep_their_snapshot() {
        let (w, _rx) = writer();
        w.upsert("/a", stat(1, 1, 0), None);
        let before = w.view.snapshot();
        w.upsert("/b", stat(2, 2, 0), None);
        assert_eq!(before.len(), 1);
        assert_eq!(w.view.snapshot().len(), 2);
    }
}
