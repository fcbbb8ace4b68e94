//! Service discovery's costs, against their floors and against Curator's own
//! (`curator-x-discovery` 5.4, in a JVM running `tests/java/CuratorDiscoveryBench.java`), in one
//! run on one server:
//! - register + unregister of a `DYNAMIC` instance, against the floor of the same work done by
//!   hand (create the ephemeral node, delete it: two round trips); and Curator's
//!   `registerService` + `unregisterService` of the same instance and its floor through
//!   Curator's client, timed inside the JVM after a JIT warm-up (the rounds alternate, ours
//!   then Curator's, in 5 chunks);
//! - a pick from a started provider (round robin, random, sticky) over 10, 100 and 1,000
//!   instances, against the floor of reading the snapshot (cloning its `Arc`); then Curator's
//!   `ServiceProvider.getInstance()` (`RoundRobinStrategy`, its default, and `RandomStrategy`)
//!   over the same instances (the nodes ours registered), timed inside the JVM after
//!   `--warmup-ms` of warm-up picks, in batches of ours' size where they fit in
//!   `--curator-batch-ms`.
//!
//! ```text
//! cargo bench --features discovery --bench discovery                 # starts a server itself
//! cargo bench --features discovery --bench discovery -- --rounds 2000 --server 127.0.0.1:2181
//! cargo bench --features discovery --bench discovery -- --no-curator  # ours only, no JVM
//! ```
//!
//! Figures on stdout, one per line (`name value unit`): latencies as p50/p99 over the rounds,
//! picks as the median of 7 batches of `--picks` (1,000,000) picks (Curator's smaller where
//! that many would take over `--curator-batch-ms`, 500, per batch: its `getInstance()` copies
//! and filters the instance list on every call; said on stderr); Curator's as `curator_*`,
//! and `*_ratio` ours / Curator's (p50s, ns per pick: below 1 is ours faster). Without
//! `--bench` (under `cargo test`) it makes a short smoke run that checks the same things,
//! Curator's side included.
//!
//! Needs a JDK and Curator's jars, curator-x-discovery included
//! (`scripts/install-zookeeper.sh`), unless `--no-curator`.

use std::time::{Duration, Instant};

use zkrs::Client;
use zkrs_client::CreateMode;
use zkrs_recipes::discovery::{
    Random, RoundRobin, ServiceDiscovery, ServiceInstance, ServiceProvider, Sticky,
};
use zkrs_testkit::{ServerOptions, TestingServer};

#[path = "../tests/support/mod.rs"]
mod support;
use support::{Peer, BENCH_JVM, TEST_JVM};

/// Curator's side: `tests/java/CuratorDiscoveryBench.java`.
const CURATOR: &str = "CuratorDiscoveryBench";
/// Curator's batches of picks, as ours.
const BATCHES: usize = 7;
/// Register rounds alternate between ours and Curator's in this many chunks.
const REGISTER_CHUNKS: usize = 5;

type Payload = serde_json::Value;

struct Args {
    bench: bool,
    server: Option<String>,
    rounds: usize,
    picks: usize,
    curator: bool,
    /// Curator's untimed rounds (register) before the timed ones.
    warmup_rounds: usize,
    /// Curator's untimed picks before the timed ones, ms.
    warmup_ms: u64,
    /// The longest batch of Curator's picks, ms: its batches are smaller than ours where
    /// `--picks` of its picks would take longer (at 100 and 1,000 instances).
    curator_batch_ms: u64,
}

