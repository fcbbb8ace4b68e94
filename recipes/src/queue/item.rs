//! Curator's item framing (`ItemSerializer`): the bytes of a `DistributedQueue` node, whether
//! it holds one item (`put`) or a batch (`putMulti`).
//!
//! ```text
//! 00 01 00 01          version, i32 big-endian
//! 01 <len i32 BE> ...  one item (repeated)
//! 02                   end
//! ```
//!
//! `put("A")` is `00010001 01 00000001 41 02`. Decoding borrows: the items are slices of the
//! node's data, no copy.

use crate::error::ErrorExt;
use zkrs_client::{Bytes, Error, Result};

/// The framing version Curator writes and accepts.
pub const ITEM_FORMAT_VERSION: u32 = 0x0001_0001;
const ITEM: u8 = 0x01;
const END: u8 = 0x02;

/// Frames `items` as one queue node's data, the way Curator's `ItemSerializer` does.
///
/// ```
/// use zkrs_recipes::queue::encode_items;
/// assert_eq!(encode_items([b"A"]), [0, 1, 0, 1, 1, 0, 0, 0, 1, b'A', 2]);
/// ```
pub fn encode_items<I>(items: I) -> Vec<u8>
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&ITEM_FORMAT_VERSION.to_be_bytes());
    for item in items {
        let item = item.as_ref();
        out.push(ITEM);
        out.extend_from_slice(&(item.len() as u32).to_be_bytes());
        out.extend_from_slice(item);
    }
    out.push(END);
    out
}

/// The framed size of `items` (what [`encode_items`] would return), to check a batch
/// against the server's packet limit before framing it.
pub fn encoded_len<I>(items: I) -> usize
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    items
        .into_iter()
        .fold(5, |total, item| total + 5 + item.as_ref().len())
}

/// The items of one queue node, as slices of `data`. Fails (with the reason) on bytes that
/// are not Curator's framing: a wrong version, an unknown opcode, a negative or overlong
/// length, a missing end mark. Bytes after the end mark are ignored, as Curator does.
///
/// ```
/// use zkrs_recipes::queue::{decode_items, encode_items};
/// let data = zkrs_client::Bytes::from(encode_items([&b"xy"[..], b"", b"z"]));
/// let items = decode_items(&data).unwrap();
/// assert_eq!(items, [&b"xy"[..], b"", b"z"]);
/// assert!(decode_items(&zkrs_client::Bytes::from_static(b"junk")).is_err());
/// ```
pub fn decode_items(data: &Bytes) -> Result<Vec<Bytes>> {
    decode(data).map_err(|why| Error::invalid_data(format!("not a queue item ({why})")))
}

/// [`decode_items`], with the reason as text.
pub(crate) fn decode(data: &Bytes) -> std::result::Result<Vec<Bytes>, String> {
    let bad = |why: String| why;
    let version = data
        .get(..4)
        .map(|v| u32::from_be_bytes([v[0], v[1], v[2], v[3]]))
        .ok_or_else(|| bad(format!("{} bytes, too short for the version", data.len())))?;
    if version != ITEM_FORMAT_VERSION {
        return Err(bad(format!(
            "version {version:#010x}, expected {ITEM_FORMAT_VERSION:#010x}"
        )));
    }
    let mut items = Vec::new();
    let mut at = 4;
    loop {
        match data.get(at) {
            Some(&END) => return Ok(items),
            Some(&ITEM) => {
                let len = data
                    .get(at + 1..at + 5)
                    .map(|l| i32::from_be_bytes([l[0], l[1], l[2], l[3]]))
                    .ok_or_else(|| bad(format!("truncated length at byte {}", at + 1)))?;
                let len = usize::try_from(len)
                    .map_err(|_| bad(format!("negative length {len} at byte {}", at + 1)))?;
                let start = at + 5;
                let end = start
                    .checked_add(len)
                    .filter(|&end| end <= data.len())
                    .ok_or_else(|| {
                        bad(format!(
                            "an item of {len} bytes at byte {start} runs past the end ({} bytes)",
                            data.len()
                        ))
                    })?;
                items.push(data.slice(start..end));
                at = end;
            }
            Some(&other) => return Err(bad(format!("opcode {other:#04x} at byte {at}"))),
            None => return Err(bad("no end mark".to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn curator_vectors() {
        // From the facts sheet (Curator 5.4 live): put("A"), putMulti("xy", "", "z").
        assert_eq!(
            hex(&encode_items([b"A"])),
            "00010001010000000141".to_string() + "02"
        );
        let multi = encode_items([&b"xy"[..], b"", b"z"]);
        assert_eq!(
            hex(&multi),
            "00010001".to_string() + "01000000027879" + "0100000000" + "01000000017a" + "02"
        );
        assert_eq!(encoded_len([&b"xy"[..], b"", b"z"]), multi.len());
        let items = decode_items(&Bytes::from(multi)).unwrap();
        assert_eq!(items, [&b"xy"[..], b"", b"z"]);
        // An empty batch is legal framing (Curator can write it).
        assert_eq!(
            decode_items(&Bytes::from(encode_items::<[&[u8]; 0]>([])))
                .unwrap()
                .len(),
            0
        );
    }

    #[test]
    fn bad_bytes_are_refused_with_a_reason() {
        let cases: &[(&[u8], &str)] = &[
            (b"", "too short"),
            (&[0, 1, 0, 2, 2], "version"),
            (&[0, 1, 0, 1], "no end mark"),
            (&[0, 1, 0, 1, 7], "opcode 0x07"),
            (&[0, 1, 0, 1, 1, 0, 0], "truncated length"),
            (
                &[0, 1, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 2],
                "negative length",
            ),
            (&[0, 1, 0, 1, 1, 0, 0, 0, 9, 1, 2], "runs past the end"),
            (&[0, 1, 0, 1, 1, 0, 0, 0, 1, b'a'], "no end mark"),
        ];
        for (bytes, why) in cases {
            let e = decode_items(&Bytes::copy_from_slice(bytes)).unwrap_err();
            assert!(e.to_string().contains(why), "{bytes:?}: {e}");
        }
    }

    #[test]
    fn round_trips() {
        for n in 0..20usize {
            let items: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; i * 7]).collect();
            let data = Bytes::from(encode_items(&items));
            assert_eq!(data.len(), encoded_len(&items));
            let back = decode_items(&data).unwrap();
            assert_eq!(back.len(), n);
            for (a, b) in items.iter().zip(&back) {
                assert_eq!(&a[..], &b[..]);
            }
        }
    }
}
