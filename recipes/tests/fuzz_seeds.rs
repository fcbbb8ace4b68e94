//! Replays the committed seeds of the `sequence` fuzz target (`fuzz/seeds/sequence/*`)
//! through `zkr_recipes::fuzzing::sequence` on stable, with every `cargo test`.

use std::fs;
use std::path::Path;

#[test]
fn sequence_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/sequence");
    let mut count = 0;
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| zkr_recipes::fuzzing::sequence(&data));
        assert!(outcome.is_ok(), "seed {} fails", path.display());
        count += 1;
    }
    assert!(count >= 4, "only {count} seeds in {}", dir.display());
}
