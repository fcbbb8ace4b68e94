//! The fake server: what it knows about the connection, what it got from the client, and the
//! frames it answers with.

use std::collections::VecDeque;

use bytes::BytesMut;
use zkrs_codec::{
    check_frame, decode_connect_request, parse_request, write_frame, Acl, AuthPacket,
    Create2Response, Decode, Encode, ErrorCode, EventType, GetAclResponse,
    GetAllChildrenNumberResponse, GetChildren2Response, GetChildrenResponse, GetDataResponse,
    GetEphemeralsResponse, List, MultiList, MultiResponse, OpCode, PathRecord, ReplyHeader,
    ReplyRecord, SetWatches, SetWatches2, Stat, StatResponse, WhoAmIResponse,
};

/// What the fake server knows about the current connection.
#[derive(Default, Clone)]
pub(super) struct Server {
    /// Bytes received on this connection and not parsed yet.
    pub(super) rx: BytesMut,
    /// The next frame must be a ConnectRequest.
    pub(super) expect_connect: bool,
    /// The session id and password of this connection's ConnectRequest.
    pub(super) connect_seen: Option<(i64, Vec<u8>)>,
    /// Whether an ordinary request (xid > 0) came on this connection.
    pub(super) seen_ordinary: bool,
    /// Raw bytes were sent on this connection: a "connect response" after them is read
    /// together with them, so it is not the modelled server's answer.
    pub(super) raw_bytes: bool,
    /// Requests received and not answered: (xid, opcode).
    pub(super) queue: VecDeque<(i32, OpCode)>,
    /// The largest ordinary xid received over the whole session.
    pub(super) last_xid: i32,
    /// The server's zxid counter.
    pub(super) zxid: i64,
    /// Session ids handed out.
    pub(super) next_session: i64,
}

impl Server {
    pub(super) fn reset_connection(&mut self, expect_connect: bool) {
        self.rx.clear();
        self.expect_connect = expect_connect;
        self.connect_seen = None;
        self.seen_ordinary = false;
        self.raw_bytes = false;
        self.queue.clear();
    }

    /// Parses every whole frame received, checking that the client's bytes are well-formed.
    pub(super) fn parse(&mut self, can_be_read_only: bool) {
        loop {
            let len = match check_frame(&self.rx, usize::MAX >> 1) {
                Ok(Some(len)) => len,
                Ok(None) => return,
                Err(e) => panic!("the client sent a bad length prefix: {e}"),
            };
            let frame = self.rx.split_to(4 + len);
            let body = &frame[4..];
            if self.expect_connect {
                self.expect_connect = false;
                let (req, read_only) = decode_connect_request(body)
                    .unwrap_or_else(|e| panic!("the first frame is not a ConnectRequest: {e}"));
                assert_eq!(req.protocol_version, 0);
                assert_eq!(
                    body.len(),
                    4 + 8 + 4 + 8 + 4 + req.passwd.len() + 1,
                    "ConnectRequest with trailing bytes"
                );
                assert_eq!(read_only, can_be_read_only, "read-only flag");
                assert!(req.timeout_ms > 0);
                self.connect_seen = Some((req.session_id, req.passwd.to_vec()));
                continue;
            }
            let (header, rest) = parse_request(body)
                .unwrap_or_else(|e| panic!("the client sent a bad request header: {e}"));
            match header.xid {
                -2 => {
                    assert_eq!(header.op, OpCode::Ping);
                    assert!(rest.is_empty(), "ping with a body");
                }
                -4 => {
                    assert_eq!(header.op, OpCode::Auth);
                    AuthPacket::decode_exact(rest).expect("an auth packet that decodes");
                }
                -8 if self.seen_ordinary => {
                    panic!("SetWatches after an ordinary request on the same connection")
                }
                -8 => match header.op {
                    OpCode::SetWatches => {
                        SetWatches::decode_exact(rest).expect("SetWatches that decodes");
                    }
                    OpCode::SetWatches2 => {
                        SetWatches2::decode_exact(rest).expect("SetWatches2 that decodes");
                    }
                    other => panic!("xid -8 with opcode {other}"),
                },
                xid if xid > 0 => {
                    assert!(
                        xid > self.last_xid,
                        "xid {xid} reused or out of order (last was {})",
                        self.last_xid
                    );
                    self.last_xid = xid;
                    self.seen_ordinary = true;
                    assert!(
                        !matches!(
                            header.op,
                            OpCode::Ping | OpCode::Auth | OpCode::SetWatches | OpCode::SetWatches2
                        ),
                        "opcode {} with an ordinary xid",
                        header.op
                    );
                }
                xid => panic!("the client sent xid {xid} (opcode {})", header.op),
            }
            assert!(
                self.connect_seen.is_some(),
                "a request before the ConnectRequest"
            );
            self.queue.push_back((header.xid, header.op));
        }
    }
}

