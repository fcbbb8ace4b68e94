//! `List`: a Jute vector that is either a slice the caller built or a lazily read run of
//! bytes inside a frame.
//!
//! Decoding a `vector<ustring>` of 10,000 child names must not allocate 10,000 `String`s (nor
//! a `Vec`): the decoder checks every item once and keeps only the count and the byte range;
//! iterating reads the items again, borrowing from the frame.

use std::fmt;
use std::marker::PhantomData;

use bytes::BytesMut;

use crate::jute::{put_i32, Decode, Encode, Reader};
use crate::DecodeError;

/// A Jute `vector<T>`: built from a slice for encoding, or borrowed from a frame by decoding.
pub enum List<'a, T> {
    /// Items the caller holds.
    Slice(&'a [T]),
    /// Items still in wire form, already checked to decode.
    Wire(WireList<'a, T>),
}

/// Items of a decoded vector, still in wire form. Checked when decoded: iteration cannot fail.
pub struct WireList<'a, T> {
    len: usize,
    bytes: &'a [u8],
    item: PhantomData<fn() -> T>,
}

impl<T> Clone for WireList<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for WireList<'_, T> {}

impl<T> Clone for List<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for List<'_, T> {}

impl<'a, T> List<'a, T> {
    /// The empty list.
    pub const EMPTY: List<'a, T> = List::Slice(&[]);

    /// How many items the list holds.
    pub fn len(&self) -> usize {
        match self {
            List::Slice(s) => s.len(),
            List::Wire(w) => w.len,
        }
    }

    /// Whether the list holds no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A list over wire bytes kept from an earlier decode ([`List::wire_bytes`] and
    /// [`List::len`]), so a caller can keep the frame and iterate later without checking the
    /// bytes again. Bytes that were never checked cannot cause a panic: iteration just ends
    /// at the first item that does not decode.
    pub fn from_wire_parts(len: usize, bytes: &'a [u8]) -> Self {
        List::Wire(WireList {
            len,
            bytes,
            item: PhantomData,
        })
    }

    /// The wire bytes of the items (after the count), for a decoded list.
    pub fn wire_bytes(&self) -> Option<&'a [u8]> {
        match self {
            List::Slice(_) => None,
            List::Wire(w) => Some(w.bytes),
        }
    }
}

impl<'a, T: Decode<'a> + Copy> List<'a, T> {
    /// The items, in order, borrowing from the slice or the frame.
    pub fn iter(&self) -> ListIter<'a, T> {
        match *self {
            List::Slice(s) => ListIter::Slice(s.iter()),
            List::Wire(w) => ListIter::Wire {
                left: w.len,
                reader: Reader::new(w.bytes),
            },
        }
    }
}

impl<'a, T> From<&'a [T]> for List<'a, T> {
    fn from(s: &'a [T]) -> Self {
        List::Slice(s)
    }
}

impl<'a, T, const N: usize> From<&'a [T; N]> for List<'a, T> {
    fn from(s: &'a [T; N]) -> Self {
        List::Slice(s)
    }
}

impl<'a, T> From<&'a Vec<T>> for List<'a, T> {
    fn from(s: &'a Vec<T>) -> Self {
        List::Slice(s)
    }
}

/// Iterator over a [`List`].
pub enum ListIter<'a, T> {
    #[doc(hidden)]
    Slice(std::slice::Iter<'a, T>),
    #[doc(hidden)]
    Wire { left: usize, reader: Reader<'a> },
}

impl<'a, T: Decode<'a> + Copy> Iterator for ListIter<'a, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match self {
            ListIter::Slice(it) => it.next().copied(),
            ListIter::Wire { left, reader } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                // The bytes were checked when the list was decoded, so this cannot fail; if it
                // somehow did, ending the iteration is the safe answer.
                T::decode(reader).ok()
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match self {
            ListIter::Slice(it) => it.len(),
            ListIter::Wire { left, .. } => *left,
        };
        (n, Some(n))
    }
}

impl<'a, T: Decode<'a> + Copy> ExactSizeIterator for ListIter<'a, T> {}

impl<'a, T: Decode<'a> + Copy> IntoIterator for List<'a, T> {
    type Item = T;
    type IntoIter = ListIter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T: Decode<'a> + Copy + PartialEq> PartialEq for List<'a, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<'a, T: Decode<'a> + Copy + fmt::Debug> fmt::Debug for List<'a, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, T: Decode<'a> + Copy + Encode> Encode for List<'a, T> {
    fn encode(&self, buf: &mut BytesMut) {
        put_i32(buf, self.len() as i32);
        match self {
            List::Slice(s) => s.iter().for_each(|item| item.encode(buf)),
            // Already in wire form: copy the bytes as they are.
            List::Wire(w) => buf.extend_from_slice(w.bytes),
        }
    }
}

impl<'a, T: Decode<'a>> Decode<'a> for List<'a, T> {
    /// Reads the count and checks every item, without keeping any of them. A null vector
    /// (count -1) reads as empty.
    fn decode(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let len = r.read_len()?.unwrap_or(0);
        let start = r.remaining();
        for _ in 0..len {
            // Every item takes at least one byte, so a huge count on a short input fails at
            // the first missing item rather than looping.
            T::decode(r)?;
        }
        let used = start.len() - r.remaining().len();
        Ok(List::Wire(WireList {
            len,
            bytes: &start[..used],
            item: PhantomData,
        }))
    }
}

/// Writes a Jute `vector<ustring>` from any sequence of strings (e.g. a registry's `String`s)
/// without building a slice first.
pub fn put_str_vec<'s, I>(buf: &mut BytesMut, items: I)
where
    I: IntoIterator<Item = &'s str>,
    I::IntoIter: ExactSizeIterator,
{
    let items = items.into_iter();
    put_i32(buf, items.len() as i32);
    for s in items {
        crate::jute::put_str(buf, s);
    }
}
