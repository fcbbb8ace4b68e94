//! What a parsed command line asks for.

use super::cli::Command;
use super::command::{Globals, Shell};

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Print this text on stdout and exit 0: help, or the version.
    Print(String),
    /// Print the completion script for a shell.
    Completions(Shell),
    /// Run a command.
    Run(Box<Globals>, Command),
}
