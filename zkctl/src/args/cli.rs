//! The command line as clap sees it: the global flags and the commands, each command's
//! arguments one type (in the files of their family) that its code takes as it is, with the
//! text `--help` prints. What clap cannot check is checked by [`super::convert`].

use std::time::Duration;

use clap::{ArgAction, Args, Parser, Subcommand};

use super::backup::BackupSub;
use super::bench::{BenchArgs, DemoArgs};
use super::command::{OutputFormat, Shell};
use super::data::{
    CacheArgs, CreateArgs, DeleteArgs, DeleteallArgs, GetArgs, LsArgs, SetArgs, StatArgs, TreeArgs,
    WatchArgs,
};
use super::ensemble::ReconfigArgs;
use super::hold::{BarrierArgs, ElectArgs, LockArgs, MemberArgs};
use super::ops::OpsSub;
use super::recipes::{CounterArgs, MembersArgs, QueueSub};
use super::service::ServiceSub;
use super::values::{connect_string, millis, non_empty, positive_millis};

/// What `zkctl --help` says after the commands and flags.
const AFTER_HELP: &str = "\
Global flags may come before or after the command. Secrets come from the first
line of a file (--auth-file, --sasl-password-file, --resume-password-file; also
/dev/stdin or <(...)), never from the command line, where ps shows them.

Exit codes: 0 ok, 1 ZooKeeper or I/O error (and `counter cas` not applied),
2 usage error, 3 a timeout (queue take), 5 no instance to pick (service pick),
128+N signal N. Around a command (lock, elect, barrier, member; service
register with -- CMD) the code is CMD's (128+N if signal N ended it), and
zkctl's own outcomes move out of its way, as timeout(1) and shells do: 123
the lock was lost, 124 --timeout passed, 125 zkctl failed (usage, ZooKeeper,
I/O), 126 CMD cannot be executed, 127 CMD not found.
Run `zkctl COMMAND --help` for a command's flags.";

