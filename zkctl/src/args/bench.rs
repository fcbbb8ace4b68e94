//! `bench` and `demo`: their arguments and flags.

use clap::Args;

use super::command::{BenchKind, BenchRuntime};
use super::usage::{usage, UsageError};
use super::values::{at_least_two, positive};

/// `bench`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct BenchArgs {
    /// What to measure
    #[arg(value_enum)]
    pub kind: BenchKind,
    /// Client sessions
    #[arg(long, value_name = "N", value_parser = positive)]
    pub clients: Option<usize>,
    /// Requests in flight per client
    #[arg(long, value_name = "D", value_parser = positive)]
    pub in_flight: Option<usize>,
    /// Operations (cycles for lock, latch and semaphore) to measure
    #[arg(long, value_name = "N", value_parser = positive)]
    pub ops: Option<usize>,
    /// Data size for get/set/create
    #[arg(long, value_name = "BYTES", default_value_t = 100)]
    pub size: usize,
    /// Hand-offs to measure (lock, latch, semaphore)
    #[arg(long, value_name = "N", value_parser = positive, default_value = "100")]
    pub rounds: usize,
    /// Sessions contending for one lock, latch or semaphore
    #[arg(long, value_name = "N", value_parser = at_least_two)]
    pub contenders: Option<usize>,
    /// Hand-offs with N sessions in line, against 2 (lock, latch, semaphore; comma-separated)
    #[arg(long, value_name = "N", value_parser = at_least_two, value_delimiter = ',')]
    pub in_line: Vec<usize>,
    /// Curator's same loops (uncontended and contended), in a JVM, for the ratios
    #[arg(long)]
    pub curator: bool,
    /// The tokio runtime to run on (current: one thread)
    #[arg(long, value_name = "RT", value_enum, default_value_t = BenchRuntime::Multi)]
    pub rt: BenchRuntime,
}

/// `demo`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct DemoArgs {
    /// How many participants
    #[arg(long, value_name = "N", value_parser = at_least_two, default_value = "10")]
    pub participants: usize,
}

/// `bench` settings (defaults depend on the kind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchOptions {
    /// What to measure.
    pub kind: BenchKind,
    /// Client sessions.
    pub clients: usize,
    /// Requests in flight per client.
    pub in_flight: usize,
    /// Operations to measure.
    pub ops: usize,
    /// Data size in bytes.
    pub size: usize,
    /// Hand-offs to measure (lock, latch, semaphore).
    pub rounds: usize,
    /// Sessions contending for one lock, latch or semaphore (lock, latch, semaphore).
    pub contenders: usize,
    /// Lengths of the line to measure hand-offs with, against 2 (lock, latch, semaphore).
    pub in_line: Vec<usize>,
    /// Whether Curator's side runs too, in a JVM (lock, latch, semaphore).
    pub curator: bool,
    /// The runtime to run on.
    pub rt: BenchRuntime,
}

impl BenchArgs {
    /// Whether it measures a recipe (lock, latch, semaphore).
    pub fn measures_a_recipe(&self) -> bool {
        matches!(
            self.kind,
            BenchKind::Lock | BenchKind::Latch | BenchKind::Semaphore
        )
    }

    /// Refuses the flags that are for the recipes only on get, set and create.
    pub fn check(&self) -> Result<(), UsageError> {
        if !self.measures_a_recipe()
            && (self.contenders.is_some() || !self.in_line.is_empty() || self.curator)
        {
            return usage(
                "--contenders, --in-line and --curator are for lock, latch and semaphore",
            );
        }
        Ok(())
    }

    /// The settings, with the kind's defaults for what was not given.
    pub fn settings(&self) -> BenchOptions {
        let recipe = self.measures_a_recipe();
        BenchOptions {
            kind: self.kind,
            clients: self.clients.unwrap_or(if recipe { 1 } else { 4 }),
            in_flight: self.in_flight.unwrap_or(if recipe { 1 } else { 32 }),
            ops: self.ops.unwrap_or(if recipe { 1000 } else { 20_000 }),
            size: self.size,
            rounds: self.rounds,
            contenders: self.contenders.unwrap_or(4),
            in_line: self.in_line.clone(),
            curator: self.curator,
            rt: self.rt,
        }
    }
}
