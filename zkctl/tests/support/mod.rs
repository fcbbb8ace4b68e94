//! What zkctl's end-to-end tests share: running the built binary against a server under a
//! deadline, reading its output, and waiting on conditions. Every wait has a deadline.
#![allow(dead_code)] // each test file uses some of these

pub mod bench_figures;

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// One server with the test kit's default options for the whole test binary (the test kit's
/// watchdog stops it when the process exits).
pub fn plain_server() -> &'static zkrs_testkit::TestingServer {
    static SERVER: std::sync::OnceLock<zkrs_testkit::TestingServer> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        zkrs_testkit::TestingServer::start_with(zkrs_testkit::ServerOptions::new())
            .expect("ZooKeeper (scripts/install-zookeeper.sh)")
    })
}

/// `zkctl ARGS` against [`plain_server`].
pub fn run_plain(args: &[&str]) -> Output {
    run_on(&plain_server().connect_string(), args)
}

/// `zkctl ARGS` against [`plain_server`], expecting success; stdout.
pub fn ok_plain(args: &[&str]) -> String {
    ok_on(&plain_server().connect_string(), args)
}

/// How long one plain command may take.
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(20);

/// `zkctl --server SERVER ARGS...`, not started yet (stdin empty, output piped).
pub fn zkctl_on(server: &str, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zkctl"));
    c.arg("--server")
        .arg(server)
        .args(args)
        .env_remove("ZK_SERVER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Waits for a child under a deadline (killing it and failing if it is late), collecting its
/// output on threads so a full pipe cannot block it.
pub fn finish(mut child: Child, within: Duration) -> Output {
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + within;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "zkctl did not finish within {within:?}; stderr: {}",
                String::from_utf8_lossy(&stderr.join().unwrap())
            );
        }
        thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// Reads a pipe to its end on a thread of its own.
pub fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

/// Runs `zkctl --server SERVER ARGS` to completion ([`COMMAND_DEADLINE`] at most).
pub fn run_on(server: &str, args: &[&str]) -> Output {
    finish(
        zkctl_on(server, args).spawn().expect("spawn zkctl"),
        COMMAND_DEADLINE,
    )
}

/// Runs and expects success; returns stdout.
pub fn ok_on(server: &str, args: &[&str]) -> String {
    let out = run_on(server, args);
    assert!(
        out.status.success(),
        "zkctl {args:?} failed ({}): {}",
        out.status,
        stderr(&out)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn exit_code(status: ExitStatus) -> i32 {
    status.code().expect("exited normally")
}

/// Polls `cond` every 10 ms until it holds, or fails after `within`.
pub fn wait_until(what: &str, within: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

/// Sends `sig` to `pid` with the shell's own `kill`, as zkctl does (`/bin/kill`, from
/// procps, may not be installed).
pub fn signal(pid: u32, sig: &str) {
    let status = Command::new("sh")
        .args(["-c", "kill -s \"$1\" \"$2\"", "kill", sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -s {sig} {pid}");
}

/// A file holding a secret (`--auth-file`, `--resume-password-file`), readable by its owner
/// only, removed at drop.
pub struct SecretFile(std::path::PathBuf);

impl SecretFile {
    /// A new file `name` (unique to this process) holding `text`.
    pub fn new(name: &str, text: &str) -> SecretFile {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = std::env::temp_dir().join(format!("zkctl-secret-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .unwrap();
        file.write_all(text.as_bytes()).unwrap();
        SecretFile(path)
    }

    /// Its path.
    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for SecretFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A session's password as `--resume-password-file` takes it: hex.
pub fn password_hex(password: &zkrs_client::Secret) -> String {
    password
        .expose()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
