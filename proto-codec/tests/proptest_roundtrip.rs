//! Property tests: every record, encoded and then decoded with `decode_exact`, gives back an
//! equal value; and frames written with `write_frame` are found whole by `check_frame`, with
//! every strict prefix asking for more bytes.
//!
//! Records borrow their strings, buffers and lists, so the strategies generate owned models
//! (`String`, `Vec<u8>`, `Vec<...>`) and each test builds the borrowed record from them, lists
//! as `List::Slice` over a `Vec` held by the test. Decoding gives `List::Wire`, and the
//! comparison iterates both.

use bytes::BytesMut;
use proptest::prelude::*;
use zkrs_codec::*;

/// Cases per property: enough to cover the enums and the null/empty corners, small enough for
/// the whole suite to stay fast in debug builds.
const CASES: u32 = 256;

/// Encodes `$value`, decodes the bytes as `$ty` with `decode_exact`, and requires an equal
/// value. Evaluates to the encoding.
macro_rules! roundtrip {
    ($ty:ident, $value:expr) => {{
        let value = $value;
        let bytes = Encode::to_bytes(&value);
        match $ty::decode_exact(&bytes) {
            Ok(back) => prop_assert_eq!(back, value, "{} round trip", stringify!($ty)),
            Err(e) => prop_assert!(
                false,
                "{} does not decode its own encoding: {e} ({:02x?})",
                stringify!($ty),
                &bytes[..]
            ),
        }
        bytes
    }};
}

// ---------------------------------------------------------------------------------------------
// Strategies.

/// Strings: empty, path-like ASCII, and arbitrary printable Unicode (multi-byte UTF-8).
fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("/ünï/€".to_string()),
        Just("日本語/🦀".to_string()),
        "/[a-z0-9_-]{0,12}(/[a-z0-9_-]{1,12}){0,3}",
        "\\PC{0,24}",
    ]
}

/// Optional strings, with `None` and `Some("")` both likely.
fn opt_string() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some(String::new())),
        string().prop_map(Some),
    ]
}

/// Byte buffers, empty included.
fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..48)
}

/// Optional buffers, with `None` (null, length -1) and `Some(empty)` (length 0) both likely:
/// they must stay distinct.
fn opt_bytes() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![Just(None), Just(Some(Vec::new())), bytes().prop_map(Some)]
}

fn stat() -> impl Strategy<Value = Stat> {
    (
        (any::<i64>(), any::<i64>(), any::<i64>(), any::<i64>()),
        (any::<i32>(), any::<i32>(), any::<i32>()),
        (any::<i64>(), any::<i32>(), any::<i32>(), any::<i64>()),
    )
        .prop_map(
            |(
                (czxid, mzxid, ctime, mtime),
                (version, cversion, aversion),
                (ephemeral_owner, data_length, num_children, pzxid),
            )| Stat {
                czxid,
                mzxid,
                ctime,
                mtime,
                version,
                cversion,
                aversion,
                ephemeral_owner,
                data_length,
                num_children,
                pzxid,
            },
        )
}

/// Error codes: every known one (they all lie in -130..=0) and arbitrary unknown ones.
fn error_code() -> impl Strategy<Value = ErrorCode> {
    prop_oneof![
        (-130i32..=0).prop_map(ErrorCode::from_code),
        any::<i32>().prop_map(ErrorCode::from_code),
    ]
}

fn event_type() -> impl Strategy<Value = EventType> {
    prop_oneof![
        (-2i32..=9).prop_map(EventType::from_code),
        any::<i32>().prop_map(EventType::from_code),
    ]
}

fn keeper_state() -> impl Strategy<Value = KeeperState> {
    prop_oneof![
        (-1i32..=8).prop_map(KeeperState::from_code),
        Just(KeeperState::Expired),
        any::<i32>().prop_map(KeeperState::from_code),
    ]
}

fn create_mode() -> impl Strategy<Value = CreateMode> {
    prop::sample::select(CreateMode::ALL)
}

fn op_code() -> impl Strategy<Value = OpCode> {
    prop::sample::select(OpCode::ALL)
}

