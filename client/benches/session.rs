//! End-to-end figures for the client against a real ZooKeeper server, next to a raw-socket
//! sender that does the minimum any client must do (the ceiling).
//!
//! ```text
//! cargo bench -p zkrs-client --bench session                      # starts a server itself
//! cargo bench -p zkrs-client --bench session -- --server 127.0.0.1:2181
//! cargo bench -p zkrs-client --bench session -- --ops 400000 --rounds 3 --rt multi
//! ```
//!
//! Options:
//!
//! - `--server host:port`: an existing server (default: a `TestingServer` started here, with
//!   ZooKeeper's default tickTime of 2 s and the full JIT, `-XX:TieredStopAtLevel=4 -Xmx1g`);
//! - `--ops N`: pipelined getData operations per round (200000);
//! - `--seq-ops N`: sequential getData operations per round (20000);
//! - `--in-flight N`: requests outstanding in the pipelined figures (256);
//! - `--value BYTES`: size of the node's data (1024);
//! - `--rounds N`: rounds of `raw, ours` (2);
//! - `--warmup N`: pipelined operations of each sender before measuring, for the JVM's JIT
//!   (100000);
//! - `--rt current|multi`: a current-thread runtime (default: one thread runs the caller
//!   tasks, the client's driver task and the raw sender) or a 2-worker one;
//! - `--only raw|fanout|ours|unbounded`: measure one sender only (for profiling it).
//!
//! What is measured, in one process, alternating `raw, ours, raw, ours, ...`:
//!
//! - pipelined getData of a `--value`-byte node with `--in-flight` requests outstanding:
//!   - ours: `--in-flight` tasks on one shared `Client`, each looping `get_data` until the
//!     shared count reaches `--ops`;
//!   - raw: one task on a plain `TcpStream` that did the handshake with the codec, writes
//!     pre-encoded getData frames with their xid patched in (one write per batch of
//!     freed slots), and reads replies checking only frame boundaries, xid order and the
//!     error code;
//!   - fan-out: the same connection task, fed by `--in-flight` tasks over a channel, each
//!     request with a oneshot reply slot: the least any client does to serve many tasks on
//!     one connection (ours against it is the client's own cost; it against raw is the
//!     cost of the fan-out on the runtime);
//! - bounded and unbounded: ours again, each phase on a fresh client connected before its
//!   clock starts, with the default bound on requests in flight and with none
//!   (`max_in_flight(usize::MAX)`, as before backpressure), in alternating order:
//!   `bound_throughput_ratio` and `bound_cpu_ratio` (bounded / unbounded) are the bound's cost
//!   (`--only unbounded` runs these two);
//! - sequential getData latency (p50/p99 of `--seq-ops` round trips), same two senders;
//! - client CPU time per operation: this process's threads' CPU time (from
//!   `/proc/self/task/*/schedstat`, nanoseconds; `/proc/self/stat` if missing). The server is
//!   another process (a JVM), so its CPU is not counted.
//!
//! Each phase runs in a task of its own (as application code does) on a connection opened
//! before the clock starts.
//!
//! The figures printed at the end on stdout, one per line as `name value unit`, are the best round
//! of each (highest throughput, lowest p50/p99, lowest CPU per operation); every round is printed
//! on stderr as it finishes. `throughput_ratio` and `cpu_ratio` compare the best pipelined figures
//! (ours / raw), the `_median` variants the medians of the rounds; the targets are >= 0.95 and <=
//! 1.3. `fanout_cpu_ratio` is fan-out / raw, and `ours_to_fanout_cpu_ratio` ours / fan-out. On a
//! small machine the server (a JVM with several threads per request) is the bottleneck and competes
//! with the client for CPU, so throughput mostly measures how little CPU the client takes from it;
//! use several rounds.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use zkrs_client::{Client, CreateMode, ErrorCode};
use zkrs_codec::{
    check_frame, decode_connect_response, encode_connect_request, encode_request, ConnectRequest,
    GetDataRequest, OpCode, DEFAULT_MAX_FRAME_LEN, REQUEST_XID_OFFSET,
};

