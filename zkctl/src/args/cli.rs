//! The command line as clap sees it: every command and flag, with the text `--help` prints.
//! [`super::convert`] turns what clap parsed into the typed [`super::Command`].

use std::time::Duration;

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};

use super::command::{OutputFormat, PickStrategy, ServiceKind, Shell};
use super::ensemble::from_version;
pub use super::flags::{BarrierFlags, BenchFlags, ElectFlags, Grace, LockFlags, MemberFlags};
use super::ops::{CreateAcl, OpsSub};
use super::values::{
    at_least_two, connect_string, instance_id, levels, millis, non_empty, port, positive,
    positive_millis, service_name,
};

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
    pub command: Sub,
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
#[derive(Debug, Subcommand)]
pub enum Sub {
    /// List the children of a node, sorted
    #[command(after_help = "\
Prints one child name per line. As in zkCli.sh, -s adds the node's Stat after
the names, and -R lists every path of the subtree instead (as `zkctl find PATH`).")]
    Ls {
        /// The node
        path: String,
        /// Then the node's Stat, as `zkctl stat` prints it (zkCli.sh's ls -s)
        #[arg(short = 's')]
        stat: bool,
        /// Every path of the subtree, PATH first (zkCli.sh's ls -R; as `zkctl find PATH`)
        #[arg(short = 'R', conflicts_with = "stat")]
        recursive: bool,
    },
    /// Print a node's data (raw bytes)
    #[command(after_help = "\
Writes the data exactly as stored, so binary data can be piped. As in zkCli.sh,
-s adds the Stat (after a line break), and -w leaves a one-shot watch on the
data and waits for it to fire, printing the event as `zkctl watch` does.")]
    Get {
        /// The node
        path: String,
        /// Then the node's Stat, as `zkctl stat` prints it (zkCli.sh's get -s)
        #[arg(short = 's')]
        stat: bool,
        /// Then wait for the data watch to fire and print its event (zkCli.sh's get -w)
        #[arg(short = 'w')]
        watch: bool,
    },
    /// Print a node's Stat
    #[command(after_help = "\
Prints one `name = value` line per field, named as zkCli.sh names them. With -w
(as in zkCli.sh) it leaves a one-shot watch (exists) and waits for it to fire,
printing the event as `zkctl watch` does.")]
    Stat {
        /// The node
        path: String,
        /// Then wait for the watch to fire and print its event (zkCli.sh's stat -w)
        #[arg(short = 'w')]
        watch: bool,
    },
    /// Set a node's data
    #[command(
        after_help = "With --version, only if the node's data version is V (else BadVersion)."
    )]
    Set {
        /// The node
        path: String,
        /// The new data
        #[arg(allow_negative_numbers = true)]
        data: String,
        /// Only if the data version is V
        #[arg(long, value_name = "V")]
        version: Option<i32>,
    },
    /// Create a node and print its path
    #[command(after_help = "\
An ephemeral node lives as long as its session: with --ephemeral, zkctl
prints the path and keeps the session (and the node) until interrupted.
TTL nodes need zookeeper.extendedTypesEnabled=true on the server.")]
    Create(CreateFlags),
    /// Delete a node (--recursive: with its subtree)
    #[command(after_help = "\
With --version, only if the node's data version is V (the top node only
with --recursive).")]
    Delete {
        /// The node
        path: String,
        /// Delete the children first, deepest first
        #[arg(long)]
        recursive: bool,
        /// Only if the data version is V
        #[arg(long, value_name = "V")]
        version: Option<i32>,
    },
    /// Delete a node and its subtree (zkCli.sh's deleteall: delete --recursive)
    Deleteall {
        /// The node
        path: String,
    },
    /// Print the subtree under a node
    #[command(after_help = "Children are sorted by name.")]
    Tree {
        /// The root of the subtree
        path: String,
    },
    /// Print one line per event on a node until interrupted
    #[command(after_help = "\
