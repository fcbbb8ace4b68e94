//! Every byte string produced by ZooKeeper 3.8's own Jute serializer (tests/vectors/, copied
//! from the project's shared vectors) matched both ways: decoding gives the values listed in
//! `jute-vectors.describe.txt`, and encoding those values gives the same bytes.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;

use bytes::BytesMut;
use zkrs_codec::*;

const VECTORS: &str = include_str!("vectors/jute-vectors.txt");

struct Vectors {
    bytes: HashMap<&'static str, Vec<u8>>,
    checked: RefCell<BTreeSet<&'static str>>,
}

fn hex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex length");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

impl Vectors {
    fn load() -> Vectors {
        let bytes = VECTORS
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| {
                let (name, hex_bytes) = line.split_once(' ').expect("name and bytes");
                (name, hex(hex_bytes.trim()))
            })
            .collect();
        Vectors {
            bytes,
            checked: RefCell::new(BTreeSet::new()),
        }
    }

    fn get(&self, name: &'static str) -> &[u8] {
        self.checked.borrow_mut().insert(name);
        self.bytes
            .get(name)
            .unwrap_or_else(|| panic!("no vector named {name}"))
    }

    /// A bare record: decodes to `expected`, and `expected` encodes to the bytes.
    fn record<'a, T>(&'a self, name: &'static str, expected: T)
    where
        T: Encode + Decode<'a> + PartialEq + Debug,
    {
        let bytes = self.get(name);
        let decoded = T::decode_exact(bytes).unwrap_or_else(|e| panic!("{name}: decode: {e}"));
        assert_eq!(decoded, expected, "{name}: decoded value");
        assert_eq!(&expected.to_bytes()[..], bytes, "{name}: encoded bytes");
    }

    /// A whole frame: the bytes are exactly `expected`, which is a frame that checks whole.
    fn frame(&self, name: &'static str, expected: BytesMut) -> &[u8] {
        let bytes = self.get(name);
        assert_eq!(&expected[..], bytes, "{name}: frame bytes");
        let len = check_frame(bytes, DEFAULT_MAX_FRAME_LEN)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .unwrap_or_else(|| panic!("{name}: incomplete"));
        assert_eq!(len + 4, bytes.len(), "{name}: length prefix");
        &bytes[4..]
    }
}

const STAT: Stat = Stat {
    czxid: 4294967298,
    mzxid: 4294967299,
    ctime: 1700000000123,
    mtime: 1700000000456,
    version: 7,
    cversion: 2,
    aversion: 1,
    ephemeral_owner: 72058331932327937,
    data_length: 11,
    num_children: 3,
    pzxid: 4294967300,
};
const HELLO: &[u8] = b"hello world";
const PASSWD: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
const WORLD_ALL: [Acl<'static>; 1] = [Acl {
    perms: Perms::ALL,
    id: Id::ANYONE,
}];
const MIXED_ACL: [Acl<'static>; 3] = [
    Acl {
        perms: Perms::ALL,
        id: Id::ANYONE,
    },
    Acl {
        perms: Perms::READ,
        id: Id {
            scheme: "digest",
            id: "user:tpUq/4Pn5A64fVZyQ0gOJ8ZWqkY=",
        },
    },
    Acl {
        perms: Perms(3),
        id: Id {
            scheme: "ip",
            id: "127.0.0.1",
        },
    },
];

fn create(
    path: &'static str,
    data: Option<&'static [u8]>,
    mode: CreateMode,
) -> CreateRequest<'static> {
    CreateRequest {
        path,
        data,
        acl: List::Slice(&WORLD_ALL),
        mode,
    }
}

fn reply_frame(xid: i32, err: ErrorCode, body: &dyn Fn(&mut BytesMut)) -> BytesMut {
    let mut buf = BytesMut::new();
    write_frame(&mut buf, |buf| {
        ReplyHeader {
            xid,
            zxid: 4294967302,
            err,
        }
        .encode(buf);
        body(buf);
    });
    buf
}