const PATH: &str = "/zkr-bench";

#[derive(Debug, Clone)]
struct Args {
    server: Option<String>,
    ops: u64,
    seq_ops: u64,
    in_flight: usize,
    value: usize,
    rounds: usize,
    warmup: u64,
    multi_thread: bool,
    /// Only this sender ("raw" or "ours"): for profiling one side.
    only: Option<String>,
}

impl Args {
    fn parse() -> Args {
        let mut args = Args {
            server: None,
            ops: 200_000,
            seq_ops: 20_000,
            in_flight: 256,
            value: 1024,
            rounds: 2,
            warmup: 100_000,
            multi_thread: false,
            only: None,
        };
        // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without
        // it: then a short smoke run (it still checks every phase works), not a benchmark.
        if !std::env::args().any(|a| a == "--bench") {
            args.ops = 2_000;
            args.seq_ops = 200;
            args.warmup = 500;
            args.rounds = 1;
        }
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            let mut value =
                |name: &str| it.next().unwrap_or_else(|| panic!("{name} needs a value"));
            match arg.as_str() {
                "--server" => args.server = Some(value("--server")),
                "--ops" => args.ops = value("--ops").parse().expect("--ops N"),
                "--seq-ops" => args.seq_ops = value("--seq-ops").parse().expect("--seq-ops N"),
                "--in-flight" => {
                    args.in_flight = value("--in-flight").parse().expect("--in-flight N")
                }
                "--value" => args.value = value("--value").parse().expect("--value BYTES"),
                "--rounds" => args.rounds = value("--rounds").parse().expect("--rounds N"),
                "--warmup" => args.warmup = value("--warmup").parse().expect("--warmup N"),
                "--only" => {
                    let side = value("--only");
                    assert!(
                        ["raw", "fanout", "ours", "unbounded"].contains(&side.as_str()),
                        "--only raw|fanout|ours|unbounded"
                    );
                    args.only = Some(side);
                }
                "--rt" => {
                    args.multi_thread = match value("--rt").as_str() {
                        "current" => false,
                        "multi" => true,
                        other => panic!("--rt current|multi, not {other}"),
                    }
                }
                // What `cargo bench` passes, and libtest-style filters: ignored.
                "--bench" | "--nocapture" => {}
                other if !other.starts_with("--") => {}
                other => panic!("unknown option {other}"),
            }
        }
        assert!(args.in_flight > 0 && args.rounds > 0 && args.ops > 0 && args.seq_ops > 0);
        args
    }
}

// ----- CPU time of this process -----

/// CPU time used so far by this process's live threads (the test kit's measure: per-thread
/// schedstat). Measured phases must not end threads (they don't: connections are made
/// before).
fn cpu_time() -> Duration {
    zkrs_testkit::measure::process_cpu_time()
}

// ----- Results -----

#[derive(Debug, Clone, Copy)]
struct Pipelined {
    ops_per_s: f64,
    cpu_us_per_op: f64,
}

#[derive(Debug, Clone, Copy)]
struct Sequential {
    p50_us: f64,
    p99_us: f64,
    cpu_us_per_op: f64,
}

fn pipelined_result(ops: u64, wall: Duration, cpu: Duration) -> Pipelined {
    Pipelined {
        ops_per_s: ops as f64 / wall.as_secs_f64(),
        cpu_us_per_op: cpu.as_secs_f64() * 1e6 / ops as f64,
    }
}

fn sequential_result(mut latencies: Vec<u32>, cpu: Duration) -> Sequential {
    latencies.sort_unstable();
    let at = |q: f64| {
        let i = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1;
        latencies[i] as f64 / 1000.0
    };
    Sequential {
        p50_us: at(0.50),
        p99_us: at(0.99),
        cpu_us_per_op: cpu.as_secs_f64() * 1e6 / latencies.len() as f64,
    }
}

// ----- Ours -----

