//! Random operation scripts: a seeded generator of steps over a few sessions and a small pool
//! of paths (so creates collide, parents are missing, deletes find children, versions are
//! stale), covering every operation and watch kind.

/// A tiny deterministic generator (splitmix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn next(&mut self) -> u64 {
        zkrs_codec::__private::splitmix64(&mut self.0)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A path in a script: from the fixed pool, or the k-th sequential node the run created (the
/// runner resolves it from its own replies; both servers agree if the model is right).
#[derive(Debug, Clone)]
pub enum PathRef {
    Pool(String),
    Sequential(usize),
}

/// Which ACL a create or setACL sends.
#[derive(Debug, Clone, Copy)]
pub enum AclChoice {
    Open,
    ReadOnly,
    Digest(usize),
    Auth,
    Ip,
    BadScheme,
    BadDigest,
    Empty,
    /// A null list (length -1).
    Null,
    /// `ip` with a prefix that holds 127.0.0.1.
    IpNet,
    /// `ip` with a prefix that does not hold 127.0.0.1 (valid, but locks the creator out).
    IpOther,
    /// `ip` written with leading zeros (`Integer.parseInt` reads them).
    IpLeadingZeros,
    /// `ip` with a prefix longer than 32 bits.
    IpBadPrefix,
    /// `world` with an id other than `anyone` (there is no `world` provider).
    WorldOther,
    /// The same entry twice (`removeDuplicates`).
    Duplicates,
    /// `world:anyone` with no permission at all.
    NoPerms,
    /// `auth` with an id of its own (ignored: the session's ids replace it).
    AuthWithId,
}

/// A node's data in a step; shown whole when short, by its length when large.
#[derive(Clone)]
pub struct Value(pub Vec<u8>);

impl std::ops::Deref for Value {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.len() > 64 {
            write!(f, "<{} bytes>", self.0.len())
        } else {
            write!(f, "{:?}", String::from_utf8_lossy(&self.0))
        }
    }
}

/// The credentials scripts authenticate with.
pub const CREDENTIALS: [&str; 2] = ["alice:secret", "bob:hunter2"];

/// One write inside a multi.
#[derive(Debug, Clone)]
pub enum MultiStep {
    Create {
        path: PathRef,
        flags: i32,
        op: i32,
        ttl: i64,
        data: Option<Value>,
    },
    Delete {
        path: PathRef,
        version: i32,
    },
    SetData {
        path: PathRef,
        data: Option<Value>,
        version: i32,
    },
    Check {
        path: PathRef,
        version: i32,
    },
}

/// One step of a script, run by session slot `s`.
#[derive(Debug, Clone)]
pub enum Step {
    Create {
        s: usize,
        path: PathRef,
        flags: i32,
        op: i32,
        ttl: i64,
        data: Option<Value>,
        acl: AclChoice,
    },
    Delete {
        s: usize,
        path: PathRef,
        version: i32,
    },
    Exists {
        s: usize,
        path: PathRef,
        watch: bool,
    },
    GetData {
        s: usize,
        path: PathRef,
        watch: bool,
    },
    SetData {
        s: usize,
        path: PathRef,
        data: Option<Value>,
        version: i32,
    },
    GetChildren {
        s: usize,
        path: PathRef,
        watch: bool,
        with_stat: bool,
    },
    GetAcl {
        s: usize,
        path: PathRef,
    },
    SetAcl {
        s: usize,
        path: PathRef,
        acl: AclChoice,
        version: i32,
    },
    Sync {
        s: usize,
        path: PathRef,
    },
    AllChildren {
        s: usize,
        path: PathRef,
    },
    Ephemerals {
        s: usize,
        prefix: PathRef,
    },
    WhoAmI {
        s: usize,
    },
    AddAuth {
        s: usize,
        scheme: &'static str,
        credentials: usize,
    },
    AddWatch {
        s: usize,
        path: PathRef,
        recursive: bool,
    },
    RemoveWatches {
        s: usize,
        path: PathRef,
        kind: i32,
        check_only: bool,
    },
    Multi {
        s: usize,
        ops: Vec<MultiStep>,
    },
    MultiRead {
        s: usize,
        ops: Vec<(PathRef, bool, bool)>,
    },
    SetWatches {
        s: usize,
        back: i64,
        data: Vec<PathRef>,
        exist: Vec<PathRef>,
        child: Vec<PathRef>,
        persistent: Vec<PathRef>,
        recursive: Vec<PathRef>,
    },
    Close {
        s: usize,
    },
    Reconnect {
        s: usize,
    },
    BadPassword {
        s: usize,
    },
    /// A short-lived session of slot `s`'s client makes an ephemeral under `path`, which
    /// slot `s` watches; the session goes silent and expires.
    Expire {
        s: usize,
        path: PathRef,
    },
}

