//! Runs Curator's own queues in a JVM (`tests/java/CuratorQueuePeer.java`, compiled by the test
//! kit's `JavaPrograms` against Debian's Curator 5.4.0 jars) and talks to it over stdin/stdout.
//! Shared by `tests/curator_queues.rs` and `recipes/benches/queue_throughput.rs` (included with
//! `#[path]`, so it is not a module of the recipe tests' `support`).
//!
//! Needs a JDK (javac) and Curator's jars: `scripts/install-zookeeper.sh` installs both.
//! `ZKR_CURATOR_CLASSPATH` (a complete classpath for Curator) and `ZKR_JAVAC` override the
//! Debian layout. Nothing here skips: without Java or Curator it panics and says why.
#![allow(dead_code)] // each user takes what it needs

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{timeout_at, Instant};
use zkrs_testkit::JavaPrograms;

/// For a JVM to start and connect (the machine may be busy).
pub const START: Duration = Duration::from_secs(90);

const INSTALL_HINT: &str = "run scripts/install-zookeeper.sh (it installs a JDK with javac and \
     fetches Curator into the jar cache), or set ZKR_CURATOR_CLASSPATH / ZKR_JAVAC";
const CLASS: &str = "CuratorQueuePeer";

/// Java, Curator and the compiled peer, set up once per process; panics when missing.
fn java() -> &'static JavaPrograms {
    static JAVA: OnceLock<Result<JavaPrograms, String>> = OnceLock::new();
    let setup = || {
        let classpath = JavaPrograms::curator_classpath().map_err(|e| e.to_string())?;
        let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
        JavaPrograms::compile(&[source()?], &classpath, base, "curator-queue-peer")
            .map_err(|e| e.to_string())
    };
    match JAVA.get_or_init(setup) {
        Ok(java) => java,
        Err(e) => panic!("the Curator queue peer needs Java and Curator: {e}\n{INSTALL_HINT}"),
    }
}

/// The peer's source: `tests/java/` of the workspace (this file is compiled into the root
/// crate's tests and into the recipes crate's bench).
fn source() -> Result<PathBuf, String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [manifest, manifest.parent().unwrap_or(manifest)]
        .iter()
        .map(|d| d.join("tests/java").join(format!("{CLASS}.java")))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("no tests/java/{CLASS}.java near {}", manifest.display()))
}

/// Lines the peer prints on its own (a running consumer's), whatever command is under way.
const EVENTS: &[&str] = &["ITEM", "FAILED"];

/// JVM flags for tests: quick to start, small.
pub const TEST_JVM: &[&str] = &["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx128m"];
/// JVM flags for benchmarks: the full JIT.
pub const BENCH_JVM: &[&str] = &["-Xmx512m"];

/// `jvm`, and the logger's flags: warnings and worse, to stderr.
fn jvm_flags<'a>(jvm: &[&'a str]) -> Vec<&'a str> {
    let mut flags = jvm.to_vec();
    flags.extend([
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-Dorg.slf4j.simpleLogger.logFile=System.err",
    ]);
    flags
}

