//! The `caches` suite, as `recipes/tests/invariants_data.rs` (`caches`) runs it against real
//! servers: a writer makes random changes under `/inv-c` through the faults (creates, sets,
//! deletes, and delete-and-create-again in one transaction, among a few paths on two
//! levels); a `CuratorCache`, a `TreeCache` and a `PathChildrenCache`, each on a session of
//! its own, follow it. Violation: once the faults have healed, a cache that does not equal a
//! fresh read of the tree (paths, Stats and data) within 30 s; and an error the writer does
//! not expect.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{Client, CreateMode, ErrorCode, Op, Stat};
use zkrs_recipes::cache::{CuratorCache, PathChildrenCache, Snapshot, StartMode, TreeCache};

use super::data::{healed_flag, make_node, settle_briefly, trouble, Problems};
use super::{connect, STEP_DEADLINE};
use crate::{SimRng, World};

const ROOT: &str = "/inv-c";

/// Once the faults stop, how long a cache may take to equal the server.
const CONVERGE: Duration = Duration::from_secs(30);

/// A subtree as the server has it: path -> (Stat, data).
type Tree = BTreeMap<String, (Stat, Vec<u8>)>;

/// Reads the subtree at `root` (the root included, if it exists), depth first; `Err` on
/// connection trouble or an unexpected error (the caller reads again).
async fn fresh_read(client: &Client, root: &str, max_depth: usize) -> Result<Tree, String> {
    let mut tree = Tree::new();
    let mut todo = vec![(root.to_string(), 0usize)];
    while let Some((path, depth)) = todo.pop() {
        match client.get_data(&path).await {
            Ok((data, stat)) => {
                tree.insert(path.clone(), (stat, data.to_vec()));
            }
            Err(e) if e.code() == ErrorCode::NoNode => continue,
            Err(e) => return Err(format!("reading {path}: {e}")),
        }
        if depth == max_depth {
            continue;
        }
        match client.get_children(&path).await {
            Ok(children) => {
                for name in children.iter() {
                    todo.push((format!("{path}/{name}"), depth + 1));
                }
            }
            Err(e) if e.code() == ErrorCode::NoNode => {}
            Err(e) => return Err(format!("listing {path}: {e}")),
        }
    }
    Ok(tree)
}

/// A cache's view in the same shape (data `None` is compared as empty).
fn view_of(snapshot: &Snapshot) -> Tree {
    snapshot
        .iter()
        .map(|(p, d)| (p.clone(), (d.stat, d.bytes().to_vec())))
        .collect()
}

