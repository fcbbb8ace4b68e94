//! Fuzz target `session`: see `zkrs_session::fuzzing::session`.
//!
//! The input is a script of actions against the sans-I/O session core on virtual time (submit,
//! server bytes raw or well-formed, time, connect, disconnect, close, ...); invariants are
//! checked after every step.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zkrs_session::fuzzing::session(data));
