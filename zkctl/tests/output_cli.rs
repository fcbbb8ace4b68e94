//! End-to-end tests of `--output json`: the built binary against a real ZooKeeper server from
//! the test kit. Every line a command prints on stdout is parsed with serde_json and its
//! fields checked against README's table (names, types, values); a failure is one JSON object
//! on stderr. Text output is checked unchanged where it sits beside the JSON.
//!
//! The tests share one server (the test kit's watchdog stops it when this process exits);
//! each works under its own path.

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

mod support;
use serde_json::{json, Value};
use support::*;
use support::{ok_plain as ok, plain_server as server, run_plain as run};

/// Runs with `--output json` (after the command, as a global flag may be), expecting success
/// and nothing on stderr; every stdout line parsed.
fn json_lines(args: &[&str]) -> Vec<Value> {
    let mut with = args.to_vec();
    with.extend(["--output", "json"]);
    let out = run(&with);
    assert!(
        out.status.success(),
        "zkctl {with:?} failed ({}): {}",
        out.status,
        stderr(&out)
    );
    parse_lines(&out.stdout, &with)
}

/// Each line of `bytes` as a JSON object (a line that is not one fails the test).
fn parse_lines(bytes: &[u8], args: &[&str]) -> Vec<Value> {
    let text = String::from_utf8(bytes.to_vec()).expect("utf-8 stdout");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "zkctl {args:?}: last line unterminated: {text:?}"
    );
    text.lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("zkctl {args:?}: not JSON ({e}): {line:?}"));
            assert!(value.is_object(), "zkctl {args:?}: not an object: {line}");
            value
        })
        .collect()
}

/// The object's keys, sorted (to check a record has exactly its documented fields).
fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

const STAT_FIELDS: [&str; 11] = [
    "aversion",
    "ctime",
    "cversion",
    "czxid",
    "dataLength",
    "ephemeralOwner",
    "mtime",
    "mzxid",
    "numChildren",
    "pzxid",
    "version",
];

#[test]
fn get_and_stat() {
    ok(&["create", "/out-get", "hello \"world\"\n"]);
    ok(&["set", "/out-get", "hello \"world\"\n"]);
    let lines = json_lines(&["get", "/out-get"]);
    assert_eq!(lines.len(), 1);
    let node = &lines[0];
    assert_eq!(keys(node), ["data", "encoding", "path", "stat"]);
    assert_eq!(node["path"], "/out-get");
    assert_eq!(node["data"], "hello \"world\"\n");
    assert_eq!(node["encoding"], "utf8");
    assert_eq!(keys(&node["stat"]), STAT_FIELDS);
    assert_eq!(node["stat"]["version"], 1);
    assert_eq!(node["stat"]["dataLength"], 14);
    assert_eq!(node["stat"]["numChildren"], 0);
    assert_eq!(node["stat"]["ephemeralOwner"], 0);
    assert!(node["stat"]["mtime"].as_i64().unwrap() >= node["stat"]["ctime"].as_i64().unwrap());
    assert!(node["stat"]["mzxid"].as_i64().unwrap() > node["stat"]["czxid"].as_i64().unwrap());
    // Text is unchanged: the raw bytes.
    assert_eq!(ok(&["get", "/out-get"]), "hello \"world\"\n");

    // `stat`: the same Stat, without the data.
    let stat = json_lines(&["stat", "/out-get"]);
    assert_eq!(stat.len(), 1);
    assert_eq!(keys(&stat[0]), ["path", "stat"]);
    assert_eq!(stat[0]["path"], "/out-get");
    assert_eq!(stat[0]["stat"], node["stat"]);
    assert!(ok(&["stat", "/out-get"]).contains("dataVersion = 1\n"));
}

#[test]
fn binary_data_is_base64() {
    // Data that is not UTF-8 (awkward to pass as an argument: the client writes it).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = zkrs_client::Client::connect(&server().connect_string())
            .await
            .unwrap();
        client
            .create(
                "/out-binary",
                &[0xff, 0x00, 0xfe],
                zkrs_client::CreateMode::Persistent,
            )
            .await
            .unwrap();
        client.close().await.unwrap();
    });
    let lines = json_lines(&["get", "/out-binary"]);
    assert_eq!(lines[0]["encoding"], "base64");
    assert_eq!(lines[0]["data"], "/wD+");
}

