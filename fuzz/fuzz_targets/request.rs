//! Fuzz target `request`: see `zkrs_codec::fuzzing::request`.
//!
//! The first byte picks a request record (`REQUEST_KINDS`); the rest is decoded and round-tripped.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zkrs_codec::fuzzing::request(data));
