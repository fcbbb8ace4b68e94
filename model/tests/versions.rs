//! What changed between ZooKeeper 3.8 and 3.9 (and within the lines), both sides of each
//! change, on the sans-I/O core: `ServerConfig::zookeeper` picks the release.

use std::collections::HashMap;
use std::time::Instant;

use bytes::BytesMut;
use zkrs_codec::{
    check_frame, encode_connect_request, encode_request, jute::put_i32, jute::put_str,
    jute::Reader, parse_reply, Acl, AddWatchMode, AddWatchRequest, ConnectRequest, CreateMode,
    CreateRequest, Decode, Encode, ErrorCode, Id, List, MultiItem, MultiOp, MultiRequest,
    MultiResponse, OpCode, PathWatchRequest, Perms, SetDataRequest, WatcherEvent,
};
use zkrs_model::{ConnectionId, Server, ServerConfig, ZooKeeperVersion};

/// A frame the model sent: a reply (xid, zxid, error, body) or an event (type, path, zxid).
#[derive(Debug)]
enum Out {
    Reply(i32, i64, ErrorCode, Vec<u8>),
    Event(i32, String, i64),
}

/// A request body written by hand (watcher types the codec does not send).
struct Raw(Vec<u8>);

impl Encode for Raw {
    fn encode(&self, buf: &mut BytesMut) {
        buf.extend_from_slice(&self.0);
    }
}

struct Model {
    server: Server,
    now: Instant,
    /// Bytes sent to each connection and not read yet.
    pending: HashMap<ConnectionId, Vec<u8>>,
}

struct Client {
    conn: ConnectionId,
    xid: i32,
}

fn model(version: &str) -> Model {
    let now = Instant::now();
    let mut config = ServerConfig::default();
    config.zookeeper = version.parse().unwrap();
    Model {
        server: Server::new(config, now),
        now,
        pending: HashMap::new(),
    }
}

impl Model {
    /// Every frame the server has for `conn`; other connections' output is kept for them.
    fn frames(&mut self, conn: ConnectionId) -> Vec<Out> {
        while let Some(t) = self.server.poll_transmit() {
            let bytes = self.pending.entry(t.connection).or_default();
            bytes.extend_from_slice(&t.data);
        }
        let bytes = self.pending.remove(&conn).unwrap_or_default();
        let mut out = Vec::new();
        let mut rest = &bytes[..];
        while let Ok(Some(len)) = check_frame(rest, usize::MAX >> 1) {
            let (h, body) = parse_reply(&rest[4..4 + len]).unwrap();
            if h.xid == -1 {
                let e = WatcherEvent::decode(&mut Reader::new(body)).unwrap();
                out.push(Out::Event(
                    e.event_type.code(),
                    e.path.unwrap_or("").to_owned(),
                    h.zxid,
                ));
            } else {
                out.push(Out::Reply(h.xid, h.zxid, h.err, body.to_vec()));
            }
            rest = &rest[4 + len..];
        }
        out
    }

    fn connect(&mut self) -> Client {
        let conn = self.server.accept("127.0.0.1", self.now);
        let mut buf = BytesMut::new();
        let req = ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout_ms: 4000,
            session_id: 0,
            passwd: &[0; 16],
        };
        encode_connect_request(&mut buf, &req, false);
        self.server.handle_input(conn, &buf, self.now);
        self.frames(conn);
        Client { conn, xid: 1 }
    }

    /// Sends one request; returns the reply (zxid, error, body) and the events before it.
    fn call(
        &mut self,
        c: &mut Client,
        op: OpCode,
        body: &dyn Encode,
    ) -> (i64, ErrorCode, Vec<u8>, Vec<Out>) {
        let mut buf = BytesMut::new();
        encode_request(&mut buf, c.xid, op, body);
        c.xid += 1;
        self.server.handle_input(c.conn, &buf, self.now);
        let mut events = Vec::new();
        for frame in self.frames(c.conn) {
            match frame {
                Out::Reply(xid, zxid, err, body) if xid == c.xid - 1 => {
                    return (zxid, err, body, events)
                }
                other => events.push(other),
            }
        }
        panic!("no reply to {op:?}")
    }

    fn err(&mut self, c: &mut Client, op: OpCode, body: &dyn Encode) -> ErrorCode {
        self.call(c, op, body).1
    }

    fn create(&mut self, c: &mut Client, path: &str, acl: List<'_, Acl<'_>>) -> i64 {
        let req = CreateRequest {
            path,
            data: Some(b""),
            acl,
            mode: CreateMode::Persistent,
        };
        let (zxid, err, ..) = self.call(c, OpCode::Create, &req);
        assert_eq!(err, ErrorCode::Ok, "create {path}");
        zxid
    }

    fn set_data(&mut self, c: &mut Client, path: &str) -> i64 {
        let req = SetDataRequest {
            path,
            data: Some(b"x"),
            version: -1,
        };
        let (zxid, err, ..) = self.call(c, OpCode::SetData, &req);
        assert_eq!(err, ErrorCode::Ok, "setData {path}");
        zxid
    }

    fn add_watch(&mut self, c: &mut Client, path: &str, mode: AddWatchMode) {
        let err = self.err(c, OpCode::AddWatch, &AddWatchRequest { path, mode });
        assert_eq!(err, ErrorCode::Ok);
    }

    /// `exists` with a watch.
    fn exists(&mut self, c: &mut Client, path: &str) -> ErrorCode {
        self.err(c, OpCode::Exists, &PathWatchRequest { path, watch: true })
    }

    /// checkWatches or removeWatches of a raw watcher type.
    fn watches(&mut self, c: &mut Client, op: OpCode, path: &str, kind: i32) -> ErrorCode {
        let mut body = BytesMut::new();
        put_str(&mut body, path);
        put_i32(&mut body, kind);
        self.err(c, op, &Raw(body.to_vec()))
    }

    /// The events `c` has had since its last call: (type, path, header zxid).
    fn events(&mut self, c: &Client) -> Vec<(i32, String, i64)> {
        self.frames(c.conn)
            .into_iter()
            .filter_map(|f| match f {
                Out::Event(t, p, z) => Some((t, p, z)),
                Out::Reply(..) => None,
            })
            .collect()
    }
}

