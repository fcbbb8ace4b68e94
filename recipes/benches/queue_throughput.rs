//! Queue throughput and per-item latency: producers and consumers, each on a session of its
//! own, move N items through our `DistributedQueue` and `SimpleDistributedQueue`, and through
//! Curator's own (a JVM running `tests/java/CuratorQueuePeer.java`), in the same run against
//! the same server.
//!
//! ```text
//! cargo bench -p zkrs-recipes --bench queue_throughput              # starts a server itself
//! cargo bench -p zkrs-recipes --bench queue_throughput -- --items 10000 --rounds 3
//! cargo bench -p zkrs-recipes --bench queue_throughput -- --server 127.0.0.1:2181 --prefetch 4
//! ```
//!
//! Each round, in turn: ours, Curator's (DistributedQueue), then ours, Curator's
//! (SimpleDistributedQueue), each on a fresh queue node. A warm-up round of N/10 items comes
//! first (the JVM's JIT). Producers work as Curator's do by default: DistributedQueue puts go
//! out in the background (all in flight at once), SimpleDistributedQueue offers wait for their
//! create (one at a time per producer). Every item carries its put time (ns, a clock of its
//! process) and index; latency = taken - put. items/s = N / (last item taken - first put).
//! With producers faster than consumers, that latency is mostly time spent waiting in the
//! queue; so each round also runs a `paced` load (`--paced-items`, default 1,000): one
//! producer, one consumer, the next item put only once the previous one was taken. Its
//! latency is the queue's own cost per item: a put, the watch, a listing, a claim.
//! Each of our runs checks that every item came exactly once.
//!
//! The figures on stdout (`name value unit`) are the medians of the rounds; `*_ratio` divide
//! our items/s by Curator's. Without `--bench` (under `cargo test`) it makes a short smoke run
//! that checks the same things.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use zkrs_client::Client;
use zkrs_recipes::framework::join_all;
use zkrs_recipes::queue::{DistributedQueue, SimpleDistributedQueue};

#[path = "../tests/support/curator_peer.rs"]
mod curator_peer;
use curator_peer::{QueuePeer, BENCH_JVM};

mod support;

struct Args {
    server: Option<String>,
    items: usize,
    bytes: usize,
    producers: usize,
    consumers: usize,
    rounds: usize,
    prefetch: usize,
    multi_thread: bool,
    curator: bool,
    paced_items: usize,
}

impl Args {
    fn parse() -> Args {
        let mut args = Args {
            server: None,
            items: 10_000,
            bytes: 100,
            producers: 3,
            consumers: 3,
            rounds: 3,
            prefetch: 1,
            multi_thread: true,
            curator: true,
            paced_items: 1000,
        };
        if !std::env::args().any(|a| a == "--bench") {
            // Under `cargo test`: a smoke run.
            args.items = 300;
            args.rounds = 1;
            args.paced_items = 50;
        }
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            let mut value = || it.next().unwrap_or_else(|| panic!("{a} needs a value"));
            match a.as_str() {
                "--server" => args.server = Some(value()),
                "--items" => args.items = value().parse().expect("--items N"),
                "--bytes" => args.bytes = value().parse().expect("--bytes N"),
                "--producers" => args.producers = value().parse().expect("--producers N"),
                "--consumers" => args.consumers = value().parse().expect("--consumers N"),
                "--rounds" => args.rounds = value().parse().expect("--rounds N"),
                "--prefetch" => args.prefetch = value().parse().expect("--prefetch N"),
                "--paced-items" => args.paced_items = value().parse().expect("--paced-items N"),
                "--rt" => args.multi_thread = value() != "current",
                "--no-curator" => args.curator = false,
                "--bench" | "--nocapture" => {}
                other if other.starts_with("--") => panic!("unknown option {other}"),
                _ => {}
            }
        }
        assert!(args.items > 0 && args.producers > 0 && args.consumers > 0);
        args.bytes = args.bytes.max(12);
        args
    }
}

fn main() {
    let args = Args::parse();
    // Started (or not) before the runtime: nothing of the test kit runs during measurement.
    let (_server, connect) = zkrs_testkit::TestingServer::given_or_started(args.server.as_deref());
    support::runtime(args.multi_thread).block_on(run(&args, &connect));
}

