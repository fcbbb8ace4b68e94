//! Runs a script against one server (the model over TCP, or a real ZooKeeper) and writes what
//! came back as normalised lines per step: zxids relative to the script's first write, session
//! ids as their order of creation, times left out, children sorted (ZooKeeper lists them in
//! hash order).

use std::net::SocketAddr;

use bytes::{BufMut, BytesMut};
use zkrs_codec::{
    jute::{put_bool, put_buffer_opt, put_i32, put_i64, put_str},
    put_str_vec, Acl, Encode, Id, List, MultiHeader, OpCode, Perms, Stat,
};
use zkrs_model::digest_id;

use super::script::{AclChoice, MultiStep, PathRef, Step, CREDENTIALS, SLOTS};
use super::wire_client::{Frame, WireConnection, DEADLINE};

/// The session timeout every slot asks for; both servers are started with it as their
/// maximum. One thread drives both servers in lock step, so a slot gets no ping while the
/// other server answers a step, and any single wait of that step may take up to `DEADLINE`
/// (a JVM pause, or a process starved on a busy machine). With the test kit's default maximum
/// of 4 s, a stall of about 3 s on one server expired every session of the other (and of the
/// stalled JVM itself, which counts wall time): the run then failed on a later wait rather
/// than on a difference. Twice `DEADLINE` covers the longest stall the waits let pass plus the
/// rest of the step; a longer one fails on its wait, named.
pub const TIMEOUT_MS: i32 = 2 * DEADLINE.as_millis() as i32;

pub(super) struct Raw(pub(super) BytesMut);

impl Encode for Raw {
    fn encode(&self, buf: &mut BytesMut) {
        buf.extend_from_slice(&self.0);
    }
}

/// What a reply's body holds, to decode and normalise it.
#[derive(Clone, Copy)]
pub(super) enum Expect {
    Empty,
    Path,
    PathStat,
    Stat,
    DataStat,
    Children(bool),
    Acl,
    Int,
    Names,
    WhoAmI,
    Multi,
}

pub(super) struct Slot {
    pub(super) conn: Option<WireConnection>,
    pub(super) session: i64,
    pub(super) passwd: Vec<u8>,
}

/// One run of a script on one server.
pub struct Run {
    pub(super) addr: SocketAddr,
    pub(super) root: String,
    pub(super) base: i64,
    pub sessions: Vec<i64>,
    pub(super) slots: Vec<Slot>,
    pub(super) sequentials: Vec<String>,
    /// Normalised lines, per step (setup is step 0).
    pub steps: Vec<Vec<String>>,
}

impl Run {
    /// Connects the slots and creates the script's root.
    pub fn start(addr: SocketAddr, root: &str) -> Run {
        let mut run = Run {
            addr,
            root: root.to_owned(),
            base: 0,
            sessions: Vec::new(),
            slots: Vec::new(),
            sequentials: Vec::new(),
            steps: Vec::new(),
        };
        let mut lines = Vec::new();
        for _ in 0..SLOTS {
            let slot = run.new_session(&mut lines);
            run.slots.push(slot);
        }
        let mut body = BytesMut::new();
        put_str(&mut body, root);
        put_buffer_opt(&mut body, Some(b""));
        List::from(Acl::OPEN_ACL_UNSAFE).encode(&mut body);
        put_i32(&mut body, 0);
        let conn = run.slots[0].conn.as_mut().expect("slot 0 connected");
        let xid = conn.send(OpCode::Create, &Raw(body), None);
        let frames = conn.read_until_reply(xid);
        match frames.last() {
            Some(Frame::Reply { header, .. }) if header.err.is_ok() => run.base = header.zxid,
            other => panic!("creating the script root {root}: {other:?}"),
        }
        run.steps.push(lines);
        run
    }

    fn new_session(&mut self, lines: &mut Vec<String>) -> Slot {
        let (conn, connected) = WireConnection::connect(self.addr, TIMEOUT_MS, None, 0);
        let c = connected.expect("a new session");
        self.sessions.push(c.session_id);
        lines.push(format!(
            "connected S{} timeout={}",
            self.sessions.len() - 1,
            c.timeout_ms
        ));
        Slot {
            conn: Some(conn),
            session: c.session_id,
            passwd: c.passwd,
        }
    }

    fn resume(&mut self, s: usize, lines: &mut Vec<String>) {
        let slot = &self.slots[s];
        let (conn, connected) =
            WireConnection::connect(self.addr, TIMEOUT_MS, Some((slot.session, &slot.passwd)), 0);
        match connected {
            Some(c) if c.timeout_ms > 0 => {
                lines.push(format!("resumed slot {s} timeout={}", c.timeout_ms));
                self.slots[s].conn = Some(conn);
            }
            other => {
                lines.push(format!(
                    "resume of slot {s} refused: {}",
                    other.map_or(-1, |c| c.timeout_ms)
                ));
                let slot = self.new_session(lines);
                self.slots[s] = slot;
            }
        }
    }

