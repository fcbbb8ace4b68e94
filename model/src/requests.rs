//! Requests after the handshake, as ZooKeeper 3.8's `FinalRequestProcessor` answers them
//! (reads, watches, auth, pings, closeSession), and the single writes through `write.rs`.

use bytes::BytesMut;
use zkrs_codec::{
    jute::{put_i32, Reader},
    put_str_vec, xid, Acl, AclEntry, AddWatchRequest, AuthPacket, ClientInfo, Create2Response,
    Decode, DecodeError, Encode, ErrorCode, EventType, GetAclResponse, List, OpCode, PathRecord,
    PathVersionRequest, PathWatchRequest, SetAclRequest, SetDataRequest, SetWatches2, Stat,
};

use crate::acl::{self, AuthId};
use crate::connection_id::ConnectionId;
use crate::digest::digest_id;
use crate::server::Server;
use crate::watch_manager::WatchMode;
use crate::write::{self, Create, WriteContext};

/// Reads a create request with its flags raw (an unknown mode is `BadArguments`, not a
/// marshalling error), and the TTL of `createTTL`.
pub(crate) fn read_create<'a>(op: OpCode, r: &mut Reader<'a>) -> Result<Create<'a>, DecodeError> {
    let path = r.read_str()?;
    let data = r.read_buffer_opt()?;
    let acl = List::<Acl<'a>>::decode(r)?;
    let flags = r.read_i32()?;
    let ttl = if op == OpCode::CreateTtl {
        r.read_i64()?
    } else {
        -1
    };
    Ok(Create {
        op,
        path,
        data,
        acl,
        flags,
        ttl,
    })
}

/// What a single write answers.
enum WriteReply {
    Path(String),
    PathStat(String, Stat),
    Stat(Stat),
    Empty,
}

impl Server {
    /// The session of a connection and its identities, in the order ZooKeeper lists them.
    pub(crate) fn writer(&self, conn: ConnectionId) -> (i64, Vec<AuthId>) {
        let c = &self.connections[&conn];
        (c.session, acl::java_set_order(&c.auth))
    }

    pub(crate) fn handle_request(&mut self, conn: ConnectionId, body: &[u8]) {
        let mut r = Reader::new(body);
        let (Ok(xid), Ok(code)) = (r.read_i32(), r.read_i32()) else {
            self.close_connection(conn);
            return;
        };
        let session = self.connections[&conn].session;
        let now = self.now;
        self.sessions.touch(session, now);
        let Some(op) = OpCode::from_code(code) else {
            // UnimplementedRequestProcessor: answer, then close.
            self.reply(conn, xid, -1, ErrorCode::Unimplemented, |_| {});
            self.close_connection(conn);
            return;
        };
        if self.forward_request(conn, xid, op, r.remaining()) {
            return;
        }
        match op {
            OpCode::Ping => {
                let zxid = self.tree.last_zxid;
                self.reply(conn, xid::PING, zxid, ErrorCode::Ok, |_| {});
            }
            OpCode::Auth => self.handle_auth(conn, xid, &mut r),
            OpCode::CloseSession => self.end_session(session, Some((conn, xid))),
            OpCode::Multi => self.handle_multi(conn, xid, r.remaining()),
            op if write::served_write(op) => self.handle_write(conn, xid, op, r.remaining()),
            OpCode::MultiRead => self.handle_multi_read(conn, xid, &mut r),
            OpCode::SetWatches | OpCode::SetWatches2 => {
                self.handle_set_watches(conn, xid, op, &mut r)
            }
            _ => {
                let zxid = self.tree.last_zxid;
                let mut out = BytesMut::new();
                let err = match self.handle_read(conn, op, &mut r, &mut out) {
                    Ok(()) => ErrorCode::Ok,
                    Err(e) => e,
                };
                self.reply(conn, xid, zxid, err, |buf| buf.extend_from_slice(&out));
            }
        }
    }

