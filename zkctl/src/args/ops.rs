//! The operator's commands, those of zkCli.sh 3.8 a one-shot tool can have: `acl`, `sync`,
//! `whoami`, `ephemerals`, `count`, `watches remove`, `quota`, `version`, and the server's
//! four-letter words (`server WORD`): their arguments and flags ([`OpsSub`], flattened into
//! the command list), which `commands/ops.rs` takes as they are.

use clap::{ArgGroup, Args, Subcommand, ValueEnum};

use super::acl::{acl_list, AclSpec};

/// One `ACL` argument: one entry or several, comma-separated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclArg(pub Vec<AclSpec>);

/// The value parser of an `ACL` argument.
pub fn acl_arg(s: &str) -> Result<AclArg, String> {
    acl_list(s).map(AclArg)
}

/// All the entries of several `ACL` arguments.
pub fn entries(args: &[AclArg]) -> Vec<AclSpec> {
    args.iter().flat_map(|a| a.0.iter().cloned()).collect()
}

/// A count quota: at least 1 (zkCli.sh: "the num quota must be greater than zero").
fn quota_count(s: &str) -> Result<i64, String> {
    match s.parse::<i64>() {
        Ok(n) if n > 0 => Ok(n),
        Ok(_) => Err("the count quota must be greater than zero".into()),
        Err(_) => Err("not a number".into()),
    }
}

/// A bytes quota: 0 or more.
fn quota_bytes(s: &str) -> Result<i64, String> {
    match s.parse::<i64>() {
        Ok(n) if n >= 0 => Ok(n),
        Ok(_) => Err("the bytes quota must be 0 or more".into()),
        Err(_) => Err("not a number".into()),
    }
}

/// The operator's commands, as clap sees them.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum OpsSub {
    /// Print or set a node's ACL (scheme:id:perms)
    #[command(subcommand)]
    Acl(AclSub),
    /// Make the server catch up with the leader (zkCli.sh's sync)
    #[command(after_help = "\
A read after it, on the same server, sees every write committed before it.
Prints nothing. As in zkCli.sh, PATH need not exist.")]
    Sync {
        /// The path to sync
        path: String,
    },
    /// Print the session's identities as the server sees them, `SCHEME ID` per line
    #[command(after_help = "\
The server's whoAmI (ZooKeeper 3.7+): one line per identity, e.g.
`ip 127.0.0.1`, `digest bob` (with --auth-file holding digest:bob:PW), `sasl bob`.")]
    Whoami,
    /// Print this session's ephemeral nodes under PATH (default /), sorted
    #[command(after_help = "\
The server's getEphemerals (ZooKeeper 3.6+): PATH is a path prefix. A new
session has none: use --resume ID --resume-password-file FILE to ask for
another session's.")]
    Ephemerals {
        /// The path prefix
        path: Option<String>,
    },
    /// Print the number of nodes under PATH (not counting PATH)
    #[command(after_help = "The server's getAllChildrenNumber (ZooKeeper 3.6+).")]
    Count {
        /// The node
        path: String,
    },
    /// Remove this session's watches (zkCli.sh's removewatches)
    #[command(subcommand)]
    Watches(WatchesSub),
    /// Set, print or delete a node's quota (ZooKeeper's /zookeeper/quota layout)
    #[command(
        subcommand,
        after_help = "\
Quotas live in /zookeeper/quota/<PATH>/zookeeper_limits (the limits, as zkCli.sh
3.8 writes them: count=N,bytes=N=;byteHardLimit=N;countHardLimit=N, -1 for
none) and zookeeper_stats (what the server counts: count=N,bytes=N)."
    )]
    Quota(QuotaSub),
    /// Print zkctl's version and the client library's
    Version,
    /// Send a four-letter word to the server's client port and print its answer
    #[command(after_help = "\
