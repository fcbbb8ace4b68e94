//! The commands that run CMD: `barrier`, `member`, `lock`, `elect`; their arguments and flags,
//! and `--policy` and `--grace`.

use std::time::Duration;

use clap::Args;

use super::command::HoldPolicy;
use super::values::{member_id, millis, positive};

// `--policy`, for `lock` and `elect`.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct Policy {
    /// When the lock or leadership counts as lost: standard (at the first
    /// suspension), session-deadline (when the server could have expired the
    /// session, less a tenth of its timeout), session-only (when the session is
    /// lost; unsafe)
    #[arg(long = "policy", value_name = "POLICY", value_enum, default_value_t = HoldPolicy::SessionDeadline)]
    pub policy: HoldPolicy,
}

// `--grace MS`, for the commands that run one; [`Grace::or_default`] gives its default.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
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

/// `barrier`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct BarrierArgs {
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

/// `member`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct MemberArgs {
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

/// `lock`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct LockArgs {
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

/// `elect`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct ElectArgs {
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