    fn handle_auth(&mut self, conn: ConnectionId, xid: i32, r: &mut Reader<'_>) {
        let Ok(packet) = AuthPacket::decode(r) else {
            self.close_connection(conn);
            return;
        };
        let id = match packet.scheme {
            "digest" => {
                let credentials = String::from_utf8_lossy(packet.auth);
                Some(AuthId::new("digest", &digest_id(&credentials)))
            }
            "ip" => self.connections[&conn]
                .auth
                .iter()
                .find(|id| id.scheme == "ip")
                .cloned(),
            _ => None,
        };
        let Some(id) = id else {
            self.reply(conn, xid, 0, ErrorCode::AuthFailed, |_| {});
            self.close_connection(conn);
            return;
        };
        let is_super = id.scheme == "digest" && self.config.super_digest.as_deref() == Some(&id.id);
        let c = self.connections.get_mut(&conn).expect("open connection");
        if is_super && !c.auth.contains(&AuthId::new("super", "")) {
            c.auth.push(AuthId::new("super", ""));
        }
        if !c.auth.contains(&id) {
            c.auth.push(id);
        }
        self.reply(conn, xid, 0, ErrorCode::Ok, |_| {});
    }

    fn handle_write(&mut self, conn: ConnectionId, xid: i32, op: OpCode, body: &[u8]) {
        // Every write is a transaction, a failed one too (an error txn): it takes a zxid.
        let zxid = self.next_zxid();
        let (session, auth) = self.writer(conn);
        let time = self.wall_time();
        let (err, out) = self.run_write(op, body, session, &auth, zxid, time);
        self.reply(conn, xid, zxid, err, |buf| buf.extend_from_slice(&out));
    }

    /// Applies one write transaction (`op`'s body as the client sent it) as `session` with
    /// `auth`, under `zxid` at `time`, fires its watches, and gives the reply's error code
    /// and body. The single server runs it at once; an ensemble member when it applies the
    /// committed log.
    pub(crate) fn run_write(
        &mut self,
        op: OpCode,
        body: &[u8],
        session: i64,
        auth: &[AuthId],
        zxid: i64,
        time: i64,
    ) -> (ErrorCode, BytesMut) {
        self.tree.last_zxid = self.tree.last_zxid.max(zxid);
        if op == OpCode::Multi {
            return self.run_multi(body, session, auth, zxid, time);
        }
        let r = &mut Reader::new(body);
        let cx = WriteContext {
            session,
            auth,
            providers: &self.config.auth_providers,
            zxid,
            time,
        };
        let mut changes = Vec::new();
        let tree = &mut self.tree;
        let result: Result<WriteReply, ErrorCode> = match op {
            OpCode::Create | OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTtl => {
                match read_create(op, r) {
                    Ok(req) => write::create(tree, &cx, &req, &mut changes).map(|(p, s)| {
                        if op == OpCode::Create {
                            WriteReply::Path(p)
                        } else {
                            WriteReply::PathStat(p, s)
                        }
                    }),
                    Err(_) => Err(ErrorCode::MarshallingError),
                }
            }
            OpCode::Delete => match PathVersionRequest::decode(r) {
                Ok(d) => write::delete(tree, &cx, d.path, d.version, &mut changes)
                    .map(|()| WriteReply::Empty),
                Err(_) => Err(ErrorCode::MarshallingError),
            },
            OpCode::SetData => match SetDataRequest::decode(r) {
                Ok(s) => write::set_data(tree, &cx, s.path, s.data, s.version, &mut changes)
                    .map(WriteReply::Stat),
                Err(_) => Err(ErrorCode::MarshallingError),
            },
            OpCode::SetAcl => match SetAclRequest::decode(r) {
                Ok(s) => write::set_acl(tree, &cx, s.path, &s.acl, s.version).map(WriteReply::Stat),
                Err(_) => Err(ErrorCode::MarshallingError),
            },
            _ => match PathVersionRequest::decode(r) {
                Ok(c) => write::check(tree, &cx, c.path, c.version).map(|()| WriteReply::Empty),
                Err(_) => Err(ErrorCode::MarshallingError),
            },
        };
        self.notify(changes);
        let (err, reply) = match result {
            Ok(reply) => (ErrorCode::Ok, reply),
            Err(e) => (e, WriteReply::Empty),
        };
        let mut buf = BytesMut::new();
        match reply {
            WriteReply::Path(p) => p.as_str().encode(&mut buf),
            WriteReply::PathStat(p, stat) => Create2Response { path: &p, stat }.encode(&mut buf),
            WriteReply::Stat(stat) => stat.encode(&mut buf),
            WriteReply::Empty => {}
        }
        (err, buf)
    }

