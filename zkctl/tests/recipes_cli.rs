//! `zkctl counter`, `barrier`, `member` and `members` end to end, against a real server.

use std::io::Read;
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use zkr_testkit::TestingServer;

fn server() -> &'static TestingServer {
    static SERVER: OnceLock<TestingServer> = OnceLock::new();
    SERVER.get_or_init(|| TestingServer::start().expect("ZooKeeper (scripts/install-zookeeper.sh)"))
}

fn zkctl(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zkctl"));
    c.arg("--server")
        .arg(server().connect_string())
        .args(args)
        .env_remove("ZK_SERVER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Waits for `child` (at most 30 s) and collects its output.
fn finish(mut child: Child) -> Output {
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
            panic!("zkctl did not finish within 30 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn run(args: &[&str]) -> Output {
    finish(zkctl(args).spawn().unwrap())
}

fn out(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "zkctl {args:?}: {:?} {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Polls zkctl's `ls` output until `check` holds (at most 30 s).
fn until_children(path: &str, check: impl Fn(usize) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let o = run(&["ls", path]);
        let n = String::from_utf8_lossy(&o.stdout).lines().count();
        if o.status.success() && check(n) {
            return;
        }
        assert!(Instant::now() < deadline, "{path}: {n} children");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn counters_both_widths() {
    assert_eq!(out(&["counter", "/c/long", "get"]), "0\n");
    assert_eq!(out(&["counter", "/c/long", "add", "5"]), "5\n");
    assert_eq!(out(&["counter", "/c/long", "set", "-3"]), "-3\n");
    assert_eq!(out(&["counter", "/c/long", "cas", "-3", "10"]), "10\n");
    let o = run(&["counter", "/c/long", "cas", "-3", "11"]);
    assert_eq!(o.status.code(), Some(1), "cas that does not apply");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "10\n");
    // 8 bytes, big-endian, as Curator's DistributedAtomicLong.
    let raw = out(&["get", "/c/long"]);
    assert_eq!(raw.as_bytes(), [0, 0, 0, 0, 0, 0, 0, 10]);

    assert_eq!(out(&["counter", "/c/int", "add", "7", "--int"]), "7\n");
    assert_eq!(out(&["counter", "/c/int", "cas", "7", "8", "--int"]), "8\n");
    assert_eq!(
        run(&["counter", "/c/int", "cas", "7", "9", "--int"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(out(&["get", "/c/int"]).as_bytes(), [0, 0, 0, 8]);

    for (args, needle) in [
        (&["counter", "/c/x", "add"][..], "one number"),
        (
            &["counter", "/c/x", "bump", "1"][..],
            "get, add, set or cas",
        ),
        (
            &["counter", "/c/x", "add", "99999999999", "--int"][..],
            "32-bit",
        ),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(needle),
            "{args:?}"
        );
    }
}

#[test]
fn concurrent_adds_add_up() {
    let children: Vec<Child> = (0..3)
        .map(|_| {
            let script = format!(
                "for i in 1 2 3 4 5 6 7 8 9 10; do {} --server {} counter /c/sum add 1 >/dev/null || exit 1; done",
                env!("CARGO_BIN_EXE_zkctl"),
                server().connect_string()
            );
            Command::new("sh")
                .args(["-c", &script])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        assert!(finish(child).status.success());
    }
    assert_eq!(out(&["counter", "/c/sum", "get"]), "30\n");
}

#[test]
fn a_barrier_lets_commands_run_only_when_all_have_entered() {
    let dir = std::env::temp_dir().join(format!("zkctl-barrier-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("ran");
    let _ = std::fs::remove_file(&marker);
    let member = || {
        zkctl(&[
            "barrier",
            "/b/phase",
            "--count",
            "3",
            "--timeout",
            "30000",
            "--",
            "sh",
            "-c",
            &format!("echo in >> {}", marker.display()),
        ])
        .spawn()
        .unwrap()
    };
    let first = [member(), member()];
    until_children("/b/phase", |n| n == 2);
    assert!(
        !marker.exists(),
        "a command ran before the third member entered"
    );
    let third = member();
    for child in first.into_iter().chain([third]) {
        let o = finish(child);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 3);

    // Too few members: exit 3, and no member node left behind.
    let o = run(&[
        "barrier",
        "/b/few",
        "--count",
        "2",
        "--timeout",
        "300",
        "--",
        "true",
    ]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    until_children("/b/few", |n| n == 0);
    let o = run(&["barrier", "/b/x", "--", "true"]);
    assert_eq!(o.status.code(), Some(2), "--count is required");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn members_of_a_group() {
    let a = zkctl(&["member", "/g", "a", "10.0.0.1", "--", "sleep", "30"])
        .spawn()
        .unwrap();
    let b = zkctl(&["member", "/g", "b", "--", "sleep", "30"])
        .spawn()
        .unwrap();
    until_children("/g", |n| n == 2);
    assert_eq!(out(&["members", "/g"]), "a 10.0.0.1\nb\n");
    for mut child in [a, b] {
        // SIGTERM: the command is stopped, then zkctl leaves the group.
        let _ = Command::new("sh")
            .args(["-c", &format!("kill -TERM {}", child.id())])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "zkctl member did not end");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    until_children("/g", |n| n == 0);
    assert_eq!(out(&["members", "/g"]), "");
    let o = run(&["member", "/g", "x/y", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
}
