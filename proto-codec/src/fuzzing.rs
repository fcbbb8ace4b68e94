//! The bodies of the fuzz targets (`fuzz/fuzz_targets/*.rs`), kept in the library so the
//! seed corpus can be replayed by an ordinary `cargo test` (`tests/fuzz_seeds.rs`) on stable.
//!
//! Each function takes arbitrary bytes and must return normally: malformed input is an
//! ordinary [`DecodeError`]. The only panics are failed assertions of invariants that hold
//! for every input, which are real bugs:
//!
//! - a decoded value, encoded again, decodes (exactly) to an equal value, and encoding that
//!   gives the same bytes again (the encoding of a decoded value is canonical);
//! - the encoding of a decoded record is as long as the bytes it was decoded from (nulls
//!   become empties of the same size, lists are copied verbatim);
//! - every decoded [`List`] and [`MultiList`] yields exactly as many items as it says;
//! - `decode_exact` succeeds exactly when `decode` succeeds and reads everything;
//! - [`check_frame`] gives the same frames whether the stream arrives at once or in chunks.
//!
//! `reply` and `request` use their first byte to pick the record (see [`REPLY_KINDS`] and
//! [`REQUEST_KINDS`]); `frame` takes a raw byte stream.

use std::fmt::Debug;

use bytes::BytesMut;

use crate::jute::{put_bool, Decode, Encode, Reader};
use crate::*;

/// Decodes `$bytes` as the record `$ty` (with `decode`, `decode_prefix` and `decode_exact`),
/// checks that the three agree, and round-trips the value when it decoded. Evaluates to whether
/// it decoded.
macro_rules! check_record {
    ($ty:ident, $bytes:expr) => {{
        let bytes: &[u8] = $bytes;
        let mut r = Reader::new(bytes);
        let decoded = $ty::decode(&mut r);
        let exact = $ty::decode_exact(bytes);
        let prefix = $ty::decode_prefix(bytes);
        match decoded {
            Ok(value) => {
                let used = bytes.len() - r.remaining().len();
                assert_eq!(
                    prefix.as_ref(),
                    Ok(&value),
                    "decode_prefix differs from decode"
                );
                assert_eq!(
                    exact.is_ok(),
                    r.is_empty(),
                    "decode_exact disagrees with decode about trailing bytes"
                );
                if let Ok(exact) = exact {
                    assert_eq!(exact, value, "decode_exact differs from decode");
                }
                let encoded = roundtrip!($ty::decode_exact, value);
                assert_eq!(
                    encoded,
                    used,
                    "re-encoding of {} is not as long as its input",
                    stringify!($ty)
                );
                true
            }
            Err(e) => {
                let _ = e.to_string();
                assert!(exact.is_err(), "decode_exact accepted what decode refused");
                assert!(
                    prefix.is_err(),
                    "decode_prefix accepted what decode refused"
                );
                false
            }
        }
    }};
}

/// Walks `$value`, encodes it, decodes the encoding with `$decode`, walks the result, and
/// checks that it is equal and encodes to the same bytes. Evaluates to the encoding's length.
macro_rules! roundtrip {
    ($decode:expr, $value:expr) => {{
        let value = $value;
        value.walk();
        let bytes = Encode::to_bytes(&value);
        let again = match $decode(&bytes[..]) {
            Ok(again) => again,
            Err(e) => panic!("the encoding of {value:?} does not decode: {e} ({bytes:02x?})"),
        };
        again.walk();
        assert_eq!(again, value, "round trip changed the value");
        let bytes_again = Encode::to_bytes(&again);
        assert_eq!(
            bytes_again, bytes,
            "the encoding of a decoded value is not canonical"
        );
        bytes.len()
    }};
}

/// The largest frame body `frame` accepts: small, so that the limit is reached.
pub const FRAME_MAX_LEN: usize = 2048;

/// What [`reply`] decodes, by `data[0] % REPLY_KINDS.len()`.
pub const REPLY_KINDS: &[&str] = &[
    "ConnectResponse",
    "ReplyHeader",
    "WatcherEvent",
    "CreateResponse",
    "Create2Response",
    "StatResponse",
    "GetDataResponse",
    "GetChildrenResponse",
    "GetChildren2Response",
    "GetAclResponse",
    "GetAllChildrenNumberResponse",
    "GetEphemeralsResponse",
    "WhoAmIResponse",
    "MultiResponse",
    "ErrorResponse",
    "SyncResponse",
];

