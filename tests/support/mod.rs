//! The Java side of the Curator interop tests (`tests/curator_interop.rs`,
//! `tests/curator_recipes.rs`, `tests/curator_discovery.rs`) and of `benches/discovery.rs`
//! (which includes this file with `#[path]`): compiles `tests/java/*.java`
//! (`CuratorPeer`, `CuratorDiscoveryPeer`, ...) with javac against Debian's Curator 5.4.0 jars
//! (curator-x-discovery and the Jackson jars it needs included), runs a peer, and talks to it
//! over stdin/stdout; plus the helpers the test files wait with.
//!
//! Needs a JDK (javac) and Curator's jars; `scripts/install-zookeeper.sh` installs both. Nothing
//! here skips: without Java or Curator it panics and says so. `ZKR_CURATOR_CLASSPATH` (a
//! complete classpath for Curator, curator-x-discovery and Jackson included) and `ZKR_JAVAC`
//! override the Debian layout.
#![allow(dead_code)] // each test file uses some of these

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{timeout, timeout_at, Instant};
use zkrs_client::{Client, ErrorCode};
use zkrs_testkit::{JavaPrograms, TestingServer};

/// For anything that should happen.
pub const DEADLINE: Duration = Duration::from_secs(30);
/// For a JVM to start and connect (the machine may be busy).
pub const START: Duration = Duration::from_secs(90);
/// How long a waiting peer must stay silent.
pub const QUIET: Duration = Duration::from_millis(1500);

const INSTALL_HINT: &str = "run scripts/install-zookeeper.sh (it installs a JDK with javac and \
     fetches Curator into the jar cache; scripts/fetch-jars.sh curator VERSION for another), or \
     set ZKR_CURATOR_CLASSPATH / ZKR_JAVAC";

// ----- Java and Curator -----

/// Java, Curator and the compiled peers (every `tests/java/*.java`), set up once per test
/// binary; panics (never skips) when something is missing.
fn java() -> &'static JavaPrograms {
    static JAVA: OnceLock<Result<JavaPrograms, String>> = OnceLock::new();
    let setup = || {
        let classpath = JavaPrograms::curator_classpath().map_err(|e| e.to_string())?;
        let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
        JavaPrograms::compile(&peer_sources()?, &classpath, base, "curator-peers")
            .map_err(|e| e.to_string())
    };
    match JAVA.get_or_init(setup) {
        Ok(java) => java,
        Err(e) => panic!("Curator interop tests need Java and Curator: {e}\n{INSTALL_HINT}"),
    }
}

/// Every `tests/java/*.java` of the workspace: the root crate's, which the model crate's tests
/// include this file from one level down.
fn peer_sources() -> Result<Vec<PathBuf>, String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let folder = [manifest.join("tests/java"), manifest.join("../tests/java")]
        .into_iter()
        .find(|p| p.is_dir())
        .unwrap_or_else(|| manifest.join("tests/java"));
    let mut sources: Vec<PathBuf> = fs::read_dir(&folder)
        .map_err(|e| format!("listing {}: {e}", folder.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "java"))
        .collect();
    sources.sort();
    if sources.is_empty() {
        return Err(format!("no .java file in {}", folder.display()));
    }
    Ok(sources)
}

// ----- The peer -----

/// Lines the peer prints on its own, whatever command is under way: `KEYWORD [rest]`.
const EVENTS: &[&str] = &[
    "LEADER",
    "NOT_LEADER",
    "REVOCATION_REQUESTED",
    "COUNT_CHANGED",
    // CuratorDiscoveryPeer's ServiceCache listener.
    "CACHE_CHANGED",
    "CACHE_STATE",
];

/// JVM flags for the interop tests: quick to start, small.
pub const TEST_JVM: &[&str] = &["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx128m"];
/// JVM flags for benchmarks (`benches/discovery.rs`): the full JIT.
pub const BENCH_JVM: &[&str] = &["-Xmx512m"];

/// A line's keyword and the rest.
fn split(line: &str) -> (&str, &str) {
    line.split_once(' ').unwrap_or((line, ""))
}

fn is_event(line: &str) -> bool {
    EVENTS.contains(&split(line).0)
}

