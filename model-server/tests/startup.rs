//! Start-up time of the `zkrs-model` process against a JVM ZooKeeper 3.8's, in one run,
//! alternating, several times. A measurement, not a check (ignored by default):
//!
//! ```sh
//! cargo test -p zkrs-model-server --release --test startup -- --ignored --nocapture
//! ```
//!
//! Per run: `zkrs-model --port 0` from spawn to its connect string read, and to its first
//! `imok`; ZooKeeper (`QuorumPeerMain` on Debian's jars, as `scripts/bench-startup.sh` runs it)
//! from spawn to its first `imok`, polled every 2 ms; and the test kit's
//! `TestingServer::start()` until it returns and answers `imok` (what a Rust test waits for).
//! `ZKRS_STARTUP_RUNS` sets the number of runs (default 5).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{BIN, DEADLINE};
use zkrs_testkit::{Installation, TestingServer};

/// `ruok` until `imok`, or `None` when nothing answers yet (refused, or closed unanswered).
fn imok(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    if stream.write_all(b"ruok").is_err() {
        return false;
    }
    let _ = stream.shutdown(Shutdown::Write);
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer == "imok"
}

fn until_imok(addr: SocketAddr, child: &mut Child) -> Instant {
    let deadline = Instant::now() + DEADLINE * 2;
    loop {
        if imok(addr) {
            return Instant::now();
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited: {status}");
        }
        assert!(Instant::now() < deadline, "no imok from {addr}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// zkrs-model: (to the connect string, to the first imok).
fn model_run() -> (Duration, Duration) {
    let start = Instant::now();
    let mut child = Command::new(BIN)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let printed = start.elapsed();
    let addr: SocketAddr = line.trim().parse().unwrap();
    let answered = until_imok(addr, &mut child) - start;
    let _ = child.kill();
    let _ = child.wait();
    (printed, answered)
}

/// A JVM ZooKeeper: to the first imok.
fn jvm_run(installation: &Installation, dir: &std::path::Path) -> Duration {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let data = dir.join(format!("data-{port}"));
    std::fs::create_dir_all(&data).unwrap();
    let cfg = dir.join(format!("zoo-{port}.cfg"));
    std::fs::write(
        &cfg,
        format!(
            "tickTime=2000\ndataDir={}\nclientPort={port}\nclientPortAddress=127.0.0.1\n\
             admin.enableServer=false\n4lw.commands.whitelist=*\n",
            data.display()
        ),
    )
    .unwrap();
    let start = Instant::now();
    let mut child = Command::new(installation.java())
        .arg("-XX:+UseSerialGC")
        .arg("-cp")
        .arg(installation.classpath())
        .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
        .arg(&cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let answered = until_imok(SocketAddr::from(([127, 0, 0, 1], port)), &mut child) - start;
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&data);
    answered
}

/// The test kit's real server: until `start()` returned and `ruok` answered.
fn testkit_run() -> Duration {
    let start = Instant::now();
    let server = TestingServer::start().unwrap();
    assert!(imok(server.address()));
    start.elapsed()
}

fn summary(name: &str, mut figures: Vec<f64>) {
    figures.sort_by(f64::total_cmp);
    let median = figures[figures.len() / 2];
    println!(
        "{name:<40} median {median:8.1} ms   min {:8.1}   max {:8.1}",
        figures[0],
        figures[figures.len() - 1]
    );
}

#[test]
#[ignore = "a measurement: cargo test -p zkrs-model-server --release --test startup -- --ignored --nocapture"]
fn startup_against_a_jvm_zookeeper() {
    let runs: usize = std::env::var("ZKRS_STARTUP_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let installation = Installation::detect().expect("a ZooKeeper installation");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("startup");
    std::fs::create_dir_all(&dir).unwrap();
    let (mut printed, mut model_imok, mut jvm, mut kit) = (vec![], vec![], vec![], vec![]);
    for run in 1..=runs {
        let (p, a) = model_run();
        let j = jvm_run(&installation, &dir);
        let k = testkit_run();
        println!(
            "run {run}: zkrs-model connect string {:.1} ms, imok {:.1} ms; \
             ZooKeeper imok {:.1} ms; TestingServer::start + imok {:.1} ms",
            ms(p),
            ms(a),
            ms(j),
            ms(k)
        );
        printed.push(ms(p));
        model_imok.push(ms(a));
        jvm.push(ms(j));
        kit.push(ms(k));
    }
    summary("zkrs-model: spawn to connect string", printed);
    summary("zkrs-model: spawn to first imok", model_imok);
    summary("ZooKeeper 3.8 JVM: spawn to first imok", jvm);
    summary("TestingServer::start() + imok", kit);
}