/// What [`request`] decodes, by `data[0] % REQUEST_KINDS.len()`.
pub const REQUEST_KINDS: &[&str] = &[
    "ConnectRequest",
    "CreateRequest",
    "CreateTtlRequest",
    "DeleteRequest",
    "ExistsRequest",
    "GetDataRequest",
    "SetDataRequest",
    "GetChildrenRequest",
    "GetChildren2Request",
    "GetAclRequest",
    "SetAclRequest",
    "SyncRequest",
    "CheckVersionRequest",
    "MultiRequest",
    "AuthPacket",
    "ReconfigRequest",
    "SetWatches",
    "SetWatches2",
    "AddWatchRequest",
    "RemoveWatchesRequest",
    "CheckWatchesRequest",
    "RequestHeader",
    "GetAllChildrenNumberRequest",
    "GetEphemeralsRequest",
    "MultiHeader",
];

/// The selector byte that makes [`reply`] decode the record named `name`.
pub fn reply_selector(name: &str) -> Option<u8> {
    REPLY_KINDS.iter().position(|k| *k == name).map(|i| i as u8)
}

/// The selector byte that makes [`request`] decode the record named `name`.
pub fn request_selector(name: &str) -> Option<u8> {
    REQUEST_KINDS
        .iter()
        .position(|k| *k == name)
        .map(|i| i as u8)
}

/// Fuzz target `frame`: reads `data` as a stream of frames, like a connection's reader.
///
/// The stream is split with [`check_frame`] twice, all at once and in small chunks, and the
/// two must agree. Each frame body is then parsed as a reply (header, then the body as every
/// reply record it could be), as a connect response, and as a request (header, then the body
/// its opcode announces).
pub fn frame(data: &[u8]) {
    let whole = split_frames(data, data.len().max(1));
    let chunked = split_frames(data, 1 + data.len() % 7);
    assert_eq!(
        whole, chunked,
        "check_frame depends on how the stream was chunked"
    );
    for &(start, len) in &whole.frames {
        let body = &data[start + 4..start + 4 + len];
        reply_frame_body(body);
        request_frame_body(body);
    }
}

/// Fuzz target `reply`: `data[0]` picks a reply record ([`REPLY_KINDS`]), the rest is decoded
/// as it, as the client reads it (extra bytes after the record allowed).
pub fn reply(data: &[u8]) {
    reply_decodes(data);
}

/// [`reply`], telling whether the record decoded (the seed tests check that every seed is a
/// valid record of the kind its selector picks).
pub fn reply_decodes(data: &[u8]) -> bool {
    match data.split_first() {
        Some((&selector, rest)) => reply_kind(usize::from(selector) % REPLY_KINDS.len(), rest),
        None => false,
    }
}

/// Fuzz target `request`: `data[0]` picks a request record ([`REQUEST_KINDS`]), the rest is
/// decoded as it.
pub fn request(data: &[u8]) {
    request_decodes(data);
}

/// [`request`], telling whether the record decoded.
pub fn request_decodes(data: &[u8]) -> bool {
    match data.split_first() {
        Some((&selector, rest)) => request_kind(usize::from(selector) % REQUEST_KINDS.len(), rest),
        None => false,
    }
}

/// How a stream split into frames: `(offset, body length)` of each whole frame, then either
/// the number of bytes left over or the error that stopped the reader.
#[derive(Debug, PartialEq)]
struct Split {
    frames: Vec<(usize, usize)>,
    end: Result<usize, DecodeError>,
}

/// Splits `stream` as a reader would that receives it `chunk` bytes at a time.
fn split_frames(stream: &[u8], chunk: usize) -> Split {
    let mut frames = Vec::new();
    let mut start = 0;
    let mut buffered = 0;
    loop {
        match check_frame(&stream[start..buffered], FRAME_MAX_LEN) {
            Ok(Some(len)) => {
                assert!(len <= FRAME_MAX_LEN, "check_frame exceeded its maximum");
                assert!(
                    4 + len <= buffered - start,
                    "check_frame announced a frame that is not buffered"
                );
                frames.push((start, len));
                start += 4 + len;
            }
            Ok(None) => {
                if buffered == stream.len() {
                    return Split {
                        frames,
                        end: Ok(buffered - start),
                    };
                }
                buffered = (buffered + chunk).min(stream.len());
            }
            Err(e) => {
                let _ = e.to_string();
                return Split {
                    frames,
                    end: Err(e),
                };
            }
        }
    }
}

/// A frame body read as a reply, and as the connect response that opens a connection.
fn reply_frame_body(body: &[u8]) {
    reply_kind(0, body);
    let Ok((header, rest)) = parse_reply(body) else {
        return;
    };
    assert_eq!(rest.len() + 16, body.len(), "a reply header is 16 bytes");
    roundtrip!(ReplyHeader::decode_exact, header);
    if header.xid == xid::NOTIFICATION {
        reply_kind(2, rest);
    } else if header.err.is_ok() {
        // Which record follows depends on the request the xid answers: try them all.
        for kind in 3..REPLY_KINDS.len() {
            reply_kind(kind, rest);
        }
    }
}

