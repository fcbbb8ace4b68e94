//! The command line, parsed by clap (derive).
//!
//! Grammar: `zkctl [GLOBAL FLAGS] COMMAND [ARGS] [FLAGS] [-- CMD ARGS...]`.
//!
//! - [`cli`]: the global flags and the [`Command`]s, with their `--help` text; each command's
//!   arguments are one clap struct, which its code takes as it is: [`data`], [`recipes`],
//!   [`hold`] (the commands that run CMD), [`service`], [`ensemble`], [`bench`], [`ops`],
//!   [`backup`];
//! - [`values`]: the value parsers, each saying what it needed;
//! - [`convert`]: the [`Globals`] from the global flags of every level, and the checks clap
//!   cannot say;
//! - [`action`]: what the command line asks for; [`command`]: [`Globals`] and the flags'
//!   value types;
//! - [`usage`]: the one-line [`UsageError`].
//!
//! Global flags may come before or after the command: [`command_line`] adds them to every
//! level (not clap's `global`, which keeps only the deepest level's values of a flag given on
//! two), and [`parse`] merges the levels (a later value wins, `--auth` and `-v` add up).
//! A command's own flag of the same name wins there: `zkctl --version` prints the version,
//! but `zkctl set /a x --version 3` is a conditional set. Every usage error is one line.

mod acl;
mod action;
pub mod backup;
mod bench;
mod cli;
mod command;
mod convert;
mod data;
mod ensemble;
#[cfg(any(test, fuzzing))]
pub mod fuzz;
mod hold;
mod ops;
mod recipes;
mod secrets;
mod service;
mod usage;
mod values;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory, FromArgMatches};

pub use acl::{perm_string, AclSpec};
pub use action::Action;
pub use bench::BenchOptions;
pub use cli::Command;
pub use command::{
    BenchKind, BenchRuntime, Globals, HoldPolicy, OutputFormat, PickStrategy, ServiceKind, Shell,
};
pub use data::{CacheKind, CreateArgs, GetArgs, LsArgs, StatArgs, TreeArgs, WatchArgs};
pub use ensemble::{Change, ReconfigArgs};
pub use hold::{BarrierArgs, ElectArgs, LockArgs, MemberArgs};
pub use ops::{
    entries as acl_entries, AclSub, OpsSub, QuotaLimits, QuotaSub, WatchKind, WatchesSub, Word,
};
pub use recipes::{CounterAction, QueueKind, QueueSub};
pub use service::{RegisterArgs, ServiceSub};
use usage::printable;
pub use usage::UsageError;

/// zkctl's command line for clap: [`cli::Cli`], with the global flags on every level.
pub fn command_line() -> clap::Command {
    settings(cli::Cli::command())
}

/// What every level has: "a repeated flag overrides", a missing subcommand as a one-line
/// usage error (not the help on stderr), and its subcommands' global flags, added when clap
/// builds them: only the levels a command line reaches pay for them (measured in release:
/// `zkctl get` starts about 0.1-0.4 ms later than with the hand-written parser; with the
/// flags added to all 30 commands up front, 0.7-0.9 ms).
fn settings(cmd: clap::Command) -> clap::Command {
    cmd.args_override_self(true)
        .arg_required_else_help(false)
        .mut_subcommands(|sub| sub.defer(with_globals))
}

/// A subcommand with the global flags, and `-V`/`--version` unless it has a `--version` of
/// its own (`set`, `delete`).
fn with_globals(sub: clap::Command) -> clap::Command {
    let own_version = sub.get_arguments().any(|a| a.get_long() == Some("version"));
    let sub = settings(cli::GlobalFlags::augment_args(sub));
    if own_version {
        sub
    } else {
        sub.version(env!("CARGO_PKG_VERSION"))
    }
}

/// Parses the arguments (without the program's name). `env_server` is `$ZK_SERVER`.
pub fn parse(args: &[String], env_server: Option<String>) -> Result<Action, UsageError> {
    let argv = std::iter::once("zkctl").chain(args.iter().map(String::as_str));
    let matches = match command_line().try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => return clap_outcome(e),
    };
    // The global flags of each level, outermost first (the order they were given in).
    let mut flags = cli::GlobalFlags::from_arg_matches(&matches).map_err(one_line)?;
    let mut level = &matches;
    while let Some((_, sub)) = level.subcommand() {
        flags = flags.then(cli::GlobalFlags::from_arg_matches(sub).map_err(one_line)?);
        level = sub;
    }
    let cli = cli::Cli::from_arg_matches(&matches).map_err(one_line)?;
    if let Command::Completions(c) = cli.command {
        return Ok(Action::Completions(c.shell));
    }
    let resume = flags.resume.is_some();
    let globals = convert::globals(flags, env_server)?;
    convert::check(&cli.command, resume)?;
    Ok(Action::Run(Box::new(globals), cli.command))
}

