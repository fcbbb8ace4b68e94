//! Fuzz target `zkctl_args`: zkctl's command-line parser (clap's, with zkctl's conversion to
//! typed commands; `zkctl/src/args/`, included by path: zkctl is a binary), see
//! `args::fuzz::parse_any`.
#![no_main]

#[path = "../../zkctl/src/args/mod.rs"]
#[allow(dead_code)]
mod args;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| args::fuzz::parse_any(data));
