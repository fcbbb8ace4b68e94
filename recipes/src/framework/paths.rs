//! Path helpers: joining, the node name of a path, and creating missing parents.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use zkrs_client::{Client, CreateMode, ErrorCode, Result};

/// `parent` + `/` + `child` (no double slash under the root).
pub fn join(parent: &str, child: &str) -> String {
    if parent == "/" {
        format!("/{child}")
    } else {
        format!("{parent}/{child}")
    }
}

/// The last segment of a path (`/a/b` → `b`).
pub fn node_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// The parent of a path (`/a/b` → `/a`, `/a` → `/`).
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// What [`create_parents`] makes the missing nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParentMode {
    /// Persistent nodes (Curator's `creatingParentsIfNeeded`).
    Persistent,
    /// Containers, which the server removes once empty (Curator's
    /// `creatingParentContainersIfNeeded`).
    Container,
}

impl ParentMode {
    /// The mode of the nodes made.
    pub fn create_mode(self) -> CreateMode {
        match self {
            ParentMode::Persistent => CreateMode::Persistent,
            ParentMode::Container => CreateMode::Container,
        }
    }
}

/// Creates `path` and its missing ancestors, in `mode`. Existing nodes are left alone. All
/// creates go out at once: one round trip.
pub async fn create_parents(client: &Client, path: &str, mode: ParentMode) -> Result<()> {
    let mode = mode.create_mode();
    let prefixes: Vec<&str> = path
        .match_indices('/')
        .skip(1)
        .map(|(i, _)| &path[..i])
        .chain((path != "/").then_some(path))
        .collect();
    for result in join_all(prefixes.iter().map(|p| client.create(p, b"", mode))).await {
        match result {
            Ok(_) => {}
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Polls every future until all are done and returns their outputs in the input order. The
/// requests they make go out together (pipelined): N reads cost one round trip, not N; each
/// pass polls the futures in input order, so their requests go out in that order.
pub async fn join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut results: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx: &mut Context<'_>| {
        let mut pending = false;
        for (f, slot) in futures.iter_mut().zip(results.iter_mut()) {
            if slot.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => *slot = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    results
        .into_iter()
        .map(|r| r.expect("every future finished"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_parts() {
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("/a", "b"), "/a/b");
        assert_eq!(node_name("/a/b"), "b");
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "/");
    }
}