    pub(super) fn zxid(&self, z: i64) -> String {
        if z <= 0 {
            z.to_string()
        } else {
            format!("+{}", z - self.base)
        }
    }

    pub(super) fn owner(&self, o: i64) -> String {
        if o == 0 {
            return "0".into();
        }
        match self.sessions.iter().position(|s| *s == o) {
            Some(i) => format!("S{i}"),
            None => format!("{o:#x}"),
        }
    }

    pub(super) fn stat(&self, s: &Stat) -> String {
        format!(
            "[c{} m{} p{} v{} cv{} av{} o{} len{} n{}]",
            self.zxid(s.czxid),
            self.zxid(s.mzxid),
            self.zxid(s.pzxid),
            s.version,
            s.cversion,
            s.aversion,
            self.owner(s.ephemeral_owner),
            s.data_length,
            s.num_children
        )
    }

    pub(super) fn path(&self, p: &PathRef) -> String {
        match p {
            PathRef::Pool(p) => p.clone(),
            PathRef::Sequential(k) => self
                .sequentials
                .get(*k)
                .cloned()
                .unwrap_or_else(|| format!("{}/a", self.root)),
        }
    }

    pub(super) fn note_created(&mut self, path: &str) {
        let tail = path.rsplit('/').next().unwrap_or("");
        if tail.len() >= 10 && tail[tail.len() - 10..].bytes().all(|b| b.is_ascii_digit()) {
            self.sequentials.push(path.to_owned());
        }
    }

    /// Sends on slot `s`, reads to the reply, records the lines.
    pub(super) fn call(
        &mut self,
        s: usize,
        op: OpCode,
        body: BytesMut,
        fixed_xid: Option<i32>,
        expect: Expect,
        lines: &mut Vec<String>,
    ) {
        let Some(conn) = self.slots[s].conn.as_mut() else {
            // The server closed this slot earlier in the step (it expired the session): an
            // observation for the comparison, not a reason to stop the run.
            lines.push(format!("S{s} not connected"));
            return;
        };
        let xid = conn.send(op, &Raw(body), fixed_xid);
        let frames = conn.read_until_reply(xid);
        let refused = matches!(frames.last(), Some(Frame::Reply { header, .. }) if op == OpCode::Auth && !header.err.is_ok());
        if refused {
            // A failed auth closes the connection: wait for it, so both servers are seen alike.
            while conn.read_frame().is_some() {}
        }
        let closed = conn.closed;
        for frame in frames {
            let line = match frame {
                Frame::Event {
                    event_type,
                    state,
                    path,
                    zxid,
                } => format!(
                    "S{s} event {event_type} {state} {path} zxid={}",
                    self.zxid(zxid)
                ),
                Frame::Reply { header, body } => {
                    let shown = if header.err.is_ok() {
                        self.body(expect, &body)
                    } else {
                        String::new()
                    };
                    format!(
                        "S{s} reply {op} xid={} zxid={} err={} {shown}",
                        header.xid,
                        self.zxid(header.zxid),
                        header.err
                    )
                }
            };
            lines.push(line);
        }
        if closed {
            lines.push(format!("S{s} closed by server"));
            self.slots[s].conn = None;
        }
    }

    fn acl(&self, choice: AclChoice) -> Vec<(i32, String, String)> {
        match choice {
            AclChoice::Open => vec![(31, "world".into(), "anyone".into())],
            AclChoice::ReadOnly => vec![(1, "world".into(), "anyone".into())],
            AclChoice::Digest(k) => vec![
                (31, "digest".into(), digest_id(CREDENTIALS[k])),
                (1, "world".into(), "anyone".into()),
            ],
            AclChoice::Auth => vec![(31, "auth".into(), String::new())],
            AclChoice::Ip => vec![(31, "ip".into(), "127.0.0.1".into())],
            AclChoice::BadScheme => vec![(31, "nope".into(), "x".into())],
            AclChoice::BadDigest => vec![(31, "digest".into(), "nocolon".into())],
            AclChoice::Empty | AclChoice::Null => vec![],
            AclChoice::IpNet => vec![(31, "ip".into(), "127.0.0.0/8".into())],
            AclChoice::IpOther => vec![(31, "ip".into(), "10.0.0.0/8".into())],
            AclChoice::IpLeadingZeros => vec![(31, "ip".into(), "127.000.0.01".into())],
            AclChoice::IpBadPrefix => vec![(31, "ip".into(), "127.0.0.1/33".into())],
            AclChoice::WorldOther => vec![(31, "world".into(), "someone".into())],
            AclChoice::Duplicates => vec![
                (31, "world".into(), "anyone".into()),
                (31, "world".into(), "anyone".into()),
            ],
            AclChoice::NoPerms => vec![(0, "world".into(), "anyone".into())],
            AclChoice::AuthWithId => vec![(31, "auth".into(), "whoever".into())],
        }
    }

