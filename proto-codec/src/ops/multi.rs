//! `multi` and `multiRead`: several operations in one request, each behind a `MultiHeader`,
//! the list closed by a header with `done = true`.
//!
//! A failed `multi` still answers `err = 0` in its reply header: the failure is in the
//! results, an [`MultiOpResult::Error`] per operation (0 for the ones before the failure, the
//! error itself, then -2 RuntimeInconsistency for the ones rolled back).

use std::fmt;

use bytes::BytesMut;

use crate::common_types::*;
use crate::error_code::ErrorCode;
use crate::jute::{Decode, Encode, Reader};
use crate::opcode::OpCode;
use crate::DecodeError;

use super::{
    CheckVersionRequest, Create2Response, CreateRequest, CreateTtlRequest, DeleteRequest,
    GetChildrenRequest, GetDataRequest, SetDataRequest,
};

record! {
    /// Precedes each operation or result of a multi; `done = true` closes the list.
    pub struct MultiHeader {
        /// The operation (`-1` for an error result and for the closing header).
        pub op: OpCode,
        /// Whether this header closes the list.
        pub done: bool,
        /// -1 in requests; in replies the result's error code (0 for success).
        pub err: i32,
    }
}

impl MultiHeader {
    /// The header that closes a list.
    pub const DONE: MultiHeader = MultiHeader {
        op: OpCode::Error,
        done: true,
        err: -1,
    };
}

/// An item of a multi list: knows its header and how to read its body from one.
pub trait MultiItem<'a>: Sized + Copy {
    /// The header written before the item.
    fn header(&self) -> MultiHeader;
    /// Writes the item's body.
    fn encode_body(&self, buf: &mut BytesMut);
    /// Reads the body that `header` announces.
    fn decode_body(header: MultiHeader, r: &mut Reader<'a>) -> Result<Self, DecodeError>;
}

/// The items of a multi request or reply: a caller's slice, or checked wire bytes.
pub enum MultiList<'a, T> {
    /// Items the caller holds.
    Slice(&'a [T]),
    /// Items in wire form (up to, not including, the closing header), checked to decode.
    Wire {
        /// Number of items.
        len: usize,
        /// Their bytes.
        bytes: &'a [u8],
    },
}

impl<T> Clone for MultiList<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for MultiList<'_, T> {}

impl<'a, T: MultiItem<'a>> MultiList<'a, T> {
    /// Number of items.
    pub fn len(&self) -> usize {
        match self {
            MultiList::Slice(s) => s.len(),
            MultiList::Wire { len, .. } => *len,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items in order.
    pub fn iter(&self) -> MultiIter<'a, T> {
        match *self {
            MultiList::Slice(s) => MultiIter::Slice(s.iter()),
            MultiList::Wire { bytes, .. } => MultiIter::Wire(Reader::new(bytes)),
        }
    }
}

impl<'a, T> From<&'a [T]> for MultiList<'a, T> {
    fn from(s: &'a [T]) -> Self {
        MultiList::Slice(s)
    }
}

impl<'a, T, const N: usize> From<&'a [T; N]> for MultiList<'a, T> {
    fn from(s: &'a [T; N]) -> Self {
        MultiList::Slice(s)
    }
}

/// Iterator over a [`MultiList`].
pub enum MultiIter<'a, T> {
    #[doc(hidden)]
    Slice(std::slice::Iter<'a, T>),
    #[doc(hidden)]
    Wire(Reader<'a>),
}

impl<'a, T: MultiItem<'a>> Iterator for MultiIter<'a, T> {
    type Item = T;
    fn next(&mut self) -> Option<T> {
        match self {
            MultiIter::Slice(it) => it.next().copied(),
            MultiIter::Wire(r) => {
                if r.is_empty() {
                    return None;
                }
                // Checked when decoded: cannot fail; ending is the safe answer if it did.
                let header = MultiHeader::decode(r).ok()?;
                T::decode_body(header, r).ok()
            }
        }
    }
}

