//! Fuzz target `sequence`: see `zkrs_recipes::fuzzing::sequence` (Curator's ordering rules
//! on arbitrary child names, against reference versions).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zkrs_recipes::fuzzing::sequence(data));