/// A running Java peer. Killed on drop.
pub struct Peer {
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::UnboundedReceiver<String>,
    /// Event lines read while waiting for something else, not consumed yet.
    events: Vec<String>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Peer {
    /// Starts `java CuratorPeer <args>` and waits for its session.
    pub async fn start(name: &str, args: &[&str]) -> Peer {
        Peer::start_class("CuratorPeer", name, args).await
    }

    /// Starts `java <class> <args>` (a peer of `tests/java/`, same protocol) and waits for its
    /// first line, `CONNECTED`.
    pub async fn start_class(class: &str, name: &str, args: &[&str]) -> Peer {
        Peer::start_with_jvm(class, name, TEST_JVM, args).await
    }

    /// As [`Peer::start_class`], with the JVM's flags: [`TEST_JVM`] or [`BENCH_JVM`].
    pub async fn start_with_jvm(class: &str, name: &str, jvm: &[&str], args: &[&str]) -> Peer {
        let java = java();
        let mut flags = jvm.to_vec();
        // The logger: warnings and worse, to stderr.
        flags.extend([
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-Dorg.slf4j.simpleLogger.logFile=System.err",
        ]);
        let mut child = java
            .command(&flags, class)
            .args(args)
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
        let mut peer = Peer {
            name: name.to_string(),
            child,
            stdin,
            lines,
            events: Vec::new(),
            stderr: err_lines,
        };
        peer.expect_within("CONNECTED", START).await;
        peer
    }

    pub fn fail(&self, message: &str) -> ! {
        let stderr = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        panic!(
            "{}: {message}\n--- stderr of {} (last lines) ---\n{}",
            self.name,
            self.name,
            stderr.join("\n")
        );
    }

    pub fn send(&mut self, command: &str) {
        if let Err(e) = writeln!(self.stdin, "{command}").and_then(|_| self.stdin.flush()) {
            self.fail(&format!("sending {command:?}: {e}"));
        }
    }

    /// Waits for the line `KEYWORD` or `KEYWORD <rest>`; returns the rest. Event lines met
    /// on the way are kept for later; any other line fails the test.
    pub async fn expect_within(&mut self, keyword: &str, within: Duration) -> String {
        if let Some(i) = self.events.iter().position(|e| split(e).0 == keyword) {
            let line = self.events.remove(i);
            return split(&line).1.to_string();
        }
        let deadline = Instant::now() + within;
        loop {
            let line = match timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(line)) => line,
                Ok(None) => self.fail(&format!("exited while we waited for {keyword}")),
                Err(_) => self.fail(&format!("no {keyword} within {within:?}")),
            };
            let (head, rest) = split(&line);
            if head == keyword {
                return rest.to_string();
            }
            if is_event(&line) {
                self.events.push(line);
                continue;
            }
            self.fail(&format!("expected {keyword}, got {line:?}"));
        }
    }

    /// Waits for an event line `KEYWORD <rest>` whose rest satisfies `wanted`; returns the
    /// rest. Earlier `KEYWORD` events are dropped (they told older states); other event lines
    /// are kept; any other line fails the test.
    pub async fn expect_event(&mut self, keyword: &str, wanted: impl Fn(&str) -> bool) -> String {
        let mut i = 0;
        while i < self.events.len() {
            let (head, rest) = split(&self.events[i]);
            if head != keyword {
                i += 1;
                continue;
            }
            let found = wanted(rest).then(|| rest.to_string());
            self.events.remove(i);
            if let Some(rest) = found {
                return rest;
            }
        }
        let deadline = Instant::now() + DEADLINE;
        let mut seen = Vec::new();
        loop {
            let line = match timeout_at(deadline, self.lines.recv()).await {
                Ok(Some(line)) => line,
                Ok(None) => self.fail(&format!("exited while we waited for {keyword}")),
                Err(_) => self.fail(&format!(
                    "no wanted {keyword} within {DEADLINE:?} (saw {seen:?})"
                )),
            };
            let (head, rest) = split(&line);
            if head == keyword {
                if wanted(rest) {
                    return rest.to_string();
                }
                seen.push(rest.to_string());
            } else if is_event(&line) {
                self.events.push(line);
            } else {
                self.fail(&format!("expected {keyword}, got {line:?}"));
            }
        }
    }

    pub async fn expect(&mut self, keyword: &str) -> String {
        self.expect_within(keyword, DEADLINE).await
    }

    /// Sends `command`, waits for its answer `KEYWORD <rest>`, returns the rest.
    pub async fn ask(&mut self, command: &str, keyword: &str) -> String {
        self.send(command);
        self.expect(keyword).await
    }

    /// A comma-separated answer as a list.
    pub async fn ask_list(&mut self, command: &str, keyword: &str) -> Vec<String> {
        let answer = self.ask(command, keyword).await;
        if answer.is_empty() {
            Vec::new()
        } else {
            answer.split(',').map(str::to_string).collect()
        }
    }

    /// Asserts the peer prints nothing for [`QUIET`] (it is blocked in Curator, waiting).
    pub async fn assert_silent(&mut self, what: &str) {
        match timeout(QUIET, self.lines.recv()).await {
            Err(_) => {}
            Ok(Some(line)) => self.fail(&format!("{what}: printed {line:?}")),
            Ok(None) => self.fail(&format!("{what}: exited")),
        }
    }

    /// Closes the peer's session (its ephemeral nodes go at once) and waits for it to exit.
    pub async fn exit(mut self) {
        self.ask("exit", "BYE").await;
        let deadline = Instant::now() + DEADLINE;
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

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ----- Helpers -----

pub async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: not done within {DEADLINE:?}"))
}

pub async fn connect(zk: &TestingServer) -> Client {
    within("connect", Client::connect(&zk.connect_string()))
        .await
        .expect("connect")
}

/// Waits (with watches, not polling) until the children of `dir` satisfy `done`; returns them.
pub async fn children_until(
    client: &Client,
    dir: &str,
    what: &str,
    done: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let (names, watch) = match client.get_children_and_watch(dir).await {
            Ok((children, watch)) => (children.to_vec(), watch),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {
                match client.exists_and_watch(dir).await {
                    Ok((None, watch)) => (Vec::new(), watch),
                    Ok((Some(_), _)) => continue, // created meanwhile: list it
                    Err(e) => panic!("{what}: exists {dir}: {e}"),
                }
            }
            Err(e) => panic!("{what}: getChildren {dir}: {e}"),
        };
        if done(&names) {
            return names;
        }
        if timeout_at(deadline, watch).await.is_err() {
            panic!("{what}: not within {DEADLINE:?}; children of {dir}: {names:?}");
        }
    }
}

/// The one name in `names` that is not in `known`.
pub fn new_name(names: &[String], known: &[&str]) -> String {
    let fresh: Vec<&String> = names
        .iter()
        .filter(|n| !known.contains(&n.as_str()))
        .collect();
    assert_eq!(
        fresh.len(),
        1,
        "one new node among {names:?} (known {known:?})"
    );
    fresh[0].clone()
}
