//! The commands, one concept per file, and [`run`], which runs the one parsed.

pub mod acl;
pub mod backup;
pub mod barrier;
pub mod bench;
mod bench_contention;
mod bench_curator;
mod bench_loop;
mod bench_metrics;
mod bench_recipes;
mod bench_timing;
pub mod cache;
pub mod counter;
pub mod data;
pub mod demo;
pub mod diff;
pub mod du;
pub mod elect;
pub mod ensemble;
pub mod export_format;
pub mod find;
pub mod group;
mod hold;
pub mod lock;
pub mod ops;
pub mod queue;
pub mod quota;
pub mod server_words;
pub mod service;
pub mod snapshot;
pub mod top;
pub mod walk;
pub mod watch;

use crate::args::{Command, Globals};
use crate::connection::{close, connect};
use crate::failure::Outcome;

/// Runs a parsed command; `Ok` holds the exit code.
pub async fn run(g: Globals, command: Command) -> Outcome {
    crate::connection::leave_session_open(g.resume.is_some());
    match command {
        Command::Lock {
            path,
            timeout,
            policy,
            grace,
            command,
        } => lock::run(&g, &path, timeout, policy, grace, &command).await,
        Command::Elect {
            path,
            id,
            once,
            policy,
            grace,
            command,
        } => elect::run(&g, &path, id, once, policy, grace, &command).await,
        Command::Bench(options) => bench::run(&g, options).await,
        Command::Demo { participants } => demo::run(&g, participants).await,
        Command::Watch {
            path,
            recursive,
            count,
        } => watch::run(&g, &path, recursive, count).await,
        Command::Cache {
            path,
            kind,
            run_for,
        } => cache::run(&g, &path, kind, run_for).await,
        Command::Queue { path, action } => queue::run(&g, &path, action).await,
        Command::Counter { path, action, int } => counter::run(&g, &path, action, int).await,
        Command::Barrier {
            path,
            count,
            timeout,
            grace,
            command,
        } => barrier::run(&g, &path, count, timeout, grace, &command).await,
        Command::Member {
            path,
            id,
            data,
            grace,
            command,
        } => group::member(&g, &path, &id, &data, grace, &command).await,
        Command::Members { path } => group::members(&g, &path).await,
        Command::Service { base, action } => service::run(&g, &base, action).await,
        Command::Ops(op) => ops::run(&g, op).await,
        Command::Backup(b) => {
            let client = connect(&g).await?;
            let result = backup::run(&client, b).await;
            close(&client).await;
            result
        }
        Command::Config | Command::Reconfig { .. } => {
            let client = connect(&g).await?;
            let result = ensemble::run(&client, command).await;
            close(&client).await;
            result
        }
        data_command => {
            let client = connect(&g).await?;
            let result = data::run(&client, data_command).await;
            close(&client).await;
            result
        }
    }
}
