//! End-to-end tests: the built `zkctl` binary against a real ZooKeeper server from the test kit.
//!
//! Every wait polls a condition under a deadline; nothing sleeps and hopes. All tests share
//! one server (started once; the test kit's watchdog stops it when this process exits) and
//! each works under its own path.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

mod support;
use support::bench_figures::{figures, has, value};
use support::*;
use zkrs_testkit::{ClientAuth, ServerOptions, TestingServer, TlsCertificates};

/// The session timeout the election and lock tests ask for: short, so a killed holder's
/// session expires quickly (the server allows 400 ms to 4 s with the test kit's 200 ms tick).
const SESSION_MS: u64 = 2000;

fn server() -> &'static TestingServer {
    static SERVER: OnceLock<TestingServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let options = ServerOptions::new().max_session_timeout_ms(4000);
        TestingServer::start_with(options).expect("ZooKeeper (scripts/install-zookeeper.sh)")
    })
}

/// `zkctl --server <test server> ARGS...`, not started yet.
fn zkctl(args: &[&str]) -> Command {
    zkctl_on(&server().connect_string(), args)
}

/// Runs `zkctl ARGS` to completion (20 s at most).
fn run(args: &[&str]) -> Output {
    run_on(&server().connect_string(), args)
}

/// Runs and expects success; returns stdout.
fn ok(args: &[&str]) -> String {
    ok_on(&server().connect_string(), args)
}

/// A scratch folder for files the commands write, deleted when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("zkctl-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

