//! `multi` (atomic writes) and `multiRead` (several reads), as ZooKeeper 3.8 and 3.9 answer them.
//!
//! A multi takes one zxid. Its ops are applied in order to the live tree; if one fails, the
//! tree goes back to how it was (a copy taken before the first op: simple, and cheap for the
//! trees tests build), no watch fires, and the results are ZooKeeper's: `Ok` as an error
//! result for the ops before the failed one, its own code for it, `RuntimeInconsistency` for
//! the ops after. The reply header says `Ok` either way.

use bytes::BytesMut;
use zkrs_codec::{
    jute::Reader, Create2Response, CreateMode, Decode, DecodeError, Encode, ErrorCode, MultiHeader,
    MultiItem, MultiOp, MultiOpResult, MultiRequest, OpCode, PathVersionRequest, SetDataRequest,
    Stat,
};

use crate::acl::AuthId;
use crate::connection_id::ConnectionId;
use crate::requests::read_create;
use crate::server::Server;
use crate::version::ZooKeeperVersion;
use crate::write::{self, Create, WriteContext};

/// A result, owned until it is encoded.
enum Outcome {
    Create(String),
    Create2(OpCode, String, Stat),
    Delete,
    SetData(Stat),
    Check,
    Error(ErrorCode),
}

impl Server {
    pub(crate) fn handle_multi(&mut self, conn: ConnectionId, xid: i32, body: &[u8]) {
        if !multi_decodes(body, self.config.zookeeper) {
            // Not even a transaction: ZooKeeper fails it before it takes a zxid.
            let zxid = self.tree.last_zxid;
            self.reply(conn, xid, zxid, ErrorCode::MarshallingError, |_| {});
            return;
        }
        let zxid = self.next_zxid();
        let (session, auth) = self.writer(conn);
        let time = self.wall_time();
        let (err, out) = self.run_multi(body, session, &auth, zxid, time);
        self.reply(conn, xid, zxid, err, |buf| buf.extend_from_slice(&out));
    }

    /// A multi as one transaction (see `run_write`); `body` must decode (`multi_decodes`).
    pub(crate) fn run_multi(
        &mut self,
        body: &[u8],
        session: i64,
        auth: &[AuthId],
        zxid: i64,
        time: i64,
    ) -> (ErrorCode, BytesMut) {
        let Ok(ops) = read_write_ops(&mut Reader::new(body), self.config.zookeeper) else {
            return (ErrorCode::MarshallingError, BytesMut::new());
        };
        // From 3.8.2 such a create fails as the multi is read, before any op runs; before, as
        // it is reached (an earlier op's error answers first).
        if self.config.zookeeper.create2_in_multi()
            && ops.iter().any(|op| matches!(op, WriteOp::Uncastable))
        {
            self.tree.last_zxid = zxid;
            return (ErrorCode::MarshallingError, BytesMut::new());
        }
        let cx = WriteContext {
            session,
            auth,
            providers: &self.config.auth_providers,
            zxid,
            time,
        };
        self.tree.begin_undo();
        let mut changes = Vec::new();
        let mut outcomes: Vec<Outcome> = Vec::new();
        let mut failed: Option<usize> = None;
        for (i, op) in ops.iter().enumerate() {
            if failed.is_some() {
                outcomes.push(Outcome::Error(ErrorCode::RuntimeInconsistency));
                continue;
            }
            let tree = &mut self.tree;
            let result = match op {
                WriteOp::Create(req) => create_outcome(tree, &cx, req, &mut changes),
                WriteOp::Delete(path, version) => {
                    write::delete(tree, &cx, path, *version, &mut changes).map(|()| Outcome::Delete)
                }
                WriteOp::SetData(path, data, version) => {
                    write::set_data(tree, &cx, path, *data, *version, &mut changes)
                        .map(Outcome::SetData)
                }
                WriteOp::Check(path, version) => {
                    write::check(tree, &cx, path, *version).map(|()| Outcome::Check)
                }
                WriteOp::Uncastable => {
                    // The whole multi fails as a marshalling error (still a transaction).
                    self.tree.undo();
                    self.tree.last_zxid = zxid;
                    return (ErrorCode::MarshallingError, BytesMut::new());
                }
            };
            match result {
                Ok(outcome) => outcomes.push(outcome),
                Err(e) => {
                    failed = Some(i);
                    outcomes.push(Outcome::Error(e));
                }
            }
        }
        if let Some(at) = failed {
            self.tree.undo();
            self.tree.last_zxid = zxid;
            for outcome in outcomes.iter_mut().take(at) {
                *outcome = Outcome::Error(ErrorCode::Ok);
            }
        } else {
            self.tree.commit();
            self.notify(changes);
        }
        let mut buf = BytesMut::new();
        for outcome in &outcomes {
            encode_outcome(outcome, &mut buf);
        }
        MultiHeader::DONE.encode(&mut buf);
        (ErrorCode::Ok, buf)
    }