impl<'a, T: MultiItem<'a> + PartialEq> PartialEq for MultiList<'a, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<'a, T: MultiItem<'a> + fmt::Debug> fmt::Debug for MultiList<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, T: MultiItem<'a>> Encode for MultiList<'a, T> {
    fn encode(&self, buf: &mut BytesMut) {
        match self {
            MultiList::Slice(items) => {
                for item in items.iter() {
                    item.header().encode(buf);
                    item.encode_body(buf);
                }
            }
            MultiList::Wire { bytes, .. } => buf.extend_from_slice(bytes),
        }
        MultiHeader::DONE.encode(buf);
    }
}

impl<'a, T: MultiItem<'a>> Decode<'a> for MultiList<'a, T> {
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let start = r.remaining();
        let mut len = 0;
        loop {
            let before = r.remaining().len();
            let header = MultiHeader::decode(r)?;
            if header.done {
                let used = start.len() - before;
                return Ok(MultiList::Wire {
                    len,
                    bytes: &start[..used],
                });
            }
            T::decode_body(header, r)?;
            len += 1;
        }
    }
}

/// One operation of a `multi` (writes) or `multiRead` (reads) request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MultiOp<'a> {
    /// `create`: the reply gives the path.
    Create(CreateRequest<'a>),
    /// `create2`: the reply gives path and Stat.
    Create2(CreateRequest<'a>),
    /// `createContainer`.
    CreateContainer(CreateRequest<'a>),
    /// `createTTL`.
    CreateTtl(CreateTtlRequest<'a>),
    /// `delete`.
    Delete(DeleteRequest<'a>),
    /// `setData`.
    SetData(SetDataRequest<'a>),
    /// `check`: fails the transaction unless the version matches.
    Check(CheckVersionRequest<'a>),
    /// `getData` (multiRead only).
    GetData(GetDataRequest<'a>),
    /// `getChildren` (multiRead only).
    GetChildren(GetChildrenRequest<'a>),
}

impl MultiOp<'_> {
    /// The operation's opcode.
    pub fn op_code(&self) -> OpCode {
        match self {
            MultiOp::Create(_) => OpCode::Create,
            MultiOp::Create2(_) => OpCode::Create2,
            MultiOp::CreateContainer(_) => OpCode::CreateContainer,
            MultiOp::CreateTtl(_) => OpCode::CreateTtl,
            MultiOp::Delete(_) => OpCode::Delete,
            MultiOp::SetData(_) => OpCode::SetData,
            MultiOp::Check(_) => OpCode::Check,
            MultiOp::GetData(_) => OpCode::GetData,
            MultiOp::GetChildren(_) => OpCode::GetChildren,
        }
    }

    /// The path the operation is about.
    pub fn path(&self) -> &str {
        match self {
            MultiOp::Create(c) | MultiOp::Create2(c) | MultiOp::CreateContainer(c) => c.path,
            MultiOp::CreateTtl(c) => c.path,
            MultiOp::Delete(d) | MultiOp::Check(d) => d.path,
            MultiOp::SetData(s) => s.path,
            MultiOp::GetData(g) | MultiOp::GetChildren(g) => g.path,
        }
    }

    /// Whether the operation is a read (belongs in a `multiRead`).
    pub fn is_read(&self) -> bool {
        matches!(self, MultiOp::GetData(_) | MultiOp::GetChildren(_))
    }
}

impl<'a> MultiItem<'a> for MultiOp<'a> {
    fn header(&self) -> MultiHeader {
        MultiHeader {
            op: self.op_code(),
            done: false,
            err: -1,
        }
    }

    fn encode_body(&self, buf: &mut BytesMut) {
        match self {
            MultiOp::Create(c) | MultiOp::Create2(c) | MultiOp::CreateContainer(c) => c.encode(buf),
            MultiOp::CreateTtl(c) => c.encode(buf),
            MultiOp::Delete(d) | MultiOp::Check(d) => d.encode(buf),
            MultiOp::SetData(s) => s.encode(buf),
            MultiOp::GetData(g) | MultiOp::GetChildren(g) => g.encode(buf),
        }
    }

    fn decode_body(header: MultiHeader, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(match header.op {
            OpCode::Create => MultiOp::Create(Decode::decode(r)?),
            OpCode::Create2 => MultiOp::Create2(Decode::decode(r)?),
            OpCode::CreateContainer => MultiOp::CreateContainer(Decode::decode(r)?),
            OpCode::CreateTtl => MultiOp::CreateTtl(Decode::decode(r)?),
            OpCode::Delete => MultiOp::Delete(Decode::decode(r)?),
            OpCode::SetData => MultiOp::SetData(Decode::decode(r)?),
            OpCode::Check => MultiOp::Check(Decode::decode(r)?),
            OpCode::GetData => MultiOp::GetData(Decode::decode(r)?),
            OpCode::GetChildren => MultiOp::GetChildren(Decode::decode(r)?),
            other => {
                return Err(DecodeError::InvalidValue {
                    field: "multi operation",
                    value: other.code().into(),
                })
            }
        })
    }
}

/// The result of one operation of a multi reply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MultiOpResult<'a> {
    /// `create` succeeded: the created path.
    Create(&'a str),
    /// `create2`, `createContainer` or `createTTL` succeeded (`op` says which).
    Create2 {
        /// Which create.
        op: OpCode,
        /// Path and Stat.
        response: Create2Response<'a>,
    },
    /// `delete` succeeded.
    Delete,
    /// `setData` succeeded: the new Stat.
    SetData(Stat),
    /// `check` succeeded.
    Check,
    /// `getData` succeeded.
    GetData {
        /// The data.
        data: Option<&'a [u8]>,
        /// The node's metadata.
        stat: Stat,
    },
    /// `getChildren` succeeded.
    GetChildren(List<'a, &'a str>),
    /// The operation failed (or, in a failed multi, was rolled back or never ran).
    Error(ErrorCode),
}

impl<'a> MultiItem<'a> for MultiOpResult<'a> {
    fn header(&self) -> MultiHeader {
        let (op, err) = match self {
            MultiOpResult::Create(_) => (OpCode::Create, 0),
            MultiOpResult::Create2 { op, .. } => (*op, 0),
            MultiOpResult::Delete => (OpCode::Delete, 0),
            MultiOpResult::SetData(_) => (OpCode::SetData, 0),
            MultiOpResult::Check => (OpCode::Check, 0),
            MultiOpResult::GetData { .. } => (OpCode::GetData, 0),
            MultiOpResult::GetChildren(_) => (OpCode::GetChildren, 0),
            MultiOpResult::Error(code) => (OpCode::Error, code.code()),
        };
        MultiHeader {
            op,
            done: false,
            err,
        }
    }

    fn encode_body(&self, buf: &mut BytesMut) {
        match self {
            MultiOpResult::Create(path) => path.encode(buf),
            MultiOpResult::Create2 { response, .. } => response.encode(buf),
            MultiOpResult::Delete | MultiOpResult::Check => {}
            MultiOpResult::SetData(stat) => stat.encode(buf),
            MultiOpResult::GetData { data, stat } => {
                data.encode(buf);
                stat.encode(buf);
            }
            MultiOpResult::GetChildren(children) => children.encode(buf),
            MultiOpResult::Error(code) => code.encode(buf),
        }
    }

    fn decode_body(header: MultiHeader, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(match header.op {
            OpCode::Create => MultiOpResult::Create(r.read_str()?),
            op @ (OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTtl) => {
                MultiOpResult::Create2 {
                    op,
                    response: Decode::decode(r)?,
                }
            }
            OpCode::Delete => MultiOpResult::Delete,
            OpCode::SetData => MultiOpResult::SetData(Decode::decode(r)?),
            OpCode::Check => MultiOpResult::Check,
            OpCode::GetData => MultiOpResult::GetData {
                data: Decode::decode(r)?,
                stat: Decode::decode(r)?,
            },
            OpCode::GetChildren => MultiOpResult::GetChildren(Decode::decode(r)?),
            OpCode::Error => MultiOpResult::Error(Decode::decode(r)?),
            other => {
                return Err(DecodeError::InvalidValue {
                    field: "multi result",
                    value: other.code().into(),
                })
            }
        })
    }
}

record! {
    /// `MultiOperationRecord`: the body of a `multi` or `multiRead` request.
    pub struct MultiRequest<'a> {
        /// The operations, in order.
        pub ops: MultiList<'a, MultiOp<'a>>,
    }
}

record! {
    /// `MultiResponse`: the body of a `multi` or `multiRead` reply.
    pub struct MultiResponse<'a> {
        /// One result per operation, in order.
        pub results: MultiList<'a, MultiOpResult<'a>>,
    }
}
