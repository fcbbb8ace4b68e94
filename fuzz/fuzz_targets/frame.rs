//! Fuzz target `frame`: see `zkrs_codec::fuzzing::frame`.
//!
//! A byte stream split into frames with `check_frame`, each parsed as a reply and as a request.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zkrs_codec::fuzzing::frame(data));
