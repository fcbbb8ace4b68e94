//! Frames: a 4-byte big-endian length, then the body. "Check, then parse": [`check_frame`]
//! says whether a whole frame is buffered without decoding anything.

use bytes::{BufMut, BytesMut};

use crate::header::{ReplyHeader, RequestHeader};
use crate::jute::{Decode, Encode, Reader};
use crate::opcode::OpCode;
use crate::DecodeError;

/// The largest frame body accepted by default: the server's and the Java client's
/// `jute.maxbuffer` default, 0xfffff bytes.
pub const DEFAULT_MAX_FRAME_LEN: usize = 0xfffff;

/// Looks at the start of `buf`: `Ok(None)` when more bytes are needed, `Ok(Some(n))` when a
/// whole frame with an `n`-byte body is there (the frame takes `4 + n` bytes), and an error
/// when the length is negative or larger than `max_len`.
pub fn check_frame(buf: &[u8], max_len: usize) -> Result<Option<usize>, DecodeError> {
    let Some(prefix) = buf.get(..4) else {
        return Ok(None);
    };
    let len = i32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
    if len < 0 {
        return Err(DecodeError::BadLength(len.into()));
    }
    let len = len as usize;
    if len > max_len {
        return Err(DecodeError::FrameTooLarge { len, max: max_len });
    }
    Ok((buf.len() - 4 >= len).then_some(len))
}

/// Writes a frame: reserves the length prefix, lets `body` write, then fills the length in.
pub fn write_frame(buf: &mut BytesMut, body: impl FnOnce(&mut BytesMut)) {
    let start = buf.len();
    buf.put_i32(0);
    body(buf);
    let len = (buf.len() - start - 4) as i32;
    buf[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// Writes a whole request frame: length, [`RequestHeader`], body.
pub fn encode_request<R: Encode + ?Sized>(buf: &mut BytesMut, xid: i32, op: OpCode, body: &R) {
    write_frame(buf, |buf| {
        RequestHeader { xid, op }.encode(buf);
        body.encode(buf);
    });
}

/// Writes a request frame without a body (ping, closeSession, whoAmI).
pub fn encode_header_only(buf: &mut BytesMut, xid: i32, op: OpCode) {
    write_frame(buf, |buf| RequestHeader { xid, op }.encode(buf));
}

/// Byte offset of the xid inside a request frame: the session core writes the xid there when
/// it sends a frame that was encoded before its xid was known.
pub const REQUEST_XID_OFFSET: usize = 4;

/// Splits a reply frame body (after the length prefix) into its header and the rest.
pub fn parse_reply(body: &[u8]) -> Result<(ReplyHeader, &[u8]), DecodeError> {
    let mut r = Reader::new(body);
    let header = ReplyHeader::decode(&mut r)?;
    Ok((header, r.remaining()))
}

/// Splits a request frame body into its header and the rest (server side; tests, fuzzing).
pub fn parse_request(body: &[u8]) -> Result<(RequestHeader, &[u8]), DecodeError> {
    let mut r = Reader::new(body);
    let header = RequestHeader::decode(&mut r)?;
    Ok((header, r.remaining()))
}
