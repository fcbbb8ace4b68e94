//! `queue`, `counter` and `members`: their arguments and flags.

use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};

use super::usage::{usage, UsageError};
use super::values::{millis, non_empty};

/// `queue put` and `queue take`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum QueueSub {
    /// Put items (a DistributedQueue, or the kind a flag names); prints each node's path
    #[command(after_help = "\
DATA is one item, or `-` to read items from stdin, one per line (each put as
its own node). With --priority N a DistributedPriorityQueue (lower first),
--id ID a DistributedIdQueue, --delay-until EPOCH_MS a DistributedDelayQueue,
--simple a SimpleDistributedQueue (`qn-<seq>` nodes, raw bytes); else a
DistributedQueue (`queue-<seq>` nodes in Curator's item format).")]
    #[command(group = clap::ArgGroup::new("kind").multiple(false)
        .args(["priority", "id", "delay_until", "simple"]))]
    Put(QueuePutArgs),
    /// Take items, printing one item's data per line
    #[command(after_help = "\
Waits at most --timeout MS in all (exit 3 when it passes first). With
--lock-path P an item is removed only once printed (Curator's lock path: if
zkctl dies first, the item comes back for another consumer).")]
    Take(QueueTakeArgs),
}

/// `queue put`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct QueuePutArgs {
    /// The queue's node
    pub path: String,
    /// One item, or - to read items from stdin, one per line
    #[arg(allow_negative_numbers = true)]
    pub data: String,
    /// Into a priority queue, with priority N
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub priority: Option<i32>,
    /// Into an id queue, with this id
    #[arg(long, value_name = "ID", value_parser = non_empty)]
    pub id: Option<String>,
    /// Into a delay queue, visible from this time (milliseconds since the epoch)
    #[arg(long, value_name = "EPOCH_MS")]
    pub delay_until: Option<u64>,
    /// A SimpleDistributedQueue
    #[arg(long)]
    pub simple: bool,
}

/// `queue take`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct QueueTakeArgs {
    /// The queue's node
    pub path: String,
    /// This many items
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub count: u64,
    /// Give up after MS milliseconds (exit 3)
    #[arg(long, value_name = "MS", value_parser = millis)]
    pub timeout: Option<Duration>,
    /// Lock each item under P while it is handled
    #[arg(long, value_name = "P")]
    pub lock_path: Option<String>,
    /// A SimpleDistributedQueue
    #[arg(long, conflicts_with = "lock_path")]
    pub simple: bool,
}

/// `counter`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct CounterArgs {
    /// The counter's node
    pub path: String,
    /// What to do
    #[arg(value_enum)]
    pub action: CounterVerb,
    /// N for add and set; OLD NEW for cas
    #[arg(value_name = "N", allow_negative_numbers = true)]
    pub numbers: Vec<String>,
    /// A 4-byte SharedCount instead of an 8-byte DistributedAtomicLong
    #[arg(long)]
    pub int: bool,
}

/// What `counter` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CounterVerb {
    /// The value
    Get,
    /// Add N
    Add,
    /// Set N
    Set,
    /// Set NEW if the value is OLD
    Cas,
}

/// `members`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct MembersArgs {
    /// The group's node
    pub path: String,
}

/// Which queue `zkctl queue put` writes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueKind {
    /// A `DistributedQueue`.
    Plain,
    /// A `DistributedPriorityQueue`, with this priority.
    Priority(i32),
    /// A `DistributedIdQueue`, with this id.
    Id(String),
    /// A `DistributedDelayQueue`, visible from this many ms after the epoch.
    DelayUntil(u64),
    /// A `SimpleDistributedQueue`.
    Simple,
}

impl QueuePutArgs {
    /// The queue the flags name (the parser lets at most one be given).
    pub fn kind(&self) -> QueueKind {
        match (self.priority, &self.id, self.delay_until) {
            (Some(p), _, _) => QueueKind::Priority(p),
            (_, Some(id), _) => QueueKind::Id(id.clone()),
            (_, _, Some(due)) => QueueKind::DelayUntil(due),
            _ if self.simple => QueueKind::Simple,
            _ => QueueKind::Plain,
        }
    }

    /// The one item, or `None` for `-`: the items are stdin's lines.
    pub fn item(&self) -> Option<&[u8]> {
        (self.data != "-").then_some(self.data.as_bytes())
    }
}

/// What `zkctl counter` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterAction {
    /// Print the value.
    Get,
    /// Add N (always applies).
    Add(i64),
    /// Set N.
    Set(i64),
    /// Set NEW if the value is OLD.
    Cas(i64, i64),
}

impl CounterArgs {
    /// The action with its numbers: their count and width (`--int`: 32 bits).
    pub fn action(&self) -> Result<CounterAction, UsageError> {
        counter(self.action, &self.numbers, self.int)
    }
}

/// `counter PATH ACTION [N...]`: the numbers' count and width (`--int`: 32 bits).
fn counter(verb: CounterVerb, numbers: &[String], int: bool) -> Result<CounterAction, UsageError> {
    let number = |s: &str| -> Result<i64, UsageError> {
        let parsed = if int {
            s.parse::<i32>().map(i64::from).ok()
        } else {
            s.parse::<i64>().ok()
        };
        match parsed {
            Some(n) => Ok(n),
            None => usage(format!(
                "'{s}' is not a {} integer",
                if int { "32-bit" } else { "64-bit" }
            )),
        }
    };
    Ok(match (verb, numbers) {
        (CounterVerb::Get, []) => CounterAction::Get,
        (CounterVerb::Add, [n]) => CounterAction::Add(number(n)?),
        (CounterVerb::Set, [n]) => CounterAction::Set(number(n)?),
        (CounterVerb::Cas, [old, new]) => CounterAction::Cas(number(old)?, number(new)?),
        (verb, _) => {
            let (name, takes) = match verb {
                CounterVerb::Get => ("get", "no number"),
                CounterVerb::Cas => ("cas", "OLD and NEW"),
                CounterVerb::Add => ("add", "one number"),
                CounterVerb::Set => ("set", "one number"),
            };
            return usage(format!("'counter PATH {name}' takes {takes}"));
        }
    })
}