    pub(super) fn put_acl(&self, buf: &mut BytesMut, choice: AclChoice) {
        if matches!(choice, AclChoice::Null) {
            put_i32(buf, -1);
            return;
        }
        let acl = self.acl(choice);
        let wire: Vec<Acl<'_>> = acl
            .iter()
            .map(|(p, scheme, id)| Acl {
                perms: Perms(*p),
                id: Id { scheme, id },
            })
            .collect();
        List::from(&wire).encode(buf);
    }

    /// A create body; `kind` is (flags, opcode, ttl).
    fn put_create(
        &self,
        buf: &mut BytesMut,
        path: &PathRef,
        data: Option<&[u8]>,
        acl: AclChoice,
        kind: (i32, i32, i64),
    ) {
        let (flags, op, ttl) = kind;
        put_str(buf, &self.path(path));
        put_buffer_opt(buf, data);
        self.put_acl(buf, acl);
        put_i32(buf, flags);
        if op == 21 {
            put_i64(buf, ttl);
        }
    }

    /// Runs one step and records its lines (and every other slot's events, through a ping).
    pub fn step(&mut self, step: &Step) {
        let mut lines = Vec::new();
        let s = step.slot();
        if self.slots[s].conn.is_none() && !matches!(step, Step::BadPassword { .. }) {
            self.resume(s, &mut lines);
        }
        let mut b = BytesMut::new();
        match step {
            Step::Create {
                path,
                flags,
                op,
                ttl,
                data,
                acl,
                ..
            } => {
                self.put_create(&mut b, path, data.as_deref(), *acl, (*flags, *op, *ttl));
                let code = OpCode::from_code(*op).expect("create opcode");
                let expect = if *op == 1 {
                    Expect::Path
                } else {
                    Expect::PathStat
                };
                self.call(s, code, b, None, expect, &mut lines);
            }
            Step::Delete { path, version, .. } => {
                put_str(&mut b, &self.path(path));
                put_i32(&mut b, *version);
                self.call(s, OpCode::Delete, b, None, Expect::Empty, &mut lines);
            }
            Step::Exists { path, watch, .. } | Step::GetData { path, watch, .. } => {
                put_str(&mut b, &self.path(path));
                put_bool(&mut b, *watch);
                let (op, expect) = if matches!(step, Step::Exists { .. }) {
                    (OpCode::Exists, Expect::Stat)
                } else {
                    (OpCode::GetData, Expect::DataStat)
                };
                self.call(s, op, b, None, expect, &mut lines);
            }
            Step::SetData {
                path,
                data,
                version,
                ..
            } => {
                put_str(&mut b, &self.path(path));
                put_buffer_opt(&mut b, data.as_deref());
                put_i32(&mut b, *version);
                self.call(s, OpCode::SetData, b, None, Expect::Stat, &mut lines);
            }
            Step::GetChildren {
                path,
                watch,
                with_stat,
                ..
            } => {
                put_str(&mut b, &self.path(path));
                put_bool(&mut b, *watch);
                let op = if *with_stat {
                    OpCode::GetChildren2
                } else {
                    OpCode::GetChildren
                };
                self.call(s, op, b, None, Expect::Children(*with_stat), &mut lines);
            }
            Step::GetAcl { path, .. } => {
                put_str(&mut b, &self.path(path));
                self.call(s, OpCode::GetAcl, b, None, Expect::Acl, &mut lines);
            }
            Step::SetAcl {
                path, acl, version, ..
            } => {
                put_str(&mut b, &self.path(path));
                self.put_acl(&mut b, *acl);
                put_i32(&mut b, *version);
                self.call(s, OpCode::SetAcl, b, None, Expect::Stat, &mut lines);
            }
            Step::Sync { path, .. } => {
                put_str(&mut b, &self.path(path));
                self.call(s, OpCode::Sync, b, None, Expect::Path, &mut lines);
            }
            Step::AllChildren { path, .. } => {
                put_str(&mut b, &self.path(path));
                self.call(
                    s,
                    OpCode::GetAllChildrenNumber,
                    b,
                    None,
                    Expect::Int,
                    &mut lines,
                );
            }
            Step::Ephemerals { prefix, .. } => {
                put_str(&mut b, &self.path(prefix));
                self.call(s, OpCode::GetEphemerals, b, None, Expect::Names, &mut lines);
            }
            Step::WhoAmI { .. } => {
                self.call(s, OpCode::WhoAmI, b, None, Expect::WhoAmI, &mut lines)
            }
            Step::AddAuth {
                scheme,
                credentials,
                ..
            } => {
                put_i32(&mut b, 0);
                put_str(&mut b, scheme);
                put_buffer_opt(&mut b, Some(CREDENTIALS[*credentials].as_bytes()));
                self.call(s, OpCode::Auth, b, Some(-4), Expect::Empty, &mut lines);
            }
            Step::AddWatch {
                path, recursive, ..
            } => {
                put_str(&mut b, &self.path(path));
                put_i32(&mut b, i32::from(*recursive));
                self.call(s, OpCode::AddWatch, b, None, Expect::Int, &mut lines);
            }
            Step::RemoveWatches {
                path,
                kind,
                check_only,
                ..
            } => {
                put_str(&mut b, &self.path(path));
                put_i32(&mut b, *kind);
                let op = if *check_only {
                    OpCode::CheckWatches
                } else {
                    OpCode::RemoveWatches
                };
                self.call(s, op, b, None, Expect::Empty, &mut lines);
            }
            Step::Multi { ops, .. } => {
                for op in ops {
                    match op {
                        MultiStep::Create {
                            path,
                            flags,
                            op,
                            ttl,
                            data,
                        } => {
                            MultiHeader {
                                op: OpCode::from_code(*op).unwrap(),
                                done: false,
                                err: -1,
                            }
                            .encode(&mut b);
                            self.put_create(
                                &mut b,
                                path,
                                data.as_deref(),
                                AclChoice::Open,
                                (*flags, *op, *ttl),
                            );
                        }
                        MultiStep::Delete { path, version }
                        | MultiStep::Check { path, version } => {
                            let code = if matches!(op, MultiStep::Delete { .. }) {
                                OpCode::Delete
                            } else {
                                OpCode::Check
                            };
                            MultiHeader {
                                op: code,
                                done: false,
                                err: -1,
                            }
                            .encode(&mut b);
                            put_str(&mut b, &self.path(path));
                            put_i32(&mut b, *version);
                        }
                        MultiStep::SetData {
                            path,
                            data,
                            version,
                        } => {
                            MultiHeader {
                                op: OpCode::SetData,
                                done: false,
                                err: -1,
                            }
                            .encode(&mut b);
                            put_str(&mut b, &self.path(path));
                            put_buffer_opt(&mut b, data.as_deref());
                            put_i32(&mut b, *version);
                        }
                    }
                }
                MultiHeader::DONE.encode(&mut b);
                self.call(s, OpCode::Multi, b, None, Expect::Multi, &mut lines);
            }
            Step::MultiRead { ops, .. } => {
                for (path, data, watch) in ops {
                    let op = if *data {
                        OpCode::GetData
                    } else {
                        OpCode::GetChildren
                    };
                    MultiHeader {
                        op,
                        done: false,
                        err: -1,
                    }
                    .encode(&mut b);
                    put_str(&mut b, &self.path(path));
                    put_bool(&mut b, *watch);
                }
                MultiHeader::DONE.encode(&mut b);
                self.call(s, OpCode::MultiRead, b, None, Expect::Multi, &mut lines);
            }
            Step::SetWatches {
                back,
                data,
                exist,
                child,
                persistent,
                recursive,
                ..
            } => {
                // relativeZxid: a few transactions after the script's start.
                b.put_i64(self.base + back);
                let lists: Vec<&Vec<PathRef>> = if persistent.is_empty() && recursive.is_empty() {
                    vec![data, exist, child]
                } else {
                    vec![data, exist, child, persistent, recursive]
                };
                let op = if lists.len() == 3 {
                    OpCode::SetWatches
                } else {
                    OpCode::SetWatches2
                };
                for list in lists {
                    let paths: Vec<String> = list.iter().map(|p| self.path(p)).collect();
                    put_str_vec(&mut b, paths.iter().map(String::as_str));
                }
                self.call(s, op, b, Some(-8), Expect::Empty, &mut lines);
            }
            Step::Close { .. } => {
                let conn = self.slots[s].conn.as_mut().expect("connected");
                let xid = conn.send_empty(OpCode::CloseSession, None);
                let frames = conn.read_until_reply(xid);
                let ended = conn.read_frame().is_none();
                let mut events: Vec<String> = frames
                    .iter()
                    .map(|f| match f {
                        Frame::Event {
                            event_type,
                            state,
                            path,
                            zxid,
                        } => format!(
                            "S{s} event {event_type} {state} {path} zxid={}",
                            self.zxid(*zxid)
                        ),
                        Frame::Reply { header, .. } => format!(
                            "S{s} reply close zxid={} err={}",
                            self.zxid(header.zxid),
                            header.err
                        ),
                    })
                    .collect();
                // ZooKeeper deletes a closing session's ephemerals in hash-set order.
                events.sort();
                lines.extend(events);
                lines.push(format!("S{s} connection ended after close: {ended}"));
                let slot = self.new_session(&mut lines);
                self.slots[s] = slot;
            }
            Step::Expire { path, .. } => self.expire(s, path, &mut lines),
            Step::Reconnect { .. } => {
                if let Some(conn) = self.slots[s].conn.take() {
                    conn.drop_connection();
                }
                self.resume(s, &mut lines);
            }
            Step::BadPassword { .. } => {
                let wrong = vec![7u8; 16];
                let (mut conn, connected) = WireConnection::connect(
                    self.addr,
                    TIMEOUT_MS,
                    Some((self.slots[s].session, &wrong)),
                    0,
                );
                let ended = conn.read_frame().is_none();
                lines.push(format!(
                    "bad password: {:?} then closed: {ended}",
                    connected.map(|c| (c.timeout_ms, c.session_id))
                ));
                // The wrong password also cuts the slot's connection, unless ZooKeeper lost
                // track of it: closing a session's previous connection removes the session's
                // entry from the connection factory's map whichever connection it names, so
                // after a quick reconnect the kick may find nothing (a race in 3.8). Start the
                // slot afresh either way.
                if let Some(conn) = self.slots[s].conn.take() {
                    conn.drop_connection();
                }
                self.resume(s, &mut lines);
            }
        }
        self.barrier(s, &mut lines);
        if let Ok(probe) = std::env::var("ZKRS_MODEL_PROBE") {
            // Debugging aid: the Stat of one path after every step, to find where two runs part.
            if let Some(t) = (0..self.slots.len()).find(|t| self.slots[*t].conn.is_some()) {
                let mut b = BytesMut::new();
                put_str(&mut b, &probe);
                put_bool(&mut b, false);
                self.call(t, OpCode::Exists, b, None, Expect::Stat, &mut lines);
            }
        }
        self.steps.push(lines);
    }