#[test]
fn ls_is_one_object_per_child() {
    ok(&["create", "/out-ls"]);
    for name in ["b", "a", "c d"] {
        ok(&["create", &format!("/out-ls/{name}")]);
    }
    let lines = json_lines(&["ls", "/out-ls"]);
    assert_eq!(
        lines,
        [
            json!({"path": "/out-ls/a", "name": "a"}),
            json!({"path": "/out-ls/b", "name": "b"}),
            json!({"path": "/out-ls/c d", "name": "c d"}),
        ]
    );
    assert_eq!(ok(&["ls", "/out-ls"]), "a\nb\nc d\n");
    assert!(json_lines(&["ls", "/out-ls/a"]).is_empty());
}

#[test]
fn create_prints_the_path() {
    ok(&["create", "/out-create"]);
    // The flag before the command works as well as after it.
    let out = run(&[
        "--output",
        "json",
        "create",
        "/out-create/job-",
        "x",
        "--sequential",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = parse_lines(&out.stdout, &["create"]);
    assert_eq!(lines.len(), 1);
    assert_eq!(keys(&lines[0]), ["path"]);
    assert_eq!(lines[0]["path"], "/out-create/job-0000000000");
}

#[test]
fn members_with_their_data() {
    ok(&["create", "/out-group"]);
    ok(&["create", "/out-group/web-2", "10.0.0.2:80"]);
    ok(&["create", "/out-group/web-1"]);
    let lines = json_lines(&["members", "/out-group"]);
    assert_eq!(
        lines,
        [
            json!({"id": "web-1", "path": "/out-group/web-1", "data": "", "encoding": "utf8"}),
            json!({"id": "web-2", "path": "/out-group/web-2", "data": "10.0.0.2:80", "encoding": "utf8"}),
        ]
    );
    assert_eq!(ok(&["members", "/out-group"]), "web-1\nweb-2 10.0.0.2:80\n");
}

#[test]
fn acl_get_entries() {
    ok(&[
        "create",
        "/out-acl",
        "--acl",
        "world:anyone:r",
        "--acl",
        "ip:127.0.0.1:cdrwa",
    ]);
    let lines = json_lines(&["acl", "get", "/out-acl"]);
    assert_eq!(
        lines,
        [
            json!({"scheme": "world", "id": "anyone", "perms": "r"}),
            json!({"scheme": "ip", "id": "127.0.0.1", "perms": "cdrwa"}),
        ]
    );
}

#[test]
fn count_du_and_find() {
    ok(&["create", "/out-tree"]);
    ok(&["create", "/out-tree/big", "0123456789"]);
    ok(&["create", "/out-tree/big/job-1", "12345"]);
    ok(&["create", "/out-tree/small", "x"]);

    let count = json_lines(&["count", "/out-tree"]);
    assert_eq!(count, [json!({"path": "/out-tree", "count": 3})]);
    assert_eq!(ok(&["count", "/out-tree"]), "3\n");

    let du = json_lines(&["du", "/out-tree"]);
    assert_eq!(
        du,
        [
            json!({"path": "/out-tree/big", "bytes": 15, "nodes": 2}),
            json!({"path": "/out-tree/small", "bytes": 1, "nodes": 1}),
            json!({"path": "/out-tree", "bytes": 16, "nodes": 4}),
        ]
    );

    let found = json_lines(&["find", "/out-tree", "--name", "job-*"]);
    assert_eq!(found, [json!({"path": "/out-tree/big/job-1"})]);
    let found = json_lines(&["find", "/out-tree", "--data", "^[0-9]+$"]);
    assert_eq!(
        found,
        [
            json!({"path": "/out-tree/big"}),
            json!({"path": "/out-tree/big/job-1"})
        ]
    );
}

#[test]
fn whoami_and_version() {
    let who = json_lines(&["whoami"]);
    assert!(!who.is_empty());
    for identity in &who {
        assert_eq!(keys(identity), ["id", "scheme"]);
    }
    assert!(
        who.contains(&json!({"scheme": "ip", "id": "127.0.0.1"})),
        "{who:?}"
    );
    let version = json_lines(&["version"]);
    assert_eq!(version.len(), 1);
    assert_eq!(keys(&version[0]), ["zkctl", "zkrs_client"]);
    assert_eq!(version[0]["zkctl"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn watch_events() {
    ok(&["create", "/out-watch", "0"]);
    let mut child = zkctl_on(
        &server().connect_string(),
        &[
            "--output",
            "json",
            "watch",
            "/out-watch",
            "--recursive",
            "--count",
            "2",
        ],
    )
    .spawn()
    .unwrap();
    // The line on stderr that says the watch is in place stays text (a status line).
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
    assert!(first.contains("watching /out-watch"), "{first}");
    ok(&["create", "/out-watch/kid", "1"]);
    ok(&["set", "/out-watch", "2"]);
    let done = finish(child, Duration::from_secs(10));
    assert!(done.status.success());
    let lines = parse_lines(&done.stdout, &["watch"]);
    assert_eq!(
        lines,
        [
            json!({"type": "NodeCreated", "path": "/out-watch/kid", "state": "SyncConnected"}),
            json!({"type": "NodeDataChanged", "path": "/out-watch", "state": "SyncConnected"}),
        ]
    );
}

#[test]
fn errors_are_one_json_object_on_stderr() {
    // A ZooKeeper error: exit 1, the code's name.
    let out = run(&["get", "/out-missing/x", "--output", "json"]);
    assert_eq!(exit_code(out.status), 1);
    assert!(out.stdout.is_empty());
    let err = parse_lines(&out.stderr, &["get"]);
    assert_eq!(
        err,
        [json!({"error": "NoNode: /out-missing/x", "code": "NoNode", "exit": 1})]
    );
    // A usage error, found before the flags are known: still JSON, exit 2.
    let out = run(&["--output", "json", "get", "/a", "--frob"]);
    assert_eq!(exit_code(out.status), 2);
    let err = parse_lines(&out.stderr, &["--frob"]);
    assert_eq!(err.len(), 1);
    assert_eq!(keys(&err[0]), ["code", "error", "exit"]);
    assert_eq!(err[0]["code"], "usage");
    assert_eq!(err[0]["exit"], 2);
    assert!(
        err[0]["error"]
            .as_str()
            .unwrap()
            .starts_with("unexpected argument '--frob' found"),
        "{err:?}"
    );
    // A malformed ACL (usage, exit 2) and an error without a ZooKeeper code (null).
    let out = run(&["--output", "json", "acl", "set", "/a", "world:anyone:q"]);
    assert_eq!(exit_code(out.status), 2);
    assert_eq!(parse_lines(&out.stderr, &["acl"])[0]["code"], "usage");
    let out = run(&["--output", "json", "quota", "get", "/out-missing"]);
    assert_eq!(exit_code(out.status), 1);
    let err = parse_lines(&out.stderr, &["quota"]);
    assert_eq!(err[0]["code"], Value::Null);
    assert_eq!(err[0]["error"], "/out-missing does not exist");
    // Text errors are unchanged.
    let out = run(&["get", "/out-missing/x"]);
    assert_eq!(stderr(&out), "zkctl: NoNode: /out-missing/x\n");
    // --output json with a value clap refuses: a usage error, as JSON only if json was asked.
    let out = run(&["ls", "/", "--output", "yaml"]);
    assert_eq!(exit_code(out.status), 2);
    assert!(
        stderr(&out).starts_with("zkctl: invalid value 'yaml'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn counter_queue_and_diff() {
    let counter = json_lines(&["counter", "/out-counter", "add", "5"]);
    assert_eq!(counter, [json!({"path": "/out-counter", "value": 5})]);

    let put = json_lines(&["queue", "put", "/out-queue", "job", "--simple"]);
    assert_eq!(put, [json!({"path": "/out-queue/qn-0000000000"})]);
    let take = json_lines(&["queue", "take", "/out-queue", "--simple"]);
    assert_eq!(take, [json!({"data": "job", "encoding": "utf8"})]);

    ok(&["create", "/out-diff-a"]);
    ok(&["create", "/out-diff-a/x", "1"]);
    ok(&["create", "/out-diff-b"]);
    ok(&["create", "/out-diff-b/x", "2"]);
    ok(&["create", "/out-diff-b/y"]);
    let out = run(&["diff", "/out-diff-a", "/out-diff-b", "--output", "json"]);
    assert_eq!(exit_code(out.status), 1, "{}", stderr(&out));
    assert_eq!(
        parse_lines(&out.stdout, &["diff"]),
        [
            json!({"kind": "data", "path": "/x"}),
            json!({"kind": "only-right", "path": "/y"}),
        ]
    );
}

#[test]
fn tree_and_cache() {
    ok(&["create", "/out-view"]);
    ok(&["create", "/out-view/a", "1"]);
    ok(&["create", "/out-view/a/b"]);
    let tree = json_lines(&["tree", "/out-view"]);
    assert_eq!(
        tree,
        [
            json!({"path": "/out-view", "depth": 0}),
            json!({"path": "/out-view/a", "depth": 1}),
            json!({"path": "/out-view/a/b", "depth": 2}),
        ]
    );
    // `cache --for`: the start's events, then the view (one `node` record per node).
    let cache = json_lines(&["cache", "/out-view", "--for", "1000"]);
    let nodes: Vec<&Value> = cache.iter().filter(|r| r["kind"] == "node").collect();
    assert_eq!(
        nodes,
        [
            &json!({"kind": "node", "path": "/out-view", "version": 0, "data": "", "encoding": "utf8"}),
            &json!({"kind": "node", "path": "/out-view/a", "version": 0, "data": "1", "encoding": "utf8"}),
            &json!({"kind": "node", "path": "/out-view/a/b", "version": 0, "data": "", "encoding": "utf8"}),
        ]
    );
    assert!(cache.contains(&json!({"kind": "initialized"})), "{cache:?}");
    assert!(
        cache.contains(&json!({"kind": "added", "path": "/out-view/a", "version": 0})),
        "{cache:?}"
    );
}

#[test]
fn service_list_and_config() {
    ok(&[
        "service",
        "register",
        "/out-svc",
        "api",
        "--address",
        "10.0.0.5",
        "--port",
        "8080",
        "--type",
        "permanent",
        "--id",
        "i1",
    ]);
    let list = json_lines(&["service", "list", "/out-svc"]);
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(keys(&list[0]), ["address", "id", "json", "name", "port"]);
    assert_eq!(list[0]["name"], "api");
    assert_eq!(list[0]["id"], "i1");
    assert_eq!(list[0]["address"], "10.0.0.5");
    assert_eq!(list[0]["port"], 8080);
    assert_eq!(list[0]["json"]["serviceType"], "PERMANENT");

    // A standalone server: no member lines, a version.
    let config = json_lines(&["config"]);
    assert_eq!(config.len(), 1);
    assert_eq!(keys(&config[0]), ["members", "version"]);
    assert!(config[0]["members"].is_array());
}

#[test]
fn import_quota_and_server_word() {
    ok(&["create", "/out-imp"]);
    ok(&["create", "/out-imp/a", "1"]);
    let file = std::env::temp_dir().join(format!("zkctl-output-{}.jsonl", std::process::id()));
    let file = file.to_str().unwrap().to_string();
    ok(&["export", "/out-imp", "--out", &file]);
    ok(&["create", "/out-imp2"]);
    let plan = json_lines(&["import", &file, "--at", "/out-imp2", "--dry-run"]);
    assert_eq!(
        plan,
        [
            json!({"action": "skip", "path": "/out-imp2"}),
            json!({"action": "create", "path": "/out-imp2/a"}),
        ]
    );
    let done = json_lines(&["import", &file, "--at", "/out-imp2"]);
    assert_eq!(
        done,
        [json!({"created": 1, "skipped": 1, "overwritten": 0})] // --at itself: kept
    );
    let _ = std::fs::remove_file(&file);

    ok(&["quota", "set", "/out-imp", "--count", "10"]);
    let quota = json_lines(&["quota", "get", "/out-imp"]);
    assert_eq!(quota.len(), 1);
    assert_eq!(keys(&quota[0]), ["limits", "path", "stats"]);
    assert_eq!(quota[0]["path"], "/out-imp");
    assert!(
        quota[0]["limits"]
            .as_str()
            .unwrap()
            .starts_with("count=10,"),
        "{quota:?}"
    );

    // `server WORD` answers as with --json.
    let srvr = json_lines(&["server", "srvr"]);
    assert_eq!(srvr.len(), 1);
    assert_eq!(keys(&srvr[0]), ["reply", "server", "word"]);
    assert_eq!(srvr[0]["word"], "srvr");
    assert!(srvr[0]["reply"]
        .as_str()
        .unwrap()
        .contains("Zookeeper version"));
}
