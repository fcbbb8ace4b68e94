//! Service discovery's costs, against their floors, in one run on one server:
//! - register + unregister of a `DYNAMIC` instance, against the floor of the same work done by
//!   hand (create the ephemeral node, delete it: two round trips);
//! - a pick from a started provider (round robin, random, sticky) over 10, 100 and 1,000
//!   instances, against the floor of reading the snapshot (cloning its `Arc`).
//!
//! ```text
//! cargo bench --features discovery --bench discovery                 # starts a server itself
//! cargo bench --features discovery --bench discovery -- --rounds 2000 --server 127.0.0.1:2181
//! ```
//!
//! Figures on stdout, one per line (`name value unit`): latencies as p50/p99 over the rounds,
//! picks as the median of 7 batches of 1,000,000 picks. Without `--bench` (under
//! `cargo test`) it makes a short smoke run that checks the same things.

use std::time::{Duration, Instant};

use zkr::Client;
use zkr_client::CreateMode;
use zkr_recipes::discovery::{
    Random, RoundRobin, ServiceDiscovery, ServiceInstance, ServiceProvider, Sticky,
};
use zkr_testkit::TestingServer;

type Payload = serde_json::Value;

struct Args {
    server: Option<String>,
    rounds: usize,
    picks: usize,
}

impl Args {
    fn parse() -> Args {
        let bench = std::env::args().any(|a| a == "--bench");
        let mut args = Args {
            server: None,
            rounds: if bench { 1000 } else { 50 },
            picks: if bench { 1_000_000 } else { 10_000 },
        };
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            let mut value = || it.next().unwrap_or_else(|| panic!("{a} needs a value"));
            match a.as_str() {
                "--server" => args.server = Some(value()),
                "--rounds" => args.rounds = value().parse().expect("--rounds N"),
                "--picks" => args.picks = value().parse().expect("--picks N"),
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
    batches[3]
}

async fn register_unregister(client: &Client, rounds: usize) {
    let discovery = ServiceDiscovery::<Payload>::new(client, "/bench/reg");
    let me = instance("me", 8080);
    // Warm up: parents made, buffers grown.
    for _ in 0..20 {
        discovery.register(&me).await.unwrap();
        discovery.unregister(&me).await.unwrap();
    }
    let mut ours = Vec::with_capacity(rounds);
    let mut floor = Vec::with_capacity(rounds);
    let data = zkr_recipes::discovery::to_json(&me, Default::default()).unwrap();
    for _ in 0..rounds {
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
    let ours = report("register_unregister", ours);
    let floor = report("create_delete_floor", floor);
    println!("register_unregister_to_floor {:.2} x", ours / floor);
}

async fn picks(client: &Client, picks: usize) {
    for n in [10usize, 100, 1000] {
        let base = format!("/bench/pick{n}");
        let discovery = ServiceDiscovery::<Payload>::new(client, &base);
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
                    .build(),
            ),
            (
                "random",
                discovery
                    .provider("api")
                    .strategy(Random::with_seed(1))
                    .build(),
            ),
            (
                "sticky",
                discovery
                    .provider("api")
                    .strategy(Sticky::new(Random::with_seed(1)))
                    .build(),
            ),
        ];
        let cache = discovery.service_cache("api");
        cache.start().await.unwrap();
        let floor = ns_per_call(picks, || !cache.instances().is_empty());
        println!("snapshot_floor_{n} {floor:.1} ns");
        for (name, provider) in &started {
            provider.start().await.unwrap();
            assert_eq!(provider.all_instances().len(), n);
            let ns = ns_per_call(picks, || provider.instance().is_some());
            println!("pick_{name}_{n} {ns:.1} ns");
        }
        for (_, provider) in started {
            provider.close().await;
        }
        cache.close().await;
        discovery.close().await.unwrap();
    }
}

fn main() {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (_server, connect) = match &args.server {
        Some(address) => (None, address.clone()),
        None => {
            let server = TestingServer::start().expect("a ZooKeeper server");
            let connect = server.connect_string();
            (Some(server), connect)
        }
    };
    runtime.block_on(async {
        let client = Client::connect(&connect).await.unwrap();
        register_unregister(&client, args.rounds).await;
        picks(&client, args.picks).await;
        client.close().await.unwrap();
    });
}
