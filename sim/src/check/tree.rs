//! The cache checker: a fresh recursive read of a subtree, a cache's view in the same shape,
//! their first difference, and a wait until they are equal; with the stream of random changes
//! the cache suites make. Shared by the simulated `caches` suite and the real-server cache
//! tests (`recipes/tests/support/tree.rs`, `invariants_data.rs`).

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{Client, CreateMode, ErrorCode, Op, Stat};
use zkrs_recipes::cache::{CuratorCache, PathChildrenCache, Snapshot, TreeCache};

/// A subtree as the server has it: path -> (Stat, data).
pub type Tree = BTreeMap<String, (Stat, Vec<u8>)>;

/// Reads the subtree at `root` (the root included, if it exists), depth first, to
/// `max_depth` below it; `Err` on connection trouble or an unexpected error (the caller reads
/// again, or gives up).
pub async fn fresh_read(client: &Client, root: &str, max_depth: usize) -> Result<Tree, String> {
    let mut tree = Tree::new();
    let mut todo = vec![(root.to_string(), 0usize)];
    while let Some((path, depth)) = todo.pop() {
        match client.get_data(&path).await {
            Ok((data, stat)) => {
                tree.insert(path.clone(), (stat, data.to_vec()));
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => continue,
            Err(e) => return Err(format!("reading {path}: {e}")),
        }
        if depth == max_depth {
            continue;
        }
        match client.get_children(&path).await {
            Ok(children) => {
                for name in children.iter() {
                    let child = if path == "/" {
                        format!("/{name}")
                    } else {
                        format!("{path}/{name}")
                    };
                    todo.push((child, depth + 1));
                }
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
            Err(e) => return Err(format!("listing {path}: {e}")),
        }
    }
    Ok(tree)
}

/// A cache's view in the same shape (data `None` is compared as empty).
pub fn view_of(snapshot: &Snapshot) -> Tree {
    snapshot
        .iter()
        .map(|(p, d)| (p.clone(), (d.stat, d.bytes().to_vec())))
        .collect()
}

/// The first difference between two trees, for a readable violation.
pub fn first_difference(cache: &Tree, server: &Tree) -> Option<String> {
    for (path, (stat, data)) in server {
        match cache.get(path) {
            None => return Some(format!("{path} missing from the cache")),
            Some((s, _)) if s != stat => {
                return Some(format!("{path}: cache Stat {s:?}, server {stat:?}"))
            }
            Some((_, d)) if d != data => {
                return Some(format!("{path}: cache data {d:?}, server {data:?}"))
            }
            Some(_) => {}
        }
    }
    cache
        .keys()
        .find(|p| !server.contains_key(*p))
        .map(|p| format!("{p} in the cache but not on the server"))
}

fn depth_below(root: &str, path: &str) -> usize {
    if path == root {
        0
    } else {
        path[root.len()..].matches('/').count()
    }
}

/// What [`try_converge`] does when a fresh read fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnReadError {
    /// Reads again (until the deadline; then the read's error is the difference): for runs
    /// where the reading session may still be reconnecting.
    Retry,
    /// Panics with the read's error: for tests where every read is expected to succeed.
    Panic,
}

/// Waits at most `within` until `view()` equals a fresh read of `root` (without the root
/// itself unless `with_root`; at `max_depth`, a node's own children are not compared, as a
/// cache does not follow them there). `Ok` with how long it took, or the first difference.
///
/// # Panics
///
/// On a failed read, with [`OnReadError::Panic`].
pub async fn try_converge<F: FnMut() -> Tree>(
    client: &Client,
    root: &str,
    max_depth: usize,
    with_root: bool,
    within: Duration,
    on_read_error: OnReadError,
    mut view: F,
) -> Result<Duration, String> {
    let started = Instant::now();
    let deadline = started + within;
    loop {
        let diff = match fresh_read(client, root, max_depth).await {
            Ok(mut server) => {
                if !with_root {
                    server.remove(root);
                }
                let mut cache = view();
                if max_depth != usize::MAX {
                    // At its last level a cache does not follow a node's own children (as
                    // Curator's): their count, cversion and pzxid are as of the node's last
                    // data read.
                    for tree in [&mut server, &mut cache] {
                        for (path, (stat, _)) in tree.iter_mut() {
                            if depth_below(root, path) == max_depth {
                                stat.cversion = 0;
                                stat.pzxid = 0;
                                stat.num_children = 0;
                            }
                        }
                    }
                }
                match first_difference(&cache, &server) {
                    None => return Ok(started.elapsed()),
                    Some(diff) => diff,
                }
            }
            Err(e) if on_read_error == OnReadError::Panic => panic!("{e}"),
            Err(e) => format!("no fresh read: {e}"),
        };
        if Instant::now() >= deadline {
            return Err(diff);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A cache to compare with the server (see [`try_converge`]).
#[non_exhaustive]
pub struct CacheCheck<'a> {
    /// The cache's name, for the trace and the violations.
    pub name: &'a str,
    /// The depth it follows below the root (`usize::MAX`: every level).
    pub max_depth: usize,
    /// Whether its view holds the root itself.
    pub with_root: bool,
    /// Its view now.
    pub view: Box<dyn Fn() -> Tree + Send + Sync + 'a>,
}

impl std::fmt::Debug for CacheCheck<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheCheck")
            .field("name", &self.name)
            .field("max_depth", &self.max_depth)
            .field("with_root", &self.with_root)
            .finish_non_exhaustive()
    }
}

/// The cache suites' three caches as [`CacheCheck`]s: a `CuratorCache` and a `TreeCache`
/// (every level, the root in their views) and a `PathChildrenCache` (one level, no root).
pub fn cache_checks<'a>(
    curator: &'a CuratorCache,
    tree: &'a TreeCache,
    children: &'a PathChildrenCache,
) -> [CacheCheck<'a>; 3] {
    [
        CacheCheck {
            name: "CuratorCache",
            max_depth: usize::MAX,
            with_root: true,
            view: Box::new(|| view_of(&curator.snapshot())),
        },
        CacheCheck {
            name: "TreeCache",
            max_depth: usize::MAX,
            with_root: true,
            view: Box::new(|| view_of(&tree.snapshot())),
        },
        CacheCheck {
            name: "PathChildrenCache",
            max_depth: 1,
            with_root: false,
            view: Box::new(|| view_of(&children.snapshot())),
        },
    ]
}