/// `zkctl [GLOBAL FLAGS] COMMAND [ARGS] [FLAGS]`.
#[derive(Debug, Parser)]
#[command(
    name = "zkctl",
    bin_name = "zkctl",
    version,
    about = "A ZooKeeper command-line tool",
    long_about = None,
    after_help = AFTER_HELP
)]
pub struct Cli {
    /// Connection settings (on every level: see [`super::command_line`]).
    #[command(flatten)]
    pub globals: GlobalFlags,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

// Flags every command accepts. clap's `global` keeps only the last level's values of a flag
// given on two levels (`--auth a ls / --auth b`), so the parser adds these to every level
// and merges them itself ([`GlobalFlags::then`]).
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Global flags")]
pub struct GlobalFlags {
    /// Connect string, host:port,...[/chroot] (default: $ZK_SERVER, else 127.0.0.1:2181)
    #[arg(long, value_name = "HOSTS", value_parser = connect_string)]
    pub server: Option<String>,
    /// Session timeout to ask for (default 10000; the server bounds it)
    #[arg(long, value_name = "MS", value_parser = positive_millis)]
    pub session_timeout: Option<Duration>,
    /// How long to wait for the first connection (default: the session timeout)
    #[arg(long, value_name = "MS", value_parser = millis)]
    pub connect_timeout: Option<Duration>,
    /// Refused: credentials on the command line (see --auth-file). Taken as it comes, so
    /// that the refusal does not repeat it.
    #[arg(long, value_name = "SCHEME:CREDENTIALS", hide = true)]
    pub auth: Vec<String>,
    /// Add an identity to the session: FILE's first line is SCHEME:CREDENTIALS, e.g.
    /// digest:user:password (repeatable; never on the command line)
    #[arg(long, value_name = "FILE")]
    pub auth_file: Vec<String>,
    /// Connect with TLS, trusting the platform's store (implied by any --tls-* flag)
    #[arg(long)]
    pub tls: bool,
    /// Connect with TLS, trusting the CA certificates of this PEM file
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<String>,
    /// With TLS: refuse server certificates this PEM file's CRLs revoke
    #[arg(long, value_name = "FILE")]
    pub tls_crl: Option<String>,
    /// With TLS: present this client certificate (PEM; needs --tls-key)
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<String>,
    /// With TLS: the client certificate's private key (PEM)
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<String>,
    /// With TLS: check every server's certificate against NAME, not the host given
    #[arg(long, value_name = "NAME")]
    pub tls_server_name: Option<String>,
    /// Authenticate with SASL DIGEST-MD5 as USER (needs --sasl-password-file)
    #[arg(long, value_name = "USER")]
    pub sasl_digest: Option<String>,
    /// The SASL password: the file's first line (never on the command line)
    #[arg(long, value_name = "FILE")]
    pub sasl_password_file: Option<String>,
    /// Authenticate with Kerberos (SASL GSSAPI) as PRINCIPAL: from --keytab, else the ticket
    /// cache
    #[arg(long, value_name = "PRINCIPAL", value_parser = non_empty)]
    pub sasl_kerberos: Option<String>,
    /// With --sasl-kerberos: the principal's keytab
    #[arg(long, value_name = "FILE")]
    pub keytab: Option<String>,
    /// With --sasl-kerberos: the server's principal (default zookeeper/<host>)
    #[arg(long, value_name = "NAME")]
    pub sasl_service_principal: Option<String>,
    /// Reattach to a live session (id as 0x-hex or decimal) instead of making one; zkctl
    /// leaves it open at exit (needs --resume-password-file)
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// With --resume: the session password, hex, on the file's first line (never on the
    /// command line)
    #[arg(long, value_name = "FILE")]
    pub resume_password_file: Option<String>,
    /// Follow the ensemble's membership (/zookeeper/config) while running, so the session
    /// survives members being replaced
    #[arg(long)]
    pub follow_ensemble: bool,
    /// Print the client's events on stderr: connects, disconnects and their causes, session
    /// loss, locks and leadership (-vv adds debug events)
    #[arg(short, long, action = ArgAction::Count)]
    pub verbose: u8,
    /// What stdout (and an error on stderr) looks like: text, or json (one JSON object per
    /// line, fixed field names: see README)
    #[arg(long, value_name = "FORMAT", value_enum)]
    pub output: Option<OutputFormat>,
}

impl GlobalFlags {
    /// These flags followed by those of a deeper level (given later on the command line):
    /// a later value wins, lists add up, each `-v` counts.
    pub fn then(self, later: GlobalFlags) -> GlobalFlags {
        let mut auth = self.auth;
        auth.extend(later.auth);
        let mut auth_file = self.auth_file;
        auth_file.extend(later.auth_file);
        GlobalFlags {
            server: later.server.or(self.server),
            session_timeout: later.session_timeout.or(self.session_timeout),
            connect_timeout: later.connect_timeout.or(self.connect_timeout),
            auth,
            auth_file,
            tls: self.tls || later.tls,
            tls_ca: later.tls_ca.or(self.tls_ca),
            tls_crl: later.tls_crl.or(self.tls_crl),
            tls_cert: later.tls_cert.or(self.tls_cert),
            tls_key: later.tls_key.or(self.tls_key),
            tls_server_name: later.tls_server_name.or(self.tls_server_name),
            sasl_digest: later.sasl_digest.or(self.sasl_digest),
            sasl_password_file: later.sasl_password_file.or(self.sasl_password_file),
            sasl_kerberos: later.sasl_kerberos.or(self.sasl_kerberos),
            keytab: later.keytab.or(self.keytab),
            sasl_service_principal: later.sasl_service_principal.or(self.sasl_service_principal),
            resume: later.resume.or(self.resume),
            resume_password_file: later.resume_password_file.or(self.resume_password_file),
            follow_ensemble: self.follow_ensemble || later.follow_ensemble,
            verbose: self.verbose.saturating_add(later.verbose),
            output: later.output.or(self.output),
        }
    }
}

/// The commands, in the order `--help` lists them.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum Command {
    /// List the children of a node, sorted
    #[command(after_help = "\
Prints one child name per line. As in zkCli.sh, -s adds the node's Stat after
the names, and -R lists every path of the subtree instead (as `zkctl find PATH`).")]
    Ls(LsArgs),
    /// Print a node's data (raw bytes)
    #[command(after_help = "\
Writes the data exactly as stored, so binary data can be piped. As in zkCli.sh,
-s adds the Stat (after a line break), and -w leaves a one-shot watch on the
data and waits for it to fire, printing the event as `zkctl watch` does.")]
    Get(GetArgs),
    /// Print a node's Stat
    #[command(after_help = "\
Prints one `name = value` line per field, named as zkCli.sh names them. With -w
(as in zkCli.sh) it leaves a one-shot watch (exists) and waits for it to fire,
printing the event as `zkctl watch` does.")]
    Stat(StatArgs),
    /// Set a node's data
    #[command(
        after_help = "With --version, only if the node's data version is V (else BadVersion)."
    )]
    Set(SetArgs),
    /// Create a node and print its path
    #[command(after_help = "\