async fn ours_pipelined(client: &Client, ops: u64, in_flight: usize, value: usize) -> Pipelined {
    let count = Arc::new(AtomicU64::new(0));
    let cpu0 = cpu_time();
    let t0 = Instant::now();
    let mut workers = JoinSet::new();
    for _ in 0..in_flight {
        let client = client.clone();
        let count = count.clone();
        workers.spawn(async move {
            let mut done = 0u64;
            while count.fetch_add(1, Ordering::Relaxed) < ops {
                let (data, _stat) = client.get_data(PATH).await.expect("getData");
                assert_eq!(data.len(), value);
                done += 1;
            }
            done
        });
    }
    let mut done = 0;
    while let Some(n) = workers.join_next().await {
        done += n.expect("worker");
    }
    let wall = t0.elapsed();
    let cpu = cpu_time() - cpu0;
    assert_eq!(done, ops);
    pipelined_result(ops, wall, cpu)
}

async fn ours_sequential(client: &Client, ops: u64, value: usize) -> Sequential {
    let mut latencies = Vec::with_capacity(ops as usize);
    let cpu0 = cpu_time();
    for _ in 0..ops {
        let t = Instant::now();
        let (data, _stat) = client.get_data(PATH).await.expect("getData");
        latencies.push(t.elapsed().as_nanos() as u32);
        assert_eq!(data.len(), value);
    }
    let cpu = cpu_time() - cpu0;
    sequential_result(latencies, cpu)
}

// ----- Raw socket: the ceiling -----

/// A connection with an open session, and a getData frame to copy (xid 0).
struct Raw {
    stream: TcpStream,
    template: BytesMut,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    next_xid: i32,
}

impl Raw {
    async fn connect(addr: SocketAddr) -> io::Result<Raw> {
        let mut stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let mut out = BytesMut::new();
        encode_connect_request(
            &mut out,
            &ConnectRequest {
                protocol_version: 0,
                last_zxid_seen: 0,
                timeout_ms: 30_000,
                session_id: 0,
                passwd: &[0; 16],
            },
            false,
        );
        stream.write_all(&out).await?;
        let mut raw = Raw {
            stream,
            template: BytesMut::new(),
            buf: vec![0; 4 << 20],
            start: 0,
            end: 0,
            next_xid: 1,
        };
        let len = raw.read_frame().await?;
        let body = &raw.buf[raw.start + 4..raw.start + 4 + len];
        let (response, _read_only) = decode_connect_response(body)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
        assert!(response.timeout_ms > 0, "session refused");
        raw.start += 4 + len;
        encode_request(
            &mut raw.template,
            0,
            OpCode::GetData,
            &GetDataRequest {
                path: PATH,
                watch: false,
            },
        );
        Ok(raw)
    }

    /// Reads until a whole frame is at `start`; returns its body length.
    async fn read_frame(&mut self) -> io::Result<usize> {
        loop {
            if let Some(len) = self.check()? {
                return Ok(len);
            }
            self.fill().await?;
        }
    }

    fn check(&self) -> io::Result<Option<usize>> {
        check_frame(&self.buf[self.start..self.end], DEFAULT_MAX_FRAME_LEN)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
    }