/// One random change under `root` among a few fixed paths (two levels): create, set, delete
/// (leaves only), or delete and create again in one transaction (a new `czxid` at the same
/// path). `below(n)` draws the randomness (a number below `n`). Errors that a concurrent
/// layout makes legitimate (NoNode, NodeExists, NotEmpty) are ignored; the others (connection
/// errors among them) are returned.
pub async fn random_change(
    client: &Client,
    root: &str,
    mut below: impl FnMut(u64) -> u64,
) -> zkrs_client::Result<()> {
    let a = ["a", "b", "c"][below(3) as usize];
    let path = if below(2) == 0 {
        format!("{root}/{a}")
    } else {
        format!("{root}/{a}/{}", ["x", "y"][below(2) as usize])
    };
    let data = format!("v{}", below(1000));
    let result = match below(4) {
        0 => client
            .create(&path, data.as_bytes(), CreateMode::Persistent)
            .await
            .map(drop),
        1 => client
            .set_data(&path, data.as_bytes(), None)
            .await
            .map(drop),
        2 => client.delete(&path, None).await,
        _ => client
            .multi(&[
                Op::delete(&path, None),
                Op::create(&path, data.as_bytes(), CreateMode::Persistent),
            ])
            .await
            .map(drop),
    };
    match result {
        Err(e)
            if matches!(
                e.code(),
                Some(ErrorCode::NoNode | ErrorCode::NodeExists | ErrorCode::NotEmpty)
            ) =>
        {
            Ok(())
        }
        other => other,
    }
}