Uses a persistent watch (addWatch), re-registered across reconnects, so no
event is missed. Lines: `EventType path`. A line on stderr says when the
watch is in place.")]
    Watch {
        /// The node
        path: String,
        /// Watch the whole subtree (persistent recursive watch)
        #[arg(long)]
        recursive: bool,
        /// Exit after N events
        #[arg(long, value_name = "N")]
        count: Option<u64>,
    },
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
    Cache {
        /// The root of the view
        path: String,
        /// Only N levels below PATH (0: PATH only; a TreeCache)
        #[arg(long, value_name = "N", value_parser = levels, allow_negative_numbers = true,
              conflicts_with = "children")]
        depth: Option<usize>,
        /// Only the children of PATH (a PathChildrenCache)
        #[arg(long)]
        children: bool,
        /// End MS milliseconds after connecting
        #[arg(long = "for", value_name = "MS", value_parser = millis)]
        run_for: Option<Duration>,
    },
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
    Counter {
        /// The counter's node
        path: String,
        /// What to do
        #[arg(value_enum)]
        action: CounterVerb,
        /// N for add and set; OLD NEW for cas
        #[arg(value_name = "N", allow_negative_numbers = true)]
        numbers: Vec<String>,
        /// A 4-byte SharedCount instead of an 8-byte DistributedAtomicLong
        #[arg(long)]
        int: bool,
    },
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
    Barrier(BarrierFlags),
    /// Run CMD as member ID of a group (Curator's GroupMember)
    #[command(after_help = "\
Our member node is PATH/ID (ephemeral, with DATA; empty if not given), kept
across connection and session loss while CMD runs, and deleted once CMD has
ended. CMD gets ZKCTL_MEMBER_NODE and runs in its own process group; on
SIGINT/SIGTERM/SIGHUP zkctl stops it (SIGTERM, then SIGKILL after --grace),
then leaves. The `--` before CMD is required (DATA is optional).
Exit codes: CMD's; 125 zkctl failed (usage, ZooKeeper, I/O); 126 CMD cannot
be executed, 127 CMD not found; 128+N after signal N.")]
    Member(MemberFlags),
    /// List a group's members, `ID DATA`, sorted by id
    #[command(after_help = "\
Reads the children of PATH and their data (it does not join). DATA as
`zkctl cache` prints it: the text if it is UTF-8 without line breaks, else
0x and lower-case hex; nothing after the id (not even the space) when empty.")]
    Members {
        /// The group's node
        path: String,
    },
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
    Lock(LockFlags),
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
    Elect(ElectFlags),
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
    Reconfig {
        /// A member to add (repeatable)
        #[arg(long, value_name = "SPEC", value_delimiter = ',')]
        add: Vec<String>,
        /// A member id to remove (repeatable)
        #[arg(long, value_name = "ID", value_delimiter = ',')]
        remove: Vec<String>,
        /// Bulk: a member of the new configuration (repeatable)
        #[arg(long, value_name = "SPEC", value_delimiter = ',',
              conflicts_with_all = ["add", "remove"])]
        members: Vec<String>,
        /// Only if the configuration is version V (hex, as `config` prints it)
        #[arg(long, value_name = "V", value_parser = from_version)]
        from_version: Option<i64>,
    },
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
needs a JDK and Curator's jars: scripts/install-zookeeper.sh), the uncontended cycles and
the contended hand-offs, in chunks alternating with ours, for the ratios
ours/curator.
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
    Bench(BenchFlags),
    /// The leader-latch story with 10 participants
    #[command(after_help = "\
Uses --server / $ZK_SERVER. Without them, zkctl-bench (the workspace's build
with the test kit, not shipped) starts a ZooKeeper server (needs ZooKeeper
installed, see scripts/install-zookeeper.sh).")]
    Demo {
        /// How many participants
        #[arg(long, value_name = "N", value_parser = at_least_two, default_value = "10")]
        participants: usize,
    },
    /// Print a shell's completion script (e.g. `zkctl completions bash > /etc/bash_completion.d/zkctl`)
    Completions {
        /// The shell
        #[arg(value_enum)]
        shell: Shell,
    },
    // export, import, diff, find, du: args/backup.rs (flattened: their commands are listed here).
    #[command(flatten)]
    Backup(super::backup::BackupSub),
}

