//! The one error type of the codec: what was wrong with the bytes.

use std::fmt;

/// Bytes that do not form the record being decoded.
///
/// Every decoder in this crate returns this instead of panicking, whatever the input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended before the record did.
    UnexpectedEof {
        /// Bytes the next field needed.
        needed: usize,
        /// Bytes that were left.
        remaining: usize,
    },
    /// A length prefix was negative (other than -1, which means null) or absurd.
    BadLength(i64),
    /// A `ustring` was not valid UTF-8.
    InvalidUtf8,
    /// A field held a value outside its domain (an unknown create mode, a boolean of 7...).
    InvalidValue {
        /// Which field.
        field: &'static str,
        /// The value found.
        value: i64,
    },
    /// A whole record was decoded but bytes were left over where none are allowed.
    TrailingBytes(usize),
    /// A frame's length prefix is larger than the configured maximum.
    FrameTooLarge {
        /// The length announced by the frame.
        len: usize,
        /// The configured maximum.
        max: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::UnexpectedEof { needed, remaining } => write!(
                f,
                "record truncated: needed {needed} more bytes, {remaining} left"
            ),
            DecodeError::BadLength(len) => write!(f, "invalid length prefix {len}"),
            DecodeError::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
            DecodeError::InvalidValue { field, value } => {
                write!(f, "invalid value {value} for {field}")
            }
            DecodeError::TrailingBytes(n) => write!(f, "{n} unexpected bytes after the record"),
            DecodeError::FrameTooLarge { len, max } => {
                write!(f, "frame of {len} bytes exceeds the maximum of {max}")
            }
        }
    }
}

impl std::error::Error for DecodeError {}
