//! How counters store numbers: big-endian, as Java's `ByteBuffer` writes them.

use crate::error::ErrorExt;
use zkrs_client::{Error, Result};

/// A number a counter node holds.
pub(crate) trait Number: Copy + Eq + std::fmt::Debug + Send + Sync + 'static {
    /// Bytes in the node.
    const SIZE: usize;
    fn encode(self) -> Vec<u8>;
    fn decode(data: &[u8]) -> Option<Self>;
    fn wrapping_add(self, other: Self) -> Self;
    fn wrapping_neg(self) -> Self;
    fn zero() -> Self;
}

macro_rules! number {
    ($t:ty) => {
        impl Number for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn encode(self) -> Vec<u8> {
                self.to_be_bytes().to_vec()
            }
            fn decode(data: &[u8]) -> Option<Self> {
                Some(<$t>::from_be_bytes(
                    data.get(..Self::SIZE)?.try_into().ok()?,
                ))
            }
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
            fn wrapping_neg(self) -> Self {
                <$t>::wrapping_neg(self)
            }
            fn zero() -> Self {
                0
            }
        }
    };
}
number!(i32);
number!(i64);

/// Reads a node's number: empty data reads as 0 (as Curator's atomic values do); fewer bytes
/// than the number's size is an error that names the node.
pub(crate) fn read_number<N: Number>(path: &str, data: &[u8]) -> Result<N> {
    if data.is_empty() {
        return Ok(N::zero());
    }
    N::decode(data).ok_or_else(|| {
        Error::invalid_data(format!(
            "{path}: a counter of {} bytes, found {}",
            N::SIZE,
            data.len()
        ))
    })
}

/// A SharedCount value as Curator stores it: 4 bytes, big-endian.
///
/// ```
/// use zkrs_recipes::counter::{decode_count, encode_count};
/// assert_eq!(encode_count(3), [0, 0, 0, 3]);
/// assert_eq!(decode_count(&encode_count(-7)), Some(-7));
/// ```
pub fn encode_count(count: i32) -> [u8; 4] {
    count.to_be_bytes()
}

/// Reads a SharedCount value: the first 4 bytes, big-endian (as Curator's `ByteBuffer`
/// does); `None` if there are fewer than 4.
pub fn decode_count(data: &[u8]) -> Option<i32> {
    <i32 as Number>::decode(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_endian_as_java_writes_it() {
        assert_eq!(7i32.encode(), [0, 0, 0, 7]);
        assert_eq!((-2i32).encode(), [0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(1i64.encode(), [0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(read_number::<i64>("/c", &[]).unwrap(), 0);
        assert_eq!(read_number::<i64>("/c", &(-5i64).encode()).unwrap(), -5);
        let err = read_number::<i64>("/c", &[1, 2, 3]).unwrap_err();
        assert!(err.to_string().contains("/c"), "{err}");
    }
}
