//! The command-line vocabulary: every command and flag, with the text `--help` prints. The
//! parser ([`super::parse`]) decides what a token is from these tables only.

/// One flag a command (or every command) accepts.
#[derive(Debug)]
pub struct FlagSpec {
    /// Its name, without the leading `--`.
    pub name: &'static str,
    /// The placeholder of its value (`MS`, `N`, ...), or `None` for a switch.
    pub value: Option<&'static str>,
    /// One line for `--help`.
    pub help: &'static str,
}

const fn switch(name: &'static str, help: &'static str) -> FlagSpec {
    FlagSpec {
        name,
        value: None,
        help,
    }
}

const fn valued(name: &'static str, value: &'static str, help: &'static str) -> FlagSpec {
    FlagSpec {
        name,
        value: Some(value),
        help,
    }
}

/// One command: its name, synopsis, flags, and how many positional arguments it takes.
#[derive(Debug)]
pub struct CommandSpec {
    /// The command's name.
    pub name: &'static str,
    /// The synopsis after the name (`PATH [DATA]`).
    pub synopsis: &'static str,
    /// One line for the command list.
    pub about: &'static str,
    /// A few lines of detail for `zkctl COMMAND --help`.
    pub details: &'static str,
    /// Its flags.
    pub flags: &'static [FlagSpec],
    /// Positional arguments required.
    pub min_args: usize,
    /// Positional arguments allowed (for `lock`/`elect`: before the command to run).
    pub max_args: usize,
    /// Whether it runs a command given after its arguments (`lock`, `elect`).
    pub takes_command: bool,
}

/// Flags every command accepts.
pub const GLOBAL_FLAGS: &[FlagSpec] = &[
    valued(
        "server",
        "HOSTS",
        "connect string, host:port,...[/chroot] (default: $ZK_SERVER, else 127.0.0.1:2181)",
    ),
    valued(
        "session-timeout",
        "MS",
        "session timeout to ask for (default 10000; the server bounds it)",
    ),
    valued(
        "connect-timeout",
        "MS",
        "how long to wait for the first connection (default: the session timeout)",
    ),
    valued(
        "auth",
        "SCHEME:CREDENTIALS",
        "add an identity to the session, e.g. digest:user:password (repeatable)",
    ),
    valued(
        "tls-ca",
        "FILE",
        "connect with TLS, trusting the CA certificates of this PEM file",
    ),
    valued(
        "tls-cert",
        "FILE",
        "with TLS: present this client certificate (PEM; needs --tls-key)",
    ),
    valued(
        "tls-key",
        "FILE",
        "with TLS: the client certificate's private key (PEM)",
    ),
    valued(
        "tls-server-name",
        "NAME",
        "with TLS: check every server's certificate against NAME, not the host given",
    ),
    valued(
        "sasl-digest",
        "USER",
        "authenticate with SASL DIGEST-MD5 as USER (needs --sasl-password-file)",
    ),
    valued(
        "sasl-password-file",
        "FILE",
        "the SASL password: the file's first line (never on the command line)",
    ),
    valued(
        "sasl-kerberos",
        "PRINCIPAL",
        "authenticate with Kerberos (SASL GSSAPI) as PRINCIPAL: from --keytab, else the \
         ticket cache",
    ),
    valued(
        "keytab",
        "FILE",
        "with --sasl-kerberos: the principal's keytab",
    ),
    valued(
        "sasl-service-principal",
        "NAME",
        "with --sasl-kerberos: the server's principal (default zookeeper/<host>)",
    ),
    valued(
        "resume",
        "ID:PASSWORD_HEX",
        "reattach to a live session (id as 0x-hex or decimal) instead of making one; \
         zkctl leaves it open at exit",
    ),
    switch(
        "follow-ensemble",
        "follow the ensemble's membership (/zookeeper/config) while running, so the session \
         survives members being replaced",
    ),
    switch(
        "tls",
        "connect with TLS, trusting the platform's store (implied by any --tls-* flag)",
    ),
    switch(
        "verbose",
        "print the client's events on stderr: connects, disconnects and their causes, \
         session loss, locks and leadership (-v; -vv adds debug events)",
    ),
    switch("help", "print help (also: zkctl COMMAND --help)"),
    switch("version", "print the version"),
];

const GRACE: FlagSpec = valued(
    "grace",
    "MS",
    "after SIGTERM, how long CMD may take to exit before SIGKILL (default 2000)",
);

