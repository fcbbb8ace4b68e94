//! `zkctl`: a ZooKeeper command-line tool on `zkrs-client` and `zkrs-recipes` (the code is
//! the library, `src/lib.rs`). See `zkctl --help` and `zkctl/README.md`.
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    zkctl::main_with(std::env::args_os().skip(1).collect(), zkctl::Lab::default())
}
