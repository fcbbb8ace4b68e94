//! zkctl-bench against a real ZooKeeper server from the test kit: the figures that need the
//! test kit's measures and Curator's side, which the shipped zkctl leaves out (zkctl's own
//! bench figures are tested in zkctl/tests/cli.rs).

use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use zkrs_testkit::{ServerOptions, TestingServer};

#[path = "../../zkctl/tests/support/bench_figures.rs"]
mod bench_figures;
use bench_figures::{figures, has, value};

fn server() -> &'static TestingServer {
    static SERVER: OnceLock<TestingServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        TestingServer::start_with(ServerOptions::new())
            .expect("ZooKeeper (scripts/install-zookeeper.sh)")
    })
}

/// Runs `zkctl-bench --server SERVER ARGS` to its end, under a deadline (a JVM and javac on
/// a busy machine: a deadline for a hang, not a measure of speed).
fn run_on(server: &str, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zkctl-bench"))
        .arg("--server")
        .arg(server)
        .args(args)
        .env_remove("ZK_SERVER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn zkctl-bench");
    let deadline = Instant::now() + Duration::from_secs(120);
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stdout.unwrap(), &mut buf).ok();
        buf
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stderr.unwrap(), &mut buf).ok();
        buf
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("zkctl-bench {args:?} did not finish in time");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn ok_on(server: &str, args: &[&str]) -> String {
    let out = run_on(server, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "zkctl-bench {args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

fn ok(args: &[&str]) -> String {
    ok_on(&server().connect_string(), args)
}

/// Runs a `bench ... --curator` under a folder of its own (the chroot) made for it, and
/// returns its figures once it succeeded.
fn curator_bench(dir: &str, args: &[&str]) -> Vec<(String, f64, String)> {
    ok(&["create", dir]);
    let chroot = format!("{}{dir}", server().connect_string());
    figures(&ok_on(&chroot, args))
}

/// The client's own cost: CPU time and allocations per operation, from the test kit's
/// measures.
#[test]
fn bench_counts_cpu_and_allocations() {
    let get = figures(&ok(&[
        "bench",
        "get",
        "--clients",
        "2",
        "--in-flight",
        "4",
        "--ops",
        "400",
    ]));
    has(&get, "cpu_ns_per_op", "ns");
    // A getData round trip allocates nothing in steady state, and what the run's first
    // requests allocate (arena chunks, reply slots) shows as a little above 0 over 400
    // operations. 1 or more per op is a regression (it was 2 before requests stopped
    // allocating).
    let allocs = value(&get, "allocs_per_op");
    assert!(allocs > 0.0 && allocs < 0.5, "allocs_per_op {allocs}");
    let current = figures(&ok(&[
        "bench",
        "get",
        "--rt",
        "current",
        "--clients",
        "1",
        "--ops",
        "200",
    ]));
    has(&current, "cpu_ns_per_op", "ns");
    assert!(value(&current, "cpu_ns_per_op") > 0.0);
    let lock = figures(&ok(&["bench", "lock", "--ops", "20", "--rounds", "5"]));
    has(&lock, "allocs_per_cycle", "allocs");
}

/// `--in-line`: the live heap per session and per waiter, from the counting allocator.
#[test]
fn bench_in_line_measures_the_heap_per_waiter() {
    ok(&["create", "/bench-heap"]);
    let chroot = format!("{}/bench-heap", server().connect_string());
    let lock = figures(&ok_on(
        &chroot,
        &[
            "bench",
            "lock",
            "--ops",
            "10",
            "--rounds",
            "10",
            "--in-line",
            "5",
        ],
    ));
    for n in [2, 5] {
        has(
            &lock,
            &format!("in_line_{n}_heap_per_waiter_bytes"),
            "bytes",
        );
        // A session costs heap (its buffers and driver), measured while all are connected.
        assert!(value(&lock, &format!("in_line_{n}_heap_per_session_bytes")) > 0.0);
    }
}

/// `bench latch --curator`: Curator's side compiles, runs on the same server (under the same
/// chroot) and reports as many uncontended cycles and hand-offs as ours, with the ratios.
#[test]
fn bench_latch_runs_curators_side_for_the_ratio() {
    let latch = curator_bench(
        "/bench-curator",
        &[
            "bench",
            "latch",
            "--ops",
            "20",
            "--rounds",
            "5",
            "--contenders",
            "2",
            "--curator",
        ],
    );
    assert_eq!(value(&latch, "cycles"), 20.0);
    assert_eq!(value(&latch, "curator_cycles"), 20.0);
    has(&latch, "curator_cycles_per_sec", "cycles/s");
    has(&latch, "curator_cycle_p50_us", "us");
    assert!(value(&latch, "cycles_per_sec_ratio") > 0.0, "{latch:?}");
    assert!(value(&latch, "cycle_p50_ratio") > 0.0, "{latch:?}");
    assert_eq!(value(&latch, "contended_handoffs"), 5.0);
    assert_eq!(value(&latch, "curator_contended_handoffs"), 5.0);
    has(&latch, "curator_contended_handoffs_per_sec", "handoffs/s");
    has(&latch, "curator_contended_handoff_p50_us", "us");
    assert!(
        value(&latch, "contended_handoffs_per_sec_ratio") > 0.0,
        "{latch:?}"
    );
    assert!(
        value(&latch, "contended_handoff_p50_ratio") > 0.0,
        "{latch:?}"
    );
    let left = ok(&["ls", "/bench-curator"]);
    assert_eq!(left.trim(), "", "left behind: {left}");
}

/// `bench semaphore`: cycles, the two-session hand-off, contention with a line on the
/// semaphore's mutex, and with `--curator` Curator's `InterProcessSemaphoreV2` on the same
/// loops; nothing is left behind.
#[test]
fn bench_semaphore_measures_cycles_hand_offs_and_contention() {
    let semaphore = curator_bench(
        "/bench-semaphore",
        &[
            "bench",
            "semaphore",
            "--ops",
            "10",
            "--rounds",
            "6",
            "--contenders",
            "3",
            "--in-line",
            "4",
            "--curator",
        ],
    );
    for name in ["cycles", "curator_cycles"] {
        assert_eq!(value(&semaphore, name), 10.0, "{name}");
    }
    for name in [
        "handoffs",
        "contended_handoffs",
        "curator_contended_handoffs",
        "in_line_2_handoffs",
        "in_line_4_handoffs",
    ] {
        assert_eq!(value(&semaphore, name), 6.0, "{name}");
    }
    has(&semaphore, "handoff_in_idle_gets", "round_trips");
    for ratio in ["cycles_per_sec_ratio", "contended_handoffs_per_sec_ratio"] {
        assert!(value(&semaphore, ratio) > 0.0, "{semaphore:?}");
    }
    let left = ok(&["ls", "/bench-semaphore"]);
    assert_eq!(left.trim(), "", "left behind: {left}");
}