/// Whether a command line that did not parse was meant to run a command: its usage error
/// then takes [`crate::failure::Codes::AroundCommand`]'s code, as [`Command::runs_command`]
/// says for one that parsed. The command is the first word that is neither a global flag nor
/// a global flag's value: `lock`, `elect`, `barrier` and `member` always run one; `service
/// register` when a word follows `--`.
pub fn runs_command_in(args: &[String]) -> bool {
    // Which global flags take a value, from clap's own model (so a new one needs no list).
    let globals = cli::GlobalFlags::augment_args(clap::Command::new("zkctl"));
    let takes_value = |word: &str| {
        globals.get_arguments().any(|a| {
            let named = match word.strip_prefix("--") {
                Some(long) => a.get_long() == Some(long),
                None => {
                    word.len() == 2
                        && word.strip_prefix('-').and_then(|s| s.chars().next()) == a.get_short()
                }
            };
            named && a.get_action().takes_values()
        })
    };
    let mut words = args.iter().map(String::as_str);
    let mut names = Vec::new();
    while let Some(word) = words.next() {
        if word == "--" || names.len() == 2 {
            break;
        }
        if word.starts_with('-') && word.len() > 1 {
            if !word.contains('=') && takes_value(word) {
                words.next();
            }
            continue;
        }
        names.push(word);
    }
    let cmd_after_dashes = args
        .iter()
        .position(|w| w == "--")
        .is_some_and(|i| i + 1 < args.len());
    match names.as_slice() {
        ["lock" | "elect" | "barrier" | "member", ..] => true,
        ["service", "register"] => cmd_after_dashes,
        _ => false,
    }
}

/// clap's early exits: help and version are printed (exit 0), the rest is a usage error.
fn clap_outcome(e: clap::Error) -> Result<Action, UsageError> {
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            Ok(Action::Print(e.render().to_string()))
        }
        // `zkctl ls --version` too: the version of zkctl, not of `zkctl-ls`.
        ErrorKind::DisplayVersion => Ok(Action::Print(format!(
            "zkctl {}\n",
            env!("CARGO_PKG_VERSION")
        ))),
        _ => Err(one_line(e)),
    }
}

/// clap's error as one line: its message, the lines under it joined, and its tips
/// (`a similar argument exists: '--recursive'`); without `error: `, the usage and the
/// pointer to `--help` (zkctl adds its own).
fn one_line(mut e: clap::Error) -> UsageError {
    // The values clap quotes, escaped first: a line break in one would end the message's
    // first paragraph (found by the zkctl_args fuzz target).
    let quoted: Vec<(ContextKind, ContextValue)> = e
        .context()
        .filter_map(|(kind, value)| match value {
            ContextValue::String(v) => Some((kind, ContextValue::String(printable(v)))),
            ContextValue::Strings(v) => Some((
                kind,
                ContextValue::Strings(v.iter().map(|v| printable(v)).collect()),
            )),
            _ => None,
        })
        .collect();
    for (kind, value) in quoted {
        e.insert(kind, value);
    }
    let text = e.render().to_string();
    let text = text.trim().strip_prefix("error: ").unwrap_or(text.trim());
    let mut paragraphs = text.split("\n\n");
    let mut msg = paragraphs
        .next()
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    for tip in paragraphs
        .flat_map(str::lines)
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("tip: "))
        // "to pass '--x' as a value, use '-- --x'": for data, not for a mistyped flag.
        .filter(|t| !t.starts_with("to pass "))
    {
        msg.push_str(&format!("; {tip}"));
    }
    // What was missing, and where it goes: the usage line of the command.
    if matches!(e.kind(), ErrorKind::MissingRequiredArgument) {
        if let Some(usage) = text
            .split("\n\n")
            .find_map(|p| p.trim().strip_prefix("Usage: "))
        {
            msg.push_str(&format!("; usage: {}", usage.trim()));
        }
    }
    if msg.is_empty() {
        msg = format!("{:?}", e.kind());
    }
    UsageError(msg)
}

#[cfg(test)]
mod backup_tests;
#[cfg(test)]
mod grace_tests;
#[cfg(test)]
mod runs_command_tests;
#[cfg(test)]
mod secret_tests;
#[cfg(test)]
mod service_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod zkcli_habit_tests;
