//! Helpers for the cache tests: a fresh recursive read of a subtree, a comparison of a
//! cache's view with it, and a seeded stream of random changes.
#![allow(dead_code)] // each test file uses some of these

use std::collections::BTreeMap;
use std::time::Duration;

use zkrs_client::{Client, CreateMode, ErrorCode, Stat};
use zkrs_recipes::cache::Snapshot;

use super::DEADLINE;

/// A subtree as the server has it: path -> (Stat, data).
pub type Tree = BTreeMap<String, (Stat, Vec<u8>)>;

/// Reads the subtree at `root` (the root included, if it exists), depth first.
pub async fn fresh_read(client: &Client, root: &str, max_depth: usize) -> Tree {
    let mut tree = Tree::new();
    let mut todo = vec![(root.to_string(), 0usize)];
    while let Some((path, depth)) = todo.pop() {
        match client.get_data(&path).await {
            Ok((data, stat)) => {
                tree.insert(path.clone(), (stat, data.to_vec()));
            }
            Err(e) if e.code() == ErrorCode::NoNode => continue,
            Err(e) => panic!("reading {path}: {e}"),
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
            Err(e) if e.code() == ErrorCode::NoNode => {}
            Err(e) => panic!("listing {path}: {e}"),
        }
    }
    tree
}

/// A cache's view in the same shape (data `None` is compared as empty).
pub fn view_of(snapshot: &Snapshot) -> Tree {
    snapshot
        .iter()
        .map(|(p, d)| (p.clone(), (d.stat, d.bytes().to_vec())))
        .collect()
}

/// The first difference between two trees, for a readable failure.
pub fn first_difference(cache: &Tree, server: &Tree) -> Option<String> {
    for (path, (stat, data)) in server {
        match cache.get(path) {
            None => return Some(format!("{path} missing from the cache")),
            Some((s, d)) if s != stat => {
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

/// Waits until `view()` equals a fresh read of `root`, failing with the first difference
/// after the deadline. The cache converges through its own watches; this only looks.
pub async fn converges<F: FnMut() -> Tree>(
    what: &str,
    client: &Client,
    root: &str,
    max_depth: usize,
    view: F,
) {
    converges_with(what, client, root, max_depth, true, view).await
}

/// [`converges`] for a PathChildrenCache: its root is not in its view.
pub async fn children_converge<F: FnMut() -> Tree>(
    what: &str,
    client: &Client,
    root: &str,
    view: F,
) {
    converges_with(what, client, root, 1, false, view).await
}

async fn converges_with<F: FnMut() -> Tree>(
    what: &str,
    client: &Client,
    root: &str,
    max_depth: usize,
    with_root: bool,
    view: F,
) {
    if let Err(diff) = try_converge(client, root, max_depth, with_root, DEADLINE, view).await {
        panic!("{what}: the cache did not converge within {DEADLINE:?}: {diff}");
    }
}

/// Waits at most `within` until `view()` equals a fresh read of `root` (without the root
/// itself unless `with_root`; at `max_depth`, a node's own children are not compared, as a
/// cache does not follow them there). `Ok` with how long it took, or the first difference.
pub async fn try_converge<F: FnMut() -> Tree>(
    client: &Client,
    root: &str,
    max_depth: usize,
    with_root: bool,
    within: Duration,
    mut view: F,
) -> Result<Duration, String> {
    let started = tokio::time::Instant::now();
    let deadline = started + within;
    loop {
        let mut server = fresh_read(client, root, max_depth).await;
        if !with_root {
            server.remove(root);
        }
        let mut cache = view();
        if max_depth != usize::MAX {
            // At its last level a cache does not follow a node's own children (as Curator's):
            // their count, cversion and pzxid are as of the node's last data read.
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
        let diff = first_difference(&cache, &server);
        let Some(diff) = diff else {
            return Ok(started.elapsed());
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(diff);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn depth_below(root: &str, path: &str) -> usize {
    if path == root {
        0
    } else {
        path[root.len()..].matches('/').count()
    }
}

/// A small seeded generator (xorshift), so a failing run can be replayed with its seed.
pub struct Rng(u64);

impl Rng {
    /// From `ZKR_SEED` if set, else from the clock; prints the seed.
    pub fn from_env(what: &str) -> Rng {
        let seed = std::env::var("ZKR_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("{what}: seed {seed} (replay with ZKR_SEED={seed})");
        Rng(seed)
    }

    /// From a seed (made odd: xorshift never leaves 0).
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// One random change under `root` among a few fixed paths (two levels): create, set, delete
/// (leaves only), or delete and create again in one transaction (a new `czxid` at the same
/// path). Errors that a concurrent layout makes legitimate (NoNode, NodeExists, NotEmpty)
/// are ignored; connection errors are returned so fault tests can retry.
pub async fn random_change(client: &Client, root: &str, rng: &mut Rng) -> zkrs_client::Result<()> {
    let a = ["a", "b", "c"][rng.below(3)];
    let path = if rng.below(2) == 0 {
        format!("{root}/{a}")
    } else {
        format!("{root}/{a}/{}", ["x", "y"][rng.below(2)])
    };
    let data = format!("v{}", rng.below(1000));
    let result = match rng.below(4) {
        0 => client
            .create(&path, data.as_bytes(), CreateMode::Persistent)
            .await
            .map(drop),
        1 => client
            .set_data(&path, data.as_bytes(), None)
            .await
            .map(drop),
        2 => client.delete(&path, None).await,
        _ => {
            use zkrs_client::Op;
            client
                .multi(&[
                    Op::delete(&path, None),
                    Op::create(&path, data.as_bytes(), CreateMode::Persistent),
                ])
                .await
                .map(drop)
        }
    };
    match result {
        Err(e)
            if matches!(
                e.code(),
                ErrorCode::NoNode | ErrorCode::NodeExists | ErrorCode::NotEmpty
            ) =>
        {
            Ok(())
        }
        other => other,
    }
}