/// The first difference between two trees, for a readable violation.
fn first_difference(cache: &Tree, server: &Tree) -> Option<String> {
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

/// Waits at most `within` until `view()` equals a fresh read of `root` (without the root
/// itself unless `with_root`; at `max_depth`, a node's own children are not compared, as a
/// cache does not follow them there). `Ok` with how long it took, or the first difference.
async fn try_converge<F: FnMut() -> Tree>(
    client: &Client,
    max_depth: usize,
    with_root: bool,
    within: Duration,
    mut view: F,
) -> Result<Duration, String> {
    let started = Instant::now();
    let deadline = started + within;
    loop {
        let diff = match fresh_read(client, ROOT, max_depth).await {
            Ok(mut server) => {
                if !with_root {
                    server.remove(ROOT);
                }
                let mut cache = view();
                if max_depth != usize::MAX {
                    // At its last level a cache does not follow a node's own children (as
                    // Curator's): their count, cversion and pzxid are as of the node's last
                    // data read.
                    for tree in [&mut server, &mut cache] {
                        for (path, (stat, _)) in tree.iter_mut() {
                            if depth_below(ROOT, path) == max_depth {
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
            Err(e) => format!("no fresh read: {e}"),
        };
        if Instant::now() >= deadline {
            return Err(diff);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One random change under the root among a few fixed paths (two levels): create, set,
/// delete (leaves only), or delete and create again in one transaction (a new `czxid` at
/// the same path). Errors that a concurrent layout makes legitimate (NoNode, NodeExists,
/// NotEmpty) are ignored; the others are returned.
async fn random_change(client: &Client, rng: &mut SimRng) -> zkrs_client::Result<()> {
    let a = ["a", "b", "c"][rng.below(3) as usize];
    let path = if rng.below(2) == 0 {
        format!("{ROOT}/{a}")
    } else {
        format!("{ROOT}/{a}/{}", ["x", "y"][rng.below(2) as usize])
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
                ErrorCode::NoNode | ErrorCode::NodeExists | ErrorCode::NotEmpty
            ) =>
        {
            Ok(())
        }
        other => other,
    }
}

/// A cache to compare with the server: its name, the depth it follows, whether its view
/// holds the root, and its view.
type CacheCheck<'a> = (
    &'a str,
    usize,
    bool,
    Box<dyn Fn() -> Tree + Send + Sync + 'a>,
);

/// Runs the suite in `world`; `Err` lists every violation.
pub async fn run(world: World) -> Result<(), String> {
    let writer = connect(&world).await?;
    make_node(&writer, ROOT, b"").await?;
    let (c1, c2, c3) = (
        connect(&world).await?,
        connect(&world).await?,
        connect(&world).await?,
    );
    let problems = Problems::new(&world);
    let curator = CuratorCache::new(&c1, ROOT);
    curator.start().map_err(|e| format!("CuratorCache: {e}"))?;
    let tree = TreeCache::new(&c2, ROOT);
    tree.start().map_err(|e| format!("TreeCache: {e}"))?;
    let children = PathChildrenCache::new(&c3, ROOT);
    match tokio::time::timeout(STEP_DEADLINE, children.start(StartMode::BuildInitialCache)).await {
        Ok(Ok(())) => world.trace("PathChildrenCache built"),
        Ok(Err(e)) => return Err(format!("PathChildrenCache: {e}")),
        Err(_) => problems.add(format!(
            "PathChildrenCache: no initial build within {STEP_DEADLINE:?}"
        )),
    }

    let healed = healed_flag(&world);
    let mut rng = world.rng(300);
    let (mut changes, mut refused) = (0u64, 0u64);
    while !healed.load(std::sync::atomic::Ordering::Relaxed) {
        match tokio::time::timeout(STEP_DEADLINE, random_change(&writer, &mut rng)).await {
            Ok(Ok(())) => changes += 1,
            Ok(Err(e)) if trouble(&e) => {
                refused += 1;
                settle_briefly(&writer).await;
            }
            Ok(Err(e)) => {
                problems.add(format!("writer: {e}"));
                break;
            }
            Err(_) => {
                problems.add(format!("a change not done within {STEP_DEADLINE:?}"));
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    world.healed().await;
    world.trace(&format!(
        "healed after {changes} changes ({refused} refused)"
    ));

    // After the faults: every cache equals a fresh read, within the bound.
    let settled = Instant::now();
    let mut slowest = Duration::ZERO;
    let checks: [CacheCheck; 3] = [
        (
            "CuratorCache",
            usize::MAX,
            true,
            Box::new(|| view_of(&curator.snapshot())),
        ),
        (
            "TreeCache",
            usize::MAX,
            true,
            Box::new(|| view_of(&tree.snapshot())),
        ),
        (
            "PathChildrenCache",
            1,
            false,
            Box::new(|| view_of(&children.snapshot())),
        ),
    ];
    for (name, depth, with_root, view) in checks {
        // One bound for all three, from the faults' end.
        let left = CONVERGE.saturating_sub(settled.elapsed());
        match try_converge(&writer, depth, with_root, left, view).await {
            Ok(took) => {
                world.trace(&format!(
                    "{name} equals the server after {} ms",
                    took.as_millis()
                ));
                slowest = slowest.max(took);
            }
            Err(diff) => problems.add(format!(
                "{name} differs from the server {CONVERGE:?} after the faults: {diff}"
            )),
        }
    }
    let nodes = fresh_read(&writer, ROOT, usize::MAX)
        .await
        .map_or(0, |t| t.len());
    world.trace(&format!(
        "caches: changes {changes}, refused {refused}, nodes {nodes}, converged in {} ms, violations {}",
        settled.elapsed().max(slowest).as_millis(),
        problems.len()
    ));
    drop((curator, tree, children));
    for c in [writer, c1, c2, c3] {
        let _ = c.close().await;
    }
    problems.verdict()
}
