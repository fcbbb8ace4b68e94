//! End-to-end tests of `export`, `import`, `diff`, `find` and `du`: the built binary against
//! a real ZooKeeper server from the test kit (one for the file; each test under its own path).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::sync::OnceLock;

mod support;
use support::*;
use zkrs_client::{AclEntry, Client, CreateMode, CreateOptions, Perms};
use zkrs_testkit::{ServerOptions, TestingServer};

/// One server for the file, with TTL nodes enabled (for hand-written `ttl` lines) and empty
/// containers looked for every 200 ms (not every minute).
fn server() -> &'static TestingServer {
    static SERVER: OnceLock<TestingServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let options = ServerOptions::new()
            .extended_types(true)
            .system_property("znode.container.checkIntervalMs", "200");
        TestingServer::start_with(options).expect("ZooKeeper (scripts/install-zookeeper.sh)")
    })
}

fn run(args: &[&str]) -> Output {
    run_on(&server().connect_string(), args)
}

fn ok(args: &[&str]) -> String {
    ok_on(&server().connect_string(), args)
}

/// Runs `zkctl ARGS` with `input` on stdin.
fn run_with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = zkctl_on(&server().connect_string(), args)
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn zkctl");
    child.stdin.take().unwrap().write_all(input).unwrap();
    finish(child, COMMAND_DEADLINE)
}

/// A scratch file path, unique to this process.
fn scratch_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("zkctl-backup-{}-{name}", std::process::id()))
}

/// A client for building trees the commands read, on a runtime of its own.
struct Zk {
    rt: tokio::runtime::Runtime,
    client: Client,
}

impl Zk {
    fn connect() -> Zk {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let client = rt
            .block_on(Client::connect(&server().connect_string()))
            .expect("connect");
        Zk { rt, client }
    }

    fn create(&self, path: &str, data: &[u8]) {
        let _ = self.create_with(path, data, CreateMode::Persistent, &[AclEntry::open()]);
    }

    fn create_with(&self, path: &str, data: &[u8], mode: CreateMode, acl: &[AclEntry]) -> String {
        self.rt
            .block_on(
                self.client
                    .create_with(path, data, &CreateOptions::new(mode).acl(acl)),
            )
            .unwrap_or_else(|e| panic!("create {path}: {e}"))
            .0
    }

    fn acl(&self, path: &str) -> Vec<AclEntry> {
        self.rt.block_on(self.client.get_acl(path)).unwrap().0
    }

    fn set_acl(&self, path: &str, acl: &[AclEntry]) {
        self.rt
            .block_on(self.client.set_acl(path, acl, None))
            .unwrap();
    }

    fn exists(&self, path: &str) -> bool {
        self.rt
            .block_on(self.client.exists(path))
            .unwrap()
            .is_some()
    }
}

/// bob's digest id (`base64(sha1("bob:pw"))`), as `--auth digest:bob:pw` authenticates.
const BOB: &str = "bob:ikIaKsbtGweaHnb/jKn7OHqbunM=";

/// Everyone reads, only bob changes. READ and ADMIN for everyone: without ADMIN, getACL
/// hides digest hashes (`bob:x`).
fn restricted_acl() -> Vec<AclEntry> {
    vec![
        AclEntry::new(Perms::READ | Perms::ADMIN, "world", "anyone"),
        AclEntry::new(Perms::ALL, "digest", BOB),
    ]
}

fn ip_acl() -> Vec<AclEntry> {
    vec![
        AclEntry::new(Perms::ALL, "world", "anyone"),
        AclEntry::new(Perms::READ | Perms::ADMIN, "ip", "127.0.0.1"),
    ]
}