fn open() -> List<'static, Acl<'static>> {
    List::from(Acl::OPEN_ACL_UNSAFE)
}
const NODE_DATA_CHANGED: i32 = 3;

#[test]
fn a_standard_watch_replaces_a_persistent_one_on_3_8_and_sits_beside_it_on_3_9() {
    for (version, second_change_seen) in [("3.8.0", false), ("3.8.6", false), ("3.9.0", true)] {
        let mut m = model(version);
        let (mut a, mut b) = (m.connect(), m.connect());
        m.create(&mut b, "/x", open());
        m.add_watch(&mut a, "/x", AddWatchMode::Persistent);
        assert_eq!(m.exists(&mut a, "/x"), ErrorCode::Ok);
        m.set_data(&mut b, "/x");
        assert_eq!(m.events(&a).len(), 1, "{version}: one event per connection");
        m.set_data(&mut b, "/x");
        assert_eq!(m.events(&a).len() == 1, second_change_seen, "{version}");
    }
}

#[test]
fn remove_watches_of_the_persistent_types_is_a_marshalling_error_before_3_9() {
    for (kind, mode) in [
        (4, AddWatchMode::Persistent),
        (5, AddWatchMode::PersistentRecursive),
    ] {
        let mut m = model("3.8.6");
        let mut a = m.connect();
        m.add_watch(&mut a, "/", mode);
        for op in [OpCode::CheckWatches, OpCode::RemoveWatches] {
            assert_eq!(
                m.watches(&mut a, op, "/", kind),
                ErrorCode::MarshallingError
            );
        }

        let mut m = model("3.9.5");
        let mut a = m.connect();
        m.add_watch(&mut a, "/", mode);
        // The other persistent type is not there.
        let other = 9 - kind;
        assert_eq!(
            m.watches(&mut a, OpCode::RemoveWatches, "/", other),
            ErrorCode::NoWatcher
        );
        assert_eq!(
            m.watches(&mut a, OpCode::CheckWatches, "/", kind),
            ErrorCode::Ok
        );
        assert_eq!(
            m.watches(&mut a, OpCode::RemoveWatches, "/", kind),
            ErrorCode::Ok
        );
        assert_eq!(
            m.watches(&mut a, OpCode::CheckWatches, "/", kind),
            ErrorCode::NoWatcher
        );
        assert_eq!(
            m.watches(&mut a, OpCode::RemoveWatches, "/", kind),
            ErrorCode::NoWatcher
        );
        // Any other type is still refused.
        assert_eq!(
            m.watches(&mut a, OpCode::RemoveWatches, "/", 6),
            ErrorCode::MarshallingError
        );
    }
}

#[test]
fn data_and_children_types_mean_standard_watches_on_3_9() {
    for (version, found) in [("3.8.0", ErrorCode::Ok), ("3.9.5", ErrorCode::NoWatcher)] {
        let mut m = model(version);
        let mut a = m.connect();
        m.add_watch(&mut a, "/", AddWatchMode::PersistentRecursive);
        // 3.8 keeps the recursive watch in both tables and removes whatever mode is there.
        assert_eq!(
            m.watches(&mut a, OpCode::RemoveWatches, "/", 1),
            found,
            "{version}"
        );
        m.add_watch(&mut a, "/", AddWatchMode::Persistent);
        assert_eq!(
            m.watches(&mut a, OpCode::RemoveWatches, "/", 2),
            found,
            "{version}"
        );
    }
}

