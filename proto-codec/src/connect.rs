//! The session handshake: `ConnectRequest` and `ConnectResponse`.
//!
//! Both records end, on the wire, with a one-byte read-only flag that the 3.8 Jute definitions
//! do not list: the Java client writes it after the record and the server after its reply.
//! The records here are the Jute records proper; [`encode_connect_request`] and
//! [`decode_connect_response`] handle the flag. Old servers may omit it from the response.

use bytes::BytesMut;

use crate::frame::write_frame;
use crate::jute::{put_bool, Decode, Encode, Reader};
use crate::DecodeError;

record! {
    /// The first packet of a connection: starts or resumes a session.
    pub struct ConnectRequest<'a> secret passwd {
        /// Always 0.
        pub protocol_version: i32,
        /// The last zxid this client saw (0 for a new session); a server that is behind
        /// refuses the connection, so the client never goes back in time.
        pub last_zxid_seen: i64,
        /// The session timeout the client asks for, in milliseconds.
        pub timeout_ms: i32,
        /// 0 for a new session, else the session to resume.
        pub session_id: i64,
        /// 16 zero bytes for a new session, else the session's password.
        pub passwd: &'a [u8],
    }
}

record! {
    /// The server's answer to a [`ConnectRequest`].
    pub struct ConnectResponse<'a> secret passwd {
        /// Always 0.
        pub protocol_version: i32,
        /// The negotiated session timeout in milliseconds; 0 or less means the session
        /// expired.
        pub timeout_ms: i32,
        /// The session id.
        pub session_id: i64,
        /// The session password, to resume the session on another server.
        pub passwd: &'a [u8],
    }
}

/// Writes the whole connect frame: length prefix, record, and the read-only flag (true when
/// the client accepts a read-only server).
pub fn encode_connect_request(buf: &mut BytesMut, request: &ConnectRequest<'_>, read_only: bool) {
    write_frame(buf, |buf| {
        request.encode(buf);
        put_bool(buf, read_only);
    });
}

/// Reads a connect response body (after the length prefix) and its read-only flag (false
/// when an old server left it out).
pub fn decode_connect_response(body: &[u8]) -> Result<(ConnectResponse<'_>, bool), DecodeError> {
    let mut r = Reader::new(body);
    let response = ConnectResponse::decode(&mut r)?;
    let read_only = if r.is_empty() { false } else { r.read_bool()? };
    Ok((response, read_only))
}

/// Reads a connect request body and its read-only flag (server side; tests and fuzzing).
pub fn decode_connect_request(body: &[u8]) -> Result<(ConnectRequest<'_>, bool), DecodeError> {
    let mut r = Reader::new(body);
    let request = ConnectRequest::decode(&mut r)?;
    let read_only = if r.is_empty() { false } else { r.read_bool()? };
    Ok((request, read_only))
}