fn lines(path: &PathBuf) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Whether a process runs: it exists and is not a zombie (an orphaned command that was
/// killed stays a zombie until init reaps it).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name: `pid (comm) S ...`.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

#[test]
fn data_commands() {
    assert_eq!(ok(&["create", "/data", "hello"]), "/data\n");
    assert_eq!(ok(&["get", "/data"]), "hello");
    assert_eq!(
        ok(&["create", "/data/a/b/job-", "x", "--parents", "--sequential"]),
        "/data/a/b/job-0000000000\n"
    );
    ok(&["create", "/data/c"]);
    assert_eq!(ok(&["ls", "/data"]), "a\nc\n");
    assert_eq!(
        ok(&["tree", "/data"]),
        "/data\n├── a\n│   └── b\n│       └── job-0000000000\n└── c\n"
    );

    // Conditional set: version 0 matches once.
    ok(&["set", "/data", "world", "--version", "0"]);
    let stale = run(&["set", "/data", "again", "--version", "0"]);
    assert_eq!(exit_code(stale.status), 1);
    assert_eq!(stderr(&stale), "zkctl: BadVersion: /data\n");
    assert_eq!(ok(&["get", "/data"]), "world");
    let stat = ok(&["stat", "/data"]);
    assert!(stat.contains("dataVersion = 1\n"), "{stat}");
    assert!(stat.contains("dataLength = 5\n"), "{stat}");
    assert!(stat.contains("numChildren = 2\n"), "{stat}");
    assert!(stat.contains("ephemeralOwner = 0x0\n"), "{stat}");

    // Other modes.
    // (The server hides the TTL and container markers from clients' Stats: 0x0 for both.)
    assert_eq!(
        ok(&["create", "/data/ttl", "--ttl", "60000"]),
        "/data/ttl\n"
    );
    assert_eq!(ok(&["create", "/data/box", "--container"]), "/data/box\n");

    // Delete: plain (refused while children exist), then recursive.
    ok(&["delete", "/data/c"]);
    let not_empty = run(&["delete", "/data"]);
    assert_eq!(stderr(&not_empty), "zkctl: NotEmpty: /data\n");
    ok(&["delete", "/data", "--recursive"]);
    let gone = run(&["get", "/data"]);
    assert_eq!(exit_code(gone.status), 1);
    assert_eq!(stderr(&gone), "zkctl: NoNode: /data\n");
}

#[test]
fn ephemeral_create_holds_the_node_until_interrupted() {
    let mut child = zkctl(&["create", "/held", "x", "--ephemeral"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap(); // printed once the node exists
    assert_eq!(line, "/held\n");
    let stat = ok(&["stat", "/held"]);
    assert!(!stat.contains("ephemeralOwner = 0x0\n"), "{stat}");
    signal(pid, "TERM");
    let done = finish(child, Duration::from_secs(10));
    assert_eq!(exit_code(done.status), 143);
    // The session was closed on the way out: the node is gone at once.
    assert_eq!(stderr(&run(&["get", "/held"])), "zkctl: NoNode: /held\n");
}

#[test]
fn watch_prints_one_line_per_event() {
    ok(&["create", "/watched", "0"]);
    let mut child = zkctl(&["watch", "/watched", "--recursive", "--count", "4"])
        .spawn()
        .unwrap();
    // Wait for the line that says the watch is in place, then make the changes.
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("watch started");
    assert!(first.contains("watching /watched"), "{first}");
    ok(&["create", "/watched/kid", "1"]);
    ok(&["set", "/watched/kid", "2"]);
    ok(&["delete", "/watched/kid"]);
    ok(&["set", "/watched", "3"]);
    let done = finish(child, Duration::from_secs(10));
    assert!(done.status.success());
    assert_eq!(
        String::from_utf8(done.stdout).unwrap(),
        "NodeCreated /watched/kid\nNodeDataChanged /watched/kid\nNodeDeleted /watched/kid\nNodeDataChanged /watched\n"
    );
    ok(&["delete", "/watched"]);
}

#[test]
fn lock_runs_commands_one_at_a_time() {
    let dir = scratch("lock");
    let log = dir.join("log");
    let script = format!(
        "echo start $$ >> {0}; sleep 0.2; echo end $$ >> {0}",
        log.display()
    );
    let started = Instant::now();
    let children: Vec<Child> = (0..5)
        .map(|_| {
            zkctl(&["lock", "/locks/mutex", "--", "sh", "-c", &script])
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = finish(child, Duration::from_secs(30));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    // Every start is followed by the end of the same shell: no overlap.
    let log = lines(&log);
    assert_eq!(log.len(), 10, "{log:?}");
    for pair in log.chunks(2) {
        let start = pair[0].strip_prefix("start ").expect("a start line");
        assert_eq!(pair[1], format!("end {start}"), "overlap in {log:?}");
    }
    eprintln!("5 lock holders in turn: {:?}", started.elapsed());
    // Nothing is left in the lock directory.
    assert_eq!(ok(&["ls", "/locks/mutex"]), "");
}

#[test]
fn lock_exit_codes() {
    assert_eq!(
        exit_code(run(&["lock", "/locks/codes", "--", "sh", "-c", "exit 7"]).status),
        7
    );
    let missing = run(&["lock", "/locks/codes", "--", "/no/such/program"]);
    assert_eq!(exit_code(missing.status), 127);
    assert!(stderr(&missing).contains("cannot run '/no/such/program'"));
    assert_eq!(ok(&["ls", "/locks/codes"]), "");
}

#[test]
fn verbose_prints_the_session_and_recipe_events() {
    // Without -v: nothing but the command's own output.
    let quiet = run(&["lock", "/locks/verbose", "--", "true"]);
    assert!(quiet.status.success(), "{}", stderr(&quiet));
    assert_eq!(stderr(&quiet), "");

    let out = run(&["-v", "lock", "/locks/verbose", "--", "true"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let session = err
        .lines()
        .find(|l| l.contains("INFO") && l.contains("session established"))
        .unwrap_or_else(|| panic!("no session line in {err}"));
    let host = server().connect_string();
    assert!(session.contains(&format!("host={host}")), "{session}");
    assert!(session.contains("session=0x"), "{session}");
    assert!(session.contains("timeout_ms="), "{session}");
    assert!(err.contains("client closed"), "{err}");
    // Debug events (the lock's decision) only with -vv.
    assert!(!err.contains("lock acquired"), "{err}");
    let out = run(&["-vv", "lock", "/locks/verbose", "--", "true"]);
    let err = stderr(&out);
    let acquired = err
        .lines()
        .find(|l| l.contains("DEBUG") && l.contains("lock acquired"))
        .unwrap_or_else(|| panic!("no lock line in {err}"));
    assert!(acquired.contains("dir=/locks/verbose"), "{acquired}");
    assert!(err.contains("connecting"), "{err}");
}

#[test]
fn tls_flags_connect_to_a_secure_port() {
    let certs = TlsCertificates::generate().expect("openssl");
    let zk = TestingServer::start_with(ServerOptions::new().tls(&certs, ClientAuth::Need))
        .expect("ZooKeeper with TLS");
    let secure = zk.secure_connect_string().unwrap();
    let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let (ca, cert, key) = (
        path(certs.ca_pem()),
        path(certs.client_cert_pem()),
        path(certs.client_key_pem()),
    );
    // A connection that succeeds returns at once: a long timeout only absorbs a slow TLS
    // handshake on a busy machine (a CI run beside two fault suites took over 2 s). One that
    // is refused retries until the timeout, then says why the last attempt failed.
    let tls_within = |timeout_ms: &str, extra: &[&str]| {
        let mut c = zkctl_on(&secure, &["--connect-timeout", timeout_ms]);
        c.args(extra);
        finish(c.spawn().expect("spawn zkctl"), Duration::from_secs(40))
    };
    let tls = |extra: &[&str]| tls_within("20000", extra);
    let refused_tls = |extra: &[&str]| tls_within("4000", extra);
    let made = tls(&[
        "--tls-ca",
        &ca,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "create",
        "/tls",
        "secret",
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let read = tls(&[
        "--tls-ca",
        &ca,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "get",
        "/tls",
    ]);
    assert!(read.status.success(), "{}", stderr(&read));
    assert_eq!(read.stdout, b"secret");
    // The server requires a client certificate: one line naming the refusal, exit 1.
    let refused = refused_tls(&["--tls-ca", &ca, "get", "/tls"]);
    assert_eq!(exit_code(refused.status), 1);
    let err = stderr(&refused);
    assert!(
        err.starts_with("zkctl: ") && err.lines().count() == 1,
        "{err}"
    );
    assert!(
        err.contains("TLS with 127.0.0.1 failed: received fatal alert"),
        "{err}"
    );
    // Another CA: the server's certificate is refused, and the message says so.
    let other = refused_tls(&[
        "--tls-ca",
        &path(certs.other_ca_pem()),
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "get",
        "/tls",
    ]);
    assert_eq!(exit_code(other.status), 1);
    assert!(
        stderr(&other).contains("UnknownIssuer"),
        "{}",
        stderr(&other)
    );
    // A key without its certificate is a usage error.
    let usage = tls(&["--tls-key", &key, "get", "/tls"]);
    assert_eq!(exit_code(usage.status), 2);
}

#[test]
fn sasl_kerberos_flags_authenticate_with_a_keytab() {
    let realm = zkrs_testkit::KerberosRealm::start().expect("a KDC");
    let service = realm
        .add_principal_with_keytab("zookeeper/localhost")
        .unwrap();
    let ops = realm.add_principal_with_keytab("ops").unwrap();
    let other = realm.add_principal_with_keytab("other").unwrap();
    let zk = TestingServer::start_with(ServerOptions::new().kerberos(
        &realm,
        &service,
        "zookeeper/localhost",
    ))
    .expect("ZooKeeper with Kerberos");
    let server = format!("localhost:{}", zk.address().port());
    let run = |keytab: &std::path::Path, extra: &[&str]| {
        // Long: an authentication refused ends the command at once anyway.
        let mut c = zkctl_on(&server, &["--connect-timeout", "20000"]);
        c.env("KRB5_CONFIG", realm.krb5_conf())
            .args(["--sasl-kerberos", "ops@ZKR.TEST", "--keytab"])
            .arg(keytab)
            .args(extra);
        finish(c.spawn().expect("spawn zkctl"), Duration::from_secs(40))
    };
    let made = run(&ops, &["create", "/krb", "x"]);
    assert!(made.status.success(), "{}", stderr(&made));
    let read = run(&ops, &["get", "/krb"]);
    assert!(read.status.success(), "{}", stderr(&read));
    // Another principal's keytab: one line naming the cause, exit 1.
    let refused = run(&other, &["get", "/krb"]);
    assert_eq!(exit_code(refused.status), 1);
    let err = stderr(&refused);
    assert!(
        err.starts_with("zkctl: AuthFailed") && err.lines().count() == 1,
        "{err}"
    );
    assert!(err.contains("ops@ZKR.TEST"), "{err}");
}

#[test]
fn sasl_digest_flags_authenticate_with_a_password_file() {
    let dir = zkrs_testkit::TempDir::new().unwrap();
    let good = dir.path().join("good");
    std::fs::write(&good, "ops-secret\n").unwrap();
    let bad = dir.path().join("bad");
    std::fs::write(&bad, "guess\n").unwrap();
    let zk = TestingServer::start_with(ServerOptions::new().sasl_digest_user("ops", "ops-secret"))
        .expect("ZooKeeper with SASL");
    let run = |extra: &[&str]| {
        // Long, so that "at once" below is far from waiting for it.
        let mut c = zkctl_on(&zk.connect_string(), &["--connect-timeout", "20000"]);
        c.args(extra);
        finish(c.spawn().expect("spawn zkctl"), Duration::from_secs(40))
    };
    let good = good.to_str().unwrap();
    let made = run(&[
        "--sasl-digest",
        "ops",
        "--sasl-password-file",
        good,
        "create",
        "/sasl",
        "x",
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    // A wrong password: one line naming the refusal, exit 1, at once.
    let started = Instant::now();
    let refused = run(&[
        "--sasl-digest",
        "ops",
        "--sasl-password-file",
        bad.to_str().unwrap(),
        "get",
        "/sasl",
    ]);
    assert_eq!(exit_code(refused.status), 1);
    let err = stderr(&refused);
    assert!(
        err.starts_with("zkctl: AuthFailed") && err.lines().count() == 1,
        "{err}"
    );
    assert!(err.contains("DIGEST-MD5 authentication failed"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // The password only from a file.
    assert_eq!(
        exit_code(run(&["--sasl-digest", "ops", "ls", "/"]).status),
        2
    );
    let missing = run(&[
        "--sasl-digest",
        "ops",
        "--sasl-password-file",
        "/no/file",
        "ls",
        "/",
    ]);
    assert_eq!(exit_code(missing.status), 2);
    assert!(stderr(&missing).contains("cannot read --sasl-password-file /no/file"));
}

#[test]
fn sigterm_stops_the_command_and_releases_the_lock() {
    let dir = scratch("sigterm");
    let pid_file = dir.join("pid");
    let script = format!("echo $$ > {}; exec sleep 60", pid_file.display());
    let holder = zkctl(&["lock", "/locks/term", "--", "sh", "-c", &script])
        .spawn()
        .unwrap();
    wait_until("the command to start", Duration::from_secs(10), || {
        lines(&pid_file).len() == 1
    });
    let cmd_pid: u32 = lines(&pid_file)[0].parse().unwrap();
    assert_eq!(ok(&["ls", "/locks/term"]).lines().count(), 1);

    // A waiter interrupted while in line leaves it at once: its node is deleted.
    let waiter = zkctl(&["lock", "/locks/term", "--", "true"])
        .spawn()
        .unwrap();
    wait_until("the waiter in line", Duration::from_secs(10), || {
        ok(&["ls", "/locks/term"]).lines().count() == 2
    });
    signal(waiter.id(), "INT");
    let out = finish(waiter, Duration::from_secs(10));
    assert_eq!(exit_code(out.status), 130, "{}", stderr(&out));
    assert_eq!(ok(&["ls", "/locks/term"]).lines().count(), 1);

    // A second holder cannot get it in time: exit 124 (as timeout(1); not 3, which CMD
    // could return).
    let late = run(&["lock", "/locks/term", "--timeout", "300", "--", "true"]);
    assert_eq!(exit_code(late.status), 124, "{}", stderr(&late));
    assert!(
        stderr(&late).contains("timed out after 300 ms"),
        "{}",
        stderr(&late)
    );

    let zkctl_pid = holder.id();
    signal(zkctl_pid, "TERM");
    let out = finish(holder, Duration::from_secs(10));
    assert_eq!(exit_code(out.status), 143, "{}", stderr(&out));
    // Right after zkctl exits: the command is gone and so is the lock node.
    assert!(!alive(cmd_pid), "the command still runs");
    assert_eq!(ok(&["ls", "/locks/term"]), "");
}

#[test]
fn elect_fails_over_when_the_leader_is_killed() {
    let dir = scratch("elect");
    let log = dir.join("log");
    let script = format!(
        "echo \"$ZKCTL_ELECTION_ID $$\" >> {}; exec sleep 60",
        log.display()
    );
    let session = SESSION_MS.to_string();
    let mut children: Vec<(String, Option<Child>)> = (0..3)
        .map(|i| {
            let id = format!("node-{i}");
            let child = zkctl(&[
                "--session-timeout",
                &session,
                "elect",
                "/election",
                "--id",
                &id,
                "--grace",
                "500",
                "--",
                "sh",
                "-c",
                &script,
            ])
            .spawn()
            .unwrap();
            (id, Some(child))
        })
        .collect();
    wait_until("a leader", Duration::from_secs(15), || {
        !lines(&log).is_empty()
    });
    let first = lines(&log)[0].clone();
    let (leader_id, leader_cmd) = first.split_once(' ').unwrap();
    let leader_cmd: u32 = leader_cmd.parse().unwrap();
    // Everyone is in line before the leader dies.
    wait_until("three participants", Duration::from_secs(10), || {
        ok(&["ls", "/election"]).lines().count() == 3
    });

    // SIGKILL the leader's zkctl: its watchdog kills the command at once, and the session
    // (with its node) expires after the session timeout; then the next one leads.
    let killed_at = Instant::now();
    let slot = children.iter_mut().find(|(id, _)| id == leader_id).unwrap();
    let mut leader = slot.1.take().unwrap();
    leader.kill().unwrap();
    leader.wait().unwrap();
    wait_until("the old command to die", Duration::from_secs(2), || {
        !alive(leader_cmd)
    });
    wait_until(
        "a new leader",
        Duration::from_millis(SESSION_MS + 8000),
        || lines(&log).len() >= 2,
    );
    let took = killed_at.elapsed();
    let log_now = lines(&log);
    let next_id = log_now[1].split_once(' ').unwrap().0.to_string();
    assert_ne!(next_id, leader_id);
    let next_cmd: u32 = log_now[1].split_once(' ').unwrap().1.parse().unwrap();
    assert_eq!(log_now.len(), 2, "one leader at a time: {log_now:?}");
    eprintln!("failover after SIGKILL of the leader: {took:?} (session timeout {SESSION_MS} ms)");
    assert!(
        took >= Duration::from_millis(SESSION_MS / 2),
        "took over before the session could expire: {took:?}"
    );

    // SIGTERM the rest, the one in line first (else it could lead, briefly, once the leader
    // leaves), then the leader: it stops its command and leaves at once.
    children.sort_by_key(|(id, _)| *id == next_id);
    for (_, child) in children {
        if let Some(c) = child {
            signal(c.id(), "TERM");
            let out = finish(c, Duration::from_secs(10));
            assert_eq!(exit_code(out.status), 143, "{}", stderr(&out));
        }
    }
    // The killed leader's node may outlive it until its session expires; the others are gone.
    wait_until(
        "an empty election",
        Duration::from_millis(SESSION_MS + 5000),
        || ok(&["ls", "/election"]).is_empty(),
    );
    assert!(!alive(next_cmd), "the new leader's command still runs");
    assert_eq!(lines(&log).len(), 2, "no one else ran the command");
}

#[test]
fn elect_once_exits_with_the_commands_code() {
    let out = run(&[
        "elect",
        "/election-once",
        "--once",
        "--",
        "sh",
        "-c",
        "exit 5",
    ]);
    assert_eq!(exit_code(out.status), 5, "{}", stderr(&out));
    assert_eq!(ok(&["ls", "/election-once"]), "");
}

#[test]
fn errors_are_one_line_with_an_exit_code() {
    let missing = run(&["get", "/no/such/node"]);
    assert_eq!(exit_code(missing.status), 1);
    assert_eq!(stderr(&missing), "zkctl: NoNode: /no/such/node\n");

    let bad = run(&["ls", "relative/path"]);
    assert_eq!(exit_code(bad.status), 1);
    assert_eq!(
        stderr(&bad),
        "zkctl: BadArguments: path must start with '/': relative/path\n"
    );

    // Around a command, zkctl's own failures exit 125 (CMD's codes pass through).
    for command in ["lock", "elect"] {
        let bad = run(&[command, "relative", "--", "true"]);
        assert_eq!(exit_code(bad.status), 125);
        assert_eq!(
            stderr(&bad),
            "zkctl: BadArguments: path must start with '/': relative\n"
        );
    }

    let unknown = run(&["ls", "/", "--frobnicate"]);
    assert_eq!(exit_code(unknown.status), 2);
    assert_eq!(
        stderr(&unknown),
        "zkctl: unexpected argument '--frobnicate' found (see zkctl --help)\n"
    );
    assert_eq!(exit_code(run(&["frobnicate"]).status), 2);
    assert_eq!(exit_code(run(&["lock", "/l"]).status), 125);

    // No server: the client's message names the hosts.
    let port = zkrs_testkit::free_port().unwrap().to_string();
    let out = finish(
        Command::new(env!("CARGO_BIN_EXE_zkctl"))
            .args([
                "--server",
                &format!("127.0.0.1:{port}"),
                "--connect-timeout",
                "500",
            ])
            .args(["ls", "/"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        Duration::from_secs(10),
    );
    assert_eq!(exit_code(out.status), 1);
    let msg = stderr(&out);
    assert_eq!(msg.lines().count(), 1, "{msg}");
    assert!(
        msg.contains(&format!(
            "no ZooKeeper server reachable at 127.0.0.1:{port}"
        )),
        "{msg}"
    );

    let help = run(&["--help"]);
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage: zkctl"));
    assert_eq!(
        ok(&["--version"]),
        format!("zkctl {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn bench_prints_figures_and_cleans_up() {
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
    has(&get, "ops_per_sec", "ops/s");
    has(&get, "p50_us", "us");
    has(&get, "p99_us", "us");
    // The library's own figures for the run: every getData counted (warm-up included).
    assert!(value(&get, "metrics_getData_requests") >= 400.0, "{get:?}");
    assert_eq!(value(&get, "metrics_getData_errors"), 0.0);
    has(&get, "metrics_getData_p99", "us_at_most");
    assert!(value(&get, "metrics_bytes_sent") > 0.0);
    // The client's own cost needs the test kit's measures: zkctl-bench's figures
    // (zkctl-bench/tests/bench_cli.rs), not the shipped binary's.
    for name in ["allocs_per_op", "cpu_ns_per_op"] {
        assert!(get.iter().all(|(n, _, _)| n != name), "{name} in {get:?}");
    }
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
    has(&current, "ops_per_sec", "ops/s");
    let create = figures(&ok(&[
        "bench",
        "create",
        "--clients",
        "2",
        "--in-flight",
        "2",
        "--ops",
        "200",
    ]));
    has(&create, "delete_ops_per_sec", "ops/s");
    let lock = figures(&ok(&["bench", "lock", "--ops", "20", "--rounds", "5"]));
    has(&lock, "cycles_per_sec", "cycles/s");
    has(&lock, "handoff_p50_us", "us");
    has(&lock, "handoff_p99_us", "us");
    has(&lock, "get_after_idle_p50_us", "us");
    assert!(value(&lock, "recipe_mutex_acquired") >= 25.0, "{lock:?}");
    has(&lock, "recipe_mutex_wait_p99", "us_at_most");
    has(&lock, "recipe_mutex_hold_mean", "us");
    assert!(value(&lock, "handoff_in_hot_gets") > 0.0);
    let latch = figures(&ok(&["bench", "latch", "--rounds", "5"]));
    has(&latch, "handoff_p50_us", "us");
    has(&latch, "handoff_p99_us", "us");
    assert!(value(&latch, "recipe_leadership_terms") >= 5.0, "{latch:?}");
    let root = ok(&["ls", "/"]);
    assert!(!root.contains("zkctl-bench"), "left behind: {root}");
}

/// `bench lock --contenders 3`: the contended figures are there and hang together (every
/// measured hand-off counted, a rate that the window and the latencies allow), and the
/// memory per waiter of a short line against 2 sessions.
#[test]
fn bench_lock_reports_hand_offs_under_contention() {
    // Under a chroot of its own, so that what it leaves (nothing) is told apart from the
    // other tests' benches.
    ok(&["create", "/bench-contention"]);
    let chroot = format!("{}/bench-contention", server().connect_string());
    let lock = figures(&ok_on(
        &chroot,
        &[
            "bench",
            "lock",
            "--ops",
            "10",
            "--rounds",
            "20",
            "--contenders",
            "3",
            "--in-line",
            "5",
        ],
    ));
    assert_eq!(value(&lock, "contenders"), 3.0);
    assert_eq!(value(&lock, "contended_handoffs"), 20.0);
    has(&lock, "contended_handoffs_per_sec", "handoffs/s");
    has(&lock, "contended_handoff_p50_us", "us");
    has(&lock, "contended_handoff_p99_us", "us");
    let (p50, p99) = (
        value(&lock, "contended_handoff_p50_us"),
        value(&lock, "contended_handoff_p99_us"),
    );
    assert!(0.0 < p50 && p50 <= p99, "{lock:?}");
    // Hand-offs follow one another: the rate cannot beat one hand-off per median latency
    // by more than the faster half allows (a generous bound: twice that).
    let rate = value(&lock, "contended_handoffs_per_sec");
    assert!(
        rate > 0.0 && rate <= 2.0 * 1e6 / p50,
        "{rate} handoffs/s, p50 {p50} us"
    );
    for n in [2, 5] {
        assert_eq!(value(&lock, &format!("in_line_{n}_handoffs")), 20.0);
        has(&lock, &format!("in_line_{n}_handoff_p50_us"), "us");
        // RSS moves by whole pages as the allocator keeps and returns them: over a few
        // waiters its growth per waiter can be below zero (CI saw -8192), so only its
        // presence is checked; the heap figures above are the exact ones.
        let rss = format!("in_line_{n}_rss_per_waiter_bytes");
        assert!(
            lock.iter()
                .any(|(name, _, unit)| *name == rss && unit == "bytes"),
            "no {rss} in {lock:?}"
        );
    }
    has(&lock, "in_line_5_handoff_p50_ratio", "x_2_sessions");
    // The warm-up and the first holder count as acquisitions too.
    assert!(
        value(&lock, "recipe_mutex_acquired") >= 3.0 * 21.0,
        "{lock:?}"
    );
    let left = ok(&["ls", "/bench-contention"]);
    assert_eq!(left.trim(), "", "left behind: {left}");
}

/// `bench --curator` needs Curator's side, which only zkctl-bench carries (its test is in
/// zkctl-bench/tests/bench_cli.rs): the shipped binary says so, as a usage error.
#[test]
fn bench_curator_names_zkctl_bench() {
    let out = run(&["bench", "latch", "--rounds", "5", "--curator"]);
    assert_eq!(exit_code(out.status), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--curator needs the test kit")
            && stderr(&out).contains("zkctl-bench"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn demo_tells_the_story() {
    let out = ok(&["demo"]);
    assert!(out.contains("10 participants joined"), "{out}");
    assert!(out.contains("  leader: alice\n"), "{out}");
    assert!(
        out.contains("alice leaves (closes its latch): bob is told it leads"),
        "{out}"
    );
    assert!(out.contains("carol leads"), "{out}");
    assert!(out.contains("is deleted"), "{out}");
}

#[test]
fn a_lost_lock_stops_the_command() {
    // Its own server, since it is paused: the client hears nothing, suspends the connection,
    // and under Curator's standard policy the lock counts as lost from then on.
    // (`lock_hands_the_fencing_token_to_the_command_and_rides_out_a_short_pause` has the
    // default policy; recipes/tests/session_deadline.rs its timing against the server's.)
    let own = TestingServer::start_with(ServerOptions::new()).expect("ZooKeeper");
    let dir = scratch("lost");
    let pid_file = dir.join("pid");
    let script = format!("echo $$ > {}; exec sleep 60", pid_file.display());
    let session = SESSION_MS.to_string();
    let holder = Command::new(env!("CARGO_BIN_EXE_zkctl"))
        .args([
            "--server",
            &own.connect_string(),
            "--session-timeout",
            &session,
        ])
        .args([
            "lock",
            "/locks/lost",
            "--policy",
            "standard",
            "--grace",
            "500",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the command to start", Duration::from_secs(10), || {
        lines(&pid_file).len() == 1
    });
    let cmd_pid: u32 = lines(&pid_file)[0].parse().unwrap();
    let paused = Instant::now();
    own.pause().unwrap();
    // Stopped before the session could have expired on the server (nobody else could have
    // taken the lock yet).
    wait_until(
        "the command to be stopped",
        Duration::from_millis(SESSION_MS),
        || !alive(cmd_pid),
    );
    let took = paused.elapsed();
    let out = finish(holder, Duration::from_secs(10));
    own.resume().unwrap();
    assert_eq!(exit_code(out.status), 123, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("lost the lock at /locks/lost"),
        "{}",
        stderr(&out)
    );
    eprintln!("lock lost: command stopped {took:?} after the server froze");
}

#[test]
fn lock_hands_the_fencing_token_to_the_command_and_rides_out_a_short_pause() {
    // Its own server (paused), with a tick that allows a 7.5 s session: the client is
    // suspended 5 s after its last reply, and the default policy's deadline is 6.75 s after
    // its last answered request, so a pause that ends at the suspension leaves the session
    // 1.75 s to come back before the lock would count as lost.
    let own = TestingServer::start_with(ServerOptions::new().tick_time_ms(400)).expect("ZooKeeper");
    let dir = scratch("deadline");
    let pid_file = dir.join("pid");
    let script = format!(
        "echo $$ $ZKRS_FENCING_TOKEN > {}; exec sleep 60",
        pid_file.display()
    );
    let mut holder = Command::new(env!("CARGO_BIN_EXE_zkctl"))
        .args(["-v", "--server", &own.connect_string()])
        .args(["--session-timeout", "7500", "lock", "/locks/deadline"])
        .args(["--", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = LiveLines::of_stderr(&mut holder);
    wait_until("the command to start", Duration::from_secs(10), || {
        lines(&pid_file).len() == 1
    });
    let started = lines(&pid_file)[0].clone();
    let (pid, token) = started.split_once(' ').expect("pid and token");
    let cmd_pid: u32 = pid.parse().unwrap();
    let token: i64 = token.parse().expect("ZKRS_FENCING_TOKEN is a number");
    {
        let zk = Zk::connect_to(&own.connect_string());
        let node = zk
            .rt
            .block_on(zk.client.get_children("/locks/deadline"))
            .unwrap()
            .iter()
            .next()
            .map(|n| format!("/locks/deadline/{n}"))
            .expect("the lock node");
        let (_, stat) = zk.rt.block_on(zk.client.get_data(&node)).unwrap();
        assert_eq!(token, stat.czxid, "the token is the lock node's czxid");
    }

    own.pause().unwrap();
    log.wait_for_containing("connection lost; reconnecting", Duration::from_secs(20));
    own.resume().unwrap();
    log.wait_for_containing("state=Reconnected", Duration::from_secs(20));
    let said = log.now().join("\n");
    assert!(!said.contains("lost the lock"), "{said}");
    assert!(alive(cmd_pid), "the command was stopped: {said}");

    signal(holder.id(), "TERM");
    let out = finish(holder, Duration::from_secs(10));
    assert_eq!(exit_code(out.status), 143, "{}", log.now().join("\n"));
    assert!(!alive(cmd_pid), "the command still runs");
}

/// A zkr client for the tests that change the tree while zkctl watches it, on a runtime of
/// its own (one worker thread, so the session is kept alive between calls).
struct Zk {
    rt: tokio::runtime::Runtime,
    client: zkrs_client::Client,
}

impl Zk {
    fn connect() -> Zk {
        Zk::connect_to(&server().connect_string())
    }

    fn connect_to(connect_string: &str) -> Zk {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let client = rt
            .block_on(zkrs_client::Client::connect(connect_string))
            .expect("connect");
        Zk { rt, client }
    }

    /// Waits until the session is usable again (after a server restart).
    fn wait_connected(&self) {
        wait_until(
            "the test client to reconnect",
            Duration::from_secs(20),
            || self.client.state().is_connected(),
        );
    }

    fn create(&self, path: &str, data: &[u8]) {
        self.rt
            .block_on(
                self.client
                    .create(path, data, zkrs_client::CreateMode::Persistent),
            )
            .unwrap_or_else(|e| panic!("create {path}: {e}"));
    }

    fn set(&self, path: &str, data: &[u8]) {
        self.rt
            .block_on(self.client.set_data(path, data, None))
            .unwrap_or_else(|e| panic!("set {path}: {e}"));
    }

    fn delete(&self, path: &str) {
        self.rt
            .block_on(self.client.delete(path, None))
            .unwrap_or_else(|e| panic!("delete {path}: {e}"));
    }

    /// A fresh read of `path`'s subtree as `zkctl cache` prints its view: `node PATH VERSION
    /// DATA` lines in byte order of the paths, `depth` levels below `path`, with or without
    /// `path` itself.
    fn view(&self, path: &str, depth: usize, with_root: bool) -> Vec<String> {
        let mut nodes = Vec::new();
        let mut todo = vec![(path.to_string(), 0)];
        while let Some((p, level)) = todo.pop() {
            let (data, stat) = self.rt.block_on(self.client.get_data(&p)).unwrap();
            if with_root || p != path {
                nodes.push((p.clone(), expected_node_line(&p, stat.version, &data)));
            }
            if level < depth {
                let children = self.rt.block_on(self.client.get_children(&p)).unwrap();
                for name in children.iter() {
                    todo.push((format!("{p}/{name}"), level + 1));
                }
            }
        }
        nodes.sort();
        nodes.into_iter().map(|(_, line)| line).collect()
    }
}

/// `node PATH VERSION DATA`, written independently of zkctl's own code: text when UTF-8
/// without line breaks, else `0x` + lower-case hex; nothing after the version when empty.
fn expected_node_line(path: &str, version: i32, data: &[u8]) -> String {
    let shown = match std::str::from_utf8(data) {
        Ok(text) if !text.contains('\n') && !text.contains('\r') => text.to_string(),
        _ => std::iter::once("0x".to_string())
            .chain(data.iter().map(|b| format!("{b:02x}")))
            .collect(),
    };
    if data.is_empty() {
        format!("node {path} {version}")
    } else {
        format!("node {path} {version} {shown}")
    }
}

/// The lines a child prints on stdout, read live on a thread.
struct LiveLines {
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    reader: thread::JoinHandle<()>,
}

impl LiveLines {
    fn of(child: &mut Child) -> LiveLines {
        LiveLines::reading(child.stdout.take().unwrap())
    }

    /// The child's stderr instead.
    fn of_stderr(child: &mut Child) -> LiveLines {
        LiveLines::reading(child.stderr.take().unwrap())
    }

    fn reading(out: impl std::io::Read + Send + 'static) -> LiveLines {
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = lines.clone();
        let reader = thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        LiveLines { lines, reader }
    }

    fn now(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits until `line` was printed (10 s at most).
    fn wait_for(&self, line: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.now().iter().any(|l| l == line) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for `{line}`; printed so far: {:?}",
                self.now()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until a line containing `part` was printed.
    fn wait_for_containing(&self, part: &str, within: Duration) {
        let deadline = Instant::now() + within;
        while !self.now().iter().any(|l| l.contains(part)) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for `{part}`; printed so far: {:?}",
                self.now()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every line, once the child has closed its stdout.
    fn all(self) -> Vec<String> {
        self.reader.join().unwrap();
        std::sync::Arc::try_unwrap(self.lines)
            .unwrap()
            .into_inner()
            .unwrap()
    }
}

/// The event lines about exactly `path` (its own, not its descendants'), in order.
fn lines_about<'a>(lines: &'a [String], path: &str) -> Vec<&'a str> {
    lines
        .iter()
        .filter(|l| !l.starts_with("node ") && l.split(' ').nth(1) == Some(path))
        .map(String::as_str)
        .collect()
}

/// Splits `zkctl cache` output into event lines and the final `node` lines (which come last).
fn events_and_view(lines: &[String]) -> (Vec<String>, Vec<String>) {
    let first_node = lines
        .iter()
        .position(|l| l.starts_with("node "))
        .unwrap_or(lines.len());
    assert!(
        lines[first_node..].iter().all(|l| l.starts_with("node ")),
        "an event after the view: {lines:?}"
    );
    (lines[..first_node].to_vec(), lines[first_node..].to_vec())
}

#[test]
fn cache_prints_events_then_the_view_of_the_subtree() {
    let zk = Zk::connect();
    zk.create("/cache", b"root");
    zk.create("/cache/a", b"one");
    zk.create("/cache/a/deep", &[0x00, 0xff, 0x10]);
    zk.create("/cache/empty", b"");
    zk.create("/cache/gone", b"bye");
    zk.create("/cache/multi", b"two\nlines");

    let mut child = zkctl(&["cache", "/cache", "--for", "60000"])
        .spawn()
        .unwrap();
    let out = LiveLines::of(&mut child);
    out.wait_for("initialized");
    // The initial build: every node once as `added`, then `initialized`.
    let mut built = out.now();
    assert_eq!(built.pop().as_deref(), Some("initialized"));
    built.sort();
    assert_eq!(
        built,
        [
            "added /cache 0",
            "added /cache/a 0",
            "added /cache/a/deep 0",
            "added /cache/empty 0",
            "added /cache/gone 0",
            "added /cache/multi 0",
        ]
    );

    // Changes to different nodes at once: each is told.
    zk.create("/cache/b", b"new");
    zk.set("/cache/a", b"uno");
    zk.delete("/cache/gone");
    zk.set("/cache", b"root, again");
    zk.set("/cache/empty", b"");
    for line in [
        "added /cache/b 0",
        "updated /cache/a 1",
        "removed /cache/gone",
        "updated /cache 1",
        "updated /cache/empty 1",
    ] {
        out.wait_for(line);
    }
    // One node's life, each step seen before the next: created, written, deleted, created
    // again (a new node at version 0 again).
    zk.create("/cache/b/c", &[0xde, 0xad]);
    out.wait_for("added /cache/b/c 0");
    zk.set("/cache/b/c", &[0xbe, 0xef]);
    out.wait_for("updated /cache/b/c 1");
    zk.delete("/cache/b/c");
    out.wait_for("removed /cache/b/c");
    zk.create("/cache/b/c", b"");
    zk.set("/cache/a", b"eins");
    out.wait_for("updated /cache/a 2");
    out.wait_for("added /cache/b/c 0");

    signal(child.id(), "TERM");
    let done = finish(child, Duration::from_secs(10));
    assert_eq!(exit_code(done.status), 0, "{}", stderr(&done));
    let (events, view) = events_and_view(&out.all());
    assert_eq!(
        lines_about(&events, "/cache/b/c"),
        [
            "added /cache/b/c 0",
            "updated /cache/b/c 1",
            "removed /cache/b/c",
            "added /cache/b/c 0"
        ]
    );
    assert_eq!(
        lines_about(&events, "/cache/a"),
        [
            "added /cache/a 0",
            "updated /cache/a 1",
            "updated /cache/a 2"
        ]
    );
    assert_eq!(
        lines_about(&events, "/cache/gone"),
        ["added /cache/gone 0", "removed /cache/gone"]
    );
    assert_eq!(
        lines_about(&events, "/cache"),
        ["added /cache 0", "updated /cache 1"]
    );
    assert_eq!(lines_about(&events, "/cache/b"), ["added /cache/b 0"]);
    assert_eq!(
        lines_about(&events, "/cache/empty"),
        ["added /cache/empty 0", "updated /cache/empty 1"]
    );
    // The view equals a fresh read, in byte order of the paths.
    assert_eq!(view, zk.view("/cache", usize::MAX, true));
    assert_eq!(
        view,
        [
            "node /cache 1 root, again",
            "node /cache/a 2 eins",
            "node /cache/a/deep 0 0x00ff10",
            "node /cache/b 0 new",
            "node /cache/b/c 0",
            "node /cache/empty 1",
            "node /cache/multi 0 0x74776f0a6c696e6573",
        ]
    );
}

#[test]
fn cache_children_leaves_the_parent_out() {
    let zk = Zk::connect();
    zk.create("/kids", b"parent");
    zk.create("/kids/k1", b"one");
    zk.create("/kids/k2", b"");

    let mut child = zkctl(&["cache", "/kids", "--children", "--for", "60000"])
        .spawn()
        .unwrap();
    let out = LiveLines::of(&mut child);
    out.wait_for("initialized");
    let mut built = out.now();
    assert_eq!(built.pop().as_deref(), Some("initialized"));
    built.sort();
    assert_eq!(built, ["added /kids/k1 0", "added /kids/k2 0"]);

    zk.create("/kids/k3", b"three");
    zk.delete("/kids/k1");
    // Neither the parent nor a grandchild is in the view: no lines for these.
    zk.set("/kids", b"parent, again");
    zk.create("/kids/k3/grandchild", b"g");
    // A change after them, in server order: once it is told, the others would have been.
    zk.create("/kids/k4", b"four");
    out.wait_for("added /kids/k3 0");
    out.wait_for("removed /kids/k1");
    out.wait_for("added /kids/k4 0");

    signal(child.id(), "INT");
    let done = finish(child, Duration::from_secs(10));
    assert_eq!(exit_code(done.status), 0, "{}", stderr(&done));
    let (events, view) = events_and_view(&out.all());
    assert_eq!(
        lines_about(&events, "/kids/k1"),
        ["added /kids/k1 0", "removed /kids/k1"]
    );
    assert_eq!(lines_about(&events, "/kids/k3"), ["added /kids/k3 0"]);
    assert!(lines_about(&events, "/kids").is_empty(), "{events:?}");
    assert!(
        lines_about(&events, "/kids/k3/grandchild").is_empty(),
        "{events:?}"
    );
    assert_eq!(view, zk.view("/kids", 1, false));
    assert_eq!(
        view,
        [
            "node /kids/k2 0",
            "node /kids/k3 0 three",
            "node /kids/k4 0 four"
        ]
    );
}

#[test]
fn cache_for_ends_by_itself() {
    let zk = Zk::connect();
    zk.create("/timed", b"v");
    zk.create("/timed/a", b"");
    zk.create("/timed/a/b", b"too deep");

    let started = Instant::now();
    let out = finish(
        zkctl(&["cache", "/timed", "--for", "1000"])
            .spawn()
            .unwrap(),
        Duration::from_secs(15),
    );
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    assert!(started.elapsed() >= Duration::from_millis(1000));
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let (events, view) = events_and_view(&lines);
    assert_eq!(events.last().map(String::as_str), Some("initialized"));
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(
        view,
        [
            "node /timed 0 v",
            "node /timed/a 0",
            "node /timed/a/b 0 too deep"
        ]
    );

    // --depth 1: a TreeCache that stops one level below.
    let out = finish(
        zkctl(&["cache", "/timed", "--depth", "1", "--for", "500"])
            .spawn()
            .unwrap(),
        Duration::from_secs(15),
    );
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.ends_with("initialized\nnode /timed 0 v\nnode /timed/a 0\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("/timed/a/b"), "{stdout}");

    // A node that does not exist yet: an empty view, still a clean end.
    let out = finish(
        zkctl(&["cache", "/timed/none", "--for", "300"])
            .spawn()
            .unwrap(),
        Duration::from_secs(15),
    );
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "initialized\n");
}

#[test]
fn cache_usage_errors() {
    for (args, message) in [
        (
            &["cache"][..],
            "zkctl: the following required arguments were not provided: <PATH>; usage: zkctl cache \
             <PATH> (see zkctl --help)\n",
        ),
        (
            &["cache", "/a", "--depth", "deep"][..],
            "zkctl: invalid value 'deep' for '--depth <N>': not a number of levels (0 or more) \
             (see zkctl --help)\n",
        ),
        (
            &["cache", "/a", "--depth", "-1"][..],
            "zkctl: invalid value '-1' for '--depth <N>': not a number of levels (0 or more) \
             (see zkctl --help)\n",
        ),
        (
            &["cache", "/a", "--depth", "2", "--children"][..],
            "zkctl: the argument '--depth <N>' cannot be used with '--children' (see zkctl --help)\n",
        ),
        (
            &["cache", "/a", "--for", "soon"][..],
            "zkctl: invalid value 'soon' for '--for <MS>': not a number of milliseconds \
             (see zkctl --help)\n",
        ),
    ] {
        let out = run(args);
        assert_eq!(exit_code(out.status), 2, "{args:?}");
        assert_eq!(stderr(&out), message, "{args:?}");
        assert!(out.stdout.is_empty());
    }
    let help = ok(&["cache", "--help"]);
    assert!(
        help.contains("Usage: zkctl cache [OPTIONS] <PATH>"),
        "{help}"
    );
}

#[test]
fn cache_keeps_going_across_a_restart_and_an_expired_session() {
    // Its own server, restarted; zkctl reaches it through a proxy that can cut it off.
    let own = TestingServer::start_with(ServerOptions::new()).expect("ZooKeeper");
    let proxy = zkrs_testkit::FaultyProxy::start(own.address()).unwrap();
    let zk = Zk::connect_to(&own.connect_string());
    zk.create("/faults", b"start");
    zk.create("/faults/a", b"a");

    let session = SESSION_MS.to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_zkctl"))
        .args(["--server", &proxy.connect_string()])
        .args(["--session-timeout", &session])
        .args(["cache", "/faults", "--for", "120000"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = LiveLines::of(&mut child);
    out.wait_for("initialized");

    // A server restart: the connection drops, and comes back (on the same session if the
    // restart was quick, else on a new one).
    own.restart().unwrap();
    zk.wait_connected();
    zk.create("/faults/after-restart", b"r");
    out.wait_for("added /faults/after-restart 0");
    assert!(
        out.now().contains(&"suspended".to_string()),
        "{:?}",
        out.now()
    );
    assert!(
        out.now().contains(&"reconnected".to_string()),
        "{:?}",
        out.now()
    );

    // Cut off past the session timeout while the tree changes: the session is lost; once
    // back, the cache reads everything again and tells what changed meanwhile.
    let before = out.now().len();
    proxy.partition();
    zk.set("/faults", b"changed while away");
    zk.delete("/faults/a");
    zk.create("/faults/new", b"");
    wait_until(
        "zkctl to report the session lost",
        Duration::from_millis(SESSION_MS + 10_000),
        || out.now()[before..].iter().any(|l| l == "lost"),
    );
    proxy.heal();
    for line in [
        "reconnected",
        "updated /faults 1",
        "removed /faults/a",
        "added /faults/new 0",
    ] {
        wait_until(line, Duration::from_secs(20), || {
            out.now()[before..].iter().any(|l| l == line)
        });
    }

    signal(child.id(), "TERM");
    let done = finish(child, Duration::from_secs(10));
    assert_eq!(exit_code(done.status), 0, "{}", stderr(&done));
    let (events, view) = events_and_view(&out.all());
    eprintln!("events across a restart and an expiry: {events:?}");
    assert_eq!(view, zk.view("/faults", usize::MAX, true));
    assert_eq!(
        view,
        [
            "node /faults 1 changed while away",
            "node /faults/after-restart 0 r",
            "node /faults/new 0",
        ]
    );
}

// ----- counter, barrier, member, members -----

/// A node's data exactly as stored (`zkctl get` writes the raw bytes).
fn raw(path: &str) -> Vec<u8> {
    let out = run(&["get", path]);
    assert!(out.status.success(), "get {path}: {}", stderr(&out));
    out.stdout
}

/// The children of `path` but `ready` (a double barrier's member nodes).
fn barrier_members(path: &str) -> Vec<String> {
    ok(&["ls", path])
        .lines()
        .filter(|name| *name != "ready")
        .map(str::to_string)
        .collect()
}

/// Files in `dir` whose names start with `prefix`.
fn files_named(dir: &Scratch, prefix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    files.sort();
    files
}

/// A shell command (for `sh -c`) that waits until the file `$0` exists, polling under a
/// deadline of 30 s (then it exits 9).
const WAIT_FOR_FILE: &str =
    "i=0; while [ ! -f \"$0\" ]; do i=$((i + 1)); [ \"$i\" -lt 600 ] || exit 9; sleep 0.05; done";

/// Writes a file in one step (a shell polling for it never sees it half written).
fn write_whole(path: &PathBuf, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn counter_is_an_8_byte_atomic_long() {
    let p = "/counters/long";
    // A missing node reads 0, and reading does not create it.
    assert_eq!(ok(&["counter", p, "get"]), "0\n");
    assert_eq!(stderr(&run(&["get", p])), format!("zkctl: NoNode: {p}\n"));

    assert_eq!(ok(&["counter", p, "add", "5"]), "5\n");
    assert_eq!(raw(p), [0, 0, 0, 0, 0, 0, 0, 5]);
    assert_eq!(ok(&["counter", p, "add", "-7"]), "-2\n");
    // 8 bytes, big-endian, two's complement: Curator's DistributedAtomicLong format.
    assert_eq!(raw(p), [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe]);
    assert_eq!(ok(&["counter", p, "get"]), "-2\n");
    assert_eq!(
        ok(&["counter", p, "set", "1099511627776"]),
        "1099511627776\n"
    );
    assert_eq!(raw(p), [0, 0, 1, 0, 0, 0, 0, 0]);

    // cas: only from OLD; otherwise exit 1 with the value read, and nothing written.
    let missed = run(&["counter", p, "cas", "5", "6"]);
    assert_eq!(exit_code(missed.status), 1, "{}", stderr(&missed));
    assert_eq!(String::from_utf8_lossy(&missed.stdout), "1099511627776\n");
    assert_eq!(
        stderr(&missed),
        "zkctl: /counters/long: not set: the value was not 5 (the value read is printed)\n"
    );
    assert_eq!(raw(p), [0, 0, 1, 0, 0, 0, 0, 0]);
    assert_eq!(ok(&["counter", p, "cas", "1099511627776", "6"]), "6\n");
    assert_eq!(raw(p), [0, 0, 0, 0, 0, 0, 0, 6]);

    // Java's arithmetic: MAX + 1 wraps to MIN.
    ok(&["counter", p, "set", "9223372036854775807"]);
    assert_eq!(ok(&["counter", p, "add", "1"]), "-9223372036854775808\n");
    assert_eq!(raw(p), [0x80, 0, 0, 0, 0, 0, 0, 0]);

    // A missing node is 0 for cas too: it is created.
    assert_eq!(ok(&["counter", "/counters/new", "cas", "0", "3"]), "3\n");
    assert_eq!(raw("/counters/new"), [0, 0, 0, 0, 0, 0, 0, 3]);
}

#[test]
fn counter_int_is_a_4_byte_shared_count() {
    let p = "/counters/int";
    // A SharedCount is created with 0 when first used.
    assert_eq!(ok(&["counter", p, "get", "--int"]), "0\n");
    assert_eq!(raw(p), [0, 0, 0, 0]);
    assert_eq!(ok(&["counter", p, "add", "3", "--int"]), "3\n");
    assert_eq!(ok(&["counter", "--int", p, "add", "-5"]), "-2\n");
    // 4 bytes, big-endian: Curator's SharedCount format.
    assert_eq!(raw(p), [0xff, 0xff, 0xff, 0xfe]);
    assert_eq!(ok(&["counter", p, "set", "70000", "--int"]), "70000\n");
    assert_eq!(raw(p), [0x00, 0x01, 0x11, 0x70]);

    let missed = run(&["counter", p, "cas", "3", "4", "--int"]);
    assert_eq!(exit_code(missed.status), 1, "{}", stderr(&missed));
    assert_eq!(String::from_utf8_lossy(&missed.stdout), "70000\n");
    assert!(stderr(&missed).contains("not set: the value was not 3"));
    assert_eq!(raw(p), [0x00, 0x01, 0x11, 0x70]);
    assert_eq!(ok(&["counter", p, "cas", "70000", "4", "--int"]), "4\n");
    assert_eq!(raw(p), [0, 0, 0, 4]);
    assert_eq!(ok(&["counter", p, "get", "--int"]), "4\n");

    ok(&["counter", p, "set", "2147483647", "--int"]);
    assert_eq!(ok(&["counter", p, "add", "1", "--int"]), "-2147483648\n");
    assert_eq!(raw(p), [0x80, 0, 0, 0]);
}

#[test]
fn counter_errors() {
    // Usage: exit 2, one line, nothing on stdout.
    for (args, message) in [
        (
            &["counter", "/c"][..],
            "the following required arguments were not provided: <ACTION>; usage: zkctl counter \
             <PATH> <ACTION> [N]...",
        ),
        (
            &["counter", "/c", "add"][..],
            "'counter PATH add' takes one number",
        ),
        (
            &["counter", "/c", "cas", "1"][..],
            "'counter PATH cas' takes OLD and NEW",
        ),
        (
            &["counter", "/c", "get", "1"][..],
            "'counter PATH get' takes no number",
        ),
        (
            &["counter", "/c", "bump", "1"][..],
            "invalid value 'bump' for '<ACTION>' [possible values: get, add, set, cas]",
        ),
        (
            &["counter", "/c", "add", "x"][..],
            "'x' is not a 64-bit integer",
        ),
        (
            &["counter", "/c", "add", "2147483648", "--int"][..],
            "'2147483648' is not a 32-bit integer",
        ),
    ] {
        let out = run(args);
        assert_eq!(exit_code(out.status), 2, "{args:?}");
        assert_eq!(
            stderr(&out),
            format!("zkctl: {message} (see zkctl --help)\n"),
            "{args:?}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // Errors from the server or the client: exit 1, one line.
    let bad = run(&["counter", "relative", "get"]);
    assert_eq!(exit_code(bad.status), 1);
    assert_eq!(
        stderr(&bad),
        "zkctl: BadArguments: path must start with '/': relative\n"
    );
    // A 4-byte node is no atomic long.
    ok(&["counter", "/counters/narrow", "set", "1", "--int"]);
    let wrong = run(&["counter", "/counters/narrow", "add", "1"]);
    assert_eq!(exit_code(wrong.status), 1);
    let message = stderr(&wrong);
    assert!(
        message.starts_with("zkctl: ") && message.contains("8 bytes, found 4"),
        "{message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
    assert_eq!(raw("/counters/narrow"), [0, 0, 0, 1]);
}

#[test]
fn concurrent_counter_adds_all_apply() {
    for (path, width) in [("/counters/race", ""), ("/counters/race-int", "--int")] {
        // Three shells, each running `zkctl counter PATH add 1` ten times.
        let script = "for i in 1 2 3 4 5 6 7 8 9 10; do \
                      \"$0\" --server \"$1\" counter \"$2\" add 1 $3 || exit 1; done";
        let adders: Vec<Child> = (0..3)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", script, env!("CARGO_BIN_EXE_zkctl")])
                    .arg(server().connect_string())
                    .args([path, width])
                    .env_remove("ZK_SERVER")
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut after: Vec<i64> = Vec::new();
        for adder in adders {
            let out = finish(adder, Duration::from_secs(60));
            assert!(out.status.success(), "{path}: {}", stderr(&out));
            let text = String::from_utf8(out.stdout).unwrap();
            after.extend(text.lines().map(|l| l.parse::<i64>().unwrap()));
        }
        // Every add applied exactly once, each on top of the one before: the values printed
        // after the 30 adds are 1 to 30, each once.
        after.sort();
        assert_eq!(after, (1..=30).collect::<Vec<i64>>(), "{path}");
        let mut get = vec!["counter", path, "get"];
        get.extend((!width.is_empty()).then_some(width));
        assert_eq!(ok(&get), "30\n", "{path}");
    }
}

#[test]
fn barrier_runs_commands_only_once_all_have_entered() {
    let dir = scratch("barrier");
    let path = "/barriers/phase";
    ok(&["create", path, "--parents"]);
    // Each command lists the barrier's nodes as it starts, then waits (bounded) until all
    // three have listed, so no member leaves (deleting its node) before the others looked.
    let script = r#""$0" --server "$1" ls "$2" > "$3/seen-$$" || exit 1
        echo "$ZKCTL_BARRIER_NODE" > "$3/node-$$"
        touch "$3/listed-$$"
        i=0
        while [ "$(ls "$3" | grep -c '^listed-')" -lt 3 ]; do
            i=$((i + 1)); [ "$i" -lt 400 ] || exit 9; sleep 0.05
        done"#;
    let connect = server().connect_string();
    let dir_arg = dir.0.display().to_string();
    let member = || {
        zkctl(&[
            "barrier",
            path,
            "--count",
            "3",
            "--timeout",
            "30000",
            "--",
            "sh",
            "-c",
            script,
            env!("CARGO_BIN_EXE_zkctl"),
            &connect,
            path,
            &dir_arg,
        ])
        .spawn()
        .unwrap()
    };
    let first = [member(), member()];
    wait_until(
        "two members in the barrier",
        Duration::from_secs(10),
        || barrier_members(path).len() == 2,
    );
    // Were the two let in now, their commands would list two members: checked below.
    let third = member();
    for child in first.into_iter().chain([third]) {
        let out = finish(child, Duration::from_secs(30));
        assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    }
    // Every command saw the three member nodes and `ready` when it started.
    let seen = files_named(&dir, "seen-");
    assert_eq!(seen.len(), 3, "{seen:?}");
    let nodes: Vec<String> = files_named(&dir, "node-").iter().flat_map(lines).collect();
    for file in &seen {
        let names = lines(file);
        let members: Vec<&String> = names.iter().filter(|n| *n != "ready").collect();
        assert_eq!(members.len(), 3, "a command started with {names:?}");
        assert!(names.iter().any(|n| n == "ready"), "{names:?}");
        for node in &nodes {
            let name = node.strip_prefix("/barriers/phase/").expect("under PATH");
            assert!(names.iter().any(|n| n == name), "{node} not in {names:?}");
        }
    }
    assert_eq!(nodes.len(), 3);
    // All have left: no member node, and `ready` is gone too.
    assert_eq!(ok(&["ls", path]), "");
}

#[test]
fn barrier_exit_codes_and_timeouts() {
    let dir = scratch("barrier-codes");
    // A barrier of one: CMD runs at once, and its exit code is zkctl's.
    let out = run(&[
        "barrier",
        "/barriers/solo",
        "--count",
        "1",
        "--",
        "sh",
        "-c",
        "exit 7",
    ]);
    assert_eq!(exit_code(out.status), 7, "{}", stderr(&out));
    let missing = run(&[
        "barrier",
        "/barriers/solo",
        "--count",
        "1",
        "--",
        "/no/such/program",
    ]);
    assert_eq!(exit_code(missing.status), 127);
    assert!(stderr(&missing).contains("cannot run '/no/such/program'"));
    assert_eq!(barrier_members("/barriers/solo"), Vec::<String>::new());

    // Too few members: exit 124 once --timeout has passed, CMD never ran, and no member node
    // is left (checked right after zkctl exits).
    ok(&["create", "/barriers/few", "--parents"]);
    let marker = dir.join("ran");
    let started = Instant::now();
    let out = run(&[
        "barrier",
        "/barriers/few",
        "--count",
        "2",
        "--timeout",
        "300",
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]);
    assert_eq!(exit_code(out.status), 124, "{}", stderr(&out));
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(
        stderr(&out),
        "zkctl: /barriers/few: not all 2 members entered within 300 ms\n"
    );
    assert!(!marker.exists(), "CMD ran without the other member");
    assert_eq!(ok(&["ls", "/barriers/few"]), "");

    // A timeout while leaving: a member whose command ends waits for the other one to leave,
    // which still runs its command.
    ok(&["create", "/barriers/slow", "--parents"]);
    let release = dir.join("release");
    let slow = zkctl(&[
        "barrier",
        "/barriers/slow",
        "--count",
        "2",
        "--",
        "sh",
        "-c",
        WAIT_FOR_FILE,
        release.to_str().unwrap(),
    ])
    .spawn()
    .unwrap();
    wait_until("the slow member in", Duration::from_secs(10), || {
        barrier_members("/barriers/slow").len() == 1
    });
    let out = run(&[
        "barrier",
        "/barriers/slow",
        "--count",
        "2",
        "--timeout",
        "1000",
        "--",
        "true",
    ]);
    assert_eq!(exit_code(out.status), 124, "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "zkctl: /barriers/slow: not all 2 members left within 1000 ms\n"
    );
    // Its node is gone; the slow member's stays while its command runs.
    assert_eq!(barrier_members("/barriers/slow").len(), 1);
    write_whole(&release, "");
    let out = finish(slow, Duration::from_secs(20));
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    assert_eq!(ok(&["ls", "/barriers/slow"]), "");

    // Usage.
    for (args, message) in [
        (
            &["barrier", "/b", "--", "true"][..],
            "the following required arguments were not provided: --count <N>; usage: zkctl \
             barrier --count <N> <PATH> <CMD>...",
        ),
        (
            &["barrier", "/b", "--count", "0", "--", "true"][..],
            "invalid value '0' for '--count <N>': must be at least 1",
        ),
        (
            &["barrier", "/b", "--count", "2"][..],
            "the following required arguments were not provided: <CMD>...; usage: zkctl barrier \
             --count <N> <PATH> <CMD>...",
        ),
    ] {
        // `barrier` runs a command: zkctl's own failures exit 125, out of CMD's way.
        let out = run(args);
        assert_eq!(exit_code(out.status), 125, "{args:?}");
        assert_eq!(
            stderr(&out),
            format!("zkctl: {message} (see zkctl --help)\n")
        );
    }
    let bad = run(&["barrier", "relative", "--count", "1", "--", "true"]);
    assert_eq!(exit_code(bad.status), 125);
    assert_eq!(
        stderr(&bad),
        "zkctl: BadArguments: path must start with '/': relative\n"
    );
}

#[test]
fn barrier_sigterm_stops_the_command_and_leaves_at_once() {
    let dir = scratch("barrier-term");
    ok(&["create", "/barriers/term", "--parents"]);
    let pid_file = dir.join("pid");
    let release = dir.join("release");
    let holder = zkctl(&[
        "barrier",
        "/barriers/term",
        "--count",
        "2",
        "--",
        "sh",
        "-c",
        "echo $$ > \"$0\"; exec sleep 60",
        pid_file.to_str().unwrap(),
    ])
    .spawn()
    .unwrap();
    let other = zkctl(&[
        "barrier",
        "/barriers/term",
        "--count",
        "2",
        "--",
        "sh",
        "-c",
        WAIT_FOR_FILE,
        release.to_str().unwrap(),
    ])
    .spawn()
    .unwrap();
    wait_until("the command to start", Duration::from_secs(10), || {
        lines(&pid_file).len() == 1
    });
    let cmd_pid: u32 = lines(&pid_file)[0].parse().unwrap();
    signal(holder.id(), "TERM");
    // zkctl does not wait for the other member (still in its command) to leave.
    let out = finish(holder, Duration::from_secs(10));
    assert_eq!(exit_code(out.status), 143, "{}", stderr(&out));
    assert!(!alive(cmd_pid), "the command still runs");
    assert_eq!(barrier_members("/barriers/term").len(), 1);
    write_whole(&release, "");
    let out = finish(other, Duration::from_secs(20));
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    assert_eq!(ok(&["ls", "/barriers/term"]), "");
}

#[test]
fn member_holds_membership_while_the_command_runs() {
    let dir = scratch("member");
    let group = "/groups/web";
    // A group node of our own (a member would make it a container, which the server may
    // remove once empty).
    ok(&["create", group, "--parents"]);
    // Each command writes its node and pid, then waits (bounded) for its release file and
    // exits with the code written in it.
    let script = r#"echo "$ZKCTL_MEMBER_NODE $$" > "$0/node-$1"
        i=0
        while [ ! -f "$0/release-$1" ]; do
            i=$((i + 1)); [ "$i" -lt 600 ] || exit 99; sleep 0.05
        done
        exit "$(cat "$0/release-$1")""#;
    let dir_arg = dir.0.display().to_string();
    let member = |id: &str, data: Option<&str>| {
        let mut args = vec!["member", group, id];
        args.extend(data);
        args.extend(["--", "sh", "-c", script, &dir_arg, id]);
        zkctl(&args).spawn().unwrap()
    };
    let node_and_pid = |id: &str| {
        let file = dir.join(&format!("node-{id}"));
        wait_until("the command to start", Duration::from_secs(10), || {
            lines(&file).len() == 1
        });
        let line = lines(&file).remove(0);
        let (node, pid) = line.split_once(' ').unwrap();
        (node.to_string(), pid.parse::<u32>().unwrap())
    };
    // Joined in the order b, c, a; listed by id.
    let b = member("b", Some("10.0.0.2:80"));
    let c = member("c", Some("two\nlines"));
    let a = member("a", None);
    wait_until("three members", Duration::from_secs(10), || {
        ok(&["ls", group]).lines().count() == 3
    });
    assert_eq!(
        ok(&["members", group]),
        "a\nb 10.0.0.2:80\nc 0x74776f0a6c696e6573\n"
    );
    let (node, _) = node_and_pid("b");
    assert_eq!(node, "/groups/web/b");
    assert_eq!(raw("/groups/web/b"), b"10.0.0.2:80");
    let stat = ok(&["stat", "/groups/web/b"]);
    assert!(!stat.contains("ephemeralOwner = 0x0\n"), "{stat}");

    // b's command exits 5: so does zkctl, and b has left (checked right after it exits).
    write_whole(&dir.join("release-b"), "5");
    let out = finish(b, Duration::from_secs(10));
    assert_eq!(exit_code(out.status), 5, "{}", stderr(&out));
    assert_eq!(ok(&["members", group]), "a\nc 0x74776f0a6c696e6573\n");

    // SIGTERM to a's zkctl: its command is stopped, then a leaves.
    let (_, a_pid) = node_and_pid("a");
    signal(a.id(), "TERM");
    let out = finish(a, Duration::from_secs(10));
    assert_eq!(exit_code(out.status), 143, "{}", stderr(&out));
    assert!(!alive(a_pid), "a's command still runs");
    assert_eq!(ok(&["members", group]), "c 0x74776f0a6c696e6573\n");

    node_and_pid("c");
    write_whole(&dir.join("release-c"), "0");
    let out = finish(c, Duration::from_secs(10));
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    // `members` only reads: it never joined, so the group is empty now.
    assert_eq!(ok(&["members", group]), "");
    assert_eq!(ok(&["ls", group]), "");

    // A command that cannot start: exit 127, and the group is left.
    let missing = run(&["member", group, "x", "--", "/no/such/program"]);
    assert_eq!(exit_code(missing.status), 127);
    assert_eq!(ok(&["ls", group]), "");
}

#[test]
fn member_and_members_errors() {
    let gone = run(&["members", "/groups/none"]);
    assert_eq!(exit_code(gone.status), 1);
    assert_eq!(stderr(&gone), "zkctl: NoNode: /groups/none\n");
    // `member` runs a command: zkctl's own failures exit 125, out of CMD's way.
    let bad = run(&["member", "relative", "a", "--", "true"]);
    assert_eq!(exit_code(bad.status), 125);
    assert_eq!(
        stderr(&bad),
        "zkctl: BadArguments: path must start with '/': relative\n"
    );
    for (args, message) in [
        (
            &["members"][..],
            "the following required arguments were not provided: <PATH>; usage: zkctl members \
             <PATH>",
        ),
        (
            &["member", "/g"][..],
            "the following required arguments were not provided: <ID>; usage: zkctl member \
             <PATH> <ID> [DATA] [-- <CMD>...]",
        ),
        (
            &["member", "/g", "x/y", "--", "true"][..],
            "invalid value 'x/y' for '<ID>': a member id is a node name (not empty, no '/', not . \
             or ..)",
        ),
        (
            &["member", "/g", "a", "./serve"][..],
            "'member' needs a command to run: zkctl member PATH ID [DATA] -- CMD [ARGS...]",
        ),
        (
            &["member", "/g", "a", "data", "./serve"][..],
            "'member' needs -- before the command (DATA is optional): \
             zkctl member PATH ID [DATA] -- CMD [ARGS...]",
        ),
    ] {
        let out = run(args);
        let code = if args[0] == "member" { 125 } else { 2 };
        assert_eq!(exit_code(out.status), code, "{args:?}");
        assert_eq!(
            stderr(&out),
            format!("zkctl: {message} (see zkctl --help)\n")
        );
    }
}
