//! `service register|unregister|list|watch|pick`: their arguments and flags.

use std::time::Duration;

use clap::{Args, Subcommand};

use super::command::{PickStrategy, ServiceKind};
use super::hold::Grace;
use super::values::{instance_id, millis, non_empty, port, positive, service_name};

/// `service register|unregister|list|watch|pick`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum ServiceSub {
    /// Register an instance while CMD runs (or for good, with --type permanent)
    #[command(after_help = "\
Registers an instance (--id, else a random UUID) while CMD runs, then
unregisters it, as `member` does: CMD gets ZKCTL_SERVICE_NODE and
ZKCTL_SERVICE_ID, a line on stderr names the node, and the exit code is CMD's
(125: zkctl failed, usage included; 126: CMD cannot be executed; 127: CMD not
found; 128+N: signal N). --type dynamic (the default) is
an ephemeral node kept across connection and session loss; static a persistent
one, deleted when CMD ends; permanent a persistent one that stays after zkctl
(CMD optional: without it zkctl prints the node's path and exits; remove it
with `service unregister`). The JSON has Curator's default format; with
--enabled it also has the `enabled` key.")]
    #[command(group = clap::ArgGroup::new("ports").required(true).multiple(true)
        .args(["port", "ssl_port"]))]
    Register(Box<RegisterArgs>),
    /// Delete an instance's node (NoNode: exit 1)
    Unregister(UnregisterArgs),
    /// One line per instance, `NAME ID ADDRESS:PORT JSON`
    #[command(after_help = "\
JSON: the node's data as stored; `-` for a missing address or port. Without
NAME, each service's name on a line of its own, then its instances. A node
that is not an instance is named on stderr with the reason, and the others
are listed.")]
    List(ServiceListArgs),
    /// A ServiceCache's events, as `cache` prints them; then the instances
    #[command(after_help = "\
Events: `added`, `updated`, `removed` (each `NAME ID ADDRESS:PORT`),
`skipped PATH REASON`, `initialized`, `suspended`, `reconnected`, `lost`,
`lagged N`; the instances found at the start come first as `added`, then
`initialized`. When it ends (--for, or SIGINT/SIGTERM/SIGHUP) it prints the
instances, one `instance NAME ID ADDRESS:PORT` line each, and exits 0.")]
    Watch(ServiceWatchArgs),
    /// Pick instances from a started ServiceProvider (enabled ones only)
    #[command(after_help = "\
Each pick printed as `list` prints it; exit 5 when there is no instance to pick.")]
    Pick(PickArgs),
}

/// `service register`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct RegisterArgs {
    /// The registry's base path
    pub base: String,
    /// The service's name
    #[arg(value_parser = service_name)]
    pub name: String,
    /// The host name or address
    #[arg(long, value_name = "A", value_parser = non_empty)]
    pub address: String,
    /// The port, 1-65535 (required unless --ssl-port)
    #[arg(long, value_name = "P", value_parser = port, allow_negative_numbers = true)]
    pub port: Option<u16>,
    /// The TLS port, 1-65535
    #[arg(long, value_name = "P", value_parser = port, allow_negative_numbers = true)]
    pub ssl_port: Option<u16>,
    /// The instance id (default: a random UUID)
    #[arg(long, value_name = "ID", value_parser = instance_id)]
    pub id: Option<String>,
    /// The payload, any JSON value (default null)
    #[arg(long, value_name = "JSON")]
    pub payload: Option<String>,
    /// How the node lives
    #[arg(long = "type", value_name = "TYPE", value_enum, default_value_t = ServiceKind::Dynamic)]
    pub kind: ServiceKind,
    /// Whether providers may pick it (writes the `enabled` key)
    #[arg(long, value_name = "true|false")]
    pub enabled: Option<bool>,
    /// A URI template, e.g. {scheme}://{address}:{port}
    #[arg(long, value_name = "TEMPLATE")]
    pub uri_spec: Option<String>,
    #[command(flatten)]
    pub grace: Grace,
    /// Words after NAME without `--` (refused: they would be the command)
    #[arg(hide = true)]
    pub extra: Vec<String>,
    /// The command to run while registered, after `--`
    #[arg(value_name = "CMD", last = true)]
    pub command: Vec<String>,
}

/// `service unregister`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct UnregisterArgs {
    /// The registry's base path
    pub base: String,
    /// The service's name
    #[arg(value_parser = service_name)]
    pub name: String,
    /// The instance id
    #[arg(value_parser = instance_id)]
    pub id: String,
}

/// `service list`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct ServiceListArgs {
    /// The registry's base path
    pub base: String,
    /// The service's name (default: every service)
    #[arg(value_parser = service_name)]
    pub name: Option<String>,
}

/// `service watch`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct ServiceWatchArgs {
    /// The registry's base path
    pub base: String,
    /// The service's name
    #[arg(value_parser = service_name)]
    pub name: String,
    /// End MS milliseconds after connecting
    #[arg(long = "for", value_name = "MS", value_parser = millis)]
    pub run_for: Option<Duration>,
}

/// `service pick`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct PickArgs {
    /// The registry's base path
    pub base: String,
    /// The service's name
    #[arg(value_parser = service_name)]
    pub name: String,
    /// How to pick
    #[arg(long, value_name = "S", value_enum, default_value_t = PickStrategy::RoundRobin)]
    pub strategy: PickStrategy,
    /// How many picks
    #[arg(long, value_name = "N", value_parser = positive, default_value = "1")]
    pub count: usize,
}
