//! Jute primitives: the reader that borrows from a frame, the writers, and the two traits
//! every record implements.
//!
//! Jute encodes `int` as 4 bytes big-endian, `long` as 8, `boolean` as 1 byte, and
//! `ustring`, `buffer` and `vector` as an `int` length followed by the items, where a length of
//! -1 means null. Decoding never copies: strings and buffers are slices of the input.

use bytes::{BufMut, BytesMut};

use crate::DecodeError;

/// A cursor over a frame's bytes. Everything read from it borrows from the input.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    /// The bytes not read yet.
    pub fn remaining(&self) -> &'a [u8] {
        self.buf
    }

    /// Whether everything was read.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Takes the next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.buf.len() < n {
            return Err(DecodeError::UnexpectedEof {
                needed: n,
                remaining: self.buf.len(),
            });
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let bytes = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    /// Reads a Jute `int`.
    pub fn read_i32(&mut self) -> Result<i32, DecodeError> {
        self.array().map(i32::from_be_bytes)
    }

    /// Reads a Jute `long`.
    pub fn read_i64(&mut self) -> Result<i64, DecodeError> {
        self.array().map(i64::from_be_bytes)
    }

    /// Reads a Jute `boolean`: 0 is false, 1 is true, anything else is an error.
    pub fn read_bool(&mut self) -> Result<bool, DecodeError> {
        match self.array::<1>()?[0] {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(DecodeError::InvalidValue {
                field: "boolean",
                value: other.into(),
            }),
        }
    }

    /// Reads a length prefix: `None` for -1 (null), an error for other negatives.
    pub fn read_len(&mut self) -> Result<Option<usize>, DecodeError> {
        match self.read_i32()? {
            -1 => Ok(None),
            n if n < 0 => Err(DecodeError::BadLength(n.into())),
            n => Ok(Some(n as usize)),
        }
    }

    /// Reads a Jute `buffer`, `None` when null.
    pub fn read_buffer_opt(&mut self) -> Result<Option<&'a [u8]>, DecodeError> {
        match self.read_len()? {
            None => Ok(None),
            Some(n) => self.take(n).map(Some),
        }
    }

    /// Reads a Jute `buffer`, a null buffer reading as empty.
    pub fn read_buffer(&mut self) -> Result<&'a [u8], DecodeError> {
        Ok(self.read_buffer_opt()?.unwrap_or_default())
    }

    /// Reads a Jute `ustring`, `None` when null.
    pub fn read_str_opt(&mut self) -> Result<Option<&'a str>, DecodeError> {
        match self.read_buffer_opt()? {
            None => Ok(None),
            Some(bytes) => std::str::from_utf8(bytes)
                .map(Some)
                .map_err(|_| DecodeError::InvalidUtf8),
        }
    }

    /// Reads a Jute `ustring`, a null string reading as empty.
    pub fn read_str(&mut self) -> Result<&'a str, DecodeError> {
        Ok(self.read_str_opt()?.unwrap_or_default())
    }

    /// Fails unless every byte was consumed.
    pub fn finish(&self) -> Result<(), DecodeError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(DecodeError::TrailingBytes(self.buf.len()))
        }
    }
}

/// Writes a Jute `int`.
pub fn put_i32(buf: &mut BytesMut, v: i32) {
    buf.put_i32(v);
}

/// Writes a Jute `long`.
pub fn put_i64(buf: &mut BytesMut, v: i64) {
    buf.put_i64(v);
}

/// Writes a Jute `boolean`.
pub fn put_bool(buf: &mut BytesMut, v: bool) {
    buf.put_u8(u8::from(v));
}

/// Writes a Jute `buffer`; `None` is written as null (length -1).
pub fn put_buffer_opt(buf: &mut BytesMut, v: Option<&[u8]>) {
    match v {
        None => buf.put_i32(-1),
        Some(bytes) => put_buffer(buf, bytes),
    }
}

/// Writes a Jute `buffer`.
///
/// Lengths are not checked here: callers refuse oversize data before encoding (the packet
/// limit is far below `i32::MAX`).
pub fn put_buffer(buf: &mut BytesMut, v: &[u8]) {
    buf.put_i32(v.len() as i32);
    buf.put_slice(v);
}

/// Writes a Jute `ustring`.
pub fn put_str(buf: &mut BytesMut, v: &str) {
    put_buffer(buf, v.as_bytes());
}

/// Writes a Jute `ustring`; `None` is written as null.
pub fn put_str_opt(buf: &mut BytesMut, v: Option<&str>) {
    put_buffer_opt(buf, v.map(str::as_bytes));
}

/// A record that can be written in Jute form.
pub trait Encode {
    /// Appends the record's bytes to `buf`.
    fn encode(&self, buf: &mut BytesMut);

    /// The record's bytes in a fresh buffer (handy in tests).
    fn to_bytes(&self) -> BytesMut {
        let mut buf = BytesMut::new();
        self.encode(&mut buf);
        buf
    }
}

/// A record that can be read from Jute bytes, borrowing from them.
pub trait Decode<'a>: Sized {
    /// Reads the record from the reader's position.
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError>;

    /// Reads the record from the start of `bytes`, ignoring anything after it.
    ///
    /// Replies are read this way: a newer server may append fields an older client does not
    /// know.
    fn decode_prefix(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Self::decode(&mut Reader::new(bytes))
    }

    /// Reads the record and fails if any byte is left over.
    fn decode_exact(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(bytes);
        let value = Self::decode(&mut r)?;
        r.finish()?;
        Ok(value)
    }
}

impl<T: Encode + ?Sized> Encode for &T {
    fn encode(&self, buf: &mut BytesMut) {
        (**self).encode(buf)
    }
}

impl Encode for str {
    fn encode(&self, buf: &mut BytesMut) {
        put_str(buf, self)
    }
}

impl<'a> Decode<'a> for &'a str {
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        r.read_str()
    }
}

impl Encode for String {
    fn encode(&self, buf: &mut BytesMut) {
        put_str(buf, self)
    }
}

// The field types records are made of. With these, a record's codec is just its fields in
// order (see the `record!` macro).

impl Encode for i32 {
    fn encode(&self, buf: &mut BytesMut) {
        put_i32(buf, *self)
    }
}
impl<'a> Decode<'a> for i32 {
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        r.read_i32()
    }
}
impl Encode for i64 {
    fn encode(&self, buf: &mut BytesMut) {
        put_i64(buf, *self)
    }
}
impl<'a> Decode<'a> for i64 {
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        r.read_i64()
    }
}
impl Encode for bool {
    fn encode(&self, buf: &mut BytesMut) {
        put_bool(buf, *self)
    }
}
impl<'a> Decode<'a> for bool {
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        r.read_bool()
    }
}
/// A non-null `buffer` (a null one reads as empty).
impl Encode for [u8] {
    fn encode(&self, buf: &mut BytesMut) {
        put_buffer(buf, self)
    }
}
impl<'a> Decode<'a> for &'a [u8] {
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        r.read_buffer()
    }
}
/// A nullable `buffer`.
impl Encode for Option<&[u8]> {
    fn encode(&self, buf: &mut BytesMut) {
        put_buffer_opt(buf, *self)
    }
}
impl<'a> Decode<'a> for Option<&'a [u8]> {
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        r.read_buffer_opt()
    }
}
/// A nullable `ustring`.
impl Encode for Option<&str> {
    fn encode(&self, buf: &mut BytesMut) {
        put_str_opt(buf, *self)
    }
}
impl<'a> Decode<'a> for Option<&'a str> {
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        r.read_str_opt()
    }
}