/// Every command, in the order `--help` lists them.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "ls",
        synopsis: "PATH",
        about: "list the children of a node, sorted",
        details: "Prints one child name per line.",
        flags: &[],
        min_args: 1,
        max_args: 1,
        takes_command: false,
    },
    CommandSpec {
        name: "get",
        synopsis: "PATH",
        about: "print a node's data (raw bytes)",
        details: "Writes the data exactly as stored, so binary data can be piped.",
        flags: &[],
        min_args: 1,
        max_args: 1,
        takes_command: false,
    },
    CommandSpec {
        name: "stat",
        synopsis: "PATH",
        about: "print a node's Stat",
        details: "Prints one `name = value` line per field, named as zkCli.sh names them.",
        flags: &[],
        min_args: 1,
        max_args: 1,
        takes_command: false,
    },
    CommandSpec {
        name: "set",
        synopsis: "PATH DATA",
        about: "set a node's data",
        details: "With --version, only if the node's data version is V (else BadVersion).",
        flags: &[valued("version", "V", "only if the data version is V")],
        min_args: 2,
        max_args: 2,
        takes_command: false,
    },
    CommandSpec {
        name: "create",
        synopsis: "PATH [DATA]",
        about: "create a node and print its path",
        details: "An ephemeral node lives as long as its session: with --ephemeral, zkctl\n\
                  prints the path and keeps the session (and the node) until interrupted.\n\
                  TTL nodes need zookeeper.extendedTypesEnabled=true on the server.",
        flags: &[
            switch(
                "ephemeral",
                "delete the node when zkctl exits (holds it until interrupted)",
            ),
            switch(
                "sequential",
                "append a 10-digit sequence number to the name",
            ),
            switch(
                "container",
                "a container: the server deletes it once its last child is gone",
            ),
            valued(
                "ttl",
                "MS",
                "persistent with a time to live (deleted when unmodified and childless)",
            ),
            switch("parents", "create missing parents (persistent, empty)"),
        ],
        min_args: 1,
        max_args: 2,
        takes_command: false,
    },
    CommandSpec {
        name: "delete",
        synopsis: "PATH",
        about: "delete a node (--recursive: with its subtree)",
        details: "With --version, only if the node's data version is V (the top node only\n\
                  with --recursive).",
        flags: &[
            switch("recursive", "delete the children first, deepest first"),
            valued("version", "V", "only if the data version is V"),
        ],
        min_args: 1,
        max_args: 1,
        takes_command: false,
    },
    CommandSpec {
        name: "tree",
        synopsis: "PATH",
        about: "print the subtree under a node",
        details: "Children are sorted by name.",
        flags: &[],
        min_args: 1,
        max_args: 1,
        takes_command: false,
    },
    CommandSpec {
        name: "watch",
        synopsis: "PATH",
        about: "print one line per event on a node until interrupted",
        details: "Uses a persistent watch (addWatch), re-registered across reconnects, so no\n\
                  event is missed. Lines: `EventType path`. A line on stderr says when the\n\
                  watch is in place.",
        flags: &[
            switch(
                "recursive",
                "watch the whole subtree (persistent recursive watch)",
            ),
            valued("count", "N", "exit after N events"),
        ],
        min_args: 1,
        max_args: 1,
        takes_command: false,
    },
    CommandSpec {
        name: "cache",
        synopsis: "PATH",
        about: "a live view of a subtree: its events, then the view",
        details: "Prints one line per event: `added PATH VERSION`, `updated PATH VERSION` (the\n\
                  new data version), `removed PATH`, `initialized`, `suspended`, `reconnected`,\n\
                  `lost`, `lagged N` (N events were dropped: this reader was too slow).\n\
                  When it ends (after --for, or on SIGINT/SIGTERM/SIGHUP) it prints the view,\n\
                  one `node PATH VERSION DATA` line per node in byte order of the paths: DATA\n\
                  is the text if it is UTF-8 without line breaks, else 0x and lower-case hex,\n\
                  and nothing (not even the space) when empty. Then it exits 0.\n\
                  Default: the subtree with PATH itself (a CuratorCache: one persistent\n\
                  recursive watch, one-shot watches on a 3.5 server). It keeps running across\n\
                  disconnects, server restarts and session expiry, catching up each time.",
        flags: &[
            valued(
                "depth",
                "N",
                "only N levels below PATH (0: PATH only; a TreeCache)",
            ),
            switch(
                "children",
                "only the children of PATH (a PathChildrenCache)",
            ),
            valued("for", "MS", "end MS milliseconds after connecting"),
        ],
        min_args: 1,
        max_args: 1,
        takes_command: false,
    },
    CommandSpec {
        name: "queue",
        synopsis: "put PATH DATA | take PATH",
        about: "put items into, or take items from, a Curator-compatible queue",
        details: "put: DATA is one item, or `-` to read items from stdin, one per line (each\n\
                  put as its own node). With --priority N a DistributedPriorityQueue (lower\n\
                  first), --id ID a DistributedIdQueue, --delay-until EPOCH_MS a\n\
                  DistributedDelayQueue; else a DistributedQueue (`queue-<seq>` nodes in\n\
                  Curator's item format). Prints each node's path.\n\
                  take: prints one item's data per line until --count items (default 1) were\n\
                  taken, waiting at most --timeout MS in all (exit 3 when it passes first).\n\
                  With --lock-path P an item is removed only once printed (Curator's lock\n\
                  path: if zkctl dies first, the item comes back for another consumer).\n\
                  --simple: SimpleDistributedQueue (`qn-<seq>` nodes, raw bytes), for both.",
        flags: &[
            valued(
                "priority",
                "N",
                "put: into a priority queue, with priority N",
            ),
            valued("id", "ID", "put: into an id queue, with this id"),
            valued(
                "delay-until",
                "EPOCH_MS",
                "put: into a delay queue, visible from this time",
            ),
            valued("count", "N", "take: this many items (default 1)"),
            valued(
                "timeout",
                "MS",
                "take: give up after MS milliseconds (exit 3)",
            ),
            valued(
                "lock-path",
                "P",
                "take: lock each item under P while it is handled",
            ),
            switch("simple", "a SimpleDistributedQueue"),
        ],
        min_args: 2,
        max_args: 3,
        takes_command: false,
    },
    CommandSpec {
        name: "counter",
        synopsis: "PATH get|add N|set N|cas OLD NEW",
        about: "read or change a Curator-compatible counter; prints the value after",
        details: "An 8-byte DistributedAtomicLong by default, a 4-byte SharedCount with --int\n\
                  (both big-endian, as Curator stores them). Prints the value after the action.\n\
                  get: the value (a missing node reads 0; with --int it is created with 0).\n\
                  add N: adds N (negative to subtract; wraps as Java does), retried on\n\
                  contention until it applies.\n\
                  set N: sets N whatever the value was.\n\
                  cas OLD NEW: sets NEW only if the value is OLD; else prints the value read\n\
                  and exits 1.",
        flags: &[switch(
            "int",
            "a 4-byte SharedCount instead of an 8-byte DistributedAtomicLong",
        )],
        min_args: 2,
        max_args: 4,
        takes_command: false,
    },
    CommandSpec {
        name: "barrier",
        synopsis: "PATH --count N [--] CMD [ARGS...]",
        about: "run CMD inside a double barrier: all N enter, then all leave",
        details: "A Curator-compatible DistributedDoubleBarrier (Java members may take part):\n\
                  zkctl enters and waits until --count members have entered, runs CMD, then\n\
                  leaves and waits until every member has left. Our member node is\n\
                  PATH/<uuid> (ephemeral); CMD gets it as ZKCTL_BARRIER_NODE and runs in its\n\
                  own process group. On SIGINT/SIGTERM/SIGHUP zkctl stops CMD (SIGTERM, then\n\
                  SIGKILL after --grace) and leaves without waiting for the others.\n\
                  Exit codes: CMD's; 3 when --timeout passed while entering or leaving (our\n\
                  node is deleted); 127 when CMD cannot be started; 128+N after signal N.",
        flags: &[
            valued("count", "N", "the number of members (required)"),
            valued(
                "timeout",
                "MS",
                "give up entering, and leaving, after MS milliseconds (exit 3)",
            ),
            GRACE,
        ],
        min_args: 1,
        max_args: 1,
        takes_command: true,
    },
    CommandSpec {
        name: "member",
        synopsis: "PATH ID [DATA] -- CMD [ARGS...]",
        about: "run CMD as member ID of a group (Curator's GroupMember)",
        details: "Our member node is PATH/ID (ephemeral, with DATA; empty if not given), kept\n\
                  across connection and session loss while CMD runs, and deleted once CMD has\n\
                  ended. CMD gets ZKCTL_MEMBER_NODE and runs in its own process group; on\n\
                  SIGINT/SIGTERM/SIGHUP zkctl stops it (SIGTERM, then SIGKILL after --grace),\n\
                  then leaves. The `--` before CMD is required (DATA is optional).\n\
                  Exit codes: CMD's; 127 when CMD cannot be started; 128+N after signal N.",
        flags: &[GRACE],
        min_args: 2,
        max_args: 3,
        takes_command: true,
    },
    CommandSpec {
        name: "members",
        synopsis: "PATH",
        about: "list a group's members, `ID DATA`, sorted by id",
        details: "Reads the children of PATH and their data (it does not join). DATA as\n\
                  `zkctl cache` prints it: the text if it is UTF-8 without line breaks, else\n\
                  0x and lower-case hex; nothing after the id (not even the space) when empty.",
        flags: &[],
        min_args: 1,
        max_args: 1,
        takes_command: false,
    },
    CommandSpec {
        name: "service",
        synopsis: "register|unregister|list|watch|pick BASE [NAME] ...",
        about: "register, find and watch services in Curator's service discovery registry",
        details: "The registry of Curator's ServiceDiscovery (curator-x-discovery): instance ID of\n\
                  service NAME is the node BASE/NAME/ID, its data the instance's JSON as Curator\n\
                  writes it, so Java services (Curator, Spring Cloud Zookeeper) share it.\n\
                  \n\
                  register BASE NAME --address A --port P [FLAGS] [-- CMD [ARGS...]]\n\
                  Registers an instance (--id, else a random UUID) while CMD runs, then\n\
                  unregisters it, as `member` does: CMD gets ZKCTL_SERVICE_NODE and\n\
                  ZKCTL_SERVICE_ID, a line on stderr names the node, and the exit code is CMD's\n\
                  (127: CMD cannot be started, 128+N: signal N). --type dynamic (the default) is\n\
                  an ephemeral node kept across connection and session loss; static a persistent\n\
                  one, deleted when CMD ends; permanent a persistent one that stays after zkctl\n\
                  (CMD optional: without it zkctl prints the node's path and exits; remove it\n\
                  with `service unregister`). The JSON has Curator's default format; with\n\
                  --enabled it also has the `enabled` key.\n\
                  unregister BASE NAME ID: deletes the instance's node (NoNode: exit 1).\n\
                  list BASE [NAME]: one line per instance, `NAME ID ADDRESS:PORT JSON` (JSON: the\n\
                  node's data as stored; `-` for a missing address or port); without NAME, each\n\
                  service's name on a line of its own, then its instances. A node that is not an\n\
                  instance is named on stderr with the reason, and the others are listed.\n\
                  watch BASE NAME: a ServiceCache's events as `cache` prints them: `added`,\n\
                  `updated`, `removed` (each `NAME ID ADDRESS:PORT`), `skipped PATH REASON`,\n\
                  `initialized`, `suspended`, `reconnected`, `lost`, `lagged N`; the instances\n\
                  found at the start come first as `added`, then `initialized`. When it ends\n\
                  (--for, or SIGINT/SIGTERM/SIGHUP) it prints the instances, one `instance NAME ID\n\
                  ADDRESS:PORT` line each, and exits 0.\n\
                  pick BASE NAME: --count picks (default 1) from a started ServiceProvider\n\
                  (enabled instances only), each printed as `list` prints it; exit 5 when there\n\
                  is no instance to pick.",
        flags: &[
            valued("address", "A", "register: the host name or address (required)"),
            valued(
                "port",
                "P",
                "register: the port, 1-65535 (required unless --ssl-port)",
            ),
            valued("ssl-port", "P", "register: the TLS port, 1-65535"),
            valued("id", "ID", "register: the instance id (default: a random UUID)"),
            valued(
                "payload",
                "JSON",
                "register: the payload, any JSON value (default null)",
            ),
            valued(
                "type",
                "T",
                "register: dynamic (ephemeral, the default), static or permanent",
            ),
            valued(
                "enabled",
                "true|false",
                "register: whether providers may pick it (writes the `enabled` key)",
            ),
            valued(
                "uri-spec",
                "TEMPLATE",
                "register: a URI template, e.g. {scheme}://{address}:{port}",
            ),
            GRACE,
            valued("for", "MS", "watch: end MS milliseconds after connecting"),
            valued(
                "strategy",
                "S",
                "pick: round-robin (the default) or random",
            ),
            valued("count", "N", "pick: how many picks (default 1)"),
        ],
        min_args: 1,
        max_args: 4,
        takes_command: true,
    },
    CommandSpec {
        name: "lock",
        synopsis: "PATH [--] CMD [ARGS...]",
        about: "run CMD holding a Curator-compatible mutex (InterProcessMutex)",
        details: "Exits with CMD's exit code (128+N if a signal N ended it). If the lock is\n\
                  lost while CMD runs (connection suspended or session lost), CMD is stopped\n\
                  (SIGTERM to its process group, SIGKILL after --grace) and zkctl exits 4.\n\
                  SIGINT/SIGTERM/SIGHUP to zkctl stop CMD the same way, then release the lock.\n\
                  If zkctl itself is killed, a watchdog kills CMD's process group at once.\n\
                  CMD runs in its own process group, with ZKCTL_LOCK_NODE set.\n\
                  Exit codes: CMD's, 3 on --timeout, 4 when the lock was lost, 127 when CMD\n\
                  cannot be started, 128+N after signal N to zkctl.",
        flags: &[
            valued(
                "timeout",
                "MS",
                "give up (exit 3) if the lock is not acquired within MS",
            ),
            GRACE,
        ],
        min_args: 1,
        max_args: 1,
        takes_command: true,
    },
    CommandSpec {
        name: "elect",
        synopsis: "PATH [--] CMD [ARGS...]",
        about: "run CMD only while leading a Curator-compatible LeaderLatch",
        details: "When leadership is lost, CMD is stopped (SIGTERM to its process group,\n\
                  SIGKILL after --grace) and zkctl stays in the election. When CMD exits on\n\
                  its own, zkctl leaves the election and rejoins at the back (leadership\n\
                  passes on), unless --once: then it exits with CMD's exit code.\n\
                  SIGINT/SIGTERM/SIGHUP to zkctl stop CMD, then leave the election.\n\
                  CMD runs in its own process group, with ZKCTL_ELECTION_ID and\n\
                  ZKCTL_ELECTION_NODE set. Keep --grace below a third of the session timeout,\n\
                  so CMD is gone before the session can expire and another leader starts.",
        flags: &[
            valued(
                "id",
                "ID",
                "participant id stored in the node (default: <hostname>-<pid>)",
            ),
            switch("once", "exit after CMD has run once (to its end) as leader"),
            GRACE,
        ],
        min_args: 1,
        max_args: 1,
        takes_command: true,
    },
    CommandSpec {
        name: "config",
        synopsis: "",
        about: "print the ensemble's configuration as ZooKeeper writes it",
        details: "Reads /zookeeper/config (never under the chroot): one\n\
                  `server.N=HOST:QUORUM_PORT:ELECTION_PORT:ROLE;CLIENT_HOST:CLIENT_PORT` line\n\
                  per member, then `version=V` (hex; what reconfig --from-version takes).",
        flags: &[],
        min_args: 0,
        max_args: 0,
        takes_command: false,
    },
    CommandSpec {
        name: "reconfig",
        synopsis: "--add SPEC... --remove ID... | --members SPEC...",
        about: "change the ensemble's members; prints the new configuration",
        details: "Incremental (--add and --remove, repeatable or comma-separated) or bulk\n\
                  (--members: the whole new membership). SPEC is a member line,\n\
                  server.N=HOST:QUORUM_PORT:ELECTION_PORT[:ROLE][;[CLIENT_HOST:]PORT].\n\
                  Needs servers with reconfigEnabled=true and a superuser session\n\
                  (--auth digest:super:PASSWORD) unless they skip ACLs. The server's refusals\n\
                  (ReconfigDisabled, NewConfigNoQuorum, ReconfigInProgress, BadVersion,\n\
                  NoAuth) exit 1 with their name.",
        flags: &[
            valued("add", "SPEC", "a member to add (repeatable)"),
            valued("remove", "ID", "a member id to remove (repeatable)"),
            valued(
                "members",
                "SPEC",
                "bulk: a member of the new configuration (repeatable)",
            ),
            valued(
                "from-version",
                "V",
                "only if the configuration is version V (hex, as `config` prints it)",
            ),
        ],
        min_args: 0,
        max_args: 0,
        takes_command: false,
    },
    CommandSpec {
        name: "bench",
        synopsis: "get|set|create|lock|latch",
        about: "throughput and latency, as `name value unit` lines",
        details: "get/set/create: N clients (sessions), each with D requests in flight.\n\
                  lock: uncontended acquire+release cycles (clients x in-flight independent\n\
                  locks), then the hand-off latency between two holders.\n\
                  latch: the leadership hand-off latency (leader closes, next one is told).\n\
                  Nodes live under /zkctl-bench-<pid> and are deleted afterwards.\n\
                  Defaults: --clients 4 --in-flight 32 --ops 20000 --size 100 for get/set/create;\n\
                  --clients 1 --in-flight 1 --ops 1000 --rounds 100 for lock and latch;\n\
                  --rt multi (tokio's multi-thread runtime; current: one thread).\n\
                  Besides latency: this process's CPU time and heap allocations per\n\
                  operation (cycle, hand-off), the client's own cost.",
        flags: &[
            valued("clients", "N", "client sessions"),
            valued("in-flight", "D", "requests in flight per client"),
            valued("ops", "N", "operations (cycles for lock) to measure"),
            valued("size", "BYTES", "data size for get/set/create"),
            valued("rounds", "N", "hand-offs to measure (lock, latch)"),
            valued("rt", "current|multi", "the tokio runtime to run on"),
        ],
        min_args: 1,
        max_args: 1,
        takes_command: false,
    },
    CommandSpec {
        name: "demo",
        synopsis: "",
        about: "the leader-latch story with 10 participants",
        details: "Starts a ZooKeeper server with the test kit (needs ZooKeeper installed, see\n\
                  scripts/install-zookeeper.sh), or uses --server / $ZK_SERVER when given.",
        flags: &[valued(
            "participants",
            "N",
            "how many participants (default 10)",
        )],
        min_args: 0,
        max_args: 0,
        takes_command: false,
    },
    CommandSpec {
        name: "help",
        synopsis: "[COMMAND]",
        about: "print help",
        details: "",
        flags: &[],
        min_args: 0,
        max_args: 1,
        takes_command: false,
    },
];

