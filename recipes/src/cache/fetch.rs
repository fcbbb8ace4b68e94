//! The reads a cache makes, and their answers as the cache's task handles them.

use zkrs_client::{Bytes, Children, Client, Result, Stat, Watcher};

/// One answered read.
pub(crate) enum Fetched {
    /// `getData` (data and Stat).
    Data {
        path: String,
        watched: bool,
        result: Result<(Bytes, Stat)>,
    },
    /// `exists` (Stat only).
    Exists {
        path: String,
        watched: bool,
        result: Result<Option<Stat>>,
    },
    /// `getChildren2` (names and the parent's Stat).
    Children {
        path: String,
        watched: bool,
        result: Result<Children>,
    },
}

/// `getData`, leaving a watch through `watcher` if given.
pub(crate) async fn data(client: Client, path: String, watcher: Option<Watcher>) -> Fetched {
    let result = match &watcher {
        Some(w) => client.get_data_with_watcher(&path, w).await,
        None => client.get_data(&path).await,
    };
    Fetched::Data {
        path,
        watched: watcher.is_some(),
        result,
    }
}

/// `exists`, leaving a watch through `watcher` if given.
pub(crate) async fn exists(client: Client, path: String, watcher: Option<Watcher>) -> Fetched {
    let result = match &watcher {
        Some(w) => client.exists_with_watcher(&path, w).await,
        None => client.exists(&path).await,
    };
    Fetched::Exists {
        path,
        watched: watcher.is_some(),
        result,
    }
}

/// `getChildren2`, leaving a watch through `watcher` if given.
pub(crate) async fn children(client: Client, path: String, watcher: Option<Watcher>) -> Fetched {
    let result = match &watcher {
        Some(w) => client.get_children_with_watcher(&path, w).await,
        None => client.get_children2(&path).await,
    };
    Fetched::Children {
        path,
        watched: watcher.is_some(),
        result,
    }
}
