//! `zkctl config`, `zkctl reconfig` and `--resume` end to end: the built binary against
//! real ZooKeeper servers from the test kit (a reconfigurable ensemble for the first two).
//!
//! Every zkctl run has a deadline; nothing sleeps and hopes.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

mod support;
use support::{password_hex, SecretFile};
use zkrs_client::{Client, CreateMode, EnsembleConfig};
use zkrs_testkit::{ServerOptions, TestingCluster, TestingServer, SUPERUSER};

/// Runs `zkctl --server SERVER ARGS...` to completion (20 s at most).
fn zkctl(server: &str, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zkctl"))
        .arg("--server")
        .arg(server)
        .args(args)
        .env_remove("ZK_SERVER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zkctl runs");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("zkctl {args:?} did not finish within 20 s");
        }
        thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn ok(server: &str, args: &[&str]) -> String {
    let out = zkctl(server, args);
    assert!(
        out.status.success(),
        "zkctl {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs and expects exit code `code`; returns stderr.
fn fails(server: &str, args: &[&str], code: i32) -> String {
    let out = zkctl(server, args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "zkctl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn config_and_reconfig() {
    let mut cluster = TestingCluster::start_with(3, ServerOptions::new().reconfig(true))
        .expect("ZooKeeper (scripts/install-zookeeper.sh)");
    // With a chroot: /zookeeper/config is read without it.
    let server = format!("{}/app", cluster.connect_string());
    let superuser = SecretFile::new(
        "superuser",
        &format!("digest:{}:{}", SUPERUSER.0, SUPERUSER.1),
    );
    let superuser = superuser.path();

    let printed = ok(&server, &["config"]);
    let lines: Vec<&str> = printed.lines().collect();
    assert_eq!(lines.len(), 4, "{printed}");
    for (i, line) in lines[..3].iter().enumerate() {
        assert_eq!(*line, cluster.member_spec(i), "{printed}");
    }
    let version = lines[3].strip_prefix("version=").expect("a version line");
    // What the server holds, byte for byte, and a line break.
    let rt = runtime();
    let client = rt
        .block_on(Client::connect(&cluster.connect_string()))
        .unwrap();
    let (config, _) = rt.block_on(client.get_config()).unwrap();
    assert_eq!(
        printed,
        format!("{}\n", String::from_utf8_lossy(config.raw()))
    );

    // A member joins (incremental, checked against the version printed).
    let four = cluster.add_member().unwrap();
    let spec = cluster.member_spec(four);
    let printed = ok(
        &server,
        &[
            "--auth-file",
            superuser,
            "reconfig",
            "--add",
            &spec,
            "--from-version",
            version,
        ],
    );
    let added = EnsembleConfig::parse(printed.trim_end().to_string()).unwrap();
    assert_eq!(added.members().len(), 4, "{printed}");
    assert_eq!(added.member(4).unwrap().to_string(), spec);

    // The same version again is stale now: BadVersion, exit 1, said in one line.
    let err = fails(
        &server,
        &[
            "--auth-file",
            superuser,
            "reconfig",
            "--remove",
            "4",
            "--from-version",
            version,
        ],
        1,
    );
    assert!(
        err.starts_with("zkctl: BadVersion: the configuration is no longer version"),
        "{err}"
    );
    // Without the superuser: NoAuth.
    let err = fails(&server, &["reconfig", "--remove", "4"], 1);
    assert!(err.contains("NoAuth: reconfig needs a superuser"), "{err}");
    // A malformed member line: refused before anything is sent.
    let err = fails(
        &server,
        &[
            "--auth-file",
            superuser,
            "reconfig",
            "--add",
            "server.9=h:1",
        ],
        1,
    );
    assert!(err.contains("BadArguments: bad member line"), "{err}");
    // Usage errors.
    let err = fails(&server, &["reconfig"], 2);
    assert!(
        err.contains("not provided: <--add <SPEC>|--remove <ID>|--members <SPEC>>"),
        "{err}"
    );

    // Member 4 leaves, then bulk: 1, 2 and 3 again, written by `config`'s own lines.
    let printed = ok(
        &server,
        &["--auth-file", superuser, "reconfig", "--remove", "4"],
    );
    assert_eq!(printed.lines().count(), 4, "{printed}");
    assert!(!printed.contains("server.4="), "{printed}");
    let specs: Vec<String> = (0..3).map(|i| cluster.member_spec(i)).collect();
    let mut args = vec!["--auth-file", superuser, "reconfig"];
    for spec in &specs {
        args.extend(["--members", spec]);
    }
    let printed = ok(&server, &args);
    let bulk = EnsembleConfig::parse(printed.trim_end().to_string()).unwrap();
    assert_eq!(bulk.members().len(), 3, "{printed}");
    assert_eq!(ok(&server, &["config"]), printed);
}

#[test]
fn resume_borrows_a_session_made_by_another_process_and_leaves_it_open() {
    let server = TestingServer::start().expect("ZooKeeper (scripts/install-zookeeper.sh)");
    let connect = server.connect_string();
    let rt = runtime();
    // This process makes the session and its ephemeral node, then detaches from it.
    let owner = rt
        .block_on(
            Client::builder(&connect)
                .session_timeout(Duration::from_secs(4))
                .connect(),
        )
        .unwrap();
    rt.block_on(owner.create("/held", b"by-owner", CreateMode::Ephemeral))
        .unwrap();
    let id = owner.session_id();
    let password = password_hex(&owner.session_password());
    rt.block_on(owner.detach());
    let password_file = SecretFile::new("resume", &password);
    let id_hex = format!("{id:#x}");
    let resume = [
        "--resume",
        &id_hex,
        "--resume-password-file",
        password_file.path(),
    ];

    // zkctl, another process, resumes it: the node is its session's.
    let stat = ok(&connect, &[&resume[..], &["stat", "/held"]].concat());
    assert!(
        stat.contains(&format!("ephemeralOwner = {id:#x}")),
        "{stat}"
    );
    assert_eq!(
        ok(&connect, &[&resume[..], &["get", "/held"]].concat()),
        "by-owner"
    );
    // zkctl left the session open: the node is still there, still owned by it.
    let observer = rt.block_on(Client::connect(&connect)).unwrap();
    let kept = rt
        .block_on(observer.exists("/held"))
        .unwrap()
        .expect("kept");
    assert_eq!(kept.ephemeral_owner, id);

    // A wrong password: exit 1 at once, with the reason.
    let mut wrong = password.clone().into_bytes();
    wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
    let wrong = SecretFile::new("wrong", &String::from_utf8(wrong).unwrap());
    let started = Instant::now();
    let err = fails(
        &connect,
        &[
            "--resume",
            &id_hex,
            "--resume-password-file",
            wrong.path(),
            "--connect-timeout",
            "10000",
            "get",
            "/held",
        ],
        1,
    );
    assert!(
        err.contains(&format!(
            "SessionExpired: the server refused to resume session {id:#x}: it has expired, \
             or its password is wrong"
        )),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // Bad syntax is a usage error.
    let err = fails(
        &connect,
        &[
            "--resume",
            "nonsense",
            "--resume-password-file",
            "/p",
            "get",
            "/held",
        ],
        2,
    );
    assert!(err.contains("--resume nonsense: not a session id"), "{err}");
}

#[test]
fn follow_ensemble_runs_a_command_and_exits() {
    // The tracker reads the configuration at connect; zkctl still ends when the command
    // does (the tracker never keeps a client alive). zkctl() fails after 20 s otherwise.
    let cluster = TestingCluster::start_with(3, ServerOptions::new().reconfig(true))
        .expect("ZooKeeper (scripts/install-zookeeper.sh)");
    let member = format!("127.0.0.1:{}", cluster.member_port(0));
    ok(&member, &["--follow-ensemble", "create", "/followed", "x"]);
    let printed = ok(&member, &["--follow-ensemble", "get", "/followed"]);
    assert!(printed.contains('x'), "{printed}");
    let printed = ok(&member, &["--follow-ensemble", "config"]);
    assert_eq!(printed.lines().count(), 4, "{printed}");
}
