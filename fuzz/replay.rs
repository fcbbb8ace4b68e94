//! Replays one fuzz target's committed inputs on stable, with every `cargo test`: the seeds
//! written by hand (`fuzz/seeds/<target>/*`) and the minimized corpus that the campaigns
//! grew (`fuzz/corpus/<target>/*`, rewritten by `scripts/fuzz.sh --minimize`). Included by
//! path (`#[path = ".../fuzz/replay.rs"]`) into the test suites of the crates that hold the
//! target bodies, each of which lives one folder below the repository's root.

use std::path::{Path, PathBuf};

/// `fuzz/<kind>/<target>` from the including crate's manifest directory.
fn folder(kind: &str, target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz")
        .join(kind)
        .join(target)
}

/// Runs every seed, then every corpus input, of `target` through `run`, and fails naming the
/// input that panics. Returns how many seeds there were (the corpus may be absent: a target
/// that has not had a campaign yet).
pub fn replay(target: &str, run: impl Fn(&[u8]) + std::panic::RefUnwindSafe) -> usize {
    let mut seeds = 0;
    for (kind, required) in [("seeds", true), ("corpus", false)] {
        let dir = folder(kind, target);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if required => panic!("{}: {e}", dir.display()),
            Err(_) => continue,
        };
        for entry in entries {
            let path = entry.expect("readable directory entry").path();
            if !path.is_file() {
                continue;
            }
            let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let outcome = std::panic::catch_unwind(|| run(&data));
            assert!(
                outcome.is_ok(),
                "fuzz target {target} panicked on {}",
                path.display()
            );
            seeds += usize::from(required);
        }
    }
    seeds
}

/// The seeds of `target` (the hand-written inputs only), for checks on what they contain.
#[allow(dead_code)]
pub fn seeds(target: &str) -> impl Iterator<Item = (PathBuf, Vec<u8>)> {
    let dir = folder("seeds", target);
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.is_file())
        .map(|path| {
            let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path, data)
        })
}