/// An ACL entry, owned: perms (any bits), scheme, id.
#[derive(Debug, Clone)]
struct AclModel {
    perms: i32,
    scheme: String,
    id: String,
}

impl AclModel {
    fn acl(&self) -> Acl<'_> {
        Acl {
            perms: Perms(self.perms),
            id: Id {
                scheme: &self.scheme,
                id: &self.id,
            },
        }
    }
}

fn acl_model() -> impl Strategy<Value = AclModel> {
    (
        prop_oneof![Just(31), 0i32..32, any::<i32>()],
        string(),
        string(),
    )
        .prop_map(|(perms, scheme, id)| AclModel { perms, scheme, id })
}

fn acl_models() -> impl Strategy<Value = Vec<AclModel>> {
    prop::collection::vec(acl_model(), 0..5)
}

fn acls(models: &[AclModel]) -> Vec<Acl<'_>> {
    models.iter().map(AclModel::acl).collect()
}

fn strings(max: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(string(), 0..max)
}

fn strs(owned: &[String]) -> Vec<&str> {
    owned.iter().map(String::as_str).collect()
}

/// The fields of a `CreateRequest`, owned.
#[derive(Debug, Clone)]
struct CreateModel {
    path: String,
    data: Option<Vec<u8>>,
    acl: Vec<AclModel>,
    mode: CreateMode,
}

impl CreateModel {
    fn request<'a>(&'a self, acl: &'a [Acl<'a>]) -> CreateRequest<'a> {
        CreateRequest {
            path: &self.path,
            data: self.data.as_deref(),
            acl: List::Slice(acl),
            mode: self.mode,
        }
    }
}

fn create_model() -> impl Strategy<Value = CreateModel> {
    (string(), opt_bytes(), acl_models(), create_mode()).prop_map(|(path, data, acl, mode)| {
        CreateModel {
            path,
            data,
            acl,
            mode,
        }
    })
}

/// One operation of a multi request, owned.
#[derive(Debug, Clone)]
enum OpModel {
    /// 0 create, 1 create2, 2 createContainer.
    Create(u8, CreateModel),
    CreateTtl(CreateModel, i64),
    Delete(String, i32),
    SetData(String, Option<Vec<u8>>, i32),
    Check(String, i32),
    GetData(String, bool),
    GetChildren(String, bool),
}

impl OpModel {
    fn acl(&self) -> &[AclModel] {
        match self {
            OpModel::Create(_, c) | OpModel::CreateTtl(c, _) => &c.acl,
            _ => &[],
        }
    }

    fn op<'a>(&'a self, acl: &'a [Acl<'a>]) -> MultiOp<'a> {
        match self {
            OpModel::Create(0, c) => MultiOp::Create(c.request(acl)),
            OpModel::Create(1, c) => MultiOp::Create2(c.request(acl)),
            OpModel::Create(_, c) => MultiOp::CreateContainer(c.request(acl)),
            OpModel::CreateTtl(c, ttl_ms) => MultiOp::CreateTtl(CreateTtlRequest {
                path: &c.path,
                data: c.data.as_deref(),
                acl: List::Slice(acl),
                mode: c.mode,
                ttl_ms: *ttl_ms,
            }),
            OpModel::Delete(path, version) => MultiOp::Delete(DeleteRequest {
                path,
                version: *version,
            }),
            OpModel::SetData(path, data, version) => MultiOp::SetData(SetDataRequest {
                path,
                data: data.as_deref(),
                version: *version,
            }),
            OpModel::Check(path, version) => MultiOp::Check(CheckVersionRequest {
                path,
                version: *version,
            }),
            OpModel::GetData(path, watch) => MultiOp::GetData(GetDataRequest {
                path,
                watch: *watch,
            }),
            OpModel::GetChildren(path, watch) => MultiOp::GetChildren(GetChildrenRequest {
                path,
                watch: *watch,
            }),
        }
    }
}