    /// Pings every other connected slot and records the events that came before the answer:
    /// the events the step caused there.
    fn barrier(&mut self, acting: usize, lines: &mut Vec<String>) {
        for t in 0..self.slots.len() {
            if t == acting {
                continue;
            }
            let Some(conn) = self.slots[t].conn.as_mut() else {
                continue;
            };
            conn.send_empty(OpCode::Ping, Some(-2));
            let frames = conn.read_until_reply(-2);
            let closed = conn.closed;
            let mut events: Vec<String> = Vec::new();
            for f in frames {
                if let Frame::Event {
                    event_type,
                    state,
                    path,
                    zxid,
                } = f
                {
                    events.push(format!(
                        "S{t} event {event_type} {state} {path} zxid={}",
                        self.zxid(zxid)
                    ));
                }
            }
            if lines.iter().any(|l| l.contains("reply close")) {
                // A closed session's ephemerals go in hash-set order.
                events.sort();
            }
            lines.extend(events);
            if closed {
                lines.push(format!("S{t} closed by server"));
                self.slots[t].conn = None;
            }
        }
    }

    /// Closes every session of the run, resuming the ones whose connection the server
    /// closed (a wrong-password connect cuts a session's connection unnoticed): a session left
    /// to expire would take a zxid in the middle of a later script.
    pub fn finish(mut self) {
        let mut ignored = Vec::new();
        for s in 0..self.slots.len() {
            for _attempt in 0..2 {
                if self.slots[s].conn.is_none() {
                    self.resume(s, &mut ignored);
                }
                let conn = self.slots[s].conn.as_mut().expect("resumed");
                let xid = conn.send_empty(OpCode::CloseSession, None);
                let answered = conn
                    .read_until_reply(xid)
                    .iter()
                    .any(|f| matches!(f, Frame::Reply { header, .. } if header.xid == xid));
                if answered {
                    break;
                }
                self.slots[s].conn = None;
            }
        }
    }
}

pub(super) fn sorted<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut v: Vec<String> = names.map(str::to_owned).collect();
    v.sort();
    v
}