fn request_frame<R: Encode>(xid: i32, op: OpCode, body: &R) -> BytesMut {
    let mut buf = BytesMut::new();
    encode_request(&mut buf, xid, op, body);
    buf
}

#[test]
fn every_golden_vector_matches_both_ways() {
    let v = Vectors::load();

    // Handshake records (the bare Jute records have no read-only byte; the frames do).
    let new_session = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout_ms: 10000,
        session_id: 0,
        passwd: &[0; 16],
    };
    let reconnect = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 4294967301,
        timeout_ms: 10000,
        session_id: 72058331932327937,
        passwd: &PASSWD,
    };
    v.record("ConnectRequest", new_session);
    v.record("ConnectRequest.reconnect", reconnect);
    let connected = ConnectResponse {
        protocol_version: 0,
        timeout_ms: 10000,
        session_id: 72058331932327937,
        passwd: &PASSWD,
    };
    v.record("ConnectResponse", connected);
    v.record(
        "ConnectResponse.expired",
        ConnectResponse {
            protocol_version: 0,
            timeout_ms: 0,
            session_id: 0,
            passwd: &[0; 16],
        },
    );
    // An old server's response without the flag reads as not read-only.
    assert_eq!(
        decode_connect_response(v.get("ConnectResponse")).unwrap(),
        (connected, false)
    );

    // Headers.
    v.record(
        "RequestHeader",
        RequestHeader {
            xid: 1,
            op: OpCode::GetData,
        },
    );
    v.record(
        "RequestHeader.ping",
        RequestHeader {
            xid: xid::PING,
            op: OpCode::Ping,
        },
    );
    v.record(
        "RequestHeader.auth",
        RequestHeader {
            xid: xid::AUTH,
            op: OpCode::Auth,
        },
    );
    v.record(
        "RequestHeader.setWatches",
        RequestHeader {
            xid: xid::SET_WATCHES,
            op: OpCode::SetWatches,
        },
    );
    v.record(
        "RequestHeader.closeSession",
        RequestHeader {
            xid: i32::MAX,
            op: OpCode::CloseSession,
        },
    );
    v.record(
        "ReplyHeader",
        ReplyHeader {
            xid: 1,
            zxid: 4294967302,
            err: ErrorCode::Ok,
        },
    );
    v.record(
        "ReplyHeader.noNode",
        ReplyHeader {
            xid: 2,
            zxid: 4294967302,
            err: ErrorCode::NoNode,
        },
    );
    v.record(
        "ReplyHeader.notification",
        ReplyHeader {
            xid: xid::NOTIFICATION,
            zxid: -1,
            err: ErrorCode::Ok,
        },
    );
    v.record(
        "ReplyHeader.ping",
        ReplyHeader {
            xid: xid::PING,
            zxid: 4294967302,
            err: ErrorCode::Ok,
        },
    );

    // Data records.
    v.record("Stat", STAT);
    v.record("Stat.zero", Stat::default());
    v.record("Id", Id::ANYONE);
    v.record("ACL", WORLD_ALL[0]);

    // create.
    v.record(
        "CreateRequest",
        create("/app/node", Some(HELLO), CreateMode::EphemeralSequential),
    );
    v.record(
        "CreateRequest.nullData",
        create("/app/node", None, CreateMode::Persistent),
    );
    v.record(
        "CreateRequest.emptyData",
        create("/app/node", Some(b""), CreateMode::Persistent),
    );
    v.record(
        "CreateRequest.mixedAcl",
        CreateRequest {
            path: "/app/secure",
            data: Some(HELLO),
            acl: List::Slice(&MIXED_ACL),
            mode: CreateMode::PersistentSequential,
        },
    );
    v.record(
        "CreateRequest.emptyAcl",
        CreateRequest {
            path: "/app/node",
            data: Some(HELLO),
            acl: List::EMPTY,
            mode: CreateMode::Persistent,
        },
    );
    v.record(
        "CreateRequest.utf8Path",
        create("/ünï/€", Some("é".as_bytes()), CreateMode::Container),
    );
    v.record(
        "CreateTTLRequest",
        CreateTtlRequest {
            path: "/app/ttl",
            data: Some(HELLO),
            acl: List::Slice(&WORLD_ALL),
            mode: CreateMode::PersistentWithTtl,
            ttl_ms: 60000,
        },
    );
    v.record(
        "CreateResponse",
        CreateResponse {
            path: "/app/node0000000001",
        },
    );
    v.record(
        "Create2Response",
        Create2Response {
            path: "/app/node0000000001",
            stat: STAT,
        },
    );

    // delete, exists, getData, setData.
    v.record(
        "DeleteRequest",
        DeleteRequest {
            path: "/app/node",
            version: 7,
        },
    );
    v.record(
        "DeleteRequest.anyVersion",
        DeleteRequest {
            path: "/app/node",
            version: -1,
        },
    );
    v.record(
        "ExistsRequest",
        ExistsRequest {
            path: "/app/node",
            watch: true,
        },
    );
    v.record(
        "ExistsRequest.noWatch",
        ExistsRequest {
            path: "/app/node",
            watch: false,
        },
    );
    v.record("ExistsResponse", ExistsResponse { stat: STAT });
    v.record(
        "GetDataRequest",
        GetDataRequest {
            path: "/app/node",
            watch: true,
        },
    );
    v.record(
        "GetDataRequest.noWatch",
        GetDataRequest {
            path: "/app/node",
            watch: false,
        },
    );
    v.record(
        "GetDataResponse",
        GetDataResponse {
            data: Some(HELLO),
            stat: STAT,
        },
    );
    v.record(
        "GetDataResponse.nullData",
        GetDataResponse {
            data: None,
            stat: STAT,
        },
    );
    v.record(
        "GetDataResponse.emptyData",
        GetDataResponse {
            data: Some(b""),
            stat: STAT,
        },
    );
    v.record(
        "SetDataRequest",
        SetDataRequest {
            path: "/app/node",
            data: Some(b"new data"),
            version: 7,
        },
    );
    v.record(
        "SetDataRequest.anyVersion",
        SetDataRequest {
            path: "/app/node",
            data: Some(b"new data"),
            version: -1,
        },
    );
    v.record("SetDataResponse", SetDataResponse { stat: STAT });

    // Children.
    v.record(
        "GetChildrenRequest",
        GetChildrenRequest {
            path: "/app",
            watch: false,
        },
    );
    v.record(
        "GetChildrenRequest.watch",
        GetChildrenRequest {
            path: "/app",
            watch: true,
        },
    );
    v.record(
        "GetChildrenResponse",
        GetChildrenResponse {
            children: List::Slice(&["a", "b", "c"]),
        },
    );
    v.record(
        "GetChildrenResponse.empty",
        GetChildrenResponse {
            children: List::EMPTY,
        },
    );
    v.record(
        "GetChildren2Request",
        GetChildren2Request {
            path: "/app",
            watch: true,
        },
    );
    v.record(
        "GetChildren2Response",
        GetChildren2Response {
            children: List::Slice(&["a", "node0000000001", "ü"]),
            stat: STAT,
        },
    );
    v.record(
        "GetAllChildrenNumberRequest",
        GetAllChildrenNumberRequest { path: "/app" },
    );
    v.record(
        "GetAllChildrenNumberResponse",
        GetAllChildrenNumberResponse { total_number: 42 },
    );
    v.record(
        "GetEphemeralsRequest",
        GetEphemeralsRequest { path: "/app" },
    );
    v.record(
        "GetEphemeralsResponse",
        GetEphemeralsResponse {
            ephemerals: List::Slice(&["/app/e1", "/app/e2"]),
        },
    );

    // ACLs, sync, check, errors, auth, whoAmI, reconfig.
    v.record("GetACLRequest", GetAclRequest { path: "/app/node" });
    v.record(
        "GetACLResponse",
        GetAclResponse {
            acl: List::Slice(&MIXED_ACL),
            stat: STAT,
        },
    );
    v.record(
        "SetACLRequest",
        SetAclRequest {
            path: "/app/node",
            acl: List::Slice(&MIXED_ACL),
            version: 1,
        },
    );
    v.record("SetACLResponse", SetAclResponse { stat: STAT });
    v.record("SyncRequest", SyncRequest { path: "/app" });
    v.record("SyncResponse", SyncResponse { path: "/app" });
    v.record(
        "CheckVersionRequest",
        CheckVersionRequest {
            path: "/app/node",
            version: 7,
        },
    );
    v.record(
        "ErrorResponse",
        ErrorResponse {
            err: ErrorCode::NoNode,
        },
    );
    let auth = AuthPacket {
        auth_type: 0,
        scheme: "digest",
        auth: b"user:password",
    };
    v.record("AuthPacket", auth);
    v.record(
        "WhoAmIResponse",
        WhoAmIResponse {
            client_info: List::Slice(&[ClientInfo {
                auth_scheme: "ip",
                user: "127.0.0.1",
            }]),
        },
    );
    v.record(
        "ReconfigRequest",
        ReconfigRequest {
            joining_servers: Some("server.4=127.0.0.1:2888:3888:participant;2181"),
            leaving_servers: None,
            new_members: None,
            cur_config_id: -1,
        },
    );

    // Watches.
    let event = WatcherEvent {
        event_type: EventType::NodeDataChanged,
        state: KeeperState::SyncConnected,
        path: Some("/app/node"),
    };
    v.record("WatcherEvent", event);
    v.record(
        "WatcherEvent.childrenChanged",
        WatcherEvent {
            event_type: EventType::NodeChildrenChanged,
            state: KeeperState::SyncConnected,
            path: Some("/app"),
        },
    );
    v.record(
        "WatcherEvent.nullPath",
        WatcherEvent {
            event_type: EventType::None,
            state: KeeperState::SyncConnected,
            path: None,
        },
    );
    let set_watches = SetWatches {
        relative_zxid: 4294967301,
        data_watches: List::Slice(&["/a", "/b"]),
        exist_watches: List::Slice(&["/c"]),
        child_watches: List::EMPTY,
    };
    v.record("SetWatches", set_watches);
    let set_watches2 = SetWatches2 {
        relative_zxid: 4294967301,
        data_watches: List::Slice(&["/a"]),
        exist_watches: List::Slice(&["/b"]),
        child_watches: List::Slice(&["/c"]),
        persistent_watches: List::Slice(&["/p"]),
        persistent_recursive_watches: List::Slice(&["/r"]),
    };
    v.record("SetWatches2", set_watches2);
    let add_watch = AddWatchRequest {
        path: "/app",
        mode: AddWatchMode::PersistentRecursive,
    };
    v.record("AddWatchRequest", add_watch);
    v.record(
        "AddWatchRequest.persistent",
        AddWatchRequest {
            path: "/app",
            mode: AddWatchMode::Persistent,
        },
    );
    v.record(
        "RemoveWatchesRequest",
        RemoveWatchesRequest {
            path: "/app/node",
            watcher_type: WatcherType::Any,
        },
    );
    v.record(
        "CheckWatchesRequest",
        CheckWatchesRequest {
            path: "/app/node",
            watcher_type: WatcherType::Data,
        },
    );

    // multi.
    v.record(
        "MultiHeader",
        MultiHeader {
            op: OpCode::Create,
            done: false,
            err: -1,
        },
    );
    v.record("MultiHeader.done", MultiHeader::DONE);
    v.record(
        "MultiHeader.error",
        MultiHeader {
            op: OpCode::Error,
            done: false,
            err: -101,
        },
    );
    let ops = [
        MultiOp::Create(create("/multi/a", Some(b"a"), CreateMode::Persistent)),
        MultiOp::SetData(SetDataRequest {
            path: "/multi/b",
            data: Some(b"b"),
            version: 3,
        }),
        MultiOp::Delete(DeleteRequest {
            path: "/multi/c",
            version: -1,
        }),
        MultiOp::Check(CheckVersionRequest {
            path: "/multi/d",
            version: 5,
        }),
    ];
    let multi = MultiRequest {
        ops: MultiList::Slice(&ops),
    };
    v.record("MultiOperationRecord", multi);
    v.record(
        "MultiOperationRecord.empty",
        MultiRequest {
            ops: MultiList::Slice(&[]),
        },
    );
    let create_modes = [
        MultiOp::Create(create("/multi/e", None, CreateMode::EphemeralSequential)),
        MultiOp::CreateContainer(create("/multi/c", None, CreateMode::Container)),
        MultiOp::CreateTtl(CreateTtlRequest {
            path: "/multi/t",
            data: None,
            acl: List::Slice(&WORLD_ALL),
            mode: CreateMode::PersistentWithTtl,
            ttl_ms: 60000,
        }),
    ];
    v.record(
        "MultiOperationRecord.createModes",
        MultiRequest {
            ops: MultiList::Slice(&create_modes),
        },
    );
    let reads = [
        MultiOp::GetData(GetDataRequest {
            path: "/multi/a",
            watch: false,
        }),
        MultiOp::GetChildren(GetChildrenRequest {
            path: "/multi",
            watch: false,
        }),
    ];
    v.record(
        "MultiOperationRecord.read",
        MultiRequest {
            ops: MultiList::Slice(&reads),
        },
    );
    let results = [
        MultiOpResult::Create("/multi/a"),
        MultiOpResult::SetData(STAT),
        MultiOpResult::Delete,
        MultiOpResult::Check,
    ];
    let multi_reply = MultiResponse {
        results: MultiList::Slice(&results),
    };
    v.record("MultiResponse", multi_reply);
    v.record(
        "MultiResponse.empty",
        MultiResponse {
            results: MultiList::Slice(&[]),
        },
    );
    let create2 = [MultiOpResult::Create2 {
        op: OpCode::Create2,
        response: Create2Response {
            path: "/multi/c",
            stat: STAT,
        },
    }];
    v.record(
        "MultiResponse.create2",
        MultiResponse {
            results: MultiList::Slice(&create2),
        },
    );
    // A failed multi: OK for the op before the failure, the failure, rolled back after.
    let failed = [
        MultiOpResult::Error(ErrorCode::Ok),
        MultiOpResult::Error(ErrorCode::NoNode),
        MultiOpResult::Error(ErrorCode::RuntimeInconsistency),
    ];
    let failed_reply = MultiResponse {
        results: MultiList::Slice(&failed),
    };
    v.record("MultiResponse.error", failed_reply);
    let read_results = [
        MultiOpResult::GetData {
            data: Some(HELLO),
            stat: STAT,
        },
        MultiOpResult::GetChildren(List::Slice(&["a", "b"])),
        MultiOpResult::Error(ErrorCode::NoNode),
    ];
    v.record(
        "MultiResponse.read",
        MultiResponse {
            results: MultiList::Slice(&read_results),
        },
    );

    // Request frames, as the Java client sends them.
    let mut buf = BytesMut::new();
    encode_connect_request(&mut buf, &new_session, false);
    let body = v.frame("Frame.Request.Connect", buf);
    assert_eq!(decode_connect_request(body).unwrap(), (new_session, false));
    let mut buf = BytesMut::new();
    encode_connect_request(&mut buf, &reconnect, true);
    let body = v.frame("Frame.Request.Connect.readOnly", buf);
    assert_eq!(decode_connect_request(body).unwrap(), (reconnect, true));
    let mut buf = BytesMut::new();
    encode_header_only(&mut buf, xid::PING, OpCode::Ping);
    v.frame("Frame.Request.Ping", buf);
    let mut buf = BytesMut::new();
    encode_header_only(&mut buf, 9, OpCode::CloseSession);
    v.frame("Frame.Request.CloseSession", buf);
    let get = GetDataRequest {
        path: "/app/node",
        watch: true,
    };
    let body = v.frame(
        "Frame.Request.GetData",
        request_frame(1, OpCode::GetData, &get),
    );
    let (header, rest) = parse_request(body).unwrap();
    assert_eq!(
        header,
        RequestHeader {
            xid: 1,
            op: OpCode::GetData
        }
    );
    assert_eq!(GetDataRequest::decode_exact(rest).unwrap(), get);
    let c = create("/app/node", Some(HELLO), CreateMode::EphemeralSequential);
    v.frame("Frame.Request.Create", request_frame(2, OpCode::Create, &c));
    v.frame(
        "Frame.Request.Create2",
        request_frame(2, OpCode::Create2, &c),
    );
    let body = v.frame(
        "Frame.Request.Multi",
        request_frame(3, OpCode::Multi, &multi),
    );
    assert_eq!(MultiRequest::decode_exact(&body[8..]).unwrap(), multi);
    v.frame(
        "Frame.Request.Auth",
        request_frame(xid::AUTH, OpCode::Auth, &auth),
    );
    v.frame(
        "Frame.Request.SetWatches",
        request_frame(xid::SET_WATCHES, OpCode::SetWatches, &set_watches),
    );
    v.frame(
        "Frame.Request.SetWatches2",
        request_frame(xid::SET_WATCHES, OpCode::SetWatches2, &set_watches2),
    );
    v.frame(
        "Frame.Request.AddWatch",
        request_frame(4, OpCode::AddWatch, &add_watch),
    );

    // Reply frames, as the server sends them: check, parse the header, decode the body.
    let data_reply = GetDataResponse {
        data: Some(HELLO),
        stat: STAT,
    };
    let body = v.frame(
        "Frame.Reply.GetData",
        reply_frame(1, ErrorCode::Ok, &|b| data_reply.encode(b)),
    );
    let (header, rest) = parse_reply(body).unwrap();
    assert_eq!(
        header,
        ReplyHeader {
            xid: 1,
            zxid: 4294967302,
            err: ErrorCode::Ok
        }
    );
    assert_eq!(GetDataResponse::decode_exact(rest).unwrap(), data_reply);
    let created = CreateResponse {
        path: "/app/node0000000001",
    };
    let body = v.frame(
        "Frame.Reply.Create",
        reply_frame(2, ErrorCode::Ok, &|b| created.encode(b)),
    );
    assert_eq!(
        CreateResponse::decode_exact(parse_reply(body).unwrap().1).unwrap(),
        created
    );
    let body = v.frame(
        "Frame.Reply.Error",
        reply_frame(1, ErrorCode::NoNode, &|_| {}),
    );
    let (header, rest) = parse_reply(body).unwrap();
    assert_eq!(
        (header.xid, header.err, rest.len()),
        (1, ErrorCode::NoNode, 0)
    );
    let body = v.frame(
        "Frame.Reply.Ping",
        reply_frame(xid::PING, ErrorCode::Ok, &|_| {}),
    );
    assert_eq!(parse_reply(body).unwrap().0.xid, xid::PING);
    v.frame(
        "Frame.Reply.CloseSession",
        reply_frame(9, ErrorCode::Ok, &|_| {}),
    );
    let body = v.frame(
        "Frame.Reply.Multi",
        reply_frame(3, ErrorCode::Ok, &|b| multi_reply.encode(b)),
    );
    assert_eq!(
        MultiResponse::decode_exact(parse_reply(body).unwrap().1).unwrap(),
        multi_reply
    );
    let body = v.frame(
        "Frame.Reply.MultiError",
        reply_frame(3, ErrorCode::Ok, &|b| failed_reply.encode(b)),
    );
    let (header, rest) = parse_reply(body).unwrap();
    assert_eq!(
        header.err,
        ErrorCode::Ok,
        "a failed multi answers Ok in its header"
    );
    assert_eq!(MultiResponse::decode_exact(rest).unwrap(), failed_reply);
    let mut buf = BytesMut::new();
    write_frame(&mut buf, |b| {
        ReplyHeader {
            xid: xid::NOTIFICATION,
            zxid: -1,
            err: ErrorCode::Ok,
        }
        .encode(b);
        event.encode(b);
    });
    let body = v.frame("Frame.Notification", buf);
    assert_eq!(
        WatcherEvent::decode_exact(parse_reply(body).unwrap().1).unwrap(),
        event
    );
    let mut buf = BytesMut::new();
    write_frame(&mut buf, |b| {
        connected.encode(b);
        b.extend_from_slice(&[0]);
    });
    let body = v.frame("Frame.ConnectResponse", buf);
    assert_eq!(decode_connect_response(body).unwrap(), (connected, false));

    // Nothing in the file was skipped.
    let all: BTreeSet<&str> = v.bytes.keys().copied().collect();
    let checked = v.checked.borrow();
    let missed: Vec<_> = all.difference(&checked).collect();
    assert!(missed.is_empty(), "vectors not checked: {missed:?}");
}