impl Step {
    /// The slot that runs it.
    pub fn slot(&self) -> usize {
        match self {
            Step::Create { s, .. }
            | Step::Delete { s, .. }
            | Step::Exists { s, .. }
            | Step::GetData { s, .. }
            | Step::SetData { s, .. }
            | Step::GetChildren { s, .. }
            | Step::GetAcl { s, .. }
            | Step::SetAcl { s, .. }
            | Step::Sync { s, .. }
            | Step::AllChildren { s, .. }
            | Step::Ephemerals { s, .. }
            | Step::WhoAmI { s }
            | Step::AddAuth { s, .. }
            | Step::AddWatch { s, .. }
            | Step::RemoveWatches { s, .. }
            | Step::Multi { s, .. }
            | Step::MultiRead { s, .. }
            | Step::SetWatches { s, .. }
            | Step::Close { s }
            | Step::Reconnect { s }
            | Step::BadPassword { s }
            | Step::Expire { s, .. } => *s,
        }
    }
}

/// Number of session slots a script uses.
pub const SLOTS: usize = 3;

struct Gen<'r> {
    rng: &'r mut Rng,
    expiries_left: usize,
    root: String,
    sequentials: usize,
}

impl Gen<'_> {
    fn path(&mut self) -> PathRef {
        if self.sequentials > 0 && self.rng.chance(15) {
            return PathRef::Sequential(self.rng.below(self.sequentials + 1));
        }
        if self.rng.chance(2) {
            // ZooKeeper's own nodes. Writes that succeed there (a child of the quota node,
            // its data or ACL) outlive the script, alike on both servers.
            let system = [
                "/zookeeper",
                "/zookeeper/config",
                "/zookeeper/quota",
                "/zookeeper/quota/a",
            ];
            return PathRef::Pool((*self.rng.pick(&system)).to_owned());
        }
        if self.rng.chance(2) {
            // Paths `PathUtils.validatePath` refuses (BadArguments for writes).
            let root = &self.root;
            let invalid = [
                format!("{root}/"),
                format!("{root}//a"),
                format!("{root}/./a"),
                format!("{root}/a/.."),
                format!("{root}/a\u{0}"),
                "relative".to_owned(),
                String::new(),
            ];
            return PathRef::Pool(self.rng.pick(&invalid).clone());
        }
        let depth = match self.rng.below(100) {
            0..=4 => 0,
            5..=54 => 1,
            55..=89 => 2,
            _ => 3,
        };
        let mut p = self.root.clone();
        for _ in 0..depth {
            p.push('/');
            let name = ["a", "b", "c"][self.rng.below(3)];
            p.push_str(name);
        }
        PathRef::Pool(p)
    }

    fn version(&mut self) -> i32 {
        match self.rng.below(10) {
            0..=4 => -1,
            5..=7 => 0,
            8 => 1,
            _ => 2,
        }
    }

    /// Data as a client sends it: null (length -1, what zkCli.sh's `create /x` sends) or a
    /// few letters, empty ones (length 0) included; ZooKeeper keeps null and empty apart.
    fn data(&mut self) -> Option<Value> {
        if self.rng.chance(15) {
            return None;
        }
        if self.rng.chance(1) {
            // Large values around jute.maxbuffer (0xfffff): a request frame over it closes
            // the connection, one just under it is stored and read back.
            let n = *self.rng.pick(&[500_000, 1_048_000, 1_048_575, 1_100_000]);
            return Some(Value(vec![b'z'; n]));
        }
        let n = self.rng.below(6);
        Some(Value(
            (0..n).map(|_| b'a' + self.rng.below(26) as u8).collect(),
        ))
    }

    fn acl(&mut self) -> AclChoice {
        match self.rng.below(100) {
            0..=64 => AclChoice::Open,
            65..=70 => AclChoice::ReadOnly,
            71..=78 => AclChoice::Digest(self.rng.below(2)),
            79..=83 => AclChoice::Auth,
            84..=85 => AclChoice::Ip,
            86..=87 => AclChoice::BadScheme,
            88 => AclChoice::BadDigest,
            89 => AclChoice::Empty,
            90 => AclChoice::Null,
            91 => AclChoice::IpNet,
            92 => AclChoice::IpOther,
            93 => AclChoice::IpLeadingZeros,
            94 => AclChoice::IpBadPrefix,
            95 => AclChoice::WorldOther,
            96 => AclChoice::Duplicates,
            97 => AclChoice::NoPerms,
            _ => AclChoice::AuthWithId,
        }
    }

    /// flags, opcode, ttl: every create mode through the opcode a client uses for it, and a
    /// few mismatches.
    fn create_kind(&mut self) -> (i32, i32, i64) {
        let flags = self.rng.below(7) as i32;
        let op = match flags {
            4 => 19,
            5 | 6 => 21,
            _ => *self.rng.pick(&[1, 15]),
        };
        let ttl = if op == 21 {
            *self.rng.pick(&[1_000_000, 5_000_000, 0, -5])
        } else {
            -1
        };
        if self.rng.chance(3) {
            // A TTL mode through plain create: BadArguments.
            return (5, 1, -1);
        }
        if flags == 2 || flags == 3 || flags == 6 {
            self.sequentials += 1;
        }
        (flags, op, ttl)
    }

    fn multi_step(&mut self) -> MultiStep {
        match self.rng.below(4) {
            0 => {
                let (flags, op, ttl) = self.create_kind();
                MultiStep::Create {
                    path: self.path(),
                    flags,
                    op,
                    ttl,
                    data: self.data(),
                }
            }
            1 => MultiStep::Delete {
                path: self.path(),
                version: self.version(),
            },
            2 => MultiStep::SetData {
                path: self.path(),
                data: self.data(),
                version: self.version(),
            },
            _ => MultiStep::Check {
                path: self.path(),
                version: self.version(),
            },
        }
    }

    fn paths(&mut self, max: usize) -> Vec<PathRef> {
        let n = self.rng.below(max + 1);
        (0..n).map(|_| self.path()).collect()
    }

    fn step(&mut self) -> Step {
        let s = self.rng.below(SLOTS);
        match self.rng.below(100) {
            0..=21 => {
                let (flags, op, ttl) = self.create_kind();
                Step::Create {
                    s,
                    path: self.path(),
                    flags,
                    op,
                    ttl,
                    data: self.data(),
                    acl: self.acl(),
                }
            }
            22..=29 => Step::Delete {
                s,
                path: self.path(),
                version: self.version(),
            },
            30..=35 => Step::Exists {
                s,
                path: self.path(),
                watch: self.rng.chance(60),
            },
            36..=42 => Step::GetData {
                s,
                path: self.path(),
                watch: self.rng.chance(60),
            },
            43..=51 => Step::SetData {
                s,
                path: self.path(),
                data: self.data(),
                version: self.version(),
            },
            52..=57 => Step::GetChildren {
                s,
                path: self.path(),
                watch: self.rng.chance(60),
                with_stat: self.rng.chance(50),
            },
            58..=59 => Step::GetAcl {
                s,
                path: self.path(),
            },
            60..=61 => Step::SetAcl {
                s,
                path: self.path(),
                acl: self.acl(),
                version: self.version(),
            },
            62 => Step::Sync {
                s,
                path: self.path(),
            },
            63 => Step::AllChildren {
                s,
                path: self.path(),
            },
            64 => Step::Ephemerals {
                s,
                prefix: self.path(),
            },
            65 => Step::WhoAmI { s },
            66..=67 => Step::AddAuth {
                s,
                scheme: if self.rng.chance(90) {
                    "digest"
                } else {
                    "nope"
                },
                credentials: self.rng.below(CREDENTIALS.len()),
            },
            68..=71 => Step::AddWatch {
                s,
                path: self.path(),
                recursive: self.rng.chance(50),
            },
            72..=74 => Step::RemoveWatches {
                s,
                path: self.path(),
                kind: *self.rng.pick(&[1, 2, 3, 3, 4, 5]),
                check_only: self.rng.chance(40),
            },
            75..=82 => {
                let n = 1 + self.rng.below(4);
                Step::Multi {
                    s,
                    ops: (0..n).map(|_| self.multi_step()).collect(),
                }
            }
            83..=85 => {
                let n = 1 + self.rng.below(3);
                let ops = (0..n)
                    .map(|_| (self.path(), self.rng.chance(50), self.rng.chance(30)))
                    .collect();
                Step::MultiRead { s, ops }
            }
            86..=88 => Step::SetWatches {
                s,
                back: self.rng.below(6) as i64,
                data: self.paths(2),
                exist: self.paths(2),
                child: self.paths(2),
                persistent: self.paths(1),
                recursive: self.paths(1),
            },
            89..=92 => Step::Close { s },
            93..=96 => Step::Reconnect { s },
            97..=98 => Step::BadPassword { s },
            // Expiry waits for the server's clock: rare, and only in long scripts' tails.
            _ if self.expiries_left > 0 => {
                self.expiries_left -= 1;
                Step::Expire {
                    s,
                    path: self.path(),
                }
            }
            _ => Step::Reconnect { s },
        }
    }
}

/// A script of `len` steps under `root`.
pub fn generate(seed: u64, root: &str, len: usize) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let mut gen = Gen {
        rng: &mut rng,
        // Each expiry costs real time (the shortest session timeout, 400 ms): one per script.
        expiries_left: 1,
        root: root.to_owned(),
        sequentials: 0,
    };
    (0..len).map(|_| gen.step()).collect()
}