    /// getData (shared with multiRead): data (`None` when null) and Stat; a watch only when
    /// the node exists and may be read.
    pub(crate) fn read_data(
        &mut self,
        conn: ConnectionId,
        path: &str,
        watch: bool,
    ) -> Result<(Option<Vec<u8>>, Stat), ErrorCode> {
        let node = self.tree.get(path).ok_or(ErrorCode::NoNode)?;
        acl::check(&node.acl, 1, &self.connections[&conn].auth)?;
        let out = (node.data.clone(), node.stat());
        if watch {
            self.data_watches
                .add(path, conn, WatchMode::Standard, self.config.zookeeper);
        }
        Ok(out)
    }

    /// getChildren (shared with multiRead): names in order (ZooKeeper's are in hash order).
    pub(crate) fn read_children(
        &mut self,
        conn: ConnectionId,
        path: &str,
        watch: bool,
    ) -> Result<(Vec<String>, Stat), ErrorCode> {
        let node = self.tree.get(path).ok_or(ErrorCode::NoNode)?;
        acl::check(&node.acl, 1, &self.connections[&conn].auth)?;
        let out = (node.children.iter().cloned().collect(), node.stat());
        if watch {
            self.child_watches
                .add(path, conn, WatchMode::Standard, self.config.zookeeper);
        }
        Ok(out)
    }

    fn handle_read(
        &mut self,
        conn: ConnectionId,
        op: OpCode,
        r: &mut Reader<'_>,
        out: &mut BytesMut,
    ) -> Result<(), ErrorCode> {
        match op {
            OpCode::GetData => {
                let req = PathWatchRequest::decode(r).map_err(bad)?;
                let (data, stat) = self.read_data(conn, req.path, req.watch)?;
                data.as_deref().encode(out);
                stat.encode(out);
            }
            OpCode::Exists => self.exists(conn, r, out)?,
            OpCode::GetChildren | OpCode::GetChildren2 => {
                let req = PathWatchRequest::decode(r).map_err(bad)?;
                let (names, stat) = self.read_children(conn, req.path, req.watch)?;
                put_str_vec(out, names.iter().map(String::as_str));
                if op == OpCode::GetChildren2 {
                    stat.encode(out);
                }
            }
            OpCode::GetAcl => self.get_acl(conn, r, out)?,
            OpCode::GetAllChildrenNumber => {
                let req = PathRecord::decode(r).map_err(bad)?;
                let node = self.tree.get(req.path).ok_or(ErrorCode::NoNode)?;
                acl::check(&node.acl, 1, &self.connections[&conn].auth)?;
                put_i32(out, self.tree.descendants(req.path) as i32);
            }
            OpCode::GetEphemerals => self.get_ephemerals(conn, r, out)?,
            OpCode::Sync => {
                let req = PathRecord::decode(r).map_err(bad)?;
                req.encode(out);
            }
            OpCode::WhoAmI => self.who_am_i(conn, out),
            OpCode::AddWatch => self.add_watch(conn, r, out)?,
            OpCode::CheckWatches | OpCode::RemoveWatches => {
                self.check_or_remove_watches(conn, op == OpCode::RemoveWatches, r)?;
            }
            // sasl, reconfig, createSession, deleteContainer... are not served to clients.
            _ => return Err(ErrorCode::Unimplemented),
        }
        Ok(())
    }

    /// exists: the Stat; a watch is left whether the node exists or not.
    fn exists(
        &mut self,
        conn: ConnectionId,
        r: &mut Reader<'_>,
        out: &mut BytesMut,
    ) -> Result<(), ErrorCode> {
        let req = PathWatchRequest::decode(r).map_err(bad)?;
        if req.path.contains('\0') {
            return Err(ErrorCode::BadArguments);
        }
        // 3.8.4 and 3.9.2 check READ on an existing node first (no watch left).
        if let Some(node) = self.tree.get(req.path) {
            if self.config.zookeeper.exists_checks_read() {
                acl::check(&node.acl, 1, &self.connections[&conn].auth)?;
            }
        }
        if req.watch {
            self.data_watches
                .add(req.path, conn, WatchMode::Standard, self.config.zookeeper);
        }
        self.tree
            .get(req.path)
            .ok_or(ErrorCode::NoNode)?
            .stat()
            .encode(out);
        Ok(())
    }