/// A frame body read as a request: the header, then the record its opcode announces.
fn request_frame_body(body: &[u8]) {
    request_kind(0, body);
    let Ok((header, rest)) = parse_request(body) else {
        return;
    };
    assert_eq!(rest.len() + 8, body.len(), "a request header is 8 bytes");
    roundtrip!(RequestHeader::decode_exact, header);
    let name = match header.op {
        OpCode::Create | OpCode::Create2 | OpCode::CreateContainer => "CreateRequest",
        OpCode::CreateTtl => "CreateTtlRequest",
        OpCode::Delete => "DeleteRequest",
        OpCode::Exists => "ExistsRequest",
        OpCode::GetData => "GetDataRequest",
        OpCode::SetData => "SetDataRequest",
        OpCode::GetAcl => "GetAclRequest",
        OpCode::SetAcl => "SetAclRequest",
        OpCode::GetChildren => "GetChildrenRequest",
        OpCode::GetChildren2 => "GetChildren2Request",
        OpCode::Sync => "SyncRequest",
        OpCode::Check => "CheckVersionRequest",
        OpCode::Multi | OpCode::MultiRead => "MultiRequest",
        OpCode::Reconfig => "ReconfigRequest",
        OpCode::CheckWatches => "CheckWatchesRequest",
        OpCode::RemoveWatches => "RemoveWatchesRequest",
        OpCode::Auth => "AuthPacket",
        OpCode::SetWatches => "SetWatches",
        OpCode::SetWatches2 => "SetWatches2",
        OpCode::AddWatch => "AddWatchRequest",
        OpCode::GetEphemerals => "GetEphemeralsRequest",
        OpCode::GetAllChildrenNumber => "GetAllChildrenNumberRequest",
        // No body (ping, closeSession, whoAmI) or not sent by clients.
        _ => return,
    };
    if let Some(kind) = request_selector(name) {
        request_kind(usize::from(kind), rest);
    }
}

/// Decodes `bytes` as the reply record [`REPLY_KINDS`]`[kind]`.
fn reply_kind(kind: usize, bytes: &[u8]) -> bool {
    match kind {
        0 => match decode_connect_response(bytes) {
            Ok((response, read_only)) => {
                response.walk();
                let mut buf = BytesMut::new();
                response.encode(&mut buf);
                put_bool(&mut buf, read_only);
                let again = decode_connect_response(&buf)
                    .unwrap_or_else(|e| panic!("re-encoded {response:?} does not decode: {e}"));
                assert_eq!(again, (response, read_only), "round trip changed the value");
                // The record itself round-trips like any other.
                check_record!(ConnectResponse, bytes)
            }
            Err(e) => {
                let _ = e.to_string();
                false
            }
        },
        1 => check_record!(ReplyHeader, bytes),
        2 => check_record!(WatcherEvent, bytes),
        3 => check_record!(CreateResponse, bytes),
        4 => check_record!(Create2Response, bytes),
        5 => check_record!(StatResponse, bytes),
        6 => check_record!(GetDataResponse, bytes),
        7 => check_record!(GetChildrenResponse, bytes),
        8 => check_record!(GetChildren2Response, bytes),
        9 => check_record!(GetAclResponse, bytes),
        10 => check_record!(GetAllChildrenNumberResponse, bytes),
        11 => check_record!(GetEphemeralsResponse, bytes),
        12 => check_record!(WhoAmIResponse, bytes),
        13 => check_record!(MultiResponse, bytes),
        14 => check_record!(ErrorResponse, bytes),
        15 => check_record!(SyncResponse, bytes),
        _ => unreachable!("reply kind out of range"),
    }
}

/// Decodes `bytes` as the request record [`REQUEST_KINDS`]`[kind]`.
fn request_kind(kind: usize, bytes: &[u8]) -> bool {
    match kind {
        0 => match decode_connect_request(bytes) {
            Ok((request, read_only)) => {
                request.walk();
                let mut buf = BytesMut::new();
                encode_connect_request(&mut buf, &request, read_only);
                let len = check_frame(&buf, usize::MAX).expect("valid frame length");
                assert_eq!(len, Some(buf.len() - 4), "connect frame length is wrong");
                let again = decode_connect_request(&buf[4..])
                    .unwrap_or_else(|e| panic!("re-encoded {request:?} does not decode: {e}"));
                assert_eq!(again, (request, read_only), "round trip changed the value");
                check_record!(ConnectRequest, bytes)
            }
            Err(e) => {
                let _ = e.to_string();
                false
            }
        },
        1 => check_record!(CreateRequest, bytes),
        2 => check_record!(CreateTtlRequest, bytes),
        3 => check_record!(DeleteRequest, bytes),
        4 => check_record!(ExistsRequest, bytes),
        5 => check_record!(GetDataRequest, bytes),
        6 => check_record!(SetDataRequest, bytes),
        7 => check_record!(GetChildrenRequest, bytes),
        8 => check_record!(GetChildren2Request, bytes),
        9 => check_record!(GetAclRequest, bytes),
        10 => check_record!(SetAclRequest, bytes),
        11 => check_record!(SyncRequest, bytes),
        12 => check_record!(CheckVersionRequest, bytes),
        13 => check_record!(MultiRequest, bytes),
        14 => check_record!(AuthPacket, bytes),
        15 => check_record!(ReconfigRequest, bytes),
        16 => check_record!(SetWatches, bytes),
        17 => check_record!(SetWatches2, bytes),
        18 => check_record!(AddWatchRequest, bytes),
        19 => check_record!(RemoveWatchesRequest, bytes),
        20 => check_record!(CheckWatchesRequest, bytes),
        21 => check_record!(RequestHeader, bytes),
        22 => check_record!(GetAllChildrenNumberRequest, bytes),
        23 => check_record!(GetEphemeralsRequest, bytes),
        24 => check_record!(MultiHeader, bytes),
        _ => unreachable!("request kind out of range"),
    }
}