impl Args {
    fn parse() -> Args {
        let bench = std::env::args().any(|a| a == "--bench");
        let mut args = Args {
            bench,
            server: None,
            rounds: if bench { 1000 } else { 50 },
            picks: if bench { 1_000_000 } else { 10_000 },
            curator: true,
            warmup_rounds: if bench { 500 } else { 20 },
            warmup_ms: if bench { 1500 } else { 20 },
            curator_batch_ms: if bench { 500 } else { 20 },
        };
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            let mut value = || it.next().unwrap_or_else(|| panic!("{a} needs a value"));
            match a.as_str() {
                "--server" => args.server = Some(value()),
                "--rounds" => args.rounds = value().parse().expect("--rounds N"),
                "--picks" => args.picks = value().parse().expect("--picks N"),
                "--warmup-rounds" => {
                    args.warmup_rounds = value().parse().expect("--warmup-rounds N")
                }
                "--warmup-ms" => args.warmup_ms = value().parse().expect("--warmup-ms MS"),
                "--curator-batch-ms" => {
                    args.curator_batch_ms = value().parse().expect("--curator-batch-ms MS")
                }
                "--no-curator" => args.curator = false,
                _ => {}
            }
        }
        args
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

/// Prints `name_p50` and `name_p99` in µs; returns the p50.
fn report(name: &str, mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    let p50 = percentile(&samples, 0.5);
    println!("{name}_p50 {p50:.0} us");
    println!("{name}_p99 {:.0} us", percentile(&samples, 0.99));
    p50
}

/// A ratio to 3 significant digits (picks are 1,000s of times apart).
fn ratio(r: f64) -> String {
    let digits = if r > 0.0 && r < 1.0 {
        (2 - r.log10().floor() as i32).max(2) as usize
    } else {
        2
    };
    format!("{r:.digits$}")
}

/// The number after `name` in a peer's answer (`KEYWORD name value name value ...`).
fn field(answer: &str, name: &str) -> f64 {
    let mut words = answer.split_whitespace();
    while let Some(w) = words.next() {
        if w == name {
            if let Some(value) = words.next().and_then(|v| v.parse().ok()) {
                return value;
            }
        }
    }
    panic!("no {name} in Curator's answer {answer:?}")
}

/// Sends a bench command to Curator's side; waits long for its answer.
async fn ask(peer: &mut Peer, command: &str, keyword: &str) -> String {
    peer.send(command);
    peer.expect_within(keyword, Duration::from_secs(600)).await
}

fn instance(id: &str, port: u16) -> ServiceInstance<Payload> {
    ServiceInstance::builder("api")
        .id(id)
        .address("10.0.0.1")
        .port(port)
        .payload(serde_json::json!({"zone": "a"}))
        .build()
        .expect("instance")
}

/// Median ns per call of `pick` over 7 batches of `n`. On a thread of its own
/// (`block_in_place`): the client's driver goes on answering pings on the other worker, so a
/// long batch does not cost the session.
fn ns_per_call(n: usize, pick: impl FnMut() -> bool) -> f64 {
    tokio::task::block_in_place(|| batches(n, pick))
}

fn batches(n: usize, mut pick: impl FnMut() -> bool) -> f64 {
    let mut batches: Vec<f64> = (0..7)
        .map(|_| {
            let started = Instant::now();
            let mut found = 0usize;
            for _ in 0..n {
                found += usize::from(std::hint::black_box(pick()));
            }
            assert_eq!(found, n, "a pick found nothing");
            started.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[BATCHES / 2]
}

async fn register_unregister(client: &Client, args: &Args, mut curator: Option<&mut Peer>) {
    let rounds = args.rounds;
    let discovery = ServiceDiscovery::<Payload>::builder(client, "/bench/reg")
        .build()
        .unwrap();
    let me = instance("me", 8080);
    let data = zkrs_recipes::discovery::to_json(&me, Default::default()).unwrap();
    // Warm up as Curator's side does: parents made, buffers grown, and the server's JIT warm
    // (ours runs first).
    for _ in 0..args.warmup_rounds.max(20) {
        discovery.register(&me).await.unwrap();
        discovery.unregister(&me).await.unwrap();
        client
            .create("/bench/reg/api/me", &data, CreateMode::Ephemeral)
            .await
            .unwrap();
        client.delete("/bench/reg/api/me", None).await.unwrap();
    }
    let mut ours = Vec::with_capacity(rounds);
    let mut floor = Vec::with_capacity(rounds);
    // In chunks, ours then Curator's (the same instance, under a base of its own, on its
    // session): a change in the machine's load falls on both.
    let mut answer = None;
    for chunk in 0..REGISTER_CHUNKS {
        let share = rounds * (chunk + 1) / REGISTER_CHUNKS - rounds * chunk / REGISTER_CHUNKS;
        for _ in 0..share {
            let started = Instant::now();
            discovery.register(&me).await.unwrap();
            discovery.unregister(&me).await.unwrap();
            ours.push(started.elapsed());
            let started = Instant::now();
            client
                .create("/bench/reg/api/me", &data, CreateMode::Ephemeral)
                .await
                .unwrap();
            client.delete("/bench/reg/api/me", None).await.unwrap();
            floor.push(started.elapsed());
        }
        if let Some(peer) = curator.as_deref_mut() {
            let warmup = if chunk == 0 { args.warmup_rounds } else { 0 };
            let command = format!("register /bench/curator-reg {warmup} {share}");
            answer = Some(ask(peer, &command, "REGISTER").await);
        }
    }
    let ours = report("register_unregister", ours);
    let floor = report("create_delete_floor", floor);
    println!("register_unregister_to_floor {:.2} x", ours / floor);
    let Some(answer) = answer else { return };
    assert_eq!(field(&answer, "rounds") as usize, rounds, "{answer}");
    let theirs = field(&answer, "p50_us");
    let their_floor = field(&answer, "floor_p50_us");
    println!("curator_register_unregister_p50 {theirs:.0} us");
    println!(
        "curator_register_unregister_p99 {:.0} us",
        field(&answer, "p99_us")
    );
    println!("curator_create_delete_floor_p50 {their_floor:.0} us");
    println!(
        "curator_create_delete_floor_p99 {:.0} us",
        field(&answer, "floor_p99_us")
    );
    println!(
        "curator_register_unregister_to_floor {:.2} x",
        theirs / their_floor
    );
    println!("register_unregister_ratio {:.2} x", ours / theirs);
    println!("create_delete_floor_ratio {:.2} x", floor / their_floor);
}

async fn picks(client: &Client, args: &Args, mut curator: Option<&mut Peer>) {
    let picks = args.picks;
    for n in [10usize, 100, 1000] {
        let base = format!("/bench/pick{n}");
        let discovery = ServiceDiscovery::<Payload>::builder(client, &base)
            .build()
            .unwrap();
        for i in 0..n {
            discovery
                .register(&instance(&format!("i{i:04}"), 8000 + i as u16))
                .await
                .unwrap();
        }
        let started: Vec<(&str, ServiceProvider<Payload>)> = vec![
            (
                "round_robin",
                discovery
                    .provider("api")
                    .strategy(RoundRobin::new())
                    .start()
                    .unwrap(),
            ),
            (
                "random",
                discovery
                    .provider("api")
                    .strategy(Random::with_seed(1))
                    .start()
                    .unwrap(),
            ),
            (
                "sticky",
                discovery
                    .provider("api")
                    .strategy(Sticky::new(Random::with_seed(1)))
                    .start()
                    .unwrap(),
            ),
        ];
        let cache = discovery.service_cache("api").start().unwrap();
        cache.initialized().await.unwrap();
        let floor = ns_per_call(picks, || !cache.instances().is_empty());
        println!("snapshot_floor_{n} {floor:.1} ns");
        let mut ours = Vec::new();
        for (name, provider) in &started {
            provider.initialized().await.unwrap();
            assert_eq!(provider.all_instances().len(), n);
            let ns = ns_per_call(picks, || provider.instance().is_some());
            println!("pick_{name}_{n} {ns:.1} ns");
            ours.push((*name, ns));
        }
        for (_, provider) in started {
            provider.close().await;
        }
        cache.close().await;
        if let Some(peer) = curator.as_deref_mut() {
            // Curator's provider over the same nodes, still registered by ours.
            for (name, ns) in ours.iter().filter(|(name, _)| *name != "sticky") {
                let answer = ask(
                    peer,
                    &format!(
                        "pick {base} api {name} {n} {picks} {BATCHES} {} {}",
                        args.warmup_ms, args.curator_batch_ms
                    ),
                    "PICK",
                )
                .await;
                assert_eq!(field(&answer, "instances") as usize, n, "{answer}");
                let theirs = field(&answer, "ns");
                let batch = field(&answer, "batch") as usize;
                if batch < picks {
                    eprintln!(
                        "Curator's {name} picks over {n}: batches of {batch} picks (one of \
                         {picks} would take {:.1} s)",
                        picks as f64 * theirs / 1e9
                    );
                }
                println!("curator_pick_{name}_{n} {theirs:.1} ns");
                println!("pick_{name}_{n}_ratio {} x", ratio(ns / theirs));
            }
        }
        discovery.close().await.unwrap();
    }
}

fn main() {
    let args = Args::parse();
    // Started before the runtime. A bench's server runs with the full JIT (ServerOptions::
    // benchmark), a smoke run's starts quickly.
    let (_server, connect) = match &args.server {
        Some(address) => (None, address.clone()),
        None => {
            let options = if args.bench {
                ServerOptions::benchmark()
            } else {
                ServerOptions::default()
            };
            let server = TestingServer::start_with(options).expect("a ZooKeeper server");
            let connect = server.connect_string();
            (Some(server), connect)
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = Client::connect(&connect).await.unwrap();
        let mut curator = if args.curator {
            let jvm = if args.bench { BENCH_JVM } else { TEST_JVM };
            Some(Peer::start_with_jvm(CURATOR, "curator", jvm, &[&connect]).await)
        } else {
            None
        };
        register_unregister(&client, &args, curator.as_mut()).await;
        picks(&client, &args, curator.as_mut()).await;
        if let Some(peer) = curator {
            peer.exit().await;
        }
        client.close().await.unwrap();
    });
}