    /// getACL: the ACL and Stat, digest ids redacted without ADMIN.
    fn get_acl(
        &self,
        conn: ConnectionId,
        r: &mut Reader<'_>,
        out: &mut BytesMut,
    ) -> Result<(), ErrorCode> {
        let req = PathRecord::decode(r).map_err(bad)?;
        let auth = &self.connections[&conn].auth;
        let node = self.tree.get(req.path).ok_or(ErrorCode::NoNode)?;
        acl::check(&node.acl, 1 | 16, auth)?;
        // Without ADMIN, digest ids come back with their hash hidden.
        let redact = acl::check(&node.acl, 16, auth).is_err();
        let shown: Vec<AclEntry> = node
            .acl
            .iter()
            .map(|a| {
                let mut a = a.clone();
                if redact && a.scheme == "digest" {
                    let user = a.id.split(':').next().unwrap_or("").to_owned();
                    a.id = format!("{user}:x");
                }
                a
            })
            .collect();
        let wire: Vec<Acl<'_>> = shown.iter().map(AclEntry::as_acl).collect();
        GetAclResponse {
            acl: List::from(&wire),
            stat: node.stat(),
        }
        .encode(out);
        Ok(())
    }

    /// getEphemerals: the session's ephemeral nodes whose paths start with the request's (all
    /// for an empty path or `/`).
    fn get_ephemerals(
        &self,
        conn: ConnectionId,
        r: &mut Reader<'_>,
        out: &mut BytesMut,
    ) -> Result<(), ErrorCode> {
        let req = PathRecord::decode(r).map_err(bad)?;
        let session = self.connections[&conn].session;
        let prefix = req.path.trim();
        let all = prefix.is_empty() || prefix == "/";
        let found: Vec<&str> = self
            .tree
            .ephemerals(session)
            .filter(|p| all || p.starts_with(req.path))
            .collect();
        put_str_vec(out, found);
        Ok(())
    }

    /// whoAmI: the connection's identities, in Java's set order.
    fn who_am_i(&self, conn: ConnectionId, out: &mut BytesMut) {
        let ordered = acl::java_set_order(&self.connections[&conn].auth);
        let names: Vec<(String, String)> = ordered
            .iter()
            .map(|id| (id.scheme.clone(), self.config.auth_providers.user_name(id)))
            .collect();
        let infos: Vec<ClientInfo<'_>> = names
            .iter()
            .map(|(s, u)| ClientInfo {
                auth_scheme: s,
                user: u,
            })
            .collect();
        List::from(&infos).encode(out);
    }

    /// addWatch: a persistent (or persistent recursive) watch, in the tables the release uses.
    fn add_watch(
        &mut self,
        conn: ConnectionId,
        r: &mut Reader<'_>,
        out: &mut BytesMut,
    ) -> Result<(), ErrorCode> {
        let req = AddWatchRequest::decode(r).map_err(bad)?;
        // 3.8 puts both modes in both tables (a recursive watch in the child table
        // never fires on its own, but removeWatches(Children) finds it).
        let mode = if req.mode == zkrs_codec::AddWatchMode::PersistentRecursive {
            WatchMode::PersistentRecursive
        } else {
            WatchMode::Persistent
        };
        let version = self.config.zookeeper;
        self.data_watches.add(req.path, conn, mode, version);
        // 3.9 keeps a recursive watch out of the child table.
        if mode != WatchMode::PersistentRecursive || !version.watch_modes_side_by_side() {
            self.child_watches.add(req.path, conn, mode, version);
        }
        put_i32(out, 0);
        Ok(())
    }

    /// checkWatches (`remove` false) or removeWatches: the request's path and type.
    fn check_or_remove_watches(
        &mut self,
        conn: ConnectionId,
        remove: bool,
        r: &mut Reader<'_>,
    ) -> Result<(), ErrorCode> {
        let path = r.read_str().map_err(bad)?;
        let kind = r.read_i32().map_err(bad)?;
        let version = self.config.zookeeper;
        // On 3.8 checkWatches takes the path unchecked, and `containsWatcher` walks it
        // with a `PathParentIterator`, whose first step already cuts the parent off: a
        // path without `/` throws (StringIndexOutOfBoundsException, MarshallingError).
        // 3.9 looks the path up without a walk.
        if !remove && !version.watch_modes_side_by_side() && !path.is_empty() && !path.contains('/')
        {
            return Err(ErrorCode::MarshallingError);
        }
        if !self.watch_op(remove, kind, path, conn)? {
            return Err(ErrorCode::NoWatcher);
        }
        Ok(())
    }

