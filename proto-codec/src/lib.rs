//! A hand-written encoder/decoder for the Apache ZooKeeper wire protocol (Jute), with no I/O.
//!
//! - Encoding appends to a [`bytes::BytesMut`]; see [`Encode`] and [`encode_request`].
//! - Decoding borrows from the frame: strings, buffers and lists are slices of the input, and a
//!   list of 10,000 child names decodes without allocating (see [`List`]).
//! - Malformed bytes give a [`DecodeError`], never a panic.
//! - Frames are handled "check, then parse": [`check_frame`] says whether a whole frame is
//!   buffered, then the header and body are decoded.
//!
//! ```
//! use bytes::BytesMut;
//! use zkrs_codec::{check_frame, encode_request, parse_reply, Decode, GetDataRequest,
//!     GetDataResponse, OpCode, DEFAULT_MAX_FRAME_LEN};
//!
//! // A request frame, as the client sends it.
//! let mut out = BytesMut::new();
//! let request = GetDataRequest { path: "/app/node", watch: true };
//! encode_request(&mut out, 1, OpCode::GetData, &request);
//! assert_eq!(&out[..], &[0, 0, 0, 0x16, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 9,
//!     b'/', b'a', b'p', b'p', b'/', b'n', b'o', b'd', b'e', 1]);
//!
//! // A reply frame, as the server sends it: check, then parse.
//! let frame = [0u8, 0, 0, 0x10, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 6, 0xff, 0xff, 0xff, 0x9b];
//! let len = check_frame(&frame, DEFAULT_MAX_FRAME_LEN).unwrap().expect("whole frame");
//! let (header, body) = parse_reply(&frame[4..4 + len]).unwrap();
//! assert_eq!(header.err, zkrs_codec::ErrorCode::NoNode);
//! assert!(body.is_empty());
//! # let _ = GetDataResponse::decode_prefix;
//! ```
#![warn(missing_docs)]
// On docs.rs: label each item with the cargo feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

#[macro_use]
mod macros;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

mod acl;
mod connect;
mod create_mode;
mod error;
mod error_code;
mod event;
mod frame;
// The fuzz targets' bodies: for fuzz/ and the seed replays, no promise.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod header;
pub mod jute;
mod list;
mod opcode;
mod ops;
mod secret;
mod stat;
mod watch_mode;

pub use acl::{Acl, AclEntry, ClientInfo, Id};
pub use connect::{
    decode_connect_request, decode_connect_response, encode_connect_request, ConnectRequest,
    ConnectResponse,
};
pub use create_mode::{CreateMode, Perms};
pub use error::DecodeError;
pub use error_code::ErrorCode;
pub use event::{EventType, KeeperState, WatcherEvent};
pub use frame::{
    check_frame, encode_header_only, encode_request, parse_reply, parse_request, write_frame,
    DEFAULT_MAX_FRAME_LEN, REQUEST_XID_OFFSET,
};
pub use header::{ReplyHeader, RequestHeader};
pub use jute::{Decode, Encode, Reader};
pub use list::{put_str_vec, List, ListIter, WireList};
pub use opcode::{xid, OpCode, ReplyRecord};
pub use ops::*;
pub use secret::Secret;
pub use stat::Stat;
pub use watch_mode::{AddWatchMode, WatcherType};

/// What the record modules use, in one import.
mod common_types {
    pub use crate::create_mode::CreateMode;
    pub use crate::list::List;
    pub use crate::ops::{PathRecord, PathWatchRequest, StatResponse};
    pub use crate::stat::Stat;
}
