//! `zkctl completions bash|zsh|fish`: the shell's completion script, from clap's model of
//! the command line (clap_complete), on stdout.

use std::io::Write;
use std::process::ExitCode;

use clap_complete::Shell as Target;

use crate::args::{command_line, Shell};
use crate::failure::Failure;

/// Prints the script; exit 0, or 141 when stdout is closed.
pub fn print(shell: Shell) -> ExitCode {
    let target = match shell {
        Shell::Bash => Target::Bash,
        Shell::Zsh => Target::Zsh,
        Shell::Fish => Target::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(target, &mut command_line(), "zkctl", &mut script);
    match std::io::stdout().write_all(&script) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => Failure::from(e).report(crate::failure::Codes::Own),
    }
}
