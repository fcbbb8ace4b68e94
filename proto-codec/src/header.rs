//! The headers in front of every request and reply.

use crate::error_code::ErrorCode;
use crate::opcode::OpCode;

record! {
    /// Starts every request after the handshake: which call (`xid`) and which operation.
    pub struct RequestHeader {
        /// The call id the reply will carry (or a special xid, see [`crate::xid`]).
        pub xid: i32,
        /// The operation.
        pub op: OpCode,
    }
}

record! {
    /// Starts every reply and notification.
    pub struct ReplyHeader {
        /// The call id of the request answered (or a special xid, see [`crate::xid`]).
        pub xid: i32,
        /// The last zxid the server had applied when it answered (-1 for notifications).
        pub zxid: i64,
        /// The outcome; a body follows only when it is [`ErrorCode::Ok`].
        pub err: ErrorCode,
    }
}
