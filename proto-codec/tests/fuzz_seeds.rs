//! Replays the committed fuzz seeds (`fuzz/seeds/<target>/*`) and minimized corpora
//! (`fuzz/corpus/<target>/*`) through the fuzz target bodies in `zkrs_codec::fuzzing`, so that
//! they are checked by every stable `cargo test`, not only when someone runs the fuzzer with
//! nightly.

#[path = "../../fuzz/replay.rs"]
mod replay;

use replay::{replay, seeds};

#[test]
fn frame_seeds() {
    assert!(
        replay("frame", zkrs_codec::fuzzing::frame) > 0,
        "no frame seed"
    );
}

#[test]
fn reply_seeds() {
    assert!(
        replay("reply", zkrs_codec::fuzzing::reply) > 0,
        "no reply seed"
    );
}

#[test]
fn request_seeds() {
    assert!(
        replay("request", zkrs_codec::fuzzing::request) > 0,
        "no request seed"
    );
}

/// The reply and request seeds are golden vectors behind their selector byte: each must decode
/// as the record its selector picks (a wrong selector would leave the fuzzer a useless seed).
#[test]
fn record_seeds_decode() {
    use zkrs_codec::fuzzing::{reply_decodes, request_decodes};
    for (target, decodes) in [
        ("reply", reply_decodes as fn(&[u8]) -> bool),
        ("request", request_decodes),
    ] {
        for (path, data) in seeds(target) {
            assert!(decodes(&data), "{} does not decode", path.display());
        }
    }
}

/// Every reply and request record the fuzzers know has at least one seed, so that none of
/// them starts from nothing.
#[test]
fn every_kind_is_seeded() {
    use zkrs_codec::fuzzing::{REPLY_KINDS, REQUEST_KINDS};
    for (target, kinds) in [("reply", REPLY_KINDS), ("request", REQUEST_KINDS)] {
        let mut seen = vec![false; kinds.len()];
        for (_, data) in seeds(target) {
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