#[test]
fn check_watches_answers_for_the_asking_connection_from_3_9() {
    for (version, other_conns_watch, relative) in [
        ("3.8.0", ErrorCode::Ok, ErrorCode::MarshallingError),
        ("3.9.5", ErrorCode::NoWatcher, ErrorCode::NoWatcher),
    ] {
        let mut m = model(version);
        let (mut a, mut b) = (m.connect(), m.connect());
        assert_eq!(m.exists(&mut b, "/x"), ErrorCode::NoNode);
        let check = m.watches(&mut a, OpCode::CheckWatches, "/x", 2);
        assert_eq!(check, other_conns_watch, "{version}");
        assert_eq!(
            m.watches(&mut b, OpCode::CheckWatches, "/x", 2),
            ErrorCode::Ok
        );
        let check = m.watches(&mut a, OpCode::CheckWatches, "x", 3);
        assert_eq!(check, relative, "{version}: a path without /");
    }
}

#[test]
fn events_carry_the_zxid_of_their_write_from_3_9() {
    for version in ["3.8.6", "3.9.0"] {
        let mut m = model(version);
        let (mut a, mut b) = (m.connect(), m.connect());
        assert_eq!(m.exists(&mut a, "/x"), ErrorCode::NoNode);
        let created = m.create(&mut b, "/x", open());
        let mut events = m.events(&a);
        m.add_watch(&mut a, "/x", AddWatchMode::Persistent);
        let changed = m.set_data(&mut b, "/x");
        events.extend(m.events(&a));
        let zxids: Vec<i64> = events.iter().map(|e| e.2).collect();
        if version == "3.9.0" {
            assert_eq!(zxids, [created, changed], "{events:?}");
        } else {
            assert_eq!(zxids, [-1, -1], "{events:?}");
        }
        assert_eq!(events[1].0, NODE_DATA_CHANGED);
    }
}

#[test]
fn create2_in_a_multi_answers_with_its_stat_from_3_8_2() {
    for (version, op) in [
        ("3.8.0", OpCode::Create),
        ("3.8.2", OpCode::Create2),
        ("3.9.5", OpCode::Create2),
    ] {
        let mut m = model(version);
        let mut a = m.connect();
        let ops = [MultiOp::Create2(CreateRequest {
            path: "/y",
            data: Some(b"d"),
            acl: open(),
            mode: CreateMode::Persistent,
        })];
        let (_, err, body, _) = m.call(&mut a, OpCode::Multi, &MultiRequest { ops: (&ops).into() });
        assert_eq!(err, ErrorCode::Ok);
        let response = MultiResponse::decode(&mut Reader::new(&body)).unwrap();
        let result = response.results.iter().next().unwrap();
        assert_eq!(result.header().op, op, "{version}: {result:?}");
    }
}

#[test]
fn exists_needs_read_from_3_8_4_and_3_9_2() {
    let write_only = [Acl {
        perms: Perms::WRITE,
        id: Id::ANYONE,
    }];
    for (version, answer) in [
        ("3.8.0", ErrorCode::Ok),
        ("3.8.3", ErrorCode::Ok),
        ("3.8.4", ErrorCode::NoAuth),
        ("3.9.1", ErrorCode::Ok),
        ("3.9.2", ErrorCode::NoAuth),
    ] {
        let mut m = model(version);
        let mut a = m.connect();
        m.create(&mut a, "/s", List::from(&write_only));
        assert_eq!(m.exists(&mut a, "/s"), answer, "{version}");
        // Refused, it leaves no watch.
        let watched = m.watches(&mut a, OpCode::CheckWatches, "/s", 2) == ErrorCode::Ok;
        assert_eq!(watched, answer == ErrorCode::Ok, "{version}");
    }
}

#[test]
fn srvr_reports_the_release_the_model_answers_as() {
    for version in [ZooKeeperVersion::V3_8_0, ZooKeeperVersion::V3_9_5] {
        let now = Instant::now();
        let mut config = ServerConfig::default();
        config.zookeeper = version;
        let mut server = Server::new(config, now);
        let conn = server.accept("127.0.0.1", now);
        server.handle_input(conn, b"srvr", now);
        let mut text = Vec::new();
        while let Some(t) = server.poll_transmit() {
            text.extend_from_slice(&t.data);
        }
        let text = String::from_utf8(text).unwrap();
        let first = format!("Zookeeper version: {version}-zkrs-model-");
        assert!(text.starts_with(&first), "{text}");
    }
}