An ephemeral node lives as long as its session: with --ephemeral, zkctl
prints the path and keeps the session (and the node) until interrupted.
TTL nodes need zookeeper.extendedTypesEnabled=true on the server.")]
    Create(CreateArgs),
    /// Delete a node (--recursive: with its subtree)
    #[command(after_help = "\
With --version, only if the node's data version is V (the top node only
with --recursive).")]
    Delete(DeleteArgs),
    /// Delete a node and its subtree (zkCli.sh's deleteall: delete --recursive)
    Deleteall(DeleteallArgs),
    /// Print the subtree under a node
    #[command(after_help = "Children are sorted by name.")]
    Tree(TreeArgs),
    /// Print one line per event on a node until interrupted
    #[command(after_help = "\
Uses a persistent watch (addWatch), re-registered across reconnects, so no
event is missed. Lines: `EventType path`. A line on stderr says when the
watch is in place.")]
    Watch(WatchArgs),
    /// A live view of a subtree: its events, then the view
    #[command(after_help = "\
Prints one line per event: `added PATH VERSION`, `updated PATH VERSION` (the
new data version), `removed PATH`, `initialized`, `suspended`, `reconnected`,
`lost`, `lagged N` (N events were dropped: this reader was too slow).
When it ends (after --for, or on SIGINT/SIGTERM/SIGHUP) it prints the view,
one `node PATH VERSION DATA` line per node in byte order of the paths: DATA
is the text if it is UTF-8 without line breaks, else 0x and lower-case hex,
and nothing (not even the space) when empty. Then it exits 0.
Default: the subtree with PATH itself (a CuratorCache: one persistent
recursive watch, one-shot watches on a 3.5 server). It keeps running across
disconnects, server restarts and session expiry, catching up each time.")]
    Cache(CacheArgs),
    /// Put items into, or take items from, a Curator-compatible queue
    #[command(subcommand)]
    Queue(QueueSub),
    /// Read or change a Curator-compatible counter; prints the value after
    #[command(after_help = "\
An 8-byte DistributedAtomicLong by default, a 4-byte SharedCount with --int
(both big-endian, as Curator stores them). Prints the value after the action.
get: the value (a missing node reads 0; with --int it is created with 0).
add N: adds N (negative to subtract; wraps as Java does), retried on
contention until it applies.
set N: sets N whatever the value was.
cas OLD NEW: sets NEW only if the value is OLD; else prints the value read
and exits 1.")]
    Counter(CounterArgs),
    /// Run CMD inside a double barrier: all N enter, then all leave
    #[command(after_help = "\
A Curator-compatible DistributedDoubleBarrier (Java members may take part):
zkctl enters and waits until --count members have entered, runs CMD, then
leaves and waits until every member has left. Our member node is
PATH/<uuid> (ephemeral); CMD gets it as ZKCTL_BARRIER_NODE and runs in its
own process group. On SIGINT/SIGTERM/SIGHUP zkctl stops CMD (SIGTERM, then
SIGKILL after --grace) and leaves without waiting for the others.
Exit codes: CMD's; 124 when --timeout passed while entering (CMD never ran)
or leaving (our node is deleted); 125 zkctl failed (usage, ZooKeeper, I/O);
126 CMD cannot be executed, 127 CMD not found; 128+N after signal N.")]
    Barrier(BarrierArgs),
    /// Run CMD as member ID of a group (Curator's GroupMember)
    #[command(after_help = "\