    /// One read into the buffer, moving the partial frame to the front first if needed.
    async fn fill(&mut self) -> io::Result<()> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.buf.len() - self.end < self.buf.len() / 4 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let n = self.stream.read(&mut self.buf[self.end..]).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.end += n;
        Ok(())
    }

    /// Appends a getData frame with the next xid.
    fn push_request(&mut self, out: &mut Vec<u8>) {
        let at = out.len() + REQUEST_XID_OFFSET;
        out.extend_from_slice(&self.template);
        out[at..at + 4].copy_from_slice(&self.next_xid.to_be_bytes());
        self.next_xid += 1;
    }

    /// Takes the whole frame at `start` (body length `len`): checks the xid and error code.
    fn take_reply(&mut self, len: usize, expected_xid: i32) {
        let h = &self.buf[self.start + 4..self.start + 4 + len];
        let xid = i32::from_be_bytes([h[0], h[1], h[2], h[3]]);
        let err = i32::from_be_bytes([h[12], h[13], h[14], h[15]]);
        assert_eq!(xid, expected_xid, "reply out of order");
        assert_eq!(err, 0, "getData failed");
        self.start += 4 + len;
    }

    async fn pipelined(mut self, ops: u64, in_flight: usize) -> io::Result<Pipelined> {
        let mut out = Vec::with_capacity(self.template.len() * in_flight);
        let mut expected = self.next_xid;
        let (mut sent, mut done) = (0u64, 0u64);
        let cpu0 = cpu_time();
        let t0 = Instant::now();
        while done < ops {
            while sent < ops && sent - done < in_flight as u64 {
                self.push_request(&mut out);
                sent += 1;
            }
            if !out.is_empty() {
                self.stream.write_all(&out).await?;
                out.clear();
            }
            self.fill().await?;
            while let Some(len) = self.check()? {
                self.take_reply(len, expected);
                expected += 1;
                done += 1;
            }
        }
        let wall = t0.elapsed();
        let cpu = cpu_time() - cpu0;
        Ok(pipelined_result(ops, wall, cpu))
    }

    async fn sequential(mut self, ops: u64) -> io::Result<Sequential> {
        let mut out = Vec::with_capacity(self.template.len());
        let mut latencies = Vec::with_capacity(ops as usize);
        let cpu0 = cpu_time();
        for _ in 0..ops {
            let t = Instant::now();
            let expected = self.next_xid;
            self.push_request(&mut out);
            self.stream.write_all(&out).await?;
            out.clear();
            let len = self.read_frame().await?;
            self.take_reply(len, expected);
            latencies.push(t.elapsed().as_nanos() as u32);
        }
        let cpu = cpu_time() - cpu0;
        Ok(sequential_result(latencies, cpu))
    }
}

// ----- Raw fan-out: the floor for many tasks sharing one connection -----

impl Raw {
    /// The connection's side of [`raw_fanout`]: takes requests (a reply slot each) from
    /// the callers, writes every request queued in one write, and answers each reply's slot
    /// in order. Nothing a client needs beyond that: no session, no timers, no decoding.
    async fn serve(mut self, mut requests: mpsc::UnboundedReceiver<oneshot::Sender<usize>>) {
        let mut waiting: VecDeque<oneshot::Sender<usize>> = VecDeque::new();
        let mut out = Vec::new();
        let mut expected = self.next_xid;
        let mut open = true;
        while open || !waiting.is_empty() {
            tokio::select! {
                request = requests.recv(), if open => match request {
                    Some(slot) => {
                        self.push_request(&mut out);
                        waiting.push_back(slot);
                        while let Ok(slot) = requests.try_recv() {
                            self.push_request(&mut out);
                            waiting.push_back(slot);
                        }
                        self.stream.write_all(&out).await.expect("write");
                        out.clear();
                    }
                    None => open = false,
                },
                filled = self.fill(), if !waiting.is_empty() => {
                    filled.expect("read");
                    while let Some(len) = self.check().expect("frame") {
                        self.take_reply(len, expected);
                        expected += 1;
                        let slot = waiting.pop_front().expect("a reply answers a request");
                        let _ = slot.send(len);
                    }
                }
            }
        }
    }
}

/// Pipelined getData from `in_flight` tasks through the least any client on one connection
/// does: each request goes to the connection's task over a channel with a oneshot reply
/// slot, and each reply wakes its task. Ours against this is the client's own cost; this
/// against the raw sender is what the fan-out to many tasks costs on the runtime.
async fn raw_fanout(addr: SocketAddr, ops: u64, in_flight: usize) -> Pipelined {
    let raw = Raw::connect(addr).await.expect("raw connect");
    let (tx, rx) = mpsc::unbounded_channel::<oneshot::Sender<usize>>();
    let connection = tokio::spawn(raw.serve(rx));
    let count = Arc::new(AtomicU64::new(0));
    let cpu0 = cpu_time();
    let t0 = Instant::now();
    let mut callers = JoinSet::new();
    for _ in 0..in_flight {
        let (tx, count) = (tx.clone(), count.clone());
        callers.spawn(async move {
            let mut done = 0u64;
            while count.fetch_add(1, Ordering::Relaxed) < ops {
                let (slot, reply) = oneshot::channel();
                tx.send(slot).expect("connection task");
                assert!(reply.await.expect("reply") > 0);
                done += 1;
            }
            done
        });
    }
    drop(tx);
    let mut done = 0;
    while let Some(n) = callers.join_next().await {
        done += n.expect("caller");
    }
    let wall = t0.elapsed();
    let cpu = cpu_time() - cpu0;
    connection.await.expect("connection task");
    assert_eq!(done, ops);
    pipelined_result(ops, wall, cpu)
}