// `create`'s arguments and flags.
#[derive(Debug, Args)]
pub struct CreateFlags {
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

/// `queue put` and `queue take`.
#[derive(Debug, Subcommand)]
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
    Put {
        /// The queue's node
        path: String,
        /// One item, or - to read items from stdin, one per line
        #[arg(allow_negative_numbers = true)]
        data: String,
        /// Into a priority queue, with priority N
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        priority: Option<i32>,
        /// Into an id queue, with this id
        #[arg(long, value_name = "ID", value_parser = non_empty)]
        id: Option<String>,
        /// Into a delay queue, visible from this time (milliseconds since the epoch)
        #[arg(long, value_name = "EPOCH_MS")]
        delay_until: Option<u64>,
        /// A SimpleDistributedQueue
        #[arg(long)]
        simple: bool,
    },
    /// Take items, printing one item's data per line
    #[command(after_help = "\
Waits at most --timeout MS in all (exit 3 when it passes first). With
--lock-path P an item is removed only once printed (Curator's lock path: if
zkctl dies first, the item comes back for another consumer).")]
    Take {
        /// The queue's node
        path: String,
        /// This many items
        #[arg(long, value_name = "N", default_value_t = 1)]
        count: u64,
        /// Give up after MS milliseconds (exit 3)
        #[arg(long, value_name = "MS", value_parser = millis)]
        timeout: Option<Duration>,
        /// Lock each item under P while it is handled
        #[arg(long, value_name = "P")]
        lock_path: Option<String>,
        /// A SimpleDistributedQueue
        #[arg(long, conflicts_with = "lock_path")]
        simple: bool,
    },
}

/// `service register|unregister|list|watch|pick`.
#[derive(Debug, Subcommand)]
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
    Register(Box<RegisterFlags>),
    /// Delete an instance's node (NoNode: exit 1)
    Unregister {
        /// The registry's base path
        base: String,
        /// The service's name
        #[arg(value_parser = service_name)]
        name: String,
        /// The instance id
        #[arg(value_parser = instance_id)]
        id: String,
    },
    /// One line per instance, `NAME ID ADDRESS:PORT JSON`
    #[command(after_help = "\
JSON: the node's data as stored; `-` for a missing address or port. Without
NAME, each service's name on a line of its own, then its instances. A node
that is not an instance is named on stderr with the reason, and the others
are listed.")]
    List {
        /// The registry's base path
        base: String,
        /// The service's name (default: every service)
        #[arg(value_parser = service_name)]
        name: Option<String>,
    },
    /// A ServiceCache's events, as `cache` prints them; then the instances
    #[command(after_help = "\
Events: `added`, `updated`, `removed` (each `NAME ID ADDRESS:PORT`),
`skipped PATH REASON`, `initialized`, `suspended`, `reconnected`, `lost`,
`lagged N`; the instances found at the start come first as `added`, then
`initialized`. When it ends (--for, or SIGINT/SIGTERM/SIGHUP) it prints the
instances, one `instance NAME ID ADDRESS:PORT` line each, and exits 0.")]
    Watch {
        /// The registry's base path
        base: String,
        /// The service's name
        #[arg(value_parser = service_name)]
        name: String,
        /// End MS milliseconds after connecting
        #[arg(long = "for", value_name = "MS", value_parser = millis)]
        run_for: Option<Duration>,
    },
    /// Pick instances from a started ServiceProvider (enabled ones only)
    #[command(after_help = "\
Each pick printed as `list` prints it; exit 5 when there is no instance to pick.")]
    Pick {
        /// The registry's base path
        base: String,
        /// The service's name
        #[arg(value_parser = service_name)]
        name: String,
        /// How to pick
        #[arg(long, value_name = "S", value_enum, default_value_t = PickStrategy::RoundRobin)]
        strategy: PickStrategy,
        /// How many picks
        #[arg(long, value_name = "N", value_parser = positive, default_value = "1")]
        count: usize,
    },
}

// `service register`'s arguments and flags.
#[derive(Debug, Args)]
pub struct RegisterFlags {
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
