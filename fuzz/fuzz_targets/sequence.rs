//! Fuzz target `sequence`: see `zkr_recipes::fuzzing::sequence` (Curator's ordering rules
//! on arbitrary child names, against reference versions).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zkr_recipes::fuzzing::sequence(data));