    /// checkWatches (`remove` false) or removeWatches of `kind` (`WatcherType`): which tables
    /// and modes it looks at is the release's. An unknown type is MarshallingError (3.8 knows
    /// no Persistent (4) or PersistentRecursive (5) type either).
    fn watch_op(
        &mut self,
        remove: bool,
        kind: i32,
        path: &str,
        conn: ConnectionId,
    ) -> Result<bool, ErrorCode> {
        let version = self.config.zookeeper;
        let side_by_side = version.watch_modes_side_by_side();
        // (child table, data table, mode); 3.9's Data and Children types mean standard watches.
        let standard = side_by_side.then_some(WatchMode::Standard);
        let (child, data, mode) = match kind {
            1 => (true, false, standard),
            2 => (false, true, standard),
            3 => (true, true, None),
            // checkWatches(Persistent) looks at the data table only, removeWatches at both.
            4 if side_by_side => (remove, true, Some(WatchMode::Persistent)),
            5 if side_by_side => (false, true, Some(WatchMode::PersistentRecursive)),
            _ => return Err(ErrorCode::MarshallingError),
        };
        let mut found = false;
        if child {
            found |= if remove {
                self.child_watches.remove(path, conn, mode, version)
            } else {
                self.child_watches.contains(path, conn, mode, version)
            };
        }
        if data {
            found |= if remove {
                self.data_watches.remove(path, conn, mode, version)
            } else {
                self.data_watches.contains(path, conn, mode, version)
            };
        }
        Ok(found)
    }

    fn handle_set_watches(&mut self, conn: ConnectionId, xid: i32, op: OpCode, r: &mut Reader<'_>) {
        let decoded = if op == OpCode::SetWatches2 {
            SetWatches2::decode(r)
        } else {
            zkrs_codec::SetWatches::decode(r).map(|s| SetWatches2 {
                relative_zxid: s.relative_zxid,
                data_watches: s.data_watches,
                exist_watches: s.exist_watches,
                child_watches: s.child_watches,
                persistent_watches: List::EMPTY,
                persistent_recursive_watches: List::EMPTY,
            })
        };
        let Ok(req) = decoded else {
            let zxid = self.tree.last_zxid;
            self.reply(conn, xid, zxid, ErrorCode::MarshallingError, |_| {});
            return;
        };
        let rel = req.relative_zxid;
        for path in req.data_watches.iter() {
            match self.tree.get(path).map(|n| n.stat.mzxid) {
                None => self.send_event_to(conn, EventType::NodeDeleted, path, -1),
                Some(m) if m > rel => {
                    self.send_event_to(conn, EventType::NodeDataChanged, path, -1)
                }
                Some(_) => {
                    self.data_watches
                        .add(path, conn, WatchMode::Standard, self.config.zookeeper)
                }
            }
        }
        for path in req.exist_watches.iter() {
            if self.tree.get(path).is_some() {
                self.send_event_to(conn, EventType::NodeCreated, path, -1);
            } else {
                self.data_watches
                    .add(path, conn, WatchMode::Standard, self.config.zookeeper);
            }
        }
        for path in req.child_watches.iter() {
            match self.tree.get(path).map(|n| n.stat.pzxid) {
                None => self.send_event_to(conn, EventType::NodeDeleted, path, -1),
                Some(p) if p > rel => {
                    self.send_event_to(conn, EventType::NodeChildrenChanged, path, -1)
                }
                Some(_) => {
                    self.child_watches
                        .add(path, conn, WatchMode::Standard, self.config.zookeeper)
                }
            }
        }
        for path in req.persistent_watches.iter() {
            self.child_watches
                .add(path, conn, WatchMode::Persistent, self.config.zookeeper);
            self.data_watches
                .add(path, conn, WatchMode::Persistent, self.config.zookeeper);
        }
        let version = self.config.zookeeper;
        for path in req.persistent_recursive_watches.iter() {
            // As addWatch: 3.9 keeps a recursive watch out of the child table.
            if !version.watch_modes_side_by_side() {
                self.child_watches
                    .add(path, conn, WatchMode::PersistentRecursive, version);
            }
            self.data_watches
                .add(path, conn, WatchMode::PersistentRecursive, version);
        }

        let zxid = self.tree.last_zxid;
        self.reply(conn, xid, zxid, ErrorCode::Ok, |_| {});
    }
}

/// A request that does not decode.
fn bad<E>(_: E) -> ErrorCode {
    ErrorCode::MarshallingError
}
