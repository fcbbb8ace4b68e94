//! The flags of `barrier`, `member`, `lock`, `elect` and `bench` (and `--policy`, `--grace`)
//! as clap structs (the
//! commands' variants of [`super::cli::Sub`] hold them), with their `--help` text.

use std::time::Duration;

use clap::Args;

use super::command::{BenchKind, BenchRuntime, HoldPolicy};
use super::values::{at_least_two, member_id, millis, positive};

// `--policy`, for `lock` and `elect`.
#[derive(Debug, Args)]
pub struct Policy {
    /// When the lock or leadership counts as lost: standard (at the first
    /// suspension), session-deadline (when the server could have expired the
    /// session, less a tenth of its timeout), session-only (when the session is
    /// lost; unsafe)
    #[arg(long = "policy", value_name = "POLICY", value_enum, default_value_t = HoldPolicy::SessionDeadline)]
    pub policy: HoldPolicy,
}

// `--grace MS`, for the commands that run one; [`Grace::or_default`] gives its default.
#[derive(Debug, Args)]
pub struct Grace {
    /// After SIGTERM, how long CMD may take to exit before SIGKILL (default: a twentieth of
    /// the session timeout, 500 for 10000: below the tenth a lost lock leaves)
    #[arg(long = "grace", value_name = "MS", value_parser = millis)]
    pub grace: Option<Duration>,
}

impl Grace {
    /// `--grace`, else a twentieth of the session timeout: under session-deadline a lost
    /// lock or leadership is noticed a tenth of the timeout before the session can expire,
    /// and CMD must be gone (SIGTERM, the grace, SIGKILL) within that tenth.
    pub fn or_default(&self, session_timeout: Duration) -> Duration {
        self.grace.unwrap_or(session_timeout / 20)
    }
}

// `barrier`'s arguments and flags.
#[derive(Debug, Args)]
pub struct BarrierFlags {
    /// The barrier's node
    pub path: String,
    /// The number of members
    #[arg(long, value_name = "N", value_parser = positive)]
    pub count: usize,
    /// Give up entering, and leaving, after MS milliseconds (exit 124)
    #[arg(long, value_name = "MS", value_parser = millis)]
    pub timeout: Option<Duration>,
    #[command(flatten)]
    pub grace: Grace,
    /// The command to run (everything from its first word on)
    #[arg(value_name = "CMD", required = true, trailing_var_arg = true)]
    pub command: Vec<String>,
}

// `member`'s arguments and flags.
#[derive(Debug, Args)]
pub struct MemberFlags {
    /// The group's node
    pub path: String,
    /// Our id: the name of our node
    #[arg(value_parser = member_id)]
    pub id: String,
    /// Our node's data
    #[arg(allow_negative_numbers = true)]
    pub data: Option<String>,
    /// Words after DATA without `--` (refused: DATA and CMD cannot be told apart)
    #[arg(hide = true, allow_negative_numbers = true)]
    pub extra: Vec<String>,
    /// The command to run, after `--`
    #[arg(value_name = "CMD", last = true)]
    pub command: Vec<String>,
    #[command(flatten)]
    pub grace: Grace,
}

// `lock`'s arguments and flags.
#[derive(Debug, Args)]
pub struct LockFlags {
    /// The lock's node
    pub path: String,
    /// Give up (exit 124) if the lock is not acquired within MS
    #[arg(long, value_name = "MS", value_parser = millis)]
    pub timeout: Option<Duration>,
    #[command(flatten)]
    pub policy: Policy,
    #[command(flatten)]
    pub grace: Grace,
    /// The command to run (everything from its first word on)
    #[arg(value_name = "CMD", required = true, trailing_var_arg = true)]
    pub command: Vec<String>,
}

// `elect`'s arguments and flags.
#[derive(Debug, Args)]
pub struct ElectFlags {
    /// The latch's node
    pub path: String,
    /// Participant id stored in the node (default: <hostname>-<pid>)
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// Exit after CMD has run once (to its end) as leader
    #[arg(long)]
    pub once: bool,
    #[command(flatten)]
    pub policy: Policy,
    #[command(flatten)]
    pub grace: Grace,
    /// The command to run (everything from its first word on)
    #[arg(value_name = "CMD", required = true, trailing_var_arg = true)]
    pub command: Vec<String>,
}

// `bench`'s arguments and flags.
#[derive(Debug, Args)]
pub struct BenchFlags {
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
