//! What a parsed command line means: typed commands and connection settings.

use std::time::Duration;

use clap::ValueEnum;
use zkrs_client::Secret;

use super::acl::AclSpec;
use super::ops::OpsCommand;
use super::secrets::{read_identities, Resume, SaslDigest, SecretFile};

/// Settings for the connection, shared by every command. Its secrets are [`Secret`]s, read
/// from files ([`super::secrets`]): `Debug` prints them `Secret(***)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Globals {
    /// The connect string.
    pub server: String,
    /// Whether the server was chosen (`--server` or `ZK_SERVER`), for `demo`.
    pub server_given: bool,
    /// The session timeout to ask for.
    pub session_timeout: Duration,
    /// How long to wait for the first session (`None`: the session timeout).
    pub connect_timeout: Option<Duration>,
    /// `--auth-file FILE`s, read by [`Globals::read_secrets`] into `auth`.
    pub auth_files: Vec<SecretFile>,
    /// `(scheme, credentials)` identities, from `auth_files` once read.
    pub auth: Vec<(String, Secret)>,
    /// How many `-v`: 1 prints the library's events, 2 its debug events too.
    pub verbosity: u8,
    /// TLS settings, when any `--tls-*` flag is given.
    pub tls: Option<Box<Tls>>,
    /// `--sasl-digest USER --sasl-password-file FILE`.
    pub sasl_digest: Option<SaslDigest>,
    /// `--sasl-kerberos PRINCIPAL [--keytab FILE] [--sasl-service-principal NAME]`.
    pub kerberos: Option<KerberosArgs>,
    /// `--resume ID --resume-password-file FILE`: the session to reattach to (left open at
    /// exit).
    pub resume: Option<Resume>,
    /// `--follow-ensemble`: the client's hosts follow `/zookeeper/config`.
    pub follow_ensemble: bool,
    /// `--output text|json`.
    pub output: OutputFormat,
}

impl Globals {
    /// Reads every secret file (before connecting; the parser does no I/O). An error names
    /// the flag and the file, never what the file holds.
    pub fn read_secrets(&mut self) -> Result<(), String> {
        self.auth = read_identities(&mut self.auth_files)?;
        if let Some(sasl) = &mut self.sasl_digest {
            sasl.password.read()?;
        }
        if let Some(resume) = &mut self.resume {
            resume.read()?;
        }
        Ok(())
    }
}

/// What stdout looks like (`--output`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    // Plain comments, not doc comments: clap would print them as the values' help, and a
    // value with help makes `zkctl -h` and `zkctl help` differ.
    // Lines for eyes and for `cut`/`awk` (each command's own format).
    #[default]
    Text,
    // JSON lines: one object per line, the fields of README's table.
    Json,
}

/// `--sasl-kerberos PRINCIPAL [--keytab FILE] [--sasl-service-principal NAME]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KerberosArgs {
    /// The client's principal.
    pub principal: String,
    /// Its keytab; without one, the ticket cache (`kinit PRINCIPAL` first).
    pub keytab: Option<String>,
    /// The server's principal (default `zookeeper/<host>`).
    pub service_principal: Option<String>,
}

/// The `--tls-*` flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tls {
    /// `--tls-ca FILE` (else the platform's trust store).
    pub ca: Option<String>,
    /// `--tls-crl FILE`: revocation lists the servers' certificates are checked against.
    pub crl: Option<String>,
    /// `--tls-cert FILE` and `--tls-key FILE`, given together.
    pub cert_and_key: Option<(String, String)>,
    /// `--tls-server-name NAME`.
    pub server_name: Option<String>,
}

/// What `bench` measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchKind {
    /// getData on a node of `--size` bytes.
    Get,
    /// setData of `--size` bytes.
    Set,
    /// Persistent creates of `--size` bytes (deleted afterwards).
    Create,
    /// InterProcessMutex cycles and hand-offs.
    Lock,
    /// LeaderLatch cycles and hand-offs.
    Latch,
    /// InterProcessSemaphoreV2 cycles and hand-offs (one lease).
    Semaphore,
}

/// When `lock` and `elect` take the lock or leadership as lost (`--policy`): the recipes'
/// `ConnectionStatePolicy`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum HoldPolicy {
    // Plain comments (see `OutputFormat`).
    // Lost at the first suspension (Curator's default).
    Standard,
    // Lost when the server could have expired the session, less a margin.
    #[default]
    SessionDeadline,
    // Lost only when the session is (Curator's session policy; not safe on its own).
    SessionOnly,
}