fn op_model() -> impl Strategy<Value = OpModel> {
    prop_oneof![
        (0u8..3, create_model()).prop_map(|(k, c)| OpModel::Create(k, c)),
        (create_model(), any::<i64>()).prop_map(|(c, ttl)| OpModel::CreateTtl(c, ttl)),
        (string(), any::<i32>()).prop_map(|(p, v)| OpModel::Delete(p, v)),
        (string(), opt_bytes(), any::<i32>()).prop_map(|(p, d, v)| OpModel::SetData(p, d, v)),
        (string(), any::<i32>()).prop_map(|(p, v)| OpModel::Check(p, v)),
        (string(), any::<bool>()).prop_map(|(p, w)| OpModel::GetData(p, w)),
        (string(), any::<bool>()).prop_map(|(p, w)| OpModel::GetChildren(p, w)),
    ]
}

/// One result of a multi reply, owned.
#[derive(Debug, Clone)]
enum ResultModel {
    Create(String),
    Create2(OpCode, String, Stat),
    Delete,
    SetData(Stat),
    Check,
    GetData(Option<Vec<u8>>, Stat),
    GetChildren(Vec<String>),
    Error(ErrorCode),
}

impl ResultModel {
    fn children(&self) -> Vec<&str> {
        match self {
            ResultModel::GetChildren(names) => strs(names),
            _ => Vec::new(),
        }
    }

    fn result<'a>(&'a self, children: &'a [&'a str]) -> MultiOpResult<'a> {
        match self {
            ResultModel::Create(path) => MultiOpResult::Create(path),
            ResultModel::Create2(op, path, stat) => MultiOpResult::Create2 {
                op: *op,
                response: Create2Response { path, stat: *stat },
            },
            ResultModel::Delete => MultiOpResult::Delete,
            ResultModel::SetData(stat) => MultiOpResult::SetData(*stat),
            ResultModel::Check => MultiOpResult::Check,
            ResultModel::GetData(data, stat) => MultiOpResult::GetData {
                data: data.as_deref(),
                stat: *stat,
            },
            ResultModel::GetChildren(_) => MultiOpResult::GetChildren(List::Slice(children)),
            ResultModel::Error(code) => MultiOpResult::Error(*code),
        }
    }
}

