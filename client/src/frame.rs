//! [`Frame`]: an encoded request and the operation it encodes, carried together so that a
//! call names its operation once, where the frame is made, and the driver cannot be told
//! another.

use bytes::BytesMut;
use zkrs_codec::{encode_header_only, OpCode};

/// An encoded request (xid 0, set when it is sent) and its operation.
pub(crate) struct Frame {
    pub(crate) op: OpCode,
    pub(crate) bytes: BytesMut,
}

impl Frame {
    /// A request that is its header alone.
    pub(crate) fn header_only(op: OpCode) -> Frame {
        let mut bytes = BytesMut::with_capacity(12);
        encode_header_only(&mut bytes, 0, op);
        Frame { op, bytes }
    }
}
