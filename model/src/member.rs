//! A server as a member of an ensemble: it answers reads from its own tree, and hands what
//! needs the leader (writes, multi, session creation and closing, sync, resuming a session)
//! to the ensemble, which orders them into the committed log every member applies. A
//! connection waiting on the log holds its later requests back, so a session's requests are
//! answered in order (ZooKeeper's CommitProcessor does the same).

use std::collections::VecDeque;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use zkrs_codec::{jute::put_bool, write_frame, ConnectResponse, Encode, ErrorCode, OpCode};

use crate::acl::AuthId;
use crate::config::ServerConfig;
use crate::connection_id::ConnectionId;
use crate::membership::{Forward, Membership};
use crate::server::{Phase, Server};

impl Server {
    /// A server that is a member of an ensemble; its connection ids start at `first_id` (a
    /// restarted member must not reuse the ids the log's entries name).
    pub(crate) fn new_member(config: ServerConfig, first_id: u64, start: Instant) -> Server {
        let mut server = Server::new(config, start);
        server.membership = Some(Membership::default());
        server.next_connection = first_id;
        server
    }

    fn forward(&mut self, conn: Option<ConnectionId>, f: Forward) {
        if let Some(m) = self.membership.as_mut() {
            if let Some(conn) = conn {
                m.waiting.insert(conn);
            }
            m.outbox.push(f);
        }
    }

    /// A request arrived on `conn` and waits its turn behind the session's write: ZooKeeper
    /// touches a session when a request arrives (`submitRequest`), not when its turn comes,
    /// so a request (a ping) waiting on a member that lags still keeps the session alive at
    /// the leader.
    pub(crate) fn touch_on_arrival(&mut self, conn: ConnectionId) {
        let Some(c) = self.connections.get(&conn) else {
            return;
        };
        if c.phase != crate::server::Phase::Open {
            return;
        }
        let session = c.session;
        let now = self.now;
        self.sessions.touch(session, now);
        self.forward(None, Forward::Touch(session));
    }

    pub(crate) fn take_forwards(&mut self) -> Vec<Forward> {
        self.membership
            .as_mut()
            .map(|m| std::mem::take(&mut m.outbox))
            .unwrap_or_default()
    }

    pub(crate) fn forward_connect(
        &mut self,
        conn: ConnectionId,
        session: i64,
        passwd: Vec<u8>,
        timeout_ms: i32,
    ) {
        let f = if session == 0 {
            Forward::CreateSession { conn, timeout_ms }
        } else {
            Forward::Resume {
                conn,
                session,
                passwd,
                timeout_ms,
            }
        };
        self.forward(Some(conn), f);
    }

    /// Hands a request that needs the leader to the ensemble; false when this server is not
    /// a member or the request is answered here.
    pub(crate) fn forward_request(
        &mut self,
        conn: ConnectionId,
        xid: i32,
        op: OpCode,
        body: &[u8],
    ) -> bool {
        if self.membership.is_none() {
            return false;
        }
        let (session, auth) = self.writer(conn);
        self.forward(None, Forward::Touch(session));
        let f = match op {
            op if crate::write::served_write(op) => {
                if op == OpCode::Multi && !crate::multi::multi_decodes(body, self.config.zookeeper)
                {
                    return false;
                }
                Forward::Write {
                    conn,
                    xid,
                    op,
                    body: Bytes::copy_from_slice(body),
                    session,
                    auth,
                }
            }
            OpCode::CloseSession => Forward::CloseSession { conn, xid, session },
            OpCode::Sync => match zkrs_codec::jute::Reader::new(body).read_str() {
                Ok(path) => Forward::Sync {
                    conn,
                    xid,
                    path: path.to_owned(),
                },
                Err(_) => return false,
            },
            _ => return false,
        };
        self.forward(Some(conn), f);
        true
    }

