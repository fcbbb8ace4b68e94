//! The lock/latch hot path: finding our rank and predecessor among N contenders whose names
//! are borrowed from a getChildren2 reply, against Curator's way (copy every name, sort by key,
//! find our index).

use bytes::BytesMut;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use zkrs_codec::{Decode, Encode, GetChildren2Response, List, Stat};
use zkrs_recipes::sequence::{key_fn, rank, sort_key};

fn names(n: usize) -> Vec<String> {
    // Curator-style protected names, in the server's (unsorted) order.
    let mut v: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "_c_{:08x}-1b4e-4c2a-9d3f-{:012x}-lock-{:010}",
                i * 7919,
                i,
                i
            )
        })
        .collect();
    let len = v.len();
    for i in 0..len {
        v.swap(i, (i * 7 + 3) % len);
    }
    v
}

fn reply(names: &[String]) -> BytesMut {
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    GetChildren2Response {
        children: List::Slice(&refs),
        stat: Stat::default(),
    }
    .to_bytes()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("find_predecessor");
    for n in [10usize, 1_000, 10_000] {
        let names = names(n);
        let frame = reply(&names);
        // The last contender: every other one is scanned and compared.
        let ours = format!(
            "_c_{:08x}-1b4e-4c2a-9d3f-{:012x}-lock-{:010}",
            (n - 1) * 7919,
            n - 1,
            n - 1
        );
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("one_pass_borrowed", n), &n, |b, _| {
            b.iter(|| {
                let reply = GetChildren2Response::decode_prefix(black_box(&frame)).unwrap();
                let r = rank(
                    reply.children.iter(),
                    &ours,
                    key_fn(|s| sort_key(s, "lock-")),
                );
                black_box(r.map(|r| r.predecessor))
            })
        });
        group.bench_with_input(
            BenchmarkId::new("curator_copy_sort_index", n),
            &n,
            |b, _| {
                b.iter(|| {
                    let reply = GetChildren2Response::decode_prefix(black_box(&frame)).unwrap();
                    let mut sorted: Vec<String> =
                        reply.children.iter().map(str::to_string).collect();
                    sorted.sort_by(|a, b| sort_key(a, "lock-").cmp(sort_key(b, "lock-")));
                    let index = sorted.iter().position(|s| *s == ours).unwrap();
                    black_box(index.checked_sub(1).map(|p| sorted[p].clone()))
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