/// The tokio runtime `bench` runs on (`--rt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchRuntime {
    /// One thread: the callers' tasks and the client's driver share it.
    Current,
    /// tokio's multi-thread runtime (one worker per core), as `#[tokio::main]` builds it.
    Multi,
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

/// What `zkctl queue` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueAction {
    /// Put items (`None`: one per line of stdin).
    Put {
        /// Which queue.
        kind: QueueKind,
        /// The one item, or `None` for stdin.
        data: Option<Vec<u8>>,
    },
    /// Take items.
    Take {
        /// How many.
        count: u64,
        /// How long to wait in all.
        timeout: Option<Duration>,
        /// Lock each item here while it is handled.
        lock_path: Option<String>,
        /// A `SimpleDistributedQueue`.
        simple: bool,
    },
}

/// How a registered service instance's node lives (`service register --type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ServiceKind {
    /// Ephemeral: Curator's `DYNAMIC` (the default).
    Dynamic,
    /// Persistent, deleted when the registration ends: `STATIC`.
    Static,
    /// Persistent, left in place when zkctl ends: `PERMANENT`.
    Permanent,
}

/// How `service pick` picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PickStrategy {
    /// Each in turn (Curator's default).
    RoundRobin,
    /// Any one, uniformly.
    Random,
}

/// `service register`: the instance and the command to run while it is registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRegistration {
    /// The service's name.
    pub name: String,
    /// The instance id (`None`: a random UUID).
    pub id: Option<String>,
    /// Host name or address.
    pub address: String,
    /// Port.
    pub port: Option<u16>,
    /// TLS port.
    pub ssl_port: Option<u16>,
    /// The payload, JSON text (checked when the command runs: the parser is std only).
    pub payload: Option<String>,
    /// How the node lives.
    pub kind: ServiceKind,
    /// `--enabled` (`None`: not given, and no `enabled` key is written).
    pub enabled: Option<bool>,
    /// A URI template (checked when the command runs).
    pub uri_spec: Option<String>,
    /// SIGTERM-to-SIGKILL grace period.
    pub grace: Duration,
    /// The command to run (empty: register and exit, for a permanent instance).
    pub command: Vec<String>,
}

/// What `zkctl service` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceAction {
    /// Register an instance while a command runs.
    Register(Box<ServiceRegistration>),
    /// Delete an instance's node.
    Unregister {
        /// The service's name.
        name: String,
        /// The instance id.
        id: String,
    },
    /// List instances (of one service, or of all).
    List {
        /// The service (`None`: every service).
        name: Option<String>,
    },
    /// Print a service cache's events.
    Watch {
        /// The service's name.
        name: String,
        /// End after this long (`None`: at a signal).
        run_for: Option<Duration>,
    },
    /// Pick instances from a provider.
    Pick {
        /// The service's name.
        name: String,
        /// How to pick.
        strategy: PickStrategy,
        /// How many picks.
        count: usize,
    },
}

/// How to create a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateArgs {
    /// The path (the prefix, when sequential).
    pub path: String,
    /// The data.
    pub data: Vec<u8>,
    /// Ephemeral: held until interrupted.
    pub ephemeral: bool,
    /// Sequential.
    pub sequential: bool,
    /// A container.
    pub container: bool,
    /// Time to live.
    pub ttl: Option<Duration>,
    /// Create missing parents.
    pub parents: bool,
    /// The ACL (empty: open to all).
    pub acl: Vec<AclSpec>,
}

