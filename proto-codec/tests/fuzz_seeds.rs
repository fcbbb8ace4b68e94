//! Replays the committed fuzz seeds (`fuzz/seeds/<target>/*`) through the fuzz target bodies
//! in `zkr_codec::fuzzing`, so that the corpus is checked by every stable `cargo test`, not
//! only when someone runs the fuzzer with nightly.

use std::fs;
use std::path::{Path, PathBuf};

/// `fuzz/seeds/<target>`, from this crate's manifest directory.
fn seed_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/seeds")
        .join(target)
}

/// Runs every seed of `target` through `run`; returns how many there were.
fn replay(target: &str, run: fn(&[u8])) -> usize {
    let dir = seed_dir(target);
    let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut count = 0;
    for entry in entries {
        let path = entry.expect("readable directory entry").path();
        if !path.is_file() {
            continue;
        }
        let data = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(
            outcome.is_ok(),
            "fuzz target {target} panicked on seed {}",
            path.display()
        );
        count += 1;
    }
    count
}

#[test]
fn frame_seeds() {
    assert!(
        replay("frame", zkr_codec::fuzzing::frame) > 0,
        "no frame seed"
    );
}

#[test]
fn reply_seeds() {
    assert!(
        replay("reply", zkr_codec::fuzzing::reply) > 0,
        "no reply seed"
    );
}

#[test]
fn request_seeds() {
    assert!(
        replay("request", zkr_codec::fuzzing::request) > 0,
        "no request seed"
    );
}

/// The reply and request seeds are golden vectors behind their selector byte: each must decode
/// as the record its selector picks (a wrong selector would leave the fuzzer a useless seed).
#[test]
fn record_seeds_decode() {
    use zkr_codec::fuzzing::{reply_decodes, request_decodes};
    for (target, decodes) in [
        ("reply", reply_decodes as fn(&[u8]) -> bool),
        ("request", request_decodes),
    ] {
        for entry in fs::read_dir(seed_dir(target)).expect("seed directory") {
            let path = entry.expect("entry").path();
            let data = fs::read(&path).expect("seed");
            assert!(decodes(&data), "{} does not decode", path.display());
        }
    }
}

/// Every reply and request record the fuzzers know has at least one seed, so that none of
/// them starts from nothing.
#[test]
fn every_kind_is_seeded() {
    use zkr_codec::fuzzing::{REPLY_KINDS, REQUEST_KINDS};
    for (target, kinds) in [("reply", REPLY_KINDS), ("request", REQUEST_KINDS)] {
        let mut seen = vec![false; kinds.len()];
        for entry in fs::read_dir(seed_dir(target)).expect("seed directory") {
            let data = fs::read(entry.expect("entry").path()).expect("seed");
            if let Some(&selector) = data.first() {
                seen[usize::from(selector) % kinds.len()] = true;
            }
        }
        let missing: Vec<_> = kinds
            .iter()
            .zip(&seen)
            .filter(|(_, seen)| !**seen)
            .map(|(kind, _)| *kind)
            .collect();
        assert!(missing.is_empty(), "{target}: no seed for {missing:?}");
    }
}