/// Visits every item of every list in a value, checking that each list yields as many items
/// as its length says (a decoded list's iteration stops early if its bytes did not decode).
trait Walk: Debug {
    /// Walks the value.
    fn walk(&self) {}
}

fn walk_list<'a, T: Decode<'a> + Copy + Walk>(list: &List<'a, T>) {
    let mut n = 0;
    for item in list.iter() {
        item.walk();
        n += 1;
    }
    assert_eq!(
        n,
        list.len(),
        "a list yielded fewer or more items than its length"
    );
    assert_eq!(
        list.iter().len(),
        list.len(),
        "wrong ExactSizeIterator::len"
    );
}

fn walk_multi<'a, T: MultiItem<'a> + Walk>(list: &MultiList<'a, T>) {
    let mut n = 0;
    for item in list.iter() {
        item.walk();
        n += 1;
    }
    assert_eq!(
        n,
        list.len(),
        "a multi list yielded fewer or more items than its length"
    );
}

impl Walk for &str {}
impl Walk for Acl<'_> {}
impl Walk for ClientInfo<'_> {}
impl Walk for ConnectRequest<'_> {}
impl Walk for ConnectResponse<'_> {}
impl Walk for ReplyHeader {}
impl Walk for RequestHeader {}
impl Walk for WatcherEvent<'_> {}
impl Walk for PathRecord<'_> {}
impl Walk for PathWatchRequest<'_> {}
impl Walk for PathVersionRequest<'_> {}
impl Walk for Create2Response<'_> {}
impl Walk for StatResponse {}
impl Walk for GetDataResponse<'_> {}
impl Walk for SetDataRequest<'_> {}
impl Walk for GetAllChildrenNumberResponse {}
impl Walk for ErrorResponse {}
impl Walk for AuthPacket<'_> {}
impl Walk for ReconfigRequest<'_> {}
impl Walk for AddWatchRequest<'_> {}
impl Walk for WatchesRequest<'_> {}
impl Walk for MultiHeader {}

/// `Walk` for records whose only lists are the named fields: iterate each fully.
macro_rules! walk_lists {
    ($($record:ident => $($field:ident),+;)*) => {
        $(impl Walk for $record<'_> {
            fn walk(&self) {
                $(walk_list(&self.$field);)+
            }
        })*
    };
}

walk_lists! {
    GetChildrenResponse => children;
    GetChildren2Response => children;
    GetEphemeralsResponse => ephemerals;
    GetAclResponse => acl;
    SetAclRequest => acl;
    WhoAmIResponse => client_info;
    CreateRequest => acl;
    CreateTtlRequest => acl;
    SetWatches => data_watches, exist_watches, child_watches;
    SetWatches2 => data_watches, exist_watches, child_watches, persistent_watches, persistent_recursive_watches;
}
impl Walk for MultiOp<'_> {
    fn walk(&self) {
        match self {
            MultiOp::Create(c) | MultiOp::Create2(c) | MultiOp::CreateContainer(c) => c.walk(),
            MultiOp::CreateTtl(c) => c.walk(),
            MultiOp::Delete(_)
            | MultiOp::Check(_)
            | MultiOp::SetData(_)
            | MultiOp::GetData(_)
            | MultiOp::GetChildren(_) => {}
        }
    }
}
impl Walk for MultiOpResult<'_> {
    fn walk(&self) {
        if let MultiOpResult::GetChildren(children) = self {
            walk_list(children);
        }
    }
}
impl Walk for MultiRequest<'_> {
    fn walk(&self) {
        walk_multi(&self.ops);
    }
}
impl Walk for MultiResponse<'_> {
    fn walk(&self) {
        walk_multi(&self.results);
    }
}