    pub(crate) fn handle_multi_read(&mut self, conn: ConnectionId, xid: i32, r: &mut Reader<'_>) {
        let zxid = self.tree.last_zxid;
        let Ok(request) = MultiRequest::decode(r) else {
            self.reply(conn, xid, zxid, ErrorCode::MarshallingError, |_| {});
            return;
        };
        if request.ops.iter().any(|op| !op.is_read()) {
            // "Invalid type of op": the whole request fails.
            self.reply(conn, xid, zxid, ErrorCode::MarshallingError, |_| {});
            return;
        }
        let mut out = BytesMut::new();
        // ZooKeeper rebuilds each read as `Op.getData(path)` / `Op.getChildren(path)`: the
        // watch flags a client sends in a multiRead are dropped, no watch is left.
        for op in request.ops.iter() {
            let result = match op {
                MultiOp::GetData(g) => self
                    .read_data(conn, g.path, false)
                    .map(|(data, stat)| MultiOpResultOwned::Data(data, stat)),
                MultiOp::GetChildren(g) => self
                    .read_children(conn, g.path, false)
                    .map(|(names, _)| MultiOpResultOwned::Children(names)),
                _ => Err(ErrorCode::MarshallingError),
            };
            match result {
                Ok(MultiOpResultOwned::Data(data, stat)) => {
                    let res = MultiOpResult::GetData {
                        data: data.as_deref(),
                        stat,
                    };
                    res.header().encode(&mut out);
                    res.encode_body(&mut out);
                }
                Ok(MultiOpResultOwned::Children(names)) => {
                    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                    let res = MultiOpResult::GetChildren((&refs).into());
                    res.header().encode(&mut out);
                    res.encode_body(&mut out);
                }
                Err(e) => encode_outcome(&Outcome::Error(e), &mut out),
            }
        }
        MultiHeader::DONE.encode(&mut out);
        self.reply(conn, xid, zxid, ErrorCode::Ok, |buf| {
            buf.extend_from_slice(&out)
        });
    }
}

/// One op of a multi, create flags raw (an unknown mode is `BadArguments`, as ZooKeeper says).
enum WriteOp<'a> {
    Create(Create<'a>),
    Delete(&'a str, i32),
    SetData(&'a str, Option<&'a [u8]>, i32),
    Check(&'a str, i32),
    /// A TTL create mode sent with another create opcode: ZooKeeper fails to cast its record.
    Uncastable,
}

/// Whether a multi's body reads (ZooKeeper deserializes it before it makes a transaction).
pub(crate) fn multi_decodes(body: &[u8], version: ZooKeeperVersion) -> bool {
    read_write_ops(&mut Reader::new(body), version).is_ok()
}

fn read_write_ops<'a>(
    r: &mut Reader<'a>,
    version: ZooKeeperVersion,
) -> Result<Vec<WriteOp<'a>>, DecodeError> {
    let mut ops = Vec::new();
    loop {
        let header = MultiHeader::decode(r)?;
        if header.done {
            return Ok(ops);
        }
        ops.push(match header.op {
            OpCode::Create | OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTtl => {
                let mut create = read_create(header.op, r)?;
                // ZooKeeper rebuilds each create as `Op.create(...)`, whose opcode follows the
                // flags: a container mode becomes createContainer, a TTL mode createTTL; until
                // 3.8.2 every other create became create (create2 answers without Stat), from
                // 3.8.2 (ZOOKEEPER-4026) create2 stays create2. A TTL mode without a TTL record
                // fails the whole multi with MarshallingError, a zxid taken (before 3.8.2 a
                // createTTL op holding a CreateRequest, after it `CreateOptions`' TTL check).
                let ttl_mode = CreateMode::from_code(create.flags).is_some_and(CreateMode::is_ttl);
                if ttl_mode && header.op != OpCode::CreateTtl {
                    WriteOp::Uncastable
                } else {
                    create.op = if ttl_mode {
                        OpCode::CreateTtl
                    } else if create.flags == CreateMode::Container.code() {
                        OpCode::CreateContainer
                    } else if header.op == OpCode::Create2 && version.create2_in_multi() {
                        OpCode::Create2
                    } else {
                        OpCode::Create
                    };
                    if create.op != OpCode::CreateTtl {
                        create.ttl = -1;
                    }
                    WriteOp::Create(create)
                }
            }
            OpCode::Delete => {
                let d = PathVersionRequest::decode(r)?;
                WriteOp::Delete(d.path, d.version)
            }
            OpCode::Check => {
                let d = PathVersionRequest::decode(r)?;
                WriteOp::Check(d.path, d.version)
            }
            OpCode::SetData => {
                let s = SetDataRequest::decode(r)?;
                WriteOp::SetData(s.path, s.data, s.version)
            }
            // Reads mixed into a multi: "Mixing different kind of ops", a marshalling error.
            OpCode::GetData | OpCode::GetChildren => {
                return Err(DecodeError::InvalidValue {
                    field: "multi operation",
                    value: header.op.code().into(),
                })
            }
            other => {
                return Err(DecodeError::InvalidValue {
                    field: "multi operation",
                    value: other.code().into(),
                })
            }
        });
    }
}

enum MultiOpResultOwned {
    Data(Option<Vec<u8>>, Stat),
    Children(Vec<String>),
}

fn create_outcome(
    tree: &mut crate::tree::DataTree,
    cx: &WriteContext<'_>,
    req: &Create<'_>,
    changes: &mut Vec<write::Change>,
) -> Result<Outcome, ErrorCode> {
    let (path, stat) = write::create(tree, cx, req, changes)?;
    Ok(if req.op == OpCode::Create {
        Outcome::Create(path)
    } else {
        // `new CreateResult(path, stat)` is typed create2 whatever the op was.
        Outcome::Create2(OpCode::Create2, path, stat)
    })
}

fn encode_outcome(outcome: &Outcome, buf: &mut BytesMut) {
    let result = match outcome {
        Outcome::Create(p) => MultiOpResult::Create(p),
        Outcome::Create2(op, p, stat) => MultiOpResult::Create2 {
            op: *op,
            response: Create2Response {
                path: p,
                stat: *stat,
            },
        },
        Outcome::Delete => MultiOpResult::Delete,
        Outcome::SetData(stat) => MultiOpResult::SetData(*stat),
        Outcome::Check => MultiOpResult::Check,
        Outcome::Error(e) => MultiOpResult::Error(*e),
    };
    result.header().encode(buf);
    result.encode_body(buf);
}