Our member node is PATH/ID (ephemeral, with DATA; empty if not given), kept
across connection and session loss while CMD runs, and deleted once CMD has
ended. CMD gets ZKCTL_MEMBER_NODE and runs in its own process group; on
SIGINT/SIGTERM/SIGHUP zkctl stops it (SIGTERM, then SIGKILL after --grace),
then leaves. The `--` before CMD is required (DATA is optional).
Exit codes: CMD's; 125 zkctl failed (usage, ZooKeeper, I/O); 126 CMD cannot
be executed, 127 CMD not found; 128+N after signal N.")]
    Member(MemberArgs),
    /// List a group's members, `ID DATA`, sorted by id
    #[command(after_help = "\
Reads the children of PATH and their data (it does not join). DATA as
`zkctl cache` prints it: the text if it is UTF-8 without line breaks, else
0x and lower-case hex; nothing after the id (not even the space) when empty.")]
    Members(MembersArgs),
    /// Register, find and watch services in Curator's service discovery registry
    #[command(
        subcommand,
        after_help = "\
The registry of Curator's ServiceDiscovery (curator-x-discovery): instance ID of
service NAME is the node BASE/NAME/ID, its data the instance's JSON as Curator
writes it, so Java services (Curator, Spring Cloud Zookeeper) share it."
    )]
    Service(ServiceSub),
    /// Run CMD holding a Curator-compatible mutex (InterProcessMutex)
    #[command(after_help = "\
Exits with CMD's exit code (128+N if a signal N ended it). If the lock is
lost while CMD runs, CMD is stopped (SIGTERM to its process group, SIGKILL
after --grace) and zkctl exits 123. Lost means, by --policy: session-deadline
(the default), the connection stayed down until the server could have
expired the session (the send time of the last request answered, plus the
session timeout, less a tenth of it), or the session was lost; standard,
the connection dropped; session-only, the session was lost.
SIGINT/SIGTERM/SIGHUP to zkctl stop CMD the same way, then release the lock.
If zkctl itself is killed, a watchdog kills CMD's process group at once;
it starts before CMD, and if it cannot (no sh), CMD is not started.
CMD runs in its own process group, with ZKCTL_LOCK_NODE set, and
ZKRS_FENCING_TOKEN: the lock node's creation zxid, in decimal, larger for
every later holder (a resource keeps the largest it saw, refuses smaller).
Keep --grace below a tenth of the session timeout under session-deadline.
Exit codes: CMD's; zkctl's own out of its way: 123 the lock was lost, 124
--timeout passed (CMD never ran), 125 zkctl failed (usage, ZooKeeper, I/O),
126 CMD cannot be executed, 127 CMD not found; 128+N after signal N to zkctl.")]
    Lock(LockArgs),
    /// Run CMD only while leading a Curator-compatible LeaderLatch
    #[command(after_help = "\
When leadership is lost, CMD is stopped (SIGTERM to its process group,
SIGKILL after --grace) and zkctl stays in the election. When CMD exits on
its own, zkctl leaves the election and rejoins at the back (leadership
passes on), unless --once: then it exits with CMD's exit code.
SIGINT/SIGTERM/SIGHUP to zkctl stop CMD, then leave the election.
Leadership is lost as --policy says (see zkctl lock --help; default
session-deadline). CMD runs in its own process group, with ZKCTL_ELECTION_ID,
ZKCTL_ELECTION_NODE and ZKRS_FENCING_TOKEN (the latch node's creation zxid,
larger for every later leader) set. Keep --grace below a tenth of the
session timeout (a third under standard), so CMD is gone before the session
can expire and another leader starts.
Exit codes: with --once CMD's; 125 zkctl failed (usage, ZooKeeper, I/O);
126 CMD cannot be executed, 127 CMD not found; 128+N after signal N.")]
    Elect(ElectArgs),
    /// Print the ensemble's configuration as ZooKeeper writes it
    #[command(after_help = "\