fn result_model() -> impl Strategy<Value = ResultModel> {
    prop_oneof![
        string().prop_map(ResultModel::Create),
        (
            prop::sample::select(
                &[OpCode::Create2, OpCode::CreateContainer, OpCode::CreateTtl][..]
            ),
            string(),
            stat()
        )
            .prop_map(|(op, p, s)| ResultModel::Create2(op, p, s)),
        Just(ResultModel::Delete),
        stat().prop_map(ResultModel::SetData),
        Just(ResultModel::Check),
        (opt_bytes(), stat()).prop_map(|(d, s)| ResultModel::GetData(d, s)),
        strings(6).prop_map(ResultModel::GetChildren),
        error_code().prop_map(ResultModel::Error),
    ]
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Handshake, headers, enums.

proptest! {
    #![proptest_config(config())]

    #[test]
    fn connect_request(
        protocol_version in any::<i32>(),
        last_zxid_seen in any::<i64>(),
        timeout_ms in any::<i32>(),
        session_id in any::<i64>(),
        passwd in bytes(),
        read_only in any::<bool>(),
    ) {
        let request = ConnectRequest {
            protocol_version, last_zxid_seen, timeout_ms, session_id, passwd: &passwd,
        };
        roundtrip!(ConnectRequest, request);
        let mut buf = BytesMut::new();
        encode_connect_request(&mut buf, &request, read_only);
        prop_assert_eq!(check_frame(&buf, DEFAULT_MAX_FRAME_LEN), Ok(Some(buf.len() - 4)));
        prop_assert_eq!(decode_connect_request(&buf[4..]), Ok((request, read_only)));
    }

    #[test]
    fn connect_response(
        protocol_version in any::<i32>(),
        timeout_ms in any::<i32>(),
        session_id in any::<i64>(),
        passwd in bytes(),
        read_only in any::<bool>(),
    ) {
        let response = ConnectResponse { protocol_version, timeout_ms, session_id, passwd: &passwd };
        let mut bytes = roundtrip!(ConnectResponse, response);
        // An old server leaves the read-only flag out: it reads as false.
        prop_assert_eq!(decode_connect_response(&bytes), Ok((response, false)));
        Encode::encode(&read_only, &mut bytes);
        prop_assert_eq!(decode_connect_response(&bytes), Ok((response, read_only)));
    }

    #[test]
    fn request_header(xid in any::<i32>(), op in op_code()) {
        roundtrip!(RequestHeader, RequestHeader { xid, op });
    }

    #[test]
    fn reply_header(xid in any::<i32>(), zxid in any::<i64>(), err in error_code()) {
        roundtrip!(ReplyHeader, ReplyHeader { xid, zxid, err });
    }

    #[test]
    fn error_response(err in error_code()) {
        roundtrip!(ErrorResponse, ErrorResponse { err });
    }

    #[test]
    fn error_code_keeps_unknown_codes(code in any::<i32>()) {
        let err = ErrorCode::from_code(code);
        prop_assert_eq!(err.code(), code);
        let bytes = roundtrip!(ErrorResponse, ErrorResponse { err });
        prop_assert_eq!(&bytes[..], &code.to_be_bytes()[..]);
    }

    #[test]
    fn watcher_event(event_type in event_type(), state in keeper_state(), path in opt_string()) {
        roundtrip!(WatcherEvent, WatcherEvent { event_type, state, path: path.as_deref() });
    }

    #[test]
    fn multi_header(op in op_code(), done in any::<bool>(), err in any::<i32>()) {
        roundtrip!(MultiHeader, MultiHeader { op, done, err });
    }

    #[test]
    fn stat_and_stat_response(stat in stat()) {
        let bytes = roundtrip!(Stat, stat);
        prop_assert_eq!(bytes.len(), 68);
        roundtrip!(StatResponse, StatResponse { stat });
    }

    #[test]
    fn id_acl_client_info(model in acl_model()) {
        let acl = model.acl();
        roundtrip!(Id, acl.id);
        roundtrip!(Acl, acl);
        roundtrip!(ClientInfo, ClientInfo { auth_scheme: &model.scheme, user: &model.id });
    }
}

/// Every opcode, create mode, watch mode and watcher type, each through a record.
#[test]
fn every_closed_enum_value() {
    for &op in OpCode::ALL {
        let bytes = RequestHeader { xid: 7, op }.to_bytes();
        assert_eq!(
            RequestHeader::decode_exact(&bytes),
            Ok(RequestHeader { xid: 7, op })
        );
    }
    for &mode in CreateMode::ALL {
        let request = CreateRequest {
            path: "/m",
            data: None,
            acl: List::EMPTY,
            mode,
        };
        assert_eq!(
            CreateRequest::decode_exact(&request.to_bytes()),
            Ok(request)
        );
    }
    for &mode in AddWatchMode::ALL {
        let request = AddWatchRequest { path: "/w", mode };
        assert_eq!(
            AddWatchRequest::decode_exact(&request.to_bytes()),
            Ok(request)
        );
    }
    for &watcher_type in WatcherType::ALL {
        let request = WatchesRequest {
            path: "/w",
            watcher_type,
        };
        assert_eq!(
            WatchesRequest::decode_exact(&request.to_bytes()),
            Ok(request)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Operations.

proptest! {
    #![proptest_config(config())]

    #[test]
    fn path_records(path in string(), watch in any::<bool>(), version in any::<i32>()) {
        roundtrip!(CreateResponse, CreateResponse { path: &path });
        roundtrip!(SyncRequest, SyncRequest { path: &path });
        roundtrip!(SyncResponse, SyncResponse { path: &path });
        roundtrip!(GetAclRequest, GetAclRequest { path: &path });
        roundtrip!(GetAllChildrenNumberRequest, GetAllChildrenNumberRequest { path: &path });
        roundtrip!(GetEphemeralsRequest, GetEphemeralsRequest { path: &path });
        roundtrip!(ExistsRequest, ExistsRequest { path: &path, watch });
        roundtrip!(GetDataRequest, GetDataRequest { path: &path, watch });
        roundtrip!(GetChildrenRequest, GetChildrenRequest { path: &path, watch });
        roundtrip!(GetChildren2Request, GetChildren2Request { path: &path, watch });
        roundtrip!(DeleteRequest, DeleteRequest { path: &path, version });
        roundtrip!(CheckVersionRequest, CheckVersionRequest { path: &path, version });
    }

    #[test]
    fn create_request(model in create_model()) {
        let acl = acls(&model.acl);
        let request = model.request(&acl);
        let bytes = roundtrip!(CreateRequest, request);
        let back = CreateRequest::decode_exact(&bytes).unwrap();
        prop_assert_eq!(back.acl.iter().collect::<Vec<_>>(), acl);
    }

    #[test]
    fn create_ttl_request(model in create_model(), ttl_ms in any::<i64>()) {
        let acl = acls(&model.acl);
        roundtrip!(CreateTtlRequest, CreateTtlRequest {
            path: &model.path,
            data: model.data.as_deref(),
            acl: List::Slice(&acl),
            mode: model.mode,
            ttl_ms,
        });
    }

    #[test]
    fn create2_response(path in string(), stat in stat()) {
        roundtrip!(Create2Response, Create2Response { path: &path, stat });
    }

    #[test]
    fn get_data_response(data in opt_bytes(), stat in stat()) {
        roundtrip!(GetDataResponse, GetDataResponse { data: data.as_deref(), stat });
    }

    #[test]
    fn set_data_request(path in string(), data in opt_bytes(), version in any::<i32>()) {
        roundtrip!(SetDataRequest, SetDataRequest { path: &path, data: data.as_deref(), version });
    }

    #[test]
    fn children_responses(names in strings(12), stat in stat(), total in any::<i32>()) {
        let children = strs(&names);
        let bytes = roundtrip!(GetChildrenResponse, GetChildrenResponse {
            children: List::Slice(&children),
        });
        let back = GetChildrenResponse::decode_exact(&bytes).unwrap();
        prop_assert_eq!(back.children.len(), children.len());
        prop_assert_eq!(back.children.iter().collect::<Vec<_>>(), children.clone());
        roundtrip!(GetChildren2Response, GetChildren2Response {
            children: List::Slice(&children),
            stat,
        });
        roundtrip!(GetEphemeralsResponse, GetEphemeralsResponse {
            ephemerals: List::Slice(&children),
        });
        roundtrip!(GetAllChildrenNumberResponse, GetAllChildrenNumberResponse {
            total_number: total,
        });
    }

    #[test]
    fn acl_records(models in acl_models(), stat in stat(), path in string(), version in any::<i32>()) {
        let acl = acls(&models);
        roundtrip!(GetAclResponse, GetAclResponse { acl: List::Slice(&acl), stat });
        roundtrip!(SetAclRequest, SetAclRequest { path: &path, acl: List::Slice(&acl), version });
        roundtrip!(SetAclResponse, SetAclResponse { stat });
        let infos: Vec<ClientInfo<'_>> = models
            .iter()
            .map(|m| ClientInfo { auth_scheme: &m.scheme, user: &m.id })
            .collect();
        roundtrip!(WhoAmIResponse, WhoAmIResponse { client_info: List::Slice(&infos) });
    }

    #[test]
    fn auth_packet(auth_type in any::<i32>(), scheme in string(), auth in bytes()) {
        roundtrip!(AuthPacket, AuthPacket { auth_type, scheme: &scheme, auth: &auth });
    }

    #[test]
    fn reconfig_request(
        joining in opt_string(),
        leaving in opt_string(),
        members in opt_string(),
        cur_config_id in any::<i64>(),
    ) {
        roundtrip!(ReconfigRequest, ReconfigRequest {
            joining_servers: joining.as_deref(),
            leaving_servers: leaving.as_deref(),
            new_members: members.as_deref(),
            cur_config_id,
        });
    }

    #[test]
    fn set_watches(zxid in any::<i64>(), lists in prop::collection::vec(strings(5), 5)) {
        let l: Vec<Vec<&str>> = lists.iter().map(|l| strs(l)).collect();
        roundtrip!(SetWatches, SetWatches {
            relative_zxid: zxid,
            data_watches: List::Slice(&l[0]),
            exist_watches: List::Slice(&l[1]),
            child_watches: List::Slice(&l[2]),
        });
        roundtrip!(SetWatches2, SetWatches2 {
            relative_zxid: zxid,
            data_watches: List::Slice(&l[0]),
            exist_watches: List::Slice(&l[1]),
            child_watches: List::Slice(&l[2]),
            persistent_watches: List::Slice(&l[3]),
            persistent_recursive_watches: List::Slice(&l[4]),
        });
    }

    #[test]
    fn watch_requests(
        path in string(),
        mode in prop::sample::select(AddWatchMode::ALL),
        watcher_type in prop::sample::select(WatcherType::ALL),
    ) {
        roundtrip!(AddWatchRequest, AddWatchRequest { path: &path, mode });
        roundtrip!(RemoveWatchesRequest, RemoveWatchesRequest { path: &path, watcher_type });
        roundtrip!(CheckWatchesRequest, CheckWatchesRequest { path: &path, watcher_type });
    }

    #[test]
    fn multi_request(models in prop::collection::vec(op_model(), 0..8)) {
        let acls: Vec<Vec<Acl<'_>>> = models.iter().map(|m| acls(m.acl())).collect();
        let ops: Vec<MultiOp<'_>> = models.iter().zip(&acls).map(|(m, a)| m.op(a)).collect();
        let bytes = roundtrip!(MultiRequest, MultiRequest { ops: MultiList::Slice(&ops) });
        let back = MultiRequest::decode_exact(&bytes).unwrap();
        prop_assert_eq!(back.ops.len(), ops.len());
        prop_assert_eq!(back.ops.iter().collect::<Vec<_>>(), ops.clone());
    }

    #[test]
    fn multi_response(models in prop::collection::vec(result_model(), 0..8)) {
        let children: Vec<Vec<&str>> = models.iter().map(ResultModel::children).collect();
        let results: Vec<MultiOpResult<'_>> =
            models.iter().zip(&children).map(|(m, c)| m.result(c)).collect();
        let bytes = roundtrip!(MultiResponse, MultiResponse { results: MultiList::Slice(&results) });
        let back = MultiResponse::decode_exact(&bytes).unwrap();
        prop_assert_eq!(back.results.len(), results.len());
        prop_assert_eq!(back.results.iter().collect::<Vec<_>>(), results.clone());
    }
}

/// A multi reply holding every kind of result at once.
#[test]
fn multi_response_with_every_result() {
    let stat = Stat {
        version: 3,
        ..Stat::default()
    };
    let names = ["a", "b", "ü"];
    let results = [
        MultiOpResult::Create("/a"),
        MultiOpResult::Create2 {
            op: OpCode::Create2,
            response: Create2Response { path: "/b", stat },
        },
        MultiOpResult::Create2 {
            op: OpCode::CreateContainer,
            response: Create2Response { path: "/c", stat },
        },
        MultiOpResult::Create2 {
            op: OpCode::CreateTtl,
            response: Create2Response { path: "/d", stat },
        },
        MultiOpResult::Delete,
        MultiOpResult::SetData(stat),
        MultiOpResult::Check,
        MultiOpResult::GetData { data: None, stat },
        MultiOpResult::GetData {
            data: Some(b""),
            stat,
        },
        MultiOpResult::GetChildren(List::Slice(&names)),
        MultiOpResult::Error(ErrorCode::NoNode),
        MultiOpResult::Error(ErrorCode::Unknown(-999)),
    ];
    let response = MultiResponse {
        results: MultiList::Slice(&results),
    };
    let bytes = response.to_bytes();
    let back = MultiResponse::decode_exact(&bytes).unwrap();
    assert_eq!(back, response);
    assert_eq!(back.results.iter().collect::<Vec<_>>(), results);
}

/// A null buffer and an empty one are different bytes and decode differently.
#[test]
fn null_and_empty_buffers_stay_distinct() {
    let stat = Stat::default();
    let null = GetDataResponse { data: None, stat }.to_bytes();
    let empty = GetDataResponse {
        data: Some(b""),
        stat,
    }
    .to_bytes();
    assert_ne!(null, empty);
    assert_eq!(GetDataResponse::decode_exact(&null).unwrap().data, None);
    assert_eq!(
        GetDataResponse::decode_exact(&empty).unwrap().data,
        Some(&b""[..])
    );
}

// ---------------------------------------------------------------------------------------------
// Frames.

proptest! {
    #![proptest_config(config())]

    #[test]
    fn check_frame_finds_whole_frames(body in prop::collection::vec(any::<u8>(), 0..300), extra in bytes()) {
        let mut buf = BytesMut::new();
        write_frame(&mut buf, |b| b.extend_from_slice(&body));
        prop_assert_eq!(buf.len(), body.len() + 4);
        prop_assert_eq!(check_frame(&buf, DEFAULT_MAX_FRAME_LEN), Ok(Some(body.len())));
        for end in 0..buf.len() {
            prop_assert_eq!(check_frame(&buf[..end], DEFAULT_MAX_FRAME_LEN), Ok(None), "prefix of {} bytes", end);
        }
        // Bytes of the next frame do not change the answer.
        buf.extend_from_slice(&extra);
        prop_assert_eq!(check_frame(&buf, DEFAULT_MAX_FRAME_LEN), Ok(Some(body.len())));
        prop_assert_eq!(&buf[4..4 + body.len()], &body[..]);
        // A frame over the limit is refused, as soon as its length is known.
        if !body.is_empty() {
            let max = body.len() - 1;
            let too_large = Err(DecodeError::FrameTooLarge { len: body.len(), max });
            prop_assert_eq!(check_frame(&buf[..4], max), too_large.clone());
            prop_assert_eq!(check_frame(&buf, max), too_large);
        }
    }

    #[test]
    fn request_frames(xid in any::<i32>(), op in op_code(), path in string(), watch in any::<bool>()) {
        let body = GetDataRequest { path: &path, watch };
        let mut buf = BytesMut::new();
        encode_request(&mut buf, xid, op, &body);
        let len = check_frame(&buf, DEFAULT_MAX_FRAME_LEN).unwrap();
        prop_assert_eq!(len, Some(buf.len() - 4));
        prop_assert_eq!(&buf[REQUEST_XID_OFFSET..REQUEST_XID_OFFSET + 4], &xid.to_be_bytes()[..]);
        let (header, rest) = parse_request(&buf[4..]).unwrap();
        prop_assert_eq!(header, RequestHeader { xid, op });
        prop_assert_eq!(GetDataRequest::decode_exact(rest), Ok(body));

        let mut buf = BytesMut::new();
        encode_header_only(&mut buf, xid, op);
        prop_assert_eq!(check_frame(&buf, DEFAULT_MAX_FRAME_LEN), Ok(Some(8)));
        prop_assert_eq!(parse_request(&buf[4..]), Ok((RequestHeader { xid, op }, &[][..])));
    }

    #[test]
    fn reply_frames(header_xid in any::<i32>(), zxid in any::<i64>(), err in error_code(), data in opt_bytes(), stat in stat()) {
        let header = ReplyHeader { xid: header_xid, zxid, err };
        let body = GetDataResponse { data: data.as_deref(), stat };
        let mut buf = BytesMut::new();
        write_frame(&mut buf, |b| {
            header.encode(b);
            body.encode(b);
        });
        let len = check_frame(&buf, DEFAULT_MAX_FRAME_LEN).unwrap().unwrap();
        let (back, rest) = parse_reply(&buf[4..4 + len]).unwrap();
        prop_assert_eq!(back, header);
        prop_assert_eq!(GetDataResponse::decode_exact(rest), Ok(body));
    }
}