Connects to the first host of --server (a plain TCP connection, no session),
sends WORD and prints what the server answers. mntr is printed as
`KEY<TAB>VALUE` lines; with --json as one JSON object per line,
{\"key\":KEY,\"value\":VALUE} (numbers as numbers). Other words with --json:
one object {\"server\":HOST:PORT,\"word\":WORD,\"reply\":TEXT}.
A word the server does not allow (4lw.commands.whitelist) exits 1.")]
    Server {
        /// The word
        #[arg(value_enum)]
        word: Word,
        /// JSON lines instead of the server's text
        #[arg(long)]
        json: bool,
    },
    /// A refreshing view of the server's figures (its mntr), with rates
    #[command(after_help = "\
Asks the first host of --server for mntr every --interval and prints its state,
connections, requests outstanding, znodes, watches, ephemerals, latency and the
packets per second since the last refresh. On a terminal the view is redrawn in
place; otherwise (or with --output json: one object per refresh) one block per
refresh. --count N stops after N refreshes. mntr must be in the server's
4lw.commands.whitelist.")]
    Top {
        /// Time between refreshes, ms
        #[arg(long, value_name = "MS", default_value_t = 1000)]
        interval: u64,
        /// Stop after N refreshes (default: until interrupted)
        #[arg(long, value_name = "N")]
        count: Option<u64>,
    },
}

/// `acl get|set`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum AclSub {
    /// Print a node's ACL, one `scheme:id:perms` line per entry
    #[command(after_help = "Perms are printed in zkCli.sh's order, cdrwa.")]
    Get {
        /// The node
        path: String,
    },
    /// Set a node's ACL
    #[command(after_help = "\
ACL: scheme:id:perms, perms letters of crwda (c create, r read, w write,
d delete, a admin), e.g. world:anyone:r, digest:bob:<base64 sha1>:cdrwa,
ip:10.0.0.0/8:r, auth::cdrwa. Several per argument with commas (zkCli.sh's
form) or as more arguments. With --version, only if the ACL version is V.")]
    Set {
        /// The node
        path: String,
        /// The entries
        #[arg(value_name = "ACL", required = true, value_parser = acl_arg)]
        acl: Vec<AclArg>,
        /// Only if the node's ACL version (aversion) is V
        #[arg(long, value_name = "V")]
        version: Option<i32>,
    },
}

/// `watches remove`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum WatchesSub {
    /// Remove this session's watches of a kind on PATH (NoWatcher if it has none)
    #[command(after_help = "\
The watches are those of zkctl's own session (the server keeps watches per
connection): a new session has none, so the server answers NoWatcher (exit 1),
as with `zkCli.sh -server H removewatches PATH`. --kind persistent needs
ZooKeeper 3.9 (3.8 removes persistent watches with --kind any).")]
    Remove {
        /// The node
        path: String,
        /// Which watches
        #[arg(long, value_name = "KIND", value_enum, default_value_t = WatchKind::Any)]
        kind: WatchKind,
    },
}

/// `quota set|get|delete`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum QuotaSub {
    /// Set limits on PATH's subtree (others already set are kept)
    #[command(group = ArgGroup::new("limits").required(true).multiple(true)
        .args(["count", "bytes", "hard_count", "hard_bytes"]))]
    #[command(after_help = "\
PATH must exist; no ancestor or descendant of PATH may have a quota. The soft
limits only log a warning on the server when passed; the hard limits refuse
the write (QuotaExceeded), when the server enforces quotas.")]
    Set {
        /// The node
        path: String,
        /// Soft limit on the number of nodes (zkCli.sh -n)
        #[arg(long, value_name = "N", value_parser = quota_count, allow_negative_numbers = true)]
        count: Option<i64>,
        /// Soft limit on the bytes of data (zkCli.sh -b)
        #[arg(long, value_name = "N", value_parser = quota_bytes, allow_negative_numbers = true)]
        bytes: Option<i64>,
        /// Hard limit on the number of nodes (zkCli.sh -N)
        #[arg(long, value_name = "N", value_parser = quota_count, allow_negative_numbers = true)]
        hard_count: Option<i64>,
        /// Hard limit on the bytes of data (zkCli.sh -B)
        #[arg(long, value_name = "N", value_parser = quota_bytes, allow_negative_numbers = true)]
        hard_bytes: Option<i64>,
    },
    /// Print PATH's limits and the server's counts
    #[command(after_help = "\
