//! `zkctl`'s code: a ZooKeeper command-line tool on `zkrs-client` and `zkrs-recipes`.
//!
//! Data commands (`ls`, `get`, `stat`, `set`, `create`, `delete`, `tree`, `watch`), a live
//! view of a subtree (`cache`), Curator's queues (`queue`) and counters (`counter`), a command
//! run under a Curator-compatible lock (`lock`), only while leading an election (`elect`),
//! inside a double barrier (`barrier`) or as a group member (`member`; `members` lists them),
//! Curator's service discovery registry (`service`), zkCli.sh's commands for operators
//! (`acl`, `sync`, `whoami`, `ephemerals`, `count`, `watches`, `quota`, `version`) and the
//! server's four-letter words (`server`), benchmarks (`bench`) and the leader-latch story
//! (`demo`). See `zkctl --help` and `zkctl/README.md`.
//!
//! Failures are one line on stderr and an exit code (2: usage, 1: ZooKeeper or I/O; around a
//! command, whose own code passes through, 125 for both: see `failure::Codes`); never a
//! panic message with a backtrace.
//!
//! A library so that `zkctl-bench` (not published) can run the same commands with what the
//! shipped binary leaves out: the test kit's counting allocator and Curator's side of
//! `bench --curator` ([`Lab`]). `src/main.rs` is `zkctl` itself.
#![forbid(unsafe_code)]
// The command-line help is written as doc comments on the clap structs, where `<host>` and
// `<hostname>-<pid>` are meant literally, not as HTML.
#![allow(rustdoc::invalid_html_tags)]

mod args;
mod child;
mod commands;
mod completions;
mod connection;
mod failure;
mod identity;
mod json_records;
mod lab;
mod output;
mod output_json;
mod pipeline;
mod signals;
mod verbose;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use args::{Action, Command};
use failure::{Codes, Failure};
use output::note;

pub use lab::Lab;

/// Runs zkctl on `args` (without the program's name), with what `lab` adds: the whole of
/// `zkctl`'s `main`, and of `zkctl-bench`'s, which passes a [`Lab`] of the test kit.
pub fn main_with(args: Vec<OsString>, lab: Lab) -> ExitCode {
    lab::install(lab);
    // A bug should still end in one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        note!("zkctl: internal error: {msg}{at}");
    }));

    let argv: Vec<String> = match args
        .iter()
        .map(|a| a.clone().into_string())
        .collect::<Result<_, _>>()
    {
        Ok(argv) => argv,
        Err(bad) => {
            let lossy: Vec<String> = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            return Failure::Usage(format!("argument is not valid UTF-8: {bad:?}"))
                .report(codes_for_unparsed(&lossy));
        }
    };
    // A usage error is reported before the flags are known: as JSON if they ask for it.
    if output_json::asked_in(&argv) {
        output_json::set(args::OutputFormat::Json);
    }
    let action = match args::parse(&argv, std::env::var("ZK_SERVER").ok()) {
        Ok(action) => action,
        Err(e) => return Failure::from(e).report(codes_for_unparsed(&argv)),
    };
    let (globals, command) = match action {
        Action::Print(text) => {
            let _ = std::io::stdout().write_all(text.as_bytes());
            return ExitCode::SUCCESS;
        }
        Action::Completions(shell) => return completions::print(shell),
        Action::Run(globals, command) => (*globals, command),
    };
    // Around a command, zkctl's own outcomes take codes out of its way (see `failure::Codes`).
    let codes = if command.runs_command() {
        Codes::AroundCommand
    } else {
        Codes::Own
    };
    let mut globals = globals;
    output_json::set(globals.output);
    if let Err(e) = globals.read_secrets() {
        return Failure::Usage(e).report(codes);
    }
    verbose::enable(globals.verbosity);
    let runtime = match runtime_for(&command) {
        Ok(rt) => rt,
        Err(e) => {
            return Failure::msg(format!("cannot start the async runtime: {e}")).report(codes)
        }
    };
    let outcome = runtime.block_on(commands::run(globals, command));
    // Do not wait for background tasks (a client reconnecting to a dead server).
    runtime.shutdown_background();
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(failure) => failure.report(codes),
    }
}

/// The codes of a usage error: `zkctl lock /l --bogus -- cmd` must not exit 2, which cmd
/// could have returned (see `failure::Codes`).
fn codes_for_unparsed(argv: &[String]) -> Codes {
    if args::runs_command_in(argv) {
        Codes::AroundCommand
    } else {
        Codes::Own
    }
}

/// A current-thread runtime, except for the commands that drive many sessions at once.
///
/// `elect` relies on it: subscribing to a latch right after starting it happens before the
/// latch's task first runs, so no leadership transition is missed.
fn runtime_for(command: &Command) -> std::io::Result<tokio::runtime::Runtime> {
    match command {
        Command::Bench(o) if o.rt == args::BenchRuntime::Current => {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        }
        Command::Bench(_) | Command::Demo { .. } => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
        _ => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
    }
}