/// A parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `ls PATH [-s]`
    Ls {
        /// The node.
        path: String,
        /// Then its Stat.
        stat: bool,
    },
    /// `get PATH [-s] [-w]`
    Get {
        /// The node.
        path: String,
        /// Then its Stat.
        stat: bool,
        /// Then wait for a one-shot data watch to fire.
        watch: bool,
    },
    /// `stat PATH [-w]`
    Stat {
        /// The node.
        path: String,
        /// Then wait for a one-shot exists watch to fire.
        watch: bool,
    },
    /// `set PATH DATA [--version V]`
    Set {
        /// The node.
        path: String,
        /// The new data.
        data: Vec<u8>,
        /// The expected data version.
        version: Option<i32>,
    },
    /// `create PATH [DATA] [...]`
    Create(CreateArgs),
    /// `delete PATH [--recursive] [--version V]`
    Delete {
        /// The node.
        path: String,
        /// With its subtree.
        recursive: bool,
        /// The expected data version.
        version: Option<i32>,
    },
    /// `tree PATH`
    Tree {
        /// The root of the subtree.
        path: String,
    },
    /// `watch PATH [--recursive] [--count N]`
    Watch {
        /// The node.
        path: String,
        /// The whole subtree.
        recursive: bool,
        /// Stop after this many events.
        count: Option<u64>,
    },
    /// `cache PATH [--depth N] [--children] [--for MS]`
    Cache {
        /// The root of the view.
        path: String,
        /// Which cache keeps the view.
        kind: CacheKind,
        /// End after this long (`None`: at a signal).
        run_for: Option<Duration>,
    },
    /// `queue put PATH DATA [...]` or `queue take PATH [...]`
    Queue {
        /// The queue's path.
        path: String,
        /// Put or take.
        action: QueueAction,
    },
    /// `counter PATH get|add N|set N|cas OLD NEW [--int]`
    Counter {
        /// The counter's node.
        path: String,
        /// What to do.
        action: CounterAction,
        /// A 4-byte SharedCount instead of an 8-byte atomic long.
        int: bool,
    },
    /// `barrier PATH --count N [--timeout MS] -- CMD...`
    Barrier {
        /// The barrier's node.
        path: String,
        /// Members.
        count: usize,
        /// How long to wait to enter (and to leave).
        timeout: Option<Duration>,
        /// SIGTERM-to-SIGKILL grace period.
        grace: Duration,
        /// The command to run.
        command: Vec<String>,
    },
    /// `member PATH ID [DATA] -- CMD...`
    Member {
        /// The group's node.
        path: String,
        /// Our id.
        id: String,
        /// Our data.
        data: Vec<u8>,
        /// SIGTERM-to-SIGKILL grace period.
        grace: Duration,
        /// The command to run.
        command: Vec<String>,
    },
    /// `members PATH`
    Members {
        /// The group's node.
        path: String,
    },
    /// `service register|unregister|list|watch|pick BASE ...`
    Service {
        /// The registry's base path.
        base: String,
        /// What to do.
        action: ServiceAction,
    },
    /// `lock PATH [--timeout MS] -- CMD...`
    Lock {
        /// The lock directory.
        path: String,
        /// How long to wait for the lock.
        timeout: Option<Duration>,
        /// When the lock counts as lost.
        policy: HoldPolicy,
        /// SIGTERM-to-SIGKILL grace period.
        grace: Duration,
        /// The command to run.
        command: Vec<String>,
    },
    /// `elect PATH [--id ID] [--once] -- CMD...`
    Elect {
        /// The latch directory.
        path: String,
        /// Participant id (`None`: `<hostname>-<pid>`).
        id: Option<String>,
        /// Exit after one complete run.
        once: bool,
        /// When leadership counts as lost.
        policy: HoldPolicy,
        /// SIGTERM-to-SIGKILL grace period.
        grace: Duration,
        /// The command to run.
        command: Vec<String>,
    },
    /// `bench KIND [...]`
    Bench(BenchOptions),
    /// `config`
    Config,
    /// `reconfig --add SPEC... --remove ID... | --members SPEC... [--from-version V]`
    Reconfig {
        /// Member lines to add (incremental).
        add: Vec<String>,
        /// Member ids to remove (incremental).
        remove: Vec<u64>,
        /// The whole new membership (bulk); empty for an incremental change.
        members: Vec<String>,
        /// Apply only if the configuration is this version.
        from_version: Option<i64>,
    },
    /// The operator's commands (`acl`, `sync`, `quota`, `server`, ...).
    Ops(OpsCommand),
    /// `demo [--participants N]`
    Demo {
        /// How many participants.
        participants: usize,
    },
    /// `export`, `import`, `diff`, `find`, `du`.
    Backup(super::backup::BackupCommand),
}

impl Command {
    /// Whether it runs a command of the user's (`lock`, `elect`, `barrier`, `member`,
    /// `service register -- CMD`), whose exit code zkctl passes through: then zkctl's own
    /// outcomes take [`crate::failure::Codes::AroundCommand`].
    pub fn runs_command(&self) -> bool {
        match self {
            Command::Lock { .. }
            | Command::Elect { .. }
            | Command::Barrier { .. }
            | Command::Member { .. } => true,
            Command::Service {
                action: ServiceAction::Register(r),
                ..
            } => !r.command.is_empty(),
            _ => false,
        }
    }
}

/// The shells `completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// bash
    Bash,
    /// zsh
    Zsh,
    /// fish
    Fish,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Print this text on stdout and exit 0: help, or the version.
    Print(String),
    /// Print the completion script for a shell.
    Completions(Shell),
    /// Run a command.
    Run(Box<Globals>, Command),
}