/// `export /orig | import - --at /copy`: the copy's export equals the original's byte for
/// byte (data of every kind, ACLs, a tree larger than one transaction), and the ephemeral
/// node is left out and counted.
#[test]
fn export_import_round_trip_is_byte_for_byte() {
    let zk = Zk::connect();
    zk.create("/orig", b"root data");
    zk.create(
        "/orig/text",
        "line one\nline two, ünïcode \"quoted\"".as_bytes(),
    );
    zk.create("/orig/binary", &[0xff, 0x00, 0xfe, 0x80, b'\n']);
    zk.create("/orig/empty", b"");
    zk.create_with(
        "/orig/secret",
        b"only bob writes",
        CreateMode::Persistent,
        &restricted_acl(),
    );
    zk.create_with("/orig/ips", b"", CreateMode::Persistent, &ip_acl());
    zk.create("/orig/ips/child", b"under an ip ACL");
    zk.create("/orig/a", b"");
    zk.create("/orig/a/b", b"");
    zk.create("/orig/a/b/c", b"deep");
    zk.create("/orig/a-b", b"sorts after /a's subtree");
    let sequential = zk.create_with(
        "/orig/seq-",
        b"s",
        CreateMode::PersistentSequential,
        &[AclEntry::open()],
    );
    zk.create_with(
        "/orig/eph",
        b"mine",
        CreateMode::Ephemeral,
        &[AclEntry::open()],
    );
    // 2,500 nodes of 400 bytes: over one transaction's 2,000 operations and 512 KiB.
    zk.create("/orig/bulk", b"");
    let payload = vec![b'x'; 400];
    let paths: Vec<String> = (0..2500).map(|i| format!("/orig/bulk/n{i:05}")).collect();
    for chunk in paths.chunks(500) {
        let creates = chunk
            .iter()
            .map(|p| zk.client.create(p, &payload, CreateMode::Persistent));
        for r in zk.rt.block_on(zkrs_recipes::framework::join_all(creates)) {
            r.unwrap();
        }
    }

    let exported = run(&["export", "/orig"]);
    assert!(exported.status.success(), "{}", stderr(&exported));
    assert_eq!(
        stderr(&exported),
        "zkctl: export: skipped 1 ephemeral node (they live with their sessions)\n"
    );
    let original = String::from_utf8(exported.stdout.clone()).unwrap();
    assert_eq!(
        original.lines().count(),
        13 + 2500,
        "one line per persistent node"
    );
    assert!(!original.contains("\"/eph\""), "{original}");
    assert!(
        original.starts_with(
            "{\"path\":\"/\",\"mode\":\"persistent\",\"acl\":[{\"perms\":\"cdrwa\",\"scheme\":\
             \"world\",\"id\":\"anyone\"}],\"encoding\":\"utf8\",\"data\":\"root data\"}\n\
             {\"path\":\"/a\","
        ),
        "{}",
        &original[..300]
    );
    assert!(original.contains(
        "{\"path\":\"/binary\",\"mode\":\"persistent\",\"acl\":[{\"perms\":\"cdrwa\",\
         \"scheme\":\"world\",\"id\":\"anyone\"}],\"encoding\":\"base64\",\"data\":\"/wD+gAo=\"}\n"
    ));

    // A real pipe: export's stdout is import's stdin.
    let mut export = zkctl_on(&server().connect_string(), &["export", "/orig"])
        .spawn()
        .unwrap();
    let mut import = zkctl_on(
        &server().connect_string(),
        &["import", "-", "--at", "/copy"],
    );
    import.stdin(Stdio::from(export.stdout.take().unwrap()));
    let imported = finish(import.spawn().unwrap(), COMMAND_DEADLINE);
    assert!(export.wait().unwrap().success());
    assert!(imported.status.success(), "{}", stderr(&imported));
    assert_eq!(
        String::from_utf8_lossy(&imported.stdout),
        "created 2513, skipped 0, overwritten 0\n"
    );

    let copy = ok(&["export", "/copy"]);
    assert!(
        copy == original,
        "the copy's export differs from the original's"
    );
    assert_eq!(zk.acl("/copy/secret"), restricted_acl());
    assert_eq!(zk.acl("/copy/ips"), ip_acl());
    assert!(!zk.exists("/copy/eph"));
    assert!(
        zk.exists(&sequential.replace("/orig/", "/copy/")),
        "{sequential}"
    );

    // diff agrees, from the tree and from a file.
    let file = scratch_file("orig.jsonl");
    ok(&["export", "/orig", "--out", file.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    let same = run(&["diff", "/orig", "/copy"]);
    assert_eq!(
        (exit_code(same.status), same.stdout.as_slice()),
        (0, &b""[..])
    );
    let same = run(&["diff", &format!("file:{}", file.display()), "/copy"]);
    assert_eq!(
        (exit_code(same.status), same.stdout.as_slice()),
        (0, &b""[..])
    );

    // Again: every node exists, nothing is written.
    let again = run_with_stdin(&["import", "-", "--at", "/copy"], original.as_bytes());
    assert_eq!(exit_code(again.status), 1);
    assert_eq!(
        stderr(&again),
        "zkctl: NodeExists: /copy/a (2512 of the file's nodes exist; nothing was written; \
         --existing skip or overwrite)\n"
    );
    // --dry-run into a fresh place, and --existing skip into the full one.
    let dry = run_with_stdin(
        &["import", "-", "--at", "/dry", "--dry-run"],
        original.as_bytes(),
    );
    assert!(dry.status.success(), "{}", stderr(&dry));
    let dry = String::from_utf8(dry.stdout).unwrap();
    assert_eq!(dry.lines().count(), 2513);
    assert!(
        dry.starts_with("create /dry\ncreate /dry/a\ncreate /dry/a/b\n"),
        "{dry}"
    );
    assert!(!zk.exists("/dry"));
    assert_eq!(
        String::from_utf8(
            run_with_stdin(
                &["import", "-", "--at", "/copy", "--existing", "skip"],
                original.as_bytes()
            )
            .stdout
        )
        .unwrap(),
        "created 0, skipped 2513, overwritten 0\n"
    );
    // --existing overwrite puts changed data and ACLs back (and leaves extra nodes); as bob,
    // who may write /copy/secret (without, its setData is refused: NoAuth).
    ok(&["set", "/copy/text", "changed"]);
    zk.set_acl("/copy/binary", &ip_acl());
    zk.create("/copy/extra", b"");
    let bob = SecretFile::new("backup-bob-import", "digest:bob:pw");
    let overwritten = run_with_stdin(
        &[
            "import",
            "-",
            "--at",
            "/copy",
            "--existing",
            "overwrite",
            "--auth-file",
            bob.path(),
        ],
        original.as_bytes(),
    );
    assert_eq!(
        String::from_utf8_lossy(&overwritten.stdout),
        "created 0, skipped 0, overwritten 2513\n",
        "{}",
        stderr(&overwritten)
    );
    let diff = run(&["diff", "/orig", "/copy"]);
    assert_eq!(String::from_utf8_lossy(&diff.stdout), "only-right /extra\n");
    let _ = std::fs::remove_file(file);
}

/// A small tree with exact outputs of `du`, `find` and `diff`.
#[test]
fn du_find_and_diff_print_exact_lines() {
    let zk = Zk::connect();
    zk.create("/small", b"");
    zk.create("/small/a", b"alpha");
    zk.create("/small/a/x", b"xx");
    zk.create("/small/b", b"");
    zk.create("/small/b/job-1", b"error: disk full");
    zk.create("/small/b/job-2", b"ok");
    zk.create("/small/c", &[0xff, 0x00]);

    assert_eq!(
        ok(&["du", "/small"]),
        "BYTES\tNODES\tPATH\n18\t3\t/small/b\n7\t2\t/small/a\n2\t1\t/small/c\n27\t7\t/small\n"
    );
    assert_eq!(
        ok(&["du", "/small/a/x"]),
        "BYTES\tNODES\tPATH\n2\t1\t/small/a/x\n"
    );

    assert_eq!(
        ok(&["find", "/small", "--name", "job-*"]),
        "/small/b/job-1\n/small/b/job-2\n"
    );
    assert_eq!(
        ok(&["find", "/small", "--name", "?"]),
        "/small/a\n/small/a/x\n/small/b\n/small/c\n"
    );
    assert_eq!(
        ok(&["find", "/small", "--data", "err(or)?: .*full$"]),
        "/small/b/job-1\n"
    );
    assert_eq!(
        ok(&["find", "/small", "--name", "*-2", "--data", "^ok$"]),
        "/small/b/job-2\n"
    );
    assert_eq!(ok(&["find", "/small", "--name", "nothing*"]), "");
    assert_eq!(
        ok(&["find", "/small"]),
        "/small\n/small/a\n/small/a/x\n/small/b\n/small/b/job-1\n/small/b/job-2\n/small/c\n"
    );

    let file = scratch_file("small.jsonl");
    ok(&["export", "/small", "--out", file.to_str().unwrap()]);
    let before = format!("file:{}", file.display());
    ok(&["set", "/small/a", "ALPHA"]);
    ok(&["delete", "/small/c"]);
    ok(&["create", "/small/d"]);
    zk.set_acl("/small/b/job-2", &restricted_acl());
    let diff = run(&["diff", &before, "/small"]);
    assert_eq!(exit_code(diff.status), 1, "{}", stderr(&diff));
    assert_eq!(stderr(&diff), "");
    assert_eq!(
        String::from_utf8(diff.stdout).unwrap(),
        "data /a\nacl /b/job-2\nonly-left /c\nonly-right /d\n"
    );
    let diff = run(&["diff", "/small", &before]);
    assert_eq!(
        String::from_utf8(diff.stdout).unwrap(),
        "data /a\nacl /b/job-2\nonly-right /c\nonly-left /d\n"
    );
    let _ = std::fs::remove_file(file);
}

/// Bad input: one line on stderr and the exit code of README's table (1: ZooKeeper or
/// I/O error, bad export file; 2: usage).
#[test]
fn bad_input_is_one_line_and_an_exit_code() {
    let zk = Zk::connect();
    zk.create("/bad", b"");
    let cases: Vec<(Vec<String>, i32, String)> = vec![
        (vec!["export".into(), "/bad/none".into()], 1, "zkctl: NoNode: /bad/none\n".into()),
        (vec!["du".into(), "/bad/none".into()], 1, "zkctl: NoNode: /bad/none\n".into()),
        (vec!["find".into(), "/bad/none".into()], 1, "zkctl: NoNode: /bad/none\n".into()),
        (
            vec!["diff".into(), "/bad".into(), "/bad/none".into()],
            1,
            "zkctl: NoNode: /bad/none\n".into(),
        ),
        (
            vec!["find".into(), "/bad".into(), "--data".into(), "(".into()],
            2,
            "zkctl: bad --data REGEX \"(\": found open group without closing ')' (see zkctl --help)\n".into(),
        ),
        (
            vec!["import".into(), "/nonexistent/file.jsonl".into()],
            1,
            "zkctl: cannot read /nonexistent/file.jsonl: No such file or directory (os error 2)\n"
                .into(),
        ),
        (
            vec!["import".into(), "-".into(), "--existing".into(), "maybe".into()],
            2,
            String::new(), // clap's message, checked below
        ),
    ];
    for (args, code, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&args);
        assert_eq!(exit_code(out.status), code, "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        if !expected.is_empty() {
            assert_eq!(err, expected, "{args:?}");
        }
    }

    // A digest ACL the server hides from this session (no ADMIN): refused, not exported
    // as `bob:x` (which would lock bob out of the restored node); bob's session sees it.
    zk.create_with(
        "/bad/hidden",
        b"",
        CreateMode::Persistent,
        &[
            AclEntry::new(Perms::READ, "world", "anyone"),
            AclEntry::new(Perms::ALL, "digest", BOB),
        ],
    );
    let out = run(&["export", "/bad"]);
    assert_eq!(
        (exit_code(out.status), stderr(&out)),
        (
            1,
            "zkctl: /bad/hidden: the server hid a digest ACL's hash (this session lacks ADMIN \
             there; 1 node so): read as an identity with ADMIN, e.g. --auth-file FILE \
             holding digest:super:PASSWORD\n"
                .to_string()
        )
    );
    let bob = SecretFile::new("backup-bob-export", "digest:bob:pw");
    let as_bob = ok(&["export", "/bad", "--auth-file", bob.path()]);
    assert!(as_bob.contains(BOB), "{as_bob}");

    // A malformed line: named by its number, nothing written.
    let good = r#"{"path":"/","mode":"persistent","acl":[{"perms":"cdrwa","scheme":"world","id":"anyone"}],"encoding":"utf8","data":""}"#;
    for (line, why) in [
        ("{\"path\":\"/x\"", "EOF while parsing an object at line 1 column 12"),
        (
            r#"{"path":"/x","mode":"persistent","acl":[],"encoding":"base64","data":"%%"}"#,
            "/x: data is not base64",
        ),
        (
            r#"{"path":"/x","mode":"persistent","acl":[{"perms":"rx","scheme":"world","id":"anyone"}],"encoding":"utf8","data":""}"#,
            "/x: bad perms \"rx\" (letters of cdrwa)",
        ),
        (
            r#"{"path":"/x","mode":"sticky","acl":[],"encoding":"utf8","data":""}"#,
            "unknown variant `sticky`, expected one of `persistent`, `container`, `ttl` at line 1 column 28",
        ),
    ] {
        let input = format!("{good}\n{line}\n");
        let out = run_with_stdin(&["import", "-", "--at", "/bad/copy"], input.as_bytes());
        assert_eq!(exit_code(out.status), 1, "{line}");
        assert_eq!(stderr(&out), format!("zkctl: stdin:2: {why}\n"), "{line}");
        assert!(!zk.exists("/bad/copy"));
    }
    // A child without its parent's line; --at under a missing parent.
    let orphan = format!(
        "{good}\n{}\n",
        good.replace("\"path\":\"/\"", "\"path\":\"/p/q\"")
    );
    let out = run_with_stdin(&["import", "-", "--at", "/bad/copy"], orphan.as_bytes());
    assert_eq!(
        (exit_code(out.status), stderr(&out)),
        (
            1,
            "zkctl: stdin: /p/q has no parent line (/p)\n".to_string()
        )
    );
    let out = run_with_stdin(&["import", "-", "--at", "/bad/none/copy"], good.as_bytes());
    assert_eq!(
        (exit_code(out.status), stderr(&out)),
        (
            1,
            "zkctl: NoNode: /bad/none (the parent of --at /bad/none/copy must exist)\n".to_string()
        )
    );
}

/// Hand-written `container` and `ttl` lines are created as such (the server deletes an empty
/// container once its last child goes); `export` writes them back as `persistent`, since the
/// server hides those markers from clients (documented).
#[test]
fn import_creates_containers_and_ttl_nodes_from_hand_written_lines() {
    let zk = Zk::connect();
    zk.create("/modes", b"");
    let open = r#""acl":[{"perms":"cdrwa","scheme":"world","id":"anyone"}]"#;
    let file = format!(
        "{{\"path\":\"/\",\"mode\":\"persistent\",{open},\"encoding\":\"utf8\",\"data\":\"\"}}\n\
         {{\"path\":\"/box\",\"mode\":\"container\",{open},\"encoding\":\"utf8\",\"data\":\"c\"}}\n\
         {{\"path\":\"/box/item\",\"mode\":\"persistent\",{open},\"encoding\":\"utf8\",\"data\":\"\"}}\n\
         {{\"path\":\"/lease\",\"mode\":\"ttl\",\"ttl_ms\":600000,{open},\"encoding\":\"utf8\",\"data\":\"t\"}}\n\
         {{\"path\":\"/lease/after\",\"mode\":\"persistent\",{open},\"encoding\":\"utf8\",\"data\":\"\"}}\n"
    );
    let out = run_with_stdin(&["import", "-", "--at", "/modes/in"], file.as_bytes());
    assert_eq!(
        (
            exit_code(out.status),
            String::from_utf8_lossy(&out.stdout).into_owned()
        ),
        (0, "created 5, skipped 0, overwritten 0\n".to_string()),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        ok(&["find", "/modes/in"]),
        "/modes/in\n/modes/in/box\n/modes/in/box/item\n/modes/in/lease\n/modes/in/lease/after\n"
    );
    let exported = ok(&["export", "/modes/in"]);
    assert_eq!(
        exported.matches("\"mode\":\"persistent\"").count(),
        5,
        "{exported}"
    );
    // The container goes once its last child is gone.
    ok(&["delete", "/modes/in/box/item"]);
    wait_until(
        "the empty container to be deleted",
        std::time::Duration::from_secs(30),
        || !zk.exists("/modes/in/box"),
    );
}
