//! Whatever the bytes, every decoder returns `Ok` or `Err` and never panics; lists that did
//! decode iterate fully.
//!
//! Inputs: arbitrary bytes (up to 2 KiB), and golden vectors (`tests/vectors/jute-vectors.txt`)
//! corrupted on purpose: one byte flipped, truncated at every length, a length prefix (or any
//! 4 bytes) replaced with a huge or negative value, two vectors spliced together.

use std::fmt::Debug;

use proptest::prelude::*;
use proptest::sample::Index;
use zkrs_codec::*;

const CASES: u32 = 512;

/// The golden vectors, as bytes.
fn vectors() -> Vec<Vec<u8>> {
    include_str!("vectors/jute-vectors.txt")
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(_, hex)| {
            (0..hex.trim().len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect()
        })
        .collect()
}

/// Iterates a decoded list, which must yield as many items as it says.
fn walk<'a, T: Decode<'a> + Copy + Debug>(list: List<'a, T>) {
    let n = list.iter().map(|item| format!("{item:?}")).count();
    assert_eq!(n, list.len(), "list length and iteration disagree");
}

fn walk_multi<'a, T: MultiItem<'a> + Debug>(list: MultiList<'a, T>, each: impl Fn(&T)) {
    let mut n = 0;
    for item in list.iter() {
        each(&item);
        n += 1;
    }
    assert_eq!(n, list.len(), "multi list length and iteration disagree");
}

fn walk_result(result: &MultiOpResult<'_>) {
    if let MultiOpResult::GetChildren(children) = result {
        walk(*children);
    }
}

fn walk_op(op: &MultiOp<'_>) {
    match op {
        MultiOp::Create(c) | MultiOp::Create2(c) | MultiOp::CreateContainer(c) => walk(c.acl),
        MultiOp::CreateTtl(c) => walk(c.acl),
        _ => {}
    }
}

/// Decodes `bytes` as `T` both ways (prefix and exact), walks what decoded, and formats it.
fn decode_as<'a, T: Decode<'a> + Debug>(bytes: &'a [u8], walk: impl Fn(&T)) {
    for value in [T::decode_prefix(bytes), T::decode_exact(bytes)] {
        match value {
            Ok(value) => {
                walk(&value);
                let _ = format!("{value:?}");
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
    }
}

fn nothing<T>(_: &T) {}

/// Every decoder of the crate on the same bytes.
fn decode_everything(b: &[u8]) {
    // Frames and headers.
    for max in [0, 8, 64, DEFAULT_MAX_FRAME_LEN, usize::MAX] {
        if let Ok(Some(len)) = check_frame(b, max) {
            assert!(len <= max && 4 + len <= b.len());
        }
    }
    let _ = parse_reply(b);
    let _ = parse_request(b);
    let _ = decode_connect_request(b);
    let _ = decode_connect_response(b);

    // Records.
    decode_as::<ConnectRequest<'_>>(b, nothing);
    decode_as::<ConnectResponse<'_>>(b, nothing);
    decode_as::<RequestHeader>(b, nothing);
    decode_as::<ReplyHeader>(b, nothing);
    decode_as::<Stat>(b, nothing);
    decode_as::<Id<'_>>(b, nothing);
    decode_as::<Acl<'_>>(b, nothing);
    decode_as::<ClientInfo<'_>>(b, nothing);
    decode_as::<WatcherEvent<'_>>(b, nothing);
    decode_as::<PathRecord<'_>>(b, nothing);
    decode_as::<PathWatchRequest<'_>>(b, nothing);
    decode_as::<PathVersionRequest<'_>>(b, nothing);
    decode_as::<StatResponse>(b, nothing);
    decode_as::<ErrorResponse>(b, nothing);
    decode_as::<CreateRequest<'_>>(b, |v| walk(v.acl));
    decode_as::<CreateTtlRequest<'_>>(b, |v| walk(v.acl));
    decode_as::<Create2Response<'_>>(b, nothing);
    decode_as::<GetDataResponse<'_>>(b, nothing);
    decode_as::<SetDataRequest<'_>>(b, nothing);
    decode_as::<GetChildrenResponse<'_>>(b, |v| walk(v.children));
    decode_as::<GetChildren2Response<'_>>(b, |v| walk(v.children));
    decode_as::<GetAllChildrenNumberResponse>(b, nothing);
    decode_as::<GetEphemeralsResponse<'_>>(b, |v| walk(v.ephemerals));
    decode_as::<GetAclResponse<'_>>(b, |v| walk(v.acl));
    decode_as::<SetAclRequest<'_>>(b, |v| walk(v.acl));
    decode_as::<WhoAmIResponse<'_>>(b, |v| walk(v.client_info));
    decode_as::<AuthPacket<'_>>(b, nothing);
    decode_as::<ReconfigRequest<'_>>(b, nothing);
    decode_as::<SetWatches<'_>>(b, |v| {
        walk(v.data_watches);
        walk(v.exist_watches);
        walk(v.child_watches);
    });
    decode_as::<SetWatches2<'_>>(b, |v| {
        walk(v.data_watches);
        walk(v.exist_watches);
        walk(v.child_watches);
        walk(v.persistent_watches);
        walk(v.persistent_recursive_watches);
    });
    decode_as::<AddWatchRequest<'_>>(b, nothing);
    decode_as::<WatchesRequest<'_>>(b, nothing);
    decode_as::<MultiHeader>(b, nothing);
    decode_as::<MultiRequest<'_>>(b, |v| walk_multi(v.ops, walk_op));
    decode_as::<MultiResponse<'_>>(b, |v| walk_multi(v.results, walk_result));
    // Bare lists and primitives.
    decode_as::<List<'_, &str>>(b, |v| walk(*v));
    decode_as::<List<'_, Acl<'_>>>(b, |v| walk(*v));
    decode_as::<Option<&str>>(b, nothing);
    decode_as::<Option<&[u8]>>(b, nothing);
    decode_as::<bool>(b, nothing);
    decode_as::<OpCode>(b, nothing);
    decode_as::<CreateMode>(b, nothing);

    // The reply path a client follows: frame, header, body.
    if let Ok(Some(len)) = check_frame(b, DEFAULT_MAX_FRAME_LEN) {
        if let Ok((_, body)) = parse_reply(&b[4..4 + len]) {
            decode_as::<GetChildren2Response<'_>>(body, |v| walk(v.children));
            decode_as::<MultiResponse<'_>>(body, |v| walk_multi(v.results, walk_result));
        }
    }
}

