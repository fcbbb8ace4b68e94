//! The `model_server` fuzz target's seeds (`fuzz/seeds/model_server/`) and its corpus, replayed
//! on stable, and random scripts: the model never panics and answers whole frames.

use proptest::prelude::*;

#[test]
fn seeds_and_corpus_replay() {
    let mut replayed = 0;
    for dir in ["../fuzz/seeds/model_server", "../fuzz/corpus/model_server"] {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            zkrs_model::fuzzing::server(&std::fs::read(&path).unwrap());
            replayed += 1;
        }
    }
    assert!(replayed >= 4, "only {replayed} inputs replayed");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn random_scripts_never_panic(script in proptest::collection::vec(any::<u8>(), 0..400)) {
        zkrs_model::fuzzing::server(&script);
    }

    /// One script, one run: what the server sends (every byte, every close, in order) is the
    /// same each time.
    #[test]
    fn the_same_script_gives_the_same_bytes(script in proptest::collection::vec(any::<u8>(), 0..400)) {
        prop_assert_eq!(zkrs_model::fuzzing::server(&script), zkrs_model::fuzzing::server(&script));
    }
}