Reads /zookeeper/config (never under the chroot): one
`server.N=HOST:QUORUM_PORT:ELECTION_PORT:ROLE;CLIENT_HOST:CLIENT_PORT` line
per member, then `version=V` (hex; what reconfig --from-version takes).")]
    Config,
    /// Change the ensemble's members; prints the new configuration
    #[command(after_help = "\
Incremental (--add and --remove, repeatable or comma-separated) or bulk
(--members: the whole new membership). SPEC is a member line,
server.N=HOST:QUORUM_PORT:ELECTION_PORT[:ROLE][;[CLIENT_HOST:]PORT].
Needs servers with reconfigEnabled=true and a superuser session
(--auth-file FILE holding digest:super:PASSWORD) unless they skip ACLs. The server's refusals
(ReconfigDisabled, NewConfigNoQuorum, ReconfigInProgress, BadVersion,
NoAuth) exit 1 with their name.")]
    #[command(group = clap::ArgGroup::new("change").required(true).multiple(true)
        .args(["add", "remove", "members"]))]
    Reconfig(ReconfigArgs),
    /// The operator's commands: acl, sync, whoami, ephemerals, count, watches, quota,
    /// version, server
    #[command(flatten)]
    Ops(OpsSub),
    /// Throughput and latency, as `name value unit` lines
    #[command(after_help = "\
get/set/create: N clients (sessions), each with D requests in flight.
lock: uncontended acquire+release cycles (clients x in-flight independent
locks), then the hand-off latency between two holders.
latch: uncontended start+lead+close cycles (clients x in-flight independent
latches), then the leadership hand-off latency (leader closes, next one is
told).
semaphore: the same as lock with an InterProcessSemaphoreV2 of one lease
(acquire a lease, return it).
lock, latch and semaphore, under contention: --contenders N sessions on one
lock (latch, semaphore), each cycling acquire/release (join/leave): hand-offs
per second and the hand-off latency, from one holder's release to the next
one's acquire.
--curator runs the same loops with Curator 5.4 in a JVM (zkctl-bench only;
needs a JDK and Curator's jars: scripts/install-zookeeper.sh), the uncontended
cycles and the contended hand-offs, in chunks alternating with ours, for the
ratios ours/curator.
--in-line N,... measures the hand-off with N sessions in line against 2, and
the memory per waiting session (RSS, and this process's live heap).
Nodes live under /zkctl-bench-<pid> and are deleted afterwards.
Defaults: --clients 4 --in-flight 32 --ops 20000 --size 100 for get/set/create;
--clients 1 --in-flight 1 --ops 1000 --rounds 100 --contenders 4 for lock,
latch and semaphore.
Besides latency, with zkctl-bench (the workspace's build with the test kit's
counting allocator, not shipped): this process's CPU time and heap
allocations per operation (cycle, hand-off), the client's own cost, and the
live heap per waiting session of --in-line.")]
    Bench(BenchArgs),
    /// The leader-latch story with 10 participants
    #[command(after_help = "\
Uses --server / $ZK_SERVER. Without them, zkctl-bench (the workspace's build
with the test kit, not shipped) starts a ZooKeeper server (needs ZooKeeper
installed, see scripts/install-zookeeper.sh).")]
    Demo(DemoArgs),
    /// Print a shell's completion script (e.g. `zkctl completions bash >
    /// /etc/bash_completion.d/zkctl`)
    Completions(CompletionsArgs),
    // export, import, diff, find, du: args/backup.rs (flattened: their commands are listed here).
    #[command(flatten)]
    Backup(BackupSub),
}

impl Command {
    /// Whether it runs a command of the user's (`lock`, `elect`, `barrier`, `member`,
    /// `service register -- CMD`), whose exit code zkctl passes through: then zkctl's own
    /// outcomes take [`crate::failure::Codes::AroundCommand`].
    pub fn runs_command(&self) -> bool {
        match self {
            Command::Lock(_) | Command::Elect(_) | Command::Barrier(_) | Command::Member(_) => true,
            Command::Service(ServiceSub::Register(r)) => !r.command.is_empty(),
            _ => false,
        }
    }
}

/// `completions`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: Shell,
}