#[test]
fn constants_match_the_java_values() {
    let constants = include_str!("vectors/jute-constants.txt");
    let mut seen = 0;
    for line in constants.lines().filter(|l| !l.trim().is_empty()) {
        let (name, value) = line.split_once(' ').expect("name value");
        let value: i32 = value.trim().parse().expect("number");
        let (group, item) = name.split_once('.').expect("Group.name");
        let ours: Option<(i32, String)> = match group {
            "OpCode" => OpCode::from_code(value).map(|o| (o.code(), o.name().to_string())),
            "Code" => Some((
                ErrorCode::from_code(value).code(),
                ErrorCode::from_code(value).name().to_uppercase(),
            )),
            "EventType" => Some((
                EventType::from_code(value).code(),
                EventType::from_code(value).name().to_string(),
            )),
            "KeeperState" => match item {
                // Deprecated states the server never sends: kept as unknown values.
                "Unknown" | "NoSyncConnected" => {
                    assert!(matches!(
                        KeeperState::from_code(value),
                        KeeperState::Unknown(_)
                    ));
                    None
                }
                _ => Some((
                    KeeperState::from_code(value).code(),
                    KeeperState::from_code(value).name().to_string(),
                )),
            },
            "CreateMode" => CreateMode::from_code(value).map(|m| (m.code(), m.name().to_string())),
            "AddWatchMode" => {
                AddWatchMode::from_code(value).map(|m| (m.code(), m.name().to_string()))
            }
            "WatcherType" => {
                WatcherType::from_code(value).map(|m| (m.code(), m.name().to_string()))
            }
            "Perms" => {
                let p = match item {
                    "READ" => Perms::READ,
                    "WRITE" => Perms::WRITE,
                    "CREATE" => Perms::CREATE,
                    "DELETE" => Perms::DELETE,
                    "ADMIN" => Perms::ADMIN,
                    "ALL" => Perms::ALL,
                    other => panic!("unknown perm {other}"),
                };
                Some((p.0, item.to_string()))
            }
            "Xid" => {
                let x = match item {
                    "NOTIFICATION" => xid::NOTIFICATION,
                    "PING" => xid::PING,
                    "AUTHPACKET" => xid::AUTH,
                    "SET_WATCHES" => xid::SET_WATCHES,
                    other => panic!("unknown xid {other}"),
                };
                Some((x, item.to_string()))
            }
            other => panic!("unknown group {other}"),
        };
        if let Some((code, our_name)) = ours {
            assert_eq!(code, value, "{name}");
            // Names are compared loosely: case and underscores differ between Java enums.
            let norm = |s: &str| s.to_lowercase().replace('_', "");
            assert_eq!(norm(&our_name), norm(item), "{name}");
            seen += 1;
        } else if !matches!(group, "KeeperState") {
            panic!("{name} = {value} has no value here");
        }
    }
    assert!(seen > 90, "only {seen} constants checked");
}

#[test]
fn unknown_codes_are_kept_not_refused() {
    assert_eq!(ErrorCode::from_code(-9999), ErrorCode::Unknown(-9999));
    assert_eq!(ErrorCode::Unknown(-9999).code(), -9999);
    assert_eq!(ErrorCode::from_code(-9999).to_string(), "Unknown(-9999)");
    let header =
        ReplyHeader::decode_exact(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xd8, 0xf1])
            .unwrap();
    assert_eq!(header.err, ErrorCode::Unknown(-9999));
    assert!(OpCode::from_code(55).is_none());
    assert!(matches!(
        CreateMode::try_from(9),
        Err(DecodeError::InvalidValue {
            field: "create mode",
            value: 9
        })
    ));
}
