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
        Command::Lock(a) => lock::run(&g, &a).await,
        Command::Elect(a) => elect::run(&g, &a).await,
        Command::Barrier(a) => barrier::run(&g, &a).await,
        Command::Member(a) => group::member(&g, &a).await,
        Command::Members(a) => group::members(&g, &a.path).await,
        Command::Service(a) => service::run(&g, a).await,
        Command::Bench(a) => bench::run(&g, a.settings()).await,
        Command::Demo(a) => demo::run(&g, a.participants).await,
        Command::Watch(a) => watch::run(&g, &a).await,
        Command::Cache(a) => cache::run(&g, &a.path, a.kind(), a.run_for).await,
        Command::Queue(a) => queue::run(&g, a).await,
        Command::Counter(a) => counter::run(&g, &a.path, a.action()?, a.int).await,
        Command::Ops(a) => ops::run(&g, a).await,
        Command::Backup(a) => {
            let client = connect(&g).await?;
            let result = backup::run(&client, a).await;
            close(&client).await;
            result
        }
        Command::Config => {
            let client = connect(&g).await?;
            let result = ensemble::config(&client).await;
            close(&client).await;
            result
        }
        Command::Reconfig(a) => {
            let client = connect(&g).await?;
            let result = ensemble::reconfig(&client, &a).await;
            close(&client).await;
            result
        }
        Command::Completions(_) => unreachable!("completions is an action, not a command"),
        data_command => {
            let client = connect(&g).await?;
            let result = data::run(&client, data_command).await;
            close(&client).await;
            result
        }
    }
}