/// The decoders, then the fuzz target bodies (which also check the round-trip invariants).
fn everything(b: &[u8]) {
    decode_everything(b);
    zkrs_codec::fuzzing::frame(b);
    zkrs_codec::fuzzing::reply(b);
    zkrs_codec::fuzzing::request(b);
}

/// Lengths a corrupted prefix may announce: null, negative, huge, just over the frame limit.
const NASTY_LENGTHS: &[i32] = &[
    -1,
    -2,
    -100,
    i32::MIN,
    i32::MAX,
    i32::MAX - 3,
    0x000f_ffff,
    0x0010_0000,
    1 << 30,
    0,
    1,
    4,
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        everything(&bytes);
    }

    /// Short inputs with an eye on the selector bytes: every record kind gets garbage.
    #[test]
    fn arbitrary_records(selector in any::<u8>(), bytes in prop::collection::vec(any::<u8>(), 0..96)) {
        let mut data = vec![selector];
        data.extend_from_slice(&bytes);
        everything(&data);
    }

    #[test]
    fn vector_with_one_byte_flipped(
        vector in prop::sample::select(vectors()),
        at in any::<Index>(),
        mask in 1u8..=255,
        selector in any::<u8>(),
    ) {
        let mut bytes = vector;
        let i = at.index(bytes.len());
        bytes[i] ^= mask;
        everything(&bytes);
        bytes.insert(0, selector);
        everything(&bytes);
    }

    #[test]
    fn vector_with_nasty_length(
        vector in prop::sample::select(vectors()),
        at in any::<Index>(),
        len in prop::sample::select(NASTY_LENGTHS),
        selector in any::<u8>(),
    ) {
        let mut bytes = vector;
        if bytes.len() >= 4 {
            let i = at.index(bytes.len() - 3);
            bytes[i..i + 4].copy_from_slice(&len.to_be_bytes());
        }
        everything(&bytes);
        bytes.insert(0, selector);
        everything(&bytes);
    }

    #[test]
    fn vectors_spliced(
        a in prop::sample::select(vectors()),
        b in prop::sample::select(vectors()),
        cut_a in any::<Index>(),
        cut_b in any::<Index>(),
    ) {
        let mut bytes = a[..cut_a.index(a.len() + 1)].to_vec();
        bytes.extend_from_slice(&b[cut_b.index(b.len() + 1)..]);
        everything(&bytes);
    }
}

/// Every golden vector truncated at every length.
#[test]
fn vectors_truncated_at_every_length() {
    let vectors = vectors();
    assert!(vectors.len() > 90, "golden vectors missing");
    for vector in &vectors {
        for end in 0..=vector.len() {
            decode_everything(&vector[..end]);
            zkrs_codec::fuzzing::frame(&vector[..end]);
        }
    }
}

/// A list count far larger than the input fails at the first missing item, quickly.
#[test]
fn huge_list_counts_fail_fast() {
    for count in [i32::MAX, 1 << 30, 100_000] {
        let mut bytes = count.to_be_bytes().to_vec();
        bytes.extend_from_slice(&[0, 0, 0, 1, b'a']);
        assert!(GetChildrenResponse::decode_exact(&bytes).is_err());
        assert!(List::<&str>::decode_exact(&bytes).is_err());
    }
    assert!(List::<&str>::decode_exact(&(-2i32).to_be_bytes()).is_err());
    // -1 is a null vector, read as empty.
    let null_bytes = (-1i32).to_be_bytes();
    let null = List::<&str>::decode_exact(&null_bytes).unwrap();
    assert!(null.is_empty());
}