/// One run's figures.
#[derive(Debug, Clone, Copy, Default)]
struct Figures {
    items_per_s: f64,
    p50_us: f64,
    p99_us: f64,
    /// Listings per item, over all consumers (ours only).
    listings_per_item: f64,
    /// Claims lost to another consumer, per item (ours only).
    lost_per_item: f64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Queue,
    Simple,
}

/// Who moves how many items.
#[derive(Clone, Copy)]
struct Load {
    producers: usize,
    consumers: usize,
    items: usize,
    /// One item in flight: the next is put once the previous was taken.
    paced: bool,
}

/// (name, kind, ours, paced)
const RUNS: [(&str, Kind, bool, bool); 8] = [
    ("ours_queue", Kind::Queue, true, false),
    ("curator_queue", Kind::Queue, false, false),
    ("ours_simple", Kind::Simple, true, false),
    ("curator_simple", Kind::Simple, false, false),
    ("ours_queue_paced", Kind::Queue, true, true),
    ("curator_queue_paced", Kind::Queue, false, true),
    ("ours_simple_paced", Kind::Simple, true, true),
    ("curator_simple_paced", Kind::Simple, false, true),
];

async fn run(args: &Args, connect: &str) {
    eprintln!(
        "{} producers, {} consumers, {} items of {} bytes ({} paced), {} rounds, prefetch {}, \
         {} runtime",
        args.producers,
        args.consumers,
        args.items,
        args.bytes,
        args.paced_items,
        args.rounds,
        args.prefetch,
        if args.multi_thread {
            "2-worker"
        } else {
            "current-thread"
        }
    );
    let mut peer = if args.curator {
        Some(QueuePeer::start("curator", connect, BENCH_JVM).await)
    } else {
        None
    };
    let mut results: Vec<Vec<Figures>> = vec![Vec::new(); RUNS.len()];
    for round in 0..=args.rounds {
        for (i, &(name, kind, is_ours, paced)) in RUNS.iter().enumerate() {
            let load = match (paced, round) {
                (false, 0) => Load {
                    producers: args.producers,
                    consumers: args.consumers,
                    items: (args.items / 10).max(50),
                    paced,
                },
                (false, _) => Load {
                    producers: args.producers,
                    consumers: args.consumers,
                    items: args.items,
                    paced,
                },
                (true, 0) => continue,
                (true, _) => Load {
                    producers: 1,
                    consumers: 1,
                    items: args.paced_items,
                    paced,
                },
            };
            let path = format!("/zkr-queue-bench/{name}-{round}");
            let figures = if is_ours {
                ours(args, connect, kind, &path, load).await
            } else if let Some(peer) = peer.as_mut() {
                curator(args, peer, kind, &path, load).await
            } else {
                continue;
            };
            eprintln!(
                "{}{name}: {:.0} items/s, p50 {:.0} us, p99 {:.0} us{}",
                if round == 0 {
                    "warm-up: ".to_string()
                } else {
                    format!("round {round}: ")
                },
                figures.items_per_s,
                figures.p50_us,
                figures.p99_us,
                if is_ours {
                    format!(
                        ", {:.4} listings and {:.3} lost races per item",
                        figures.listings_per_item, figures.lost_per_item
                    )
                } else {
                    String::new()
                }
            );
            if round > 0 {
                results[i].push(figures);
            }
        }
    }
    if let Some(peer) = peer {
        peer.exit().await;
    }
    let median = |v: &[Figures], f: fn(&Figures) -> f64| {
        let mut values: Vec<f64> = v.iter().map(f).collect();
        values.sort_by(|a, b| a.partial_cmp(b).unwrap());
        values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let mut rates = Vec::new();
    for ((name, ..), figures) in RUNS.iter().zip(&results) {
        if figures.is_empty() {
            rates.push(f64::NAN);
            continue;
        }
        let rate = median(figures, |f| f.items_per_s);
        rates.push(rate);
        println!("{name}_items_per_s {rate:.0} items/s");
        println!("{name}_p50 {:.0} us", median(figures, |f| f.p50_us));
        println!("{name}_p99 {:.0} us", median(figures, |f| f.p99_us));
    }
    if args.curator {
        println!("queue_ratio {:.2} x", rates[0] / rates[1]);
        println!("simple_ratio {:.2} x", rates[2] / rates[3]);
        println!("queue_paced_ratio {:.2} x", rates[4] / rates[5]);
        println!("simple_paced_ratio {:.2} x", rates[6] / rates[7]);
    }
}

// ----- Ours -----

fn base() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

fn now_ns() -> u64 {
    base().elapsed().as_nanos() as u64
}

/// An item of `bytes` bytes: its put time and index first.
fn stamped(index: usize, bytes: usize) -> Vec<u8> {
    let mut item = Vec::with_capacity(bytes);
    item.extend_from_slice(&now_ns().to_be_bytes());
    item.extend_from_slice(&(index as u32).to_be_bytes());
    item.resize(bytes, b'.');
    item
}

/// What the consumers saw.
struct Seen {
    count: Vec<AtomicU32>,
    latency_ns: Vec<AtomicU64>,
    received: AtomicUsize,
    last_ns: AtomicU64,
    listings: AtomicU64,
    lost: AtomicU64,
    /// A permit per item taken (paced loads wait on it).
    taken: tokio::sync::Semaphore,
}

impl Seen {
    fn new(items: usize) -> Arc<Seen> {
        Arc::new(Seen {
            count: (0..items).map(|_| AtomicU32::new(0)).collect(),
            latency_ns: (0..items).map(|_| AtomicU64::new(0)).collect(),
            received: AtomicUsize::new(0),
            last_ns: AtomicU64::new(0),
            listings: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            taken: tokio::sync::Semaphore::new(0),
        })
    }

    fn record(&self, item: &[u8]) {
        let now = now_ns();
        let sent = u64::from_be_bytes(item[..8].try_into().unwrap());
        let index = u32::from_be_bytes(item[8..12].try_into().unwrap()) as usize;
        if self.count[index].fetch_add(1, Ordering::SeqCst) == 0 {
            self.latency_ns[index].store(now - sent, Ordering::SeqCst);
        }
        self.last_ns.fetch_max(now, Ordering::SeqCst);
        self.received.fetch_add(1, Ordering::SeqCst);
        self.taken.add_permits(1);
    }

    fn done(&self, items: usize) -> bool {
        self.received.load(Ordering::SeqCst) >= items
    }
}

async fn ours(args: &Args, connect: &str, kind: Kind, path: &str, load: Load) -> Figures {
    let items = load.items;
    let seen = Seen::new(items);
    // Every session is open before the clock starts.
    let mut consumers = Vec::new();
    for _ in 0..load.consumers {
        consumers.push(Client::connect(connect).await.expect("connect"));
    }
    let mut producers = Vec::new();
    for _ in 0..load.producers {
        producers.push(Client::connect(connect).await.expect("connect"));
    }
    // Consumers first, waiting on the empty queue (as Curator's are, once started).
    let mut tasks = tokio::task::JoinSet::new();
    for client in &consumers {
        let (client, seen, path) = (client.clone(), seen.clone(), path.to_string());
        let prefetch = args.prefetch;
        tasks.spawn(async move {
            match kind {
                Kind::Queue => {
                    let mut consumer = DistributedQueue::builder(&client, &path)
                        .build()
                        .unwrap()
                        .consumer()
                        .prefetch(prefetch);
                    while !seen.done(items) {
                        let message = consumer.take_timeout(Duration::from_millis(100)).await;
                        if let Some(message) = message.expect("take") {
                            seen.record(&message.items()[0]);
                        }
                    }
                    let stats = consumer.stats();
                    seen.listings.fetch_add(stats.listings, Ordering::SeqCst);
                    seen.lost.fetch_add(stats.lost, Ordering::SeqCst);
                }
                Kind::Simple => {
                    let queue = SimpleDistributedQueue::builder(&client, &path)
                        .build()
                        .unwrap();
                    while !seen.done(items) {
                        let item = queue.take_timeout(Duration::from_millis(100)).await;
                        if let Some(item) = item.expect("poll") {
                            seen.record(&item);
                        }
                    }
                    let stats = queue.stats();
                    seen.listings.fetch_add(stats.listings, Ordering::SeqCst);
                    seen.lost.fetch_add(stats.lost, Ordering::SeqCst);
                }
            }
        });
    }
    // Let every consumer list the empty queue and wait on it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let start = now_ns();
    for (p, client) in producers.iter().enumerate() {
        let (client, path, seen) = (client.clone(), path.to_string(), seen.clone());
        let (bytes, step) = (args.bytes, load.producers);
        tasks.spawn(async move {
            let mine = (p..items).step_by(step);
            match kind {
                _ if load.paced => {
                    // One item in flight: put, wait until it is taken, put the next.
                    let queue = DistributedQueue::builder(&client, &path).build().unwrap();
                    let simple = SimpleDistributedQueue::builder(&client, &path)
                        .build()
                        .unwrap();
                    for i in mine {
                        if kind == Kind::Queue {
                            queue.put(stamped(i, bytes)).await.expect("put");
                        } else {
                            simple.put(stamped(i, bytes)).await.expect("put");
                        }
                        seen.taken.acquire().await.expect("open").forget();
                    }
                }
                Kind::Queue => {
                    // Curator's default: every put in flight at once (putInBackground).
                    let queue = DistributedQueue::builder(&client, &path).build().unwrap();
                    let puts = mine.map(|i| {
                        let queue = queue.clone();
                        async move { queue.put(stamped(i, bytes)).await }
                    });
                    for r in join_all(puts).await {
                        r.expect("put");
                    }
                }
                Kind::Simple => {
                    // Curator's offer waits for its create.
                    let queue = SimpleDistributedQueue::builder(&client, &path)
                        .build()
                        .unwrap();
                    for i in mine {
                        queue.put(stamped(i, bytes)).await.expect("put");
                    }
                }
            }
        });
    }
    let deadline = Duration::from_secs(600);
    tokio::time::timeout(deadline, async {
        while let Some(r) = tasks.join_next().await {
            r.expect("task");
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "{path}: {} of {items} items within {deadline:?}",
            seen.received.load(Ordering::SeqCst)
        )
    });
    for (i, n) in seen.count.iter().enumerate() {
        assert_eq!(n.load(Ordering::SeqCst), 1, "{path}: item {i}");
    }
    for client in consumers.iter().chain(&producers) {
        client.close().await.ok();
    }
    let elapsed_s = (seen.last_ns.load(Ordering::SeqCst) - start) as f64 / 1e9;
    let mut latency: Vec<u64> = seen
        .latency_ns
        .iter()
        .map(|l| l.load(Ordering::SeqCst))
        .collect();
    latency.sort_unstable();
    Figures {
        items_per_s: items as f64 / elapsed_s,
        p50_us: latency[items / 2] as f64 / 1e3,
        p99_us: latency[(items * 99 / 100).min(items - 1)] as f64 / 1e3,
        listings_per_item: seen.listings.load(Ordering::SeqCst) as f64 / items as f64,
        lost_per_item: seen.lost.load(Ordering::SeqCst) as f64 / items as f64,
    }
}

// ----- Curator -----

async fn curator(args: &Args, peer: &mut QueuePeer, kind: Kind, path: &str, load: Load) -> Figures {
    let items = load.items;
    let kind = match kind {
        Kind::Queue => "queue",
        Kind::Simple => "simple",
    };
    let command = format!(
        "bench {kind} {path} {} {} {items} {}{}",
        load.producers,
        load.consumers,
        args.bytes,
        if load.paced { " paced" } else { "" }
    );
    let answer = peer
        .ask_within(&command, "BENCH", Duration::from_secs(900))
        .await;
    let field = |name: &str| -> f64 {
        let mut words = answer.split_whitespace();
        while let Some(w) = words.next() {
            if w == name {
                return words
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(f64::NAN);
            }
        }
        panic!("no {name} in {answer:?}")
    };
    assert_eq!(field("items") as usize, items, "{answer}");
    if field("lost") > 0.0 || field("duplicates") > 0.0 {
        eprintln!("Curator {kind}: {answer}");
    }
    Figures {
        items_per_s: field("items_per_s"),
        p50_us: field("p50_us"),
        p99_us: field("p99_us"),
        listings_per_item: f64::NAN,
        lost_per_item: f64::NAN,
    }
}
