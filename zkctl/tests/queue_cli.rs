//! `zkctl queue` end to end, against a real server: put and take in order, stdin items, every
//! queue kind, the simple queue, take's timeout (exit 3), a lock path, and usage errors.

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use zkrs_testkit::TestingServer;

fn server() -> &'static TestingServer {
    static SERVER: OnceLock<TestingServer> = OnceLock::new();
    SERVER.get_or_init(|| TestingServer::start().expect("ZooKeeper (scripts/install-zookeeper.sh)"))
}

/// Runs zkctl with `stdin` as its input; fails the test if it runs longer than 30 s.
fn zkctl(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zkctl"))
        .arg("--server")
        .arg(server().connect_string())
        .args(args)
        .env_remove("ZK_SERVER")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zkctl runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stdout = Vec::new();
            let mut stderr = Vec::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_end(&mut stdout)
                .unwrap();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_end(&mut stderr)
                .unwrap();
            return Output {
                status,
                stdout,
                stderr,
            };
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("zkctl {args:?} did not finish within 30 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn ok(args: &[&str]) -> String {
    let out = zkctl(args, b"");
    assert!(
        out.status.success(),
        "zkctl {args:?}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn put_then_take_in_order_with_stdin_items() {
    let put = ok(&["queue", "put", "/q/plain", "first"]);
    assert!(put.trim().starts_with("/q/plain/queue-"), "{put}");
    let out = zkctl(&["queue", "put", "/q/plain", "-"], b"second\nthird\n");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
    assert_eq!(
        ok(&["queue", "take", "/q/plain", "--count", "3"]),
        "first\nsecond\nthird\n"
    );
    // Nothing left: a take with a timeout exits 3.
    let out = zkctl(&["queue", "take", "/q/plain", "--timeout", "300"], b"");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_kind_of_queue() {
    ok(&["queue", "put", "/q/prio", "low", "--priority", "9"]);
    ok(&["queue", "put", "/q/prio", "urgent", "--priority", "-1"]);
    assert_eq!(
        ok(&["queue", "take", "/q/prio", "--count", "2"]),
        "urgent\nlow\n"
    );

    let put = ok(&["queue", "put", "/q/ids", "job", "--id", "job-7"]);
    assert!(put.contains("|job-7|"), "{put}");
    assert_eq!(ok(&["queue", "take", "/q/ids"]), "job\n");

    // A delay queue: an item due in the past is there at once.
    ok(&["queue", "put", "/q/delay", "late", "--delay-until", "1000"]);
    assert_eq!(
        ok(&["queue", "take", "/q/delay", "--timeout", "10000"]),
        "late\n"
    );

    let put = ok(&["queue", "put", "/q/simple", "raw", "--simple"]);
    assert!(put.trim().starts_with("/q/simple/qn-"), "{put}");
    assert_eq!(ok(&["queue", "take", "/q/simple", "--simple"]), "raw\n");
    let out = zkctl(
        &["queue", "take", "/q/simple", "--simple", "--timeout", "200"],
        b"",
    );
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn a_lock_path_removes_the_item_once_printed() {
    ok(&["queue", "put", "/q/locked", "payload"]);
    assert_eq!(
        ok(&[
            "queue",
            "take",
            "/q/locked",
            "--lock-path",
            "/q/locked-locks"
        ]),
        "payload\n"
    );
    let out = zkctl(
        &[
            "queue",
            "take",
            "/q/locked",
            "--lock-path",
            "/q/locked-locks",
            "--timeout",
            "200",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(3), "taken once");
}

#[test]
fn usage_errors() {
    for (args, needle) in [
        (&["queue", "put", "/q/x"][..], "not provided: <DATA>"),
        (
            &["queue", "peek", "/q/x"][..],
            "unrecognized subcommand 'peek'",
        ),
        (
            &["queue", "put", "/q/x", "d", "--priority", "1", "--id", "a"][..],
            "cannot be used with",
        ),
        (
            &["queue", "take", "/q/x", "--priority", "1"][..],
            "unexpected argument '--priority'",
        ),
        (
            &["queue", "put", "/q/x", "d", "--count", "2"][..],
            "unexpected argument '--count'",
        ),
        (
            &["queue", "take", "/q/x", "--simple", "--lock-path", "/l"][..],
            "'--simple' cannot be used with '--lock-path <P>'",
        ),
    ] {
        let out = zkctl(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
