//! The data commands' arguments and flags: `ls`, `get`, `stat`, `set`, `create`, `delete`,
//! `deleteall`, `tree`, `watch`, `cache` (their `--help` text is on [`super::Command`]).

use std::time::Duration;

use clap::Args;

use super::ops::CreateAcl;
use super::values::{levels, millis, positive_millis};

/// `ls`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct LsArgs {
    /// The node
    pub path: String,
    /// Then the node's Stat, as `zkctl stat` prints it (zkCli.sh's ls -s)
    #[arg(short = 's')]
    pub stat: bool,
    /// Every path of the subtree, PATH first (zkCli.sh's ls -R; as `zkctl find PATH`)
    #[arg(short = 'R', conflicts_with = "stat")]
    pub recursive: bool,
}

/// `get`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct GetArgs {
    /// The node
    pub path: String,
    /// Then the node's Stat, as `zkctl stat` prints it (zkCli.sh's get -s)
    #[arg(short = 's')]
    pub stat: bool,
    /// Then wait for the data watch to fire and print its event (zkCli.sh's get -w)
    #[arg(short = 'w')]
    pub watch: bool,
}

/// `stat`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct StatArgs {
    /// The node
    pub path: String,
    /// Then wait for the watch to fire and print its event (zkCli.sh's stat -w)
    #[arg(short = 'w')]
    pub watch: bool,
}

/// `set`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct SetArgs {
    /// The node
    pub path: String,
    /// The new data
    #[arg(allow_negative_numbers = true)]
    pub data: String,
    /// Only if the data version is V
    #[arg(long, value_name = "V")]
    pub version: Option<i32>,
}

/// `create`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct CreateArgs {
    /// The node (the prefix, with --sequential)
    pub path: String,
    /// Its data (default: empty)
    #[arg(allow_negative_numbers = true)]
    pub data: Option<String>,
    /// Delete the node when zkctl exits (holds it until interrupted)
    #[arg(short, long, conflicts_with_all = ["container", "ttl"])]
    pub ephemeral: bool,
    /// Append a 10-digit sequence number to the name
    #[arg(short, long)]
    pub sequential: bool,
    /// A container: the server deletes it once its last child is gone
    #[arg(short, long, conflicts_with_all = ["ttl", "sequential"])]
    pub container: bool,
    /// Persistent with a time to live (deleted when unmodified and childless)
    #[arg(short, long, value_name = "MS", value_parser = positive_millis)]
    pub ttl: Option<Duration>,
    /// Create missing parents (persistent, empty)
    #[arg(long)]
    pub parents: bool,
    #[command(flatten)]
    pub acl: CreateAcl,
}

/// `delete`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct DeleteArgs {
    /// The node
    pub path: String,
    /// Delete the children first, deepest first
    #[arg(long)]
    pub recursive: bool,
    /// Only if the data version is V
    #[arg(long, value_name = "V")]
    pub version: Option<i32>,
}

/// `deleteall`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct DeleteallArgs {
    /// The node
    pub path: String,
}

/// `tree`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct TreeArgs {
    /// The root of the subtree
    pub path: String,
}

/// `watch`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct WatchArgs {
    /// The node
    pub path: String,
    /// Watch the whole subtree (persistent recursive watch)
    #[arg(long)]
    pub recursive: bool,
    /// Exit after N events
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
}

/// `cache`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct CacheArgs {
    /// The root of the view
    pub path: String,
    /// Only N levels below PATH (0: PATH only; a TreeCache)
    #[arg(long, value_name = "N", value_parser = levels, allow_negative_numbers = true,
          conflicts_with = "children")]
    pub depth: Option<usize>,
    /// Only the children of PATH (a PathChildrenCache)
    #[arg(long)]
    pub children: bool,
    /// End MS milliseconds after connecting
    #[arg(long = "for", value_name = "MS", value_parser = millis)]
    pub run_for: Option<Duration>,
}

/// Which cache `zkctl cache` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheKind {
    /// The whole subtree, PATH included (a `CuratorCache`).
    Subtree,
    /// PATH and at most this many levels below it (a `TreeCache` with `max_depth`).
    Depth(usize),
    /// The children of PATH, not PATH itself (a `PathChildrenCache`).
    Children,
}

impl CacheArgs {
    /// `--depth N` keeps a TreeCache, `--children` a PathChildrenCache, else the subtree.
    pub fn kind(&self) -> CacheKind {
        match (self.depth, self.children) {
            (Some(n), _) => CacheKind::Depth(n),
            (None, true) => CacheKind::Children,
            (None, false) => CacheKind::Subtree,
        }
    }
}
