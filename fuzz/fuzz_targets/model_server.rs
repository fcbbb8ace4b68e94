//! Fuzz target `model_server`: see `zkrs_model::fuzzing::server`.
//!
//! The input is a script of actions against the model's sans-I/O server core (accept,
//! connect, request frames of any opcode, raw bytes, time, disconnect); it must never panic
//! and must answer whole frames only.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    zkrs_model::fuzzing::server(data);
});
