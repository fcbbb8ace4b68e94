//! The `caches` suite, as `recipes/tests/invariants_data.rs` (`caches`) runs it against real
//! servers: a writer makes random changes under `/inv-c` through the faults (creates, sets,
//! deletes, and delete-and-create-again in one transaction, among a few paths on two
//! levels); a `CuratorCache`, a `TreeCache` and a `PathChildrenCache`, each on a session of
//! its own, follow it. Violation: once the faults have healed, a cache that does not equal a
//! fresh read of the tree (paths, Stats and data) within 30 s; and an error the writer does
//! not expect.

use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::Client;
use zkrs_recipes::cache::{CuratorCache, PathChildrenCache, StartMode, TreeCache};

use crate::data::{healed_flag, make_node, settle_briefly, trouble, Problems};
use crate::participant::{connect, STEP_DEADLINE};
use zkrs_sim::check::tree::{
    cache_checks, fresh_read, random_change, try_converge, CacheCheck, OnReadError,
};
use zkrs_sim::World;

const ROOT: &str = "/inv-c";

/// Once the faults stop, how long a cache may take to equal the server.
const CONVERGE: Duration = Duration::from_secs(30);

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
    let curator = CuratorCache::builder(&c1, ROOT)
        .start()
        .map_err(|e| format!("CuratorCache: {e}"))?;
    let tree = TreeCache::builder(&c2, ROOT)
        .start()
        .map_err(|e| format!("TreeCache: {e}"))?;
    let children = PathChildrenCache::builder(&c3, ROOT)
        .start_mode(StartMode::BuildInitialCache)
        .start()
        .map_err(|e| format!("PathChildrenCache: {e}"))?;
    match tokio::time::timeout(STEP_DEADLINE, children.initialized()).await {
        Ok(Ok(())) => world.trace("PathChildrenCache built"),
        Ok(Err(e)) => return Err(format!("PathChildrenCache: {e}")),
        Err(_) => problems.add(format!(
            "PathChildrenCache: no initial build within {STEP_DEADLINE:?}"
        )),
    }

    let (changes, refused) = change_until_healed(&world, &writer, &problems).await;
    world.healed().await;
    world.trace(&format!(
        "healed after {changes} changes ({refused} refused)"
    ));

    // After the faults: every cache equals a fresh read, within the bound.
    let settled = Instant::now();
    let mut slowest = Duration::ZERO;
    for CacheCheck {
        name,
        max_depth: depth,
        with_root,
        view,
        ..
    } in cache_checks(&curator, &tree, &children)
    {
        // One bound for all three, from the faults' end.
        let left = CONVERGE.saturating_sub(settled.elapsed());
        let converged = try_converge(
            &writer,
            ROOT,
            depth,
            with_root,
            left,
            OnReadError::Retry,
            view,
        );
        match converged.await {
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

/// Random changes under the root until the faults have healed: how many were made, and how
/// many refused (connection trouble).
async fn change_until_healed(world: &World, writer: &Client, problems: &Problems) -> (u64, u64) {
    let healed = healed_flag(world);
    let mut rng = world.rng(300);
    let (mut changes, mut refused) = (0u64, 0u64);
    while !healed.load(std::sync::atomic::Ordering::Relaxed) {
        let change = random_change(writer, ROOT, |n| rng.below(n));
        match tokio::time::timeout(STEP_DEADLINE, change).await {
            Ok(Ok(())) => changes += 1,
            Ok(Err(e)) if trouble(&e) => {
                refused += 1;
                settle_briefly(writer).await;
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
    (changes, refused)
}
