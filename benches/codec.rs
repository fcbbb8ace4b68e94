//! Codec benchmarks: encoding a request frame, decoding replies, and what lazy lists cost.
//!
//! Run with `cargo bench --bench codec` (add `-- --warm-up-time 1 --measurement-time 3` for a
//! quick run).
//!
//! - `encode/get_data_request`: a whole getData request frame into a reused `BytesMut`.
//! - `decode/get_data_reply_1KiB`: check_frame + parse_reply + `GetDataResponse` with a 1 KiB
//!   value (borrowed, not copied).
//! - `get_children2_reply/decode/N` and `get_children2_reply/decode_iterate/N`: a getChildren2
//!   reply with N lock-style child names (`_c_<uuid>-lock-<10 digits>`), decoded only (every
//!   name is checked, none is kept), and decoded then iterated.

use std::hint::black_box;

use bytes::BytesMut;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zkrs_codec::{
    check_frame, encode_request, parse_reply, write_frame, Decode, Encode, ErrorCode,
    GetChildren2Response, GetDataRequest, GetDataResponse, List, OpCode, ReplyHeader, Stat,
    DEFAULT_MAX_FRAME_LEN,
};

/// A Stat with plausible values.
fn stat() -> Stat {
    Stat {
        czxid: 0x1_0000_0002,
        mzxid: 0x1_0000_0003,
        ctime: 1_700_000_000_123,
        mtime: 1_700_000_000_456,
        version: 7,
        cversion: 2,
        aversion: 1,
        ephemeral_owner: 0,
        data_length: 1024,
        num_children: 0,
        pzxid: 0x1_0000_0004,
    }
}

/// A reply frame: length prefix, header (xid 1, ok), then `body`.
fn reply_frame(body: &impl Encode) -> BytesMut {
    let mut buf = BytesMut::new();
    write_frame(&mut buf, |buf| {
        ReplyHeader {
            xid: 1,
            zxid: 0x1_0000_0005,
            err: ErrorCode::Ok,
        }
        .encode(buf);
        body.encode(buf);
    });
    buf
}

/// `n` child names as Curator's lock recipes make them: `_c_<uuid>-lock-<sequence>`.
fn lock_names(n: usize) -> Vec<String> {
    // A small xorshift generator: deterministic, uuid-looking names.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n)
        .map(|i| {
            let (a, b) = (next(), next());
            format!(
                "_c_{:08x}-{:04x}-{:04x}-{:04x}-{:012x}-lock-{:010}",
                a >> 32,
                (a >> 16) & 0xffff,
                a & 0xffff,
                b >> 48,
                b & 0xffff_ffff_ffff,
                1234 + i
            )
        })
        .collect()
}

/// Check, parse, decode: what the client does with a buffered reply.
fn decode_reply<'a, T: Decode<'a>>(frame: &'a [u8]) -> T {
    let len = check_frame(frame, DEFAULT_MAX_FRAME_LEN)
        .expect("valid frame")
        .expect("whole frame");
    let (header, body) = parse_reply(&frame[4..4 + len]).expect("reply header");
    assert!(header.err.is_ok());
    T::decode_prefix(body).expect("reply body")
}

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Elements(1));
    let request = GetDataRequest {
        path: "/app/config/service-0001",
        watch: true,
    };
    let mut buf = BytesMut::with_capacity(256);
    group.bench_function("get_data_request", |b| {
        b.iter(|| {
            buf.clear();
            encode_request(
                &mut buf,
                black_box(42),
                OpCode::GetData,
                black_box(&request),
            );
            black_box(&buf);
        })
    });
    group.finish();
}

fn decode_get_data(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Elements(1));
    let value = vec![0xab; 1024];
    let frame = reply_frame(&GetDataResponse {
        data: Some(&value),
        stat: stat(),
    });
    group.bench_function("get_data_reply_1KiB", |b| {
        b.iter(|| {
            let reply: GetDataResponse<'_> = decode_reply(black_box(&frame));
            black_box(reply.data.map(<[u8]>::len));
        })
    });
    group.finish();
}

fn decode_get_children2(c: &mut Criterion) {
    let mut group = c.benchmark_group("get_children2_reply");
    for n in [10usize, 1_000, 10_000] {
        let names = lock_names(n);
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let frame = reply_frame(&GetChildren2Response {
            children: List::Slice(&refs),
            stat: stat(),
        });
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("decode", n), &frame, |b, frame| {
            b.iter(|| {
                let reply: GetChildren2Response<'_> = decode_reply(black_box(frame));
                black_box(reply.children.len());
            })
        });
        group.bench_with_input(BenchmarkId::new("decode_iterate", n), &frame, |b, frame| {
            b.iter(|| {
                let reply: GetChildren2Response<'_> = decode_reply(black_box(frame));
                let total: usize = reply.children.iter().map(str::len).sum();
                black_box(total);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, encode, decode_get_data, decode_get_children2);
criterion_main!(benches);