/// A running `CuratorQueuePeer`. Killed on drop.
pub struct QueuePeer {
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::UnboundedReceiver<String>,
    /// Consumer lines (`ITEM <hex>`, `FAILED <hex>`) not read yet.
    events: VecDeque<String>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl QueuePeer {
    /// Starts `java CuratorQueuePeer <connect>` and waits for its session.
    pub async fn start(name: &str, connect: &str, jvm: &[&str]) -> QueuePeer {
        let java = java();
        let mut child = java
            .command(&jvm_flags(jvm), CLASS)
            .arg(connect)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}\n{INSTALL_HINT}", java.java().display()));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let err_lines = Arc::new(Mutex::new(Vec::new()));
        let sink = err_lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                let mut sink = sink.lock().unwrap_or_else(|e| e.into_inner());
                if sink.len() >= 200 {
                    sink.remove(0);
                }
                sink.push(line);
            }
        });
        let mut peer = QueuePeer {
            name: name.to_string(),
            child,
            stdin,
            lines,
            events: VecDeque::new(),
            stderr: err_lines,
        };
        peer.expect_within("CONNECTED", START).await;
        peer
    }

    /// Fails the caller with the peer's last stderr lines.
    pub fn fail(&self, message: &str) -> ! {
        let stderr = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        panic!(
            "{}: {message}\n--- stderr of {} (last lines) ---\n{}",
            self.name,
            self.name,
            stderr.join("\n")
        );
    }

    /// Sends one command line.
    pub fn send(&mut self, command: &str) {
        if let Err(e) = writeln!(self.stdin, "{command}").and_then(|_| self.stdin.flush()) {
            self.fail(&format!("sending {command:?}: {e}"));
        }
    }

    /// Waits for the line `KEYWORD` or `KEYWORD <rest>`; returns the rest. Consumer lines
    /// met on the way are kept; any other line fails the caller.
    pub async fn expect_within(&mut self, keyword: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let line = self.line_before(deadline, keyword).await;
            let (head, rest) = line.split_once(' ').unwrap_or((&line, ""));
            if head == keyword {
                return rest.to_string();
            }
            if EVENTS.contains(&head) {
                self.events.push_back(line);
                continue;
            }
            self.fail(&format!("expected {keyword}, got {line:?}"));
        }
    }

    /// Sends `command` and waits (up to `within`) for its answer `KEYWORD <rest>`.
    pub async fn ask_within(&mut self, command: &str, keyword: &str, within: Duration) -> String {
        self.send(command);
        self.expect_within(keyword, within).await
    }

    /// The next consumer line (`ITEM <hex>` or `FAILED <hex>`), as (keyword, bytes).
    pub async fn next_event(&mut self, within: Duration) -> (String, Vec<u8>) {
        let deadline = Instant::now() + within;
        loop {
            if let Some(line) = self.events.pop_front() {
                let (head, rest) = line.split_once(' ').unwrap_or((&line, ""));
                return (head.to_string(), unhex(rest));
            }
            let line = self.line_before(deadline, "a consumer line").await;
            let head = line.split(' ').next().unwrap_or_default();
            if EVENTS.contains(&head) {
                self.events.push_back(line);
            } else {
                self.fail(&format!("expected a consumer line, got {line:?}"));
            }
        }
    }

    /// Asserts that no consumer line comes for `quiet`.
    pub async fn assert_no_event(&mut self, quiet: Duration) {
        if let Some(line) = self.events.front() {
            let line = line.clone();
            self.fail(&format!("unexpected {line:?}"));
        }
        if let Ok(Some(line)) = tokio::time::timeout(quiet, self.lines.recv()).await {
            self.fail(&format!("unexpected {line:?}"));
        }
    }

    async fn line_before(&mut self, deadline: Instant, what: &str) -> String {
        match timeout_at(deadline, self.lines.recv()).await {
            Ok(Some(line)) => line,
            Ok(None) => self.fail(&format!("exited while we waited for {what}")),
            Err(_) => self.fail(&format!("no {what} in time")),
        }
    }

    /// Closes the peer's session and waits for it to exit.
    pub async fn exit(mut self) {
        self.ask_within("exit", "BYE", Duration::from_secs(30))
            .await;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return,
                Ok(Some(status)) => self.fail(&format!("exited with {status}")),
                Ok(None) if Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(20)).await
                }
                Ok(None) => self.fail("did not exit after `exit`"),
                Err(e) => self.fail(&format!("waiting for the process: {e}")),
            }
        }
    }
}

impl Drop for QueuePeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Bytes as the peer writes them: lower-case hex, `_` for none.
pub fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "_".to_string();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The peer's hex back to bytes.
pub fn unhex(text: &str) -> Vec<u8> {
    if text == "_" {
        return Vec::new();
    }
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex from the peer"))
        .collect()
}
