//! Helpers for the cache tests: a fresh recursive read of a subtree, a comparison of a
//! cache's view with it, and a seeded stream of random changes.
#![allow(dead_code)] // each test file uses some of these

use zkrs_client::Client;

use super::DEADLINE;

// The checker itself is the simulation's (`zkrs_sim::check::tree`): one copy.
use zkrs_sim::check::tree::{try_converge, OnReadError};
#[allow(unused_imports)] // not every test file compares caches
pub use zkrs_sim::check::tree::{view_of, Tree};

/// Reads the subtree at `root` (the root included, if it exists), depth first; panics on an
/// error other than NoNode.
pub async fn fresh_read(client: &Client, root: &str, max_depth: usize) -> Tree {
    zkrs_sim::check::tree::fresh_read(client, root, max_depth)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
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
    let converged = try_converge(
        client,
        root,
        max_depth,
        with_root,
        DEADLINE,
        OnReadError::Panic,
        view,
    );
    if let Err(diff) = converged.await {
        panic!("{what}: the cache did not converge within {DEADLINE:?}: {diff}");
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

/// One random change under `root` (`zkrs_sim::check::tree::random_change`, drawing from
/// `rng`): connection errors are returned so fault tests can retry.
pub async fn random_change(client: &Client, root: &str, rng: &mut Rng) -> zkrs_client::Result<()> {
    zkrs_sim::check::tree::random_change(client, root, |n| rng.below(n as usize) as u64).await
}
