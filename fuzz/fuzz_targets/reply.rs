//! Fuzz target `reply`: see `zkrs_codec::fuzzing::reply`.
//!
//! The first byte picks a reply record (`REPLY_KINDS`); the rest is decoded and round-tripped.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zkrs_codec::fuzzing::reply(data));