pub(super) fn reply_frame(xid: i32, zxid: i64, err: ErrorCode, body: &[u8]) -> BytesMut {
    let mut buf = BytesMut::new();
    write_frame(&mut buf, |buf| {
        ReplyHeader { xid, zxid, err }.encode(buf);
        buf.extend_from_slice(body);
    });
    buf
}

/// A reply body that decodes as `op`'s reply record ([`OpCode::reply_record`]).
pub(super) fn valid_body(op: OpCode) -> BytesMut {
    let stat = Stat {
        version: 1,
        ..Stat::default()
    };
    match op.reply_record() {
        ReplyRecord::Create => PathRecord { path: "/a" }.to_bytes(),
        ReplyRecord::Create2 => Create2Response { path: "/a", stat }.to_bytes(),
        ReplyRecord::Stat => StatResponse { stat }.to_bytes(),
        ReplyRecord::GetData => GetDataResponse {
            data: Some(b"data"),
            stat,
        }
        .to_bytes(),
        ReplyRecord::GetAcl => GetAclResponse {
            acl: List::Slice(Acl::OPEN_ACL_UNSAFE),
            stat,
        }
        .to_bytes(),
        ReplyRecord::GetChildren => GetChildrenResponse {
            children: List::Slice(&["x", "y"]),
        }
        .to_bytes(),
        ReplyRecord::GetChildren2 => GetChildren2Response {
            children: List::Slice(&["x"]),
            stat,
        }
        .to_bytes(),
        ReplyRecord::Sync => PathRecord { path: "/" }.to_bytes(),
        ReplyRecord::Multi => MultiResponse {
            results: MultiList::Slice(&[]),
        }
        .to_bytes(),
        ReplyRecord::GetEphemerals => GetEphemeralsResponse {
            ephemerals: List::Slice(&["/e"]),
        }
        .to_bytes(),
        ReplyRecord::GetAllChildrenNumber => {
            GetAllChildrenNumberResponse { total_number: 3 }.to_bytes()
        }
        ReplyRecord::WhoAmI => WhoAmIResponse {
            client_info: List::Slice(&[]),
        }
        .to_bytes(),
        // The session reads nothing of addWatch's `ErrorResponse` (`Error`), and this client
        // under test makes no SASL exchange (`SetSasl`): an empty body is as valid to it.
        _ => BytesMut::new(),
    }
}

pub(super) const ERRORS: [ErrorCode; 8] = [
    ErrorCode::NoNode,
    ErrorCode::NodeExists,
    ErrorCode::NoAuth,
    ErrorCode::BadVersion,
    ErrorCode::SessionExpired,
    ErrorCode::NoWatcher,
    ErrorCode::AuthFailed,
    ErrorCode::Unknown(-999),
];

pub(super) const EVENT_TYPES: [EventType; 8] = [
    EventType::NodeCreated,
    EventType::NodeDeleted,
    EventType::NodeDataChanged,
    EventType::NodeChildrenChanged,
    EventType::None,
    EventType::DataWatchRemoved,
    EventType::PersistentWatchRemoved,
    EventType::Unknown(42),
];