/// The spec of a command, by name.
pub fn command_spec(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().find(|c| c.name == name)
}

impl PartialEq for CommandSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for CommandSpec {}

/// The text of `zkctl --help`.
pub fn general_help() -> String {
    let mut out = String::new();
    out.push_str(concat!(
        "zkctl ",
        env!("CARGO_PKG_VERSION"),
        ": a ZooKeeper command-line tool\n\n"
    ));
    out.push_str("Usage: zkctl [GLOBAL FLAGS] COMMAND [ARGS] [FLAGS]\n\nCommands:\n");
    for c in COMMANDS {
        let head = format!("{} {}", c.name, c.synopsis);
        if head.len() <= 33 {
            out.push_str(&format!("  {head:<33} {}\n", c.about));
        } else {
            // Too long for the column: the description on the next line, in the column.
            out.push_str(&format!("  {head}\n  {:<33} {}\n", "", c.about));
        }
    }
    out.push_str("\nGlobal flags (before or after the command):\n");
    push_flags(&mut out, GLOBAL_FLAGS);
    out.push_str(
        "\nExit codes: 0 ok, 1 ZooKeeper or I/O error (and `counter cas` not applied),\n\
         2 usage error, 3 a timeout (lock, barrier, queue take), 5 no instance to pick\n\
         (service pick); lock/elect/barrier/member/service register: CMD's (see\n\
         zkctl lock --help). Run `zkctl COMMAND --help` for a command's flags.\n",
    );
    out
}

/// The text of `zkctl COMMAND --help`.
pub fn command_help(c: &CommandSpec) -> String {
    let mut about = c.about.to_string();
    if let Some(first) = about.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    let mut out = format!("Usage: zkctl {} {}\n\n{about}.\n", c.name, c.synopsis);
    if !c.details.is_empty() {
        out.push_str(&format!("\n{}\n", c.details));
    }
    if !c.flags.is_empty() {
        out.push_str("\nFlags:\n");
        push_flags(&mut out, c.flags);
    }
    out.push_str("\nGlobal flags: --server HOSTS, --session-timeout MS, --connect-timeout MS,\n--auth SCHEME:CREDENTIALS (see zkctl --help).\n");
    out
}

fn push_flags(out: &mut String, flags: &[FlagSpec]) {
    for f in flags {
        let head = match f.value {
            Some(v) => format!("--{} {v}", f.name),
            None => format!("--{}", f.name),
        };
        out.push_str(&format!("  {head:<26} {}\n", f.help));
    }
}