// ----- Main -----

/// Runs `phase` in a task of its own and waits for it.
async fn in_task<F>(phase: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(phase).await.expect("phase panicked")
}

#[derive(Default)]
struct Best {
    raw_p: Vec<Pipelined>,
    fanout_p: Vec<Pipelined>,
    ours_p: Vec<Pipelined>,
    unbounded_p: Vec<Pipelined>,
    bounded_p: Vec<Pipelined>,
    raw_s: Vec<Sequential>,
    ours_s: Vec<Sequential>,
}

fn min(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(f64::INFINITY, f64::min)
}

fn max(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(0.0, f64::max)
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

async fn run(args: Args, connect: String, addr: SocketAddr) {
    let client = Client::connect(&connect).await.expect("connect");

    let value = vec![b'v'; args.value];
    match client.create(PATH, &value, CreateMode::Persistent).await {
        Ok(_) => {}
        Err(e) if e.code() == Some(ErrorCode::NodeExists) => {
            client.set_data(PATH, &value, None).await.expect("setData");
        }
        Err(e) => panic!("create {PATH}: {e}"),
    }
    // Each phase runs in a task of its own, as application code does. (Not as the `block_on`
    // future: tokio's current-thread scheduler makes one more, non-blocking, epoll_wait
    // before polling that future whenever another task wakes it, which would penalise ours
    // and not the raw sender.) The raw sender sends no pings: a fresh session for each
    // phase, so that one does not expire while the other sender runs.
    let (in_flight, value) = (args.in_flight, args.value);
    let raw_p = |ops| {
        in_task(async move {
            let raw = Raw::connect(addr).await.expect("raw connect");
            raw.pipelined(ops, in_flight).await.expect("raw")
        })
    };
    let raw_s = |ops| {
        in_task(async move {
            let raw = Raw::connect(addr).await.expect("raw connect");
            raw.sequential(ops).await.expect("raw")
        })
    };
    let ours_p = |ops| {
        let client = client.clone();
        in_task(async move { ours_pipelined(&client, ops, in_flight, value).await })
    };
    // The bound's cost: each phase on a fresh client, connected before its clock starts,
    // so neither side keeps the connection that came first (with one long-lived client
    // each, the first connected measured some 9% slower even when both were unbounded).
    let fresh_p = |ops, max_in_flight: usize| {
        let connect = connect.clone();
        in_task(async move {
            let client = Client::builder(&connect)
                .max_in_flight(max_in_flight)
                .connect()
                .await
                .expect("connect");
            let result = ours_pipelined(&client, ops, in_flight, value).await;
            client.close().await.expect("close");
            result
        })
    };
    let ours_s = |ops| {
        let client = client.clone();
        in_task(async move { ours_sequential(&client, ops, value).await })
    };
    let fanout_p = |ops| in_task(raw_fanout(addr, ops, in_flight));
    let do_raw = args.only.is_none() || args.only.as_deref() == Some("raw");
    let do_fanout = args.only.is_none() || args.only.as_deref() == Some("fanout");
    let do_ours = args.only.is_none() || args.only.as_deref() == Some("ours");
    let do_unbounded = args.only.is_none() || args.only.as_deref() == Some("unbounded");

    if args.warmup > 0 {
        eprintln!("warm-up: {} pipelined getData each", args.warmup);
        if do_raw {
            raw_p(args.warmup).await;
            raw_s(args.seq_ops / 4).await;
        }
        if do_fanout {
            fanout_p(args.warmup).await;
        }
        if do_ours {
            ours_p(args.warmup).await;
            ours_s(args.seq_ops / 4).await;
        }
        if do_unbounded {
            fresh_p(args.warmup, usize::MAX).await;
        }
    }

    let mut best = Best::default();
    for round in 1..=args.rounds {
        if do_raw {
            let r = raw_p(args.ops).await;
            eprintln!(
                "round {round} raw  pipelined {:>9.0} ops/s {:>6.2} us/op cpu",
                r.ops_per_s, r.cpu_us_per_op
            );
            best.raw_p.push(r);
        }
        if do_fanout {
            let f = fanout_p(args.ops).await;
            eprintln!(
                "round {round} fan-out pipelined {:>6.0} ops/s {:>6.2} us/op cpu",
                f.ops_per_s, f.cpu_us_per_op
            );
            best.fanout_p.push(f);
        }
        // Ours and unbounded differ only by the bound: they swap places each round, so
        // neither always runs on the warmer server.
        for bounded in [round % 2 == 1, round % 2 == 0] {
            if bounded && do_unbounded {
                let b = fresh_p(args.ops, zkrs_client::DEFAULT_MAX_IN_FLIGHT).await;
                eprintln!(
                    "round {round} bounded pipelined {:>6.0} ops/s {:>6.2} us/op cpu",
                    b.ops_per_s, b.cpu_us_per_op
                );
                best.bounded_p.push(b);
            }
            if bounded && do_ours {
                let o = ours_p(args.ops).await;
                eprintln!(
                    "round {round} ours pipelined {:>9.0} ops/s {:>6.2} us/op cpu",
                    o.ops_per_s, o.cpu_us_per_op
                );
                best.ours_p.push(o);
            }
            if !bounded && do_unbounded {
                let u = fresh_p(args.ops, usize::MAX).await;
                eprintln!(
                    "round {round} unbounded pipelined {:>4.0} ops/s {:>6.2} us/op cpu",
                    u.ops_per_s, u.cpu_us_per_op
                );
                best.unbounded_p.push(u);
            }
        }
        if do_raw {
            let r = raw_s(args.seq_ops).await;
            eprintln!(
                "round {round} raw  sequential p50 {:>7.1} us p99 {:>7.1} us {:>6.2} us/op cpu",
                r.p50_us, r.p99_us, r.cpu_us_per_op
            );
            best.raw_s.push(r);
        }
        if do_ours {
            let o = ours_s(args.seq_ops).await;
            eprintln!(
                "round {round} ours sequential p50 {:>7.1} us p99 {:>7.1} us {:>6.2} us/op cpu",
                o.p50_us, o.p99_us, o.cpu_us_per_op
            );
            best.ours_s.push(o);
        }
    }
    client.close().await.expect("close");

    let raw_tput = max(best.raw_p.iter().map(|r| r.ops_per_s));
    let ours_tput = max(best.ours_p.iter().map(|r| r.ops_per_s));
    let raw_cpu = min(best.raw_p.iter().map(|r| r.cpu_us_per_op));
    let ours_cpu = min(best.ours_p.iter().map(|r| r.cpu_us_per_op));
    let fanout_cpu = min(best.fanout_p.iter().map(|r| r.cpu_us_per_op));
    let fanout_tput = max(best.fanout_p.iter().map(|r| r.ops_per_s));
    let unbounded_tput = max(best.unbounded_p.iter().map(|r| r.ops_per_s));
    let bounded_tput = max(best.bounded_p.iter().map(|r| r.ops_per_s));
    let bounded_cpu = min(best.bounded_p.iter().map(|r| r.cpu_us_per_op));
    let unbounded_cpu = min(best.unbounded_p.iter().map(|r| r.cpu_us_per_op));
    let raw_seq_cpu = min(best.raw_s.iter().map(|r| r.cpu_us_per_op));
    let ours_seq_cpu = min(best.ours_s.iter().map(|r| r.cpu_us_per_op));
    let figures: Vec<(&str, f64, &str)> = vec![
        ("raw_pipelined_throughput", raw_tput, "ops/s"),
        ("ours_pipelined_throughput", ours_tput, "ops/s"),
        ("throughput_ratio", ours_tput / raw_tput, "x"),
        (
            "throughput_ratio_median",
            median(best.ours_p.iter().map(|r| r.ops_per_s))
                / median(best.raw_p.iter().map(|r| r.ops_per_s)),
            "x",
        ),
        ("raw_pipelined_cpu_per_op", raw_cpu, "us/op"),
        ("ours_pipelined_cpu_per_op", ours_cpu, "us/op"),
        ("cpu_ratio", ours_cpu / raw_cpu, "x"),
        ("fanout_pipelined_cpu_per_op", fanout_cpu, "us/op"),
        ("fanout_pipelined_throughput", fanout_tput, "ops/s"),
        ("fanout_cpu_ratio", fanout_cpu / raw_cpu, "x"),
        ("ours_to_fanout_cpu_ratio", ours_cpu / fanout_cpu, "x"),
        (
            "ours_to_fanout_cpu_ratio_median",
            median(best.ours_p.iter().map(|r| r.cpu_us_per_op))
                / median(best.fanout_p.iter().map(|r| r.cpu_us_per_op)),
            "x",
        ),
        (
            "cpu_ratio_median",
            median(best.ours_p.iter().map(|r| r.cpu_us_per_op))
                / median(best.raw_p.iter().map(|r| r.cpu_us_per_op)),
            "x",
        ),
        (
            "raw_sequential_p50",
            min(best.raw_s.iter().map(|r| r.p50_us)),
            "us",
        ),
        (
            "raw_sequential_p99",
            min(best.raw_s.iter().map(|r| r.p99_us)),
            "us",
        ),
        (
            "ours_sequential_p50",
            min(best.ours_s.iter().map(|r| r.p50_us)),
            "us",
        ),
        (
            "ours_sequential_p99",
            min(best.ours_s.iter().map(|r| r.p99_us)),
            "us",
        ),
        ("unbounded_pipelined_throughput", unbounded_tput, "ops/s"),
        ("unbounded_pipelined_cpu_per_op", unbounded_cpu, "us/op"),
        ("bounded_pipelined_throughput", bounded_tput, "ops/s"),
        ("bounded_pipelined_cpu_per_op", bounded_cpu, "us/op"),
        ("bound_throughput_ratio", bounded_tput / unbounded_tput, "x"),
        ("bound_cpu_ratio", bounded_cpu / unbounded_cpu, "x"),
        (
            "bound_throughput_ratio_median",
            median(best.bounded_p.iter().map(|r| r.ops_per_s))
                / median(best.unbounded_p.iter().map(|r| r.ops_per_s)),
            "x",
        ),
        (
            "bound_cpu_ratio_median",
            median(best.bounded_p.iter().map(|r| r.cpu_us_per_op))
                / median(best.unbounded_p.iter().map(|r| r.cpu_us_per_op)),
            "x",
        ),
        ("raw_sequential_cpu_per_op", raw_seq_cpu, "us/op"),
        ("ours_sequential_cpu_per_op", ours_seq_cpu, "us/op"),
        ("sequential_cpu_ratio", ours_seq_cpu / raw_seq_cpu, "x"),
    ];
    // With --only, the other side's figures (and the ratios) are not numbers: left out.
    for (name, value, unit) in figures.into_iter().filter(|f| f.1.is_finite() && f.1 > 0.0) {
        println!("{name} {value:.3} {unit}");
    }
}

fn main() {
    let args = Args::parse();
    eprintln!("{args:?}");
    // Started (or not) before the runtime: nothing of the test kit runs during measurement.
    // The test kit's JVM settings favour start-up (C1 only); a benchmark wants the server's
    // steady state: the full JIT and a larger heap (ServerOptions::benchmark).
    let (server, connect) = zkrs_testkit::TestingServer::given_or_started(args.server.as_deref());
    let addr: SocketAddr = {
        use std::net::ToSocketAddrs;
        connect
            .to_socket_addrs()
            .expect("server address")
            .next()
            .expect("server address")
    };
    let runtime = if args.multi_thread {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    }
    .expect("runtime");
    runtime.block_on(run(args, connect, addr));
    drop(runtime);
    drop(server);
}