    /// The ensemble's answer to a connect: the session (id, password, timeout), or `None`
    /// (expired or wrong password: timeout 0, then the connection closes).
    pub(crate) fn finish_connect(
        &mut self,
        conn: ConnectionId,
        session: Option<(i64, [u8; 16], i32)>,
    ) {
        let Some(c) = self.connections.get_mut(&conn) else {
            return;
        };
        let (id, passwd, timeout) = session.unwrap_or((0, [0; 16], 0));
        write_frame(&mut c.output, |buf| {
            ConnectResponse {
                protocol_version: 0,
                timeout_ms: timeout,
                session_id: id,
                passwd: &passwd,
            }
            .encode(buf);
            put_bool(buf, false);
        });
        if session.is_some() {
            c.phase = Phase::Open;
            c.session = id;
        }
        self.mark_dirty(conn);
        if session.is_some() {
            if let Some(s) = self.sessions.sessions.get_mut(&id) {
                s.connection = Some(conn);
            }
            self.release(conn);
        } else {
            self.close_connection(conn);
        }
    }

    /// A committed write, applied here; answered when `origin` is one of this member's
    /// connections.
    pub(crate) fn apply_write(
        &mut self,
        origin: Option<(ConnectionId, i32)>,
        txn: (OpCode, &[u8], i64, &[AuthId], i64, i64),
    ) {
        let (op, body, session, auth, zxid, time) = txn;
        let (err, out): (ErrorCode, BytesMut) = self.run_write(op, body, session, auth, zxid, time);
        if let Some((conn, xid)) = origin {
            self.reply(conn, xid, zxid, err, |buf| buf.extend_from_slice(&out));
            self.release(conn);
        }
    }

    /// A committed createSession, applied here.
    pub(crate) fn apply_create_session(
        &mut self,
        origin: Option<ConnectionId>,
        session: (i64, [u8; 16], i32),
        zxid: i64,
    ) {
        self.tree.last_zxid = self.tree.last_zxid.max(zxid);
        let now = self.now;
        self.sessions.insert(session.0, session.1, session.2, now);
        if let Some(conn) = origin {
            self.finish_connect(conn, Some(session));
        }
    }

    /// A committed closeSession (closed or expired), applied here.
    pub(crate) fn apply_close_session(
        &mut self,
        origin: Option<(ConnectionId, i32)>,
        session: i64,
        zxid: i64,
    ) {
        self.close_session_at(session, zxid, origin);
    }

    /// A sync reached this member in the log: it has applied everything before it.
    pub(crate) fn apply_sync(&mut self, conn: ConnectionId, xid: i32, path: &str) {
        let zxid = self.tree.last_zxid;
        self.reply(conn, xid, zxid, ErrorCode::Ok, |buf| path.encode(buf));
        self.release(conn);
    }

    /// Closes every client connection (a member cut off or crashed stops serving).
    pub(crate) fn close_all(&mut self) {
        let all: Vec<ConnectionId> = self.connections.keys().copied().collect();
        for conn in all {
            self.close_connection(conn);
        }
    }

    /// Closes this member's connections of `session` but `keep` (it resumed elsewhere).
    pub(crate) fn close_session_connections(&mut self, session: i64, keep: Option<ConnectionId>) {
        let found: Vec<ConnectionId> = self
            .connections
            .iter()
            .filter(|(id, c)| Some(**id) != keep && c.session == session && c.phase == Phase::Open)
            .map(|(id, _)| *id)
            .collect();
        for conn in found {
            self.close_connection(conn);
        }
    }

    /// The connection's log entry was applied: its held-back requests go on, in order, until
    /// one waits on the log again.
    fn release(&mut self, conn: ConnectionId) {
        let Some(m) = self.membership.as_mut() else {
            return;
        };
        m.waiting.remove(&conn);
        loop {
            let Some(m) = self.membership.as_mut() else {
                return;
            };
            if m.waiting.contains(&conn) {
                return;
            }
            let Some(frame) = m.queued.get_mut(&conn).and_then(VecDeque::pop_front) else {
                m.queued.remove(&conn);
                return;
            };
            self.dispatch_frame(conn, frame);
        }
    }
}
