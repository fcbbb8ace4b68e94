//! Replays the committed seeds and minimized corpus of the `sequence` fuzz target
//! (`fuzz/seeds/sequence/*`, `fuzz/corpus/sequence/*`) through
//! `zkrs_recipes::fuzzing::sequence` on stable, with every `cargo test`.

#[path = "../../fuzz/replay.rs"]
mod replay;

#[test]
fn sequence_seeds() {
    let count = replay::replay("sequence", zkrs_recipes::fuzzing::sequence);
    assert!(count >= 4, "only {count} sequence seeds");
}
