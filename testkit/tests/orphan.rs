//! The JVM must not outlive a test process that is SIGKILLed (so `Drop`
//! never runs): the watchdog has to kill it.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use common::{eventually, pid_alive};
use zkrs_testkit::{four_letter_word, TestingServer};

/// Set in the child process only.
const CHILD_ENV: &str = "ZKR_TESTKIT_ORPHAN_CHILD";

/// Not a test of its own: the body of the child process started by
/// `jvm_dies_with_a_killed_test_process` (this same test binary). Without
/// the variable it returns at once.
#[test]
fn orphan_child_process() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let server = TestingServer::start().expect("start");
    println!(
        "SERVER {} {} {}",
        server.pid().unwrap(),
        server.port(),
        server.temp_dir().display()
    );
    std::io::stdout().flush().unwrap();
    // Wait to be SIGKILLed by the parent (bounded, should the parent fail).
    thread::sleep(Duration::from_secs(120));
}

#[test]
fn jvm_dies_with_a_killed_test_process() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "orphan_child_process",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    // Read the child's report on a thread so that we can time out.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // libtest prints "test orphan_child_process ... " first, on the
            // same line.
            if let Some((_, rest)) = line.split_once("SERVER ") {
                let _ = tx.send(rest.to_owned());
                return;
            }
        }
    });
    let report = rx.recv_timeout(Duration::from_secs(60));
    let Ok(report) = report else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the child process did not start a server");
    };
    let mut fields = report.splitn(3, ' ');
    let pid: u32 = fields.next().unwrap().parse().unwrap();
    let port: u16 = fields.next().unwrap().parse().unwrap();
    let dir = fields.next().unwrap().to_owned();
    assert!(pid_alive(pid));

    // SIGKILL: no destructors, no unwinding.
    child.kill().unwrap();
    child.wait().unwrap();

    eventually(Duration::from_secs(10), "the orphaned JVM to die", || {
        !pid_alive(pid)
    });
    eventually(Duration::from_secs(10), "the port to close", || {
        four_letter_word(
            ([127, 0, 0, 1], port).into(),
            "srvr",
            Duration::from_secs(1),
        )
        .is_err()
    });
    // Drop could not delete the folder; do it for it, unless another test process got there
    // first: the first TempDir of every process sweeps the folders of dead processes, and the
    // child is one now (a fresh machine's first run failed here on NotFound).
    match std::fs::remove_dir_all(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("removing {dir}: {e}"),
    }
}
