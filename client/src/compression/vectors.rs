//! The format against Curator 5.4's own output: vectors made with
//! `new GzipCompressionProvider().compress(path, bytes)` (Debian's curator-framework 5.4.0,
//! OpenJDK's zlib), and the ways a reader must refuse bad input.

use super::{compress, decompress, decompress_with_limit};
use crate::ErrorKind;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The CRC-32 in gzip's trailer and header CRC is CRC-32/ISO-HDLC: the catalogue's check
/// value, and two more known ones.
#[test]
fn crc32_check_values() {
    assert_eq!(crc32fast::hash(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32fast::hash(b""), 0);
    assert_eq!(
        crc32fast::hash(b"The quick brown fox jumps over the lazy dog"),
        0x414F_A339
    );
}

/// (data, what Curator wrote for it).
const CURATOR: &[(&str, &str)] = &[
    ("", "1f8b080000000000000003000000000000000000"),
    ("61", "1f8b08000000000000004b040043beb7e801000000"),
    (
        "68656c6c6f2c20776f726c64",
        "1f8b0800000000000000cb48cdc9c9d75128cf2fca4901003a72abff0c000000",
    ),
    (
        "7b226e616d65223a227a6b7273222c226e616d6532223a227a6b7273222c226e616d6533223a227a6b7273227d",
        "1f8b0800000000000000ab56ca4bcc4d55b252aaca2e2a56d201f38c50b9c6306e2d00f9d2138a2d000000",
    ),
];

/// 3,000 bytes of `abcdefghij` shifted by `(i / 100) % 3`, and Curator's bytes for them.
fn curator_long() -> (Vec<u8>, Vec<u8>) {
    let data = (0..3000usize)
        .map(|i| b"abcdefghij"[i % 10] + ((i / 100) % 3) as u8)
        .collect();
    let gzipped = hex(
        "1f8b0800000000000000edd02b0200200805c1b3e217c1fb671bd1f6dab6c963ad8fb9b69f30990aa953e1\
         eaa41be28a2baeb8e28a2baeb8e28aabbf1e2493dce2b80b0000",
    );
    (data, gzipped)
}

#[test]
fn short_data_is_curators_bytes() {
    for (data, curator) in CURATOR {
        assert_eq!(compress(&hex(data)), hex(curator), "compress({data})");
        assert_eq!(decompress(&hex(curator)).unwrap(), hex(data));
    }
}

#[test]
fn long_data_reads_curators_bytes_and_frames_like_curator() {
    let (data, curator) = curator_long();
    assert_eq!(decompress(&curator).unwrap(), data);
    let ours = compress(&data);
    // The same header and trailer; the DEFLATE stream between them is miniz_oxide's.
    assert_eq!(ours[..10], curator[..10]);
    assert_eq!(ours[ours.len() - 8..], curator[curator.len() - 8..]);
    assert_eq!(decompress(&ours).unwrap(), data);
}

#[test]
fn round_trips() {
    let mut data = Vec::new();
    for n in 0..5000u32 {
        data.extend_from_slice(format!("{{\"n\":{n},\"sq\":{}}}", n * n).as_bytes());
    }
    for len in [0, 1, 2, 100, 511, 512, 513, 4096, data.len()] {
        assert_eq!(decompress(&compress(&data[..len])).unwrap(), &data[..len]);
    }
}

fn kind_of(gzipped: &[u8]) -> ErrorKind {
    decompress(gzipped).expect_err("refused").kind()
}

#[test]
fn refuses_what_curator_refuses() {
    let good = hex(CURATOR[2].1);
    assert_eq!(kind_of(b"\x1f"), ErrorKind::InvalidData);
    assert_eq!(kind_of(b"hello, world, not gzip"), ErrorKind::InvalidData);
    assert_eq!(kind_of(&good[..9]), ErrorKind::InvalidData, "short header");
    assert_eq!(
        kind_of(&good[..good.len() - 1]),
        ErrorKind::InvalidData,
        "short trailer"
    );
    let mut method = good.clone();
    method[2] = 7;
    assert_eq!(kind_of(&method), ErrorKind::InvalidData, "method");
    let mut crc = good.clone();
    let at = good.len() - 8;
    crc[at] ^= 1;
    assert_eq!(kind_of(&crc), ErrorKind::InvalidData, "CRC-32");
    let mut len = good.clone();
    len[good.len() - 4] ^= 1;
    assert_eq!(kind_of(&len), ErrorKind::InvalidData, "length");
    let mut body = good.clone();
    body[10] = 0xff; // a reserved block type
    assert_eq!(kind_of(&body), ErrorKind::InvalidData, "DEFLATE stream");
    // A byte between the DEFLATE stream and the trailer.
    let mut garbage = good[..good.len() - 8].to_vec();
    garbage.push(0);
    garbage.extend_from_slice(&good[good.len() - 8..]);
    assert_eq!(kind_of(&garbage), ErrorKind::InvalidData, "garbage");
    // Two members back to back: Curator reads one member only.
    let two = [good.clone(), good.clone()].concat();
    assert_eq!(kind_of(&two), ErrorKind::InvalidData, "two members");
    // A DEFLATE stream cut short (its trailer still there).
    let (_, long) = curator_long();
    let cut = [&long[..30], &long[long.len() - 8..]].concat();
    assert_eq!(kind_of(&cut), ErrorKind::InvalidData, "cut stream");
}

/// A member with every optional header field, as other gzip writers make them.
fn with_header_fields(data: &[u8], header_crc: bool) -> Vec<u8> {
    let plain = compress(data);
    let mut flags = 0x04 | 0x08 | 0x10;
    if header_crc {
        flags |= 0x02;
    }
    let mut out = plain[..10].to_vec();
    out[3] = flags;
    out[9] = 3; // Unix, as gzip(1) writes
    out.extend_from_slice(&[4, 0, b'x', b'y', 2, 0]); // FEXTRA, 4 bytes
    out.extend_from_slice(b"name.txt\0");
    out.extend_from_slice(b"a comment\0");
    if header_crc {
        let crc = crc32fast::hash(&out) as u16;
        out.extend_from_slice(&crc.to_le_bytes());
    }
    out.extend_from_slice(&plain[10..]);
    out
}

#[test]
fn reads_optional_header_fields() {
    for header_crc in [false, true] {
        let gzipped = with_header_fields(b"with fields", header_crc);
        assert_eq!(decompress(&gzipped).unwrap(), b"with fields");
    }
    let mut wrong = with_header_fields(b"with fields", true);
    wrong[10 + 6 + 9 + 10] ^= 1; // the header CRC's first byte
    assert_eq!(kind_of(&wrong), ErrorKind::InvalidData);
    let truncated = with_header_fields(b"x", false);
    assert_eq!(kind_of(&truncated[..20]), ErrorKind::InvalidData);
}

#[test]
fn empty_data_reads_as_empty() {
    // Where Curator throws: a node made without data (a parent created on the way).
    assert_eq!(decompress(b"").unwrap(), b"");
}

#[test]
fn a_bomb_stops_at_the_limit() {
    let zeros = vec![0u8; 1 << 20];
    let bomb = compress(&zeros);
    assert!(bomb.len() < 2048, "{} bytes", bomb.len());
    let e = decompress_with_limit(&bomb, 64 * 1024).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidData);
    // Exactly at the limit is allowed.
    assert_eq!(decompress_with_limit(&bomb, 1 << 20).unwrap(), zeros);
    assert_eq!(
        decompress_with_limit(&bomb, (1 << 20) - 1)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidData
    );
    // A limit of zero still reads empty data.
    assert_eq!(decompress_with_limit(&compress(b""), 0).unwrap(), b"");
}

proptest::proptest! {
    #[test]
    fn any_data_round_trips(data in proptest::collection::vec(proptest::num::u8::ANY, 0..3000)) {
        proptest::prop_assert_eq!(decompress(&compress(&data)).unwrap(), data);
    }

    #[test]
    fn any_input_is_an_answer_not_a_panic(
        input in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
        flip in 0usize..64,
    ) {
        let _ = decompress_with_limit(&input, 4096);
        // And a valid member with one bit flipped.
        let mut gzipped = compress(&input);
        let at = flip % gzipped.len();
        gzipped[at] ^= 1 << (flip % 8);
        let _ = decompress_with_limit(&gzipped, 4096);
    }
}