Two lines: `limits TEXT` and `stats TEXT`, each TEXT as stored (what zkCli.sh's
listquota prints). No quota on PATH, or no PATH: exit 1.")]
    Get {
        /// The node
        path: String,
    },
    /// Delete PATH's quota, or only the limits named
    #[command(after_help = "\
Without a flag the whole quota goes (its nodes under /zookeeper/quota);
with flags only those limits are unset (-1). No quota on PATH: exit 1.")]
    Delete {
        /// The node
        path: String,
        /// Unset the count limit
        #[arg(long)]
        count: bool,
        /// Unset the bytes limit
        #[arg(long)]
        bytes: bool,
        /// Unset the hard count limit
        #[arg(long)]
        hard_count: bool,
        /// Unset the hard bytes limit
        #[arg(long)]
        hard_bytes: bool,
    },
}

/// Which watches `watches remove` removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WatchKind {
    /// Data and exists watches
    Data,
    /// Child watches
    Children,
    /// Persistent watches (ZooKeeper 3.9+)
    Persistent,
    /// Every kind
    Any,
}

/// The four-letter words `server` sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Word {
    /// imok if the server runs
    Ruok,
    /// The server's details
    Srvr,
    /// Details and the connections
    Stat,
    /// Metrics, KEY<TAB>VALUE
    Mntr,
    /// The connections and their sessions
    Cons,
    /// Watches by session
    Wchc,
    /// Watches by path
    Wchp,
    /// The server's environment
    Envi,
    /// The server's configuration
    Conf,
}

impl Word {
    /// The four letters.
    pub fn letters(self) -> &'static str {
        match self {
            Word::Ruok => "ruok",
            Word::Srvr => "srvr",
            Word::Stat => "stat",
            Word::Mntr => "mntr",
            Word::Cons => "cons",
            Word::Wchc => "wchc",
            Word::Wchp => "wchp",
            Word::Envi => "envi",
            Word::Conf => "conf",
        }
    }
}

/// Quota limits: `Some` for those given. For `quota delete`, `Some(-1)` for those to unset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QuotaLimits {
    /// `count`.
    pub count: Option<i64>,
    /// `bytes`.
    pub bytes: Option<i64>,
    /// `countHardLimit`.
    pub hard_count: Option<i64>,
    /// `byteHardLimit`.
    pub hard_bytes: Option<i64>,
}

impl QuotaSub {
    /// The node.
    pub fn path(&self) -> &str {
        match self {
            QuotaSub::Set { path, .. } | QuotaSub::Get { path } | QuotaSub::Delete { path, .. } => {
                path
            }
        }
    }

    /// `quota set`: the limits given. `quota delete`: those to unset (`Some(-1)`), or `None`
    /// for the whole quota. `quota get`: `None`.
    pub fn limits(&self) -> Option<QuotaLimits> {
        match *self {
            QuotaSub::Set {
                count,
                bytes,
                hard_count,
                hard_bytes,
                ..
            } => Some(QuotaLimits {
                count,
                bytes,
                hard_count,
                hard_bytes,
            }),
            QuotaSub::Get { .. } => None,
            QuotaSub::Delete {
                count,
                bytes,
                hard_count,
                hard_bytes,
                ..
            } => {
                let unset = |flag: bool| flag.then_some(-1);
                let any = count || bytes || hard_count || hard_bytes;
                any.then_some(QuotaLimits {
                    count: unset(count),
                    bytes: unset(bytes),
                    hard_count: unset(hard_count),
                    hard_bytes: unset(hard_bytes),
                })
            }
        }
    }
}

/// `create --acl ACL` (repeatable).
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct CreateAcl {
    /// The new node's ACL entry, scheme:id:perms (repeatable; default world:anyone:cdrwa)
    #[arg(long = "acl", value_name = "ACL", value_parser = acl_arg)]
    pub acl: Vec<AclArg>,
}

impl CreateAcl {
    /// The entries given, in order (empty: the open ACL).
    pub fn specs(&self) -> impl Iterator<Item = &AclSpec> {
        self.acl.iter().flat_map(|a| a.0.iter())
    }
}
