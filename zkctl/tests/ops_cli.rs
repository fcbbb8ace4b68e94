//! End-to-end tests of the operator's commands (`acl`, `create --acl`, `sync`, `whoami`,
//! `ephemerals`, `count`, `watches remove`, `quota`, `version`, `server`): the built binary
//! against real ZooKeeper servers from the test kit, each with its bad input (a one-line
//! error and the exit code of README's table).
//!
//! The tests share one server (the test kit's watchdog stops it when this process exits);
//! each works under its own path. The four-letter-word refusal has a server of its own, with
//! a narrow `4lw.commands.whitelist`.

use std::process::Output;
use std::time::Duration;

mod support;
use support::*;
use support::{ok_plain as ok, plain_server as server, run_plain as run};
use zkrs_client::{Client, CreateMode};
use zkrs_testkit::{ServerOptions, TestingServer};

/// Runs, expecting exit `code` and exactly one line on stderr that contains `says`; returns
/// that line.
fn fails(args: &[&str], code: i32, says: &str) -> String {
    let out = run(args);
    check_failure(&out, args, code, says)
}

fn check_failure(out: &Output, args: &[&str], code: i32, says: &str) -> String {
    let err = stderr(out);
    assert_eq!(exit_code(out.status), code, "zkctl {args:?}: {err}");
    assert_eq!(
        err.lines().count(),
        1,
        "zkctl {args:?}: not one line: {err:?}"
    );
    assert!(err.starts_with("zkctl: "), "{err}");
    assert!(
        err.contains(says),
        "zkctl {args:?}: {err:?} does not say {says:?}"
    );
    assert!(
        out.stdout.is_empty(),
        "zkctl {args:?} printed {:?}",
        out.stdout
    );
    err
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn acl_get_and_set_and_create_with_acl() {
    // create --acl: read and admin for everyone, so a write is refused.
    assert_eq!(
        ok(&["create", "/ops-acl", "x", "--acl", "world:anyone:ar"]),
        "/ops-acl\n"
    );
    assert_eq!(ok(&["acl", "get", "/ops-acl"]), "world:anyone:ra\n");
    fails(&["set", "/ops-acl", "y"], 1, "NoAuth: /ops-acl");
    // Repeated --acl, and comma-separated entries (zkCli.sh's form); printed in cdrwa order.
    ok(&[
        "create",
        "/ops-acl2",
        "--acl",
        "ip:127.0.0.1:awrdc,world:anyone:r",
        "--acl",
        "digest:bob:XsUc4dlB9jNe6TmDgcWvXq+u6eE=:rw",
    ]);
    assert_eq!(
        ok(&["acl", "get", "/ops-acl2"]),
        "ip:127.0.0.1:cdrwa\nworld:anyone:r\ndigest:bob:XsUc4dlB9jNe6TmDgcWvXq+u6eE=:rw\n"
    );

    // acl set, conditional on the ACL version.
    ok(&[
        "acl",
        "set",
        "/ops-acl",
        "world:anyone:cdrwa",
        "--version",
        "0",
    ]);
    assert_eq!(ok(&["acl", "get", "/ops-acl"]), "world:anyone:cdrwa\n");
    ok(&["set", "/ops-acl", "y"]);
    fails(
        &["acl", "set", "/ops-acl", "world:anyone:r", "--version", "0"],
        1,
        "BadVersion: /ops-acl",
    );
    ok(&[
        "acl",
        "set",
        "/ops-acl",
        "world:anyone:rw",
        "ip:127.0.0.1:a",
    ]);
    assert_eq!(
        ok(&["acl", "get", "/ops-acl"]),
        "world:anyone:rw\nip:127.0.0.1:a\n"
    );

    // Bad input: malformed entries are usage errors (2), before connecting.
    fails(
        &["acl", "set", "/ops-acl", "world:anyone"],
        2,
        "scheme:id:perms",
    );
    fails(
        &["acl", "set", "/ops-acl", "world:anyone:rx"],
        2,
        "unknown permission 'x'",
    );
    fails(&["acl", "set", "/ops-acl"], 2, "required");
    fails(
        &["create", "/ops-acl3", "--acl", "anyone"],
        2,
        "scheme:id:perms",
    );
    assert_eq!(
        exit_code(run(&["get", "/ops-acl3"]).status),
        1,
        "not created"
    );
    // A node that does not exist; an ACL the server refuses.
    fails(
        &["acl", "get", "/ops-acl-missing"],
        1,
        "NoNode: /ops-acl-missing",
    );
    fails(
        &["acl", "set", "/ops-acl-missing", "world:anyone:r"],
        1,
        "NoNode: /ops-acl-missing",
    );
    fails(&["acl", "set", "/ops-acl", "auth::cdrwa"], 1, "InvalidACL");
}

#[test]
fn sync_count_and_whoami() {
    ok(&["create", "/ops-count/a/b", "--parents"]);
    ok(&["create", "/ops-count/c"]);
    // sync prints nothing; as in zkCli.sh, the path need not exist.
    assert_eq!(ok(&["sync", "/ops-count"]), "");
    assert_eq!(ok(&["sync", "/ops-sync-missing"]), "");
    fails(
        &["sync", "relative"],
        1,
        "BadArguments: path must start with '/'",
    );
    fails(&["sync"], 2, "required");

    assert_eq!(ok(&["count", "/ops-count"]), "3\n");
    assert_eq!(ok(&["count", "/ops-count/c"]), "0\n");
    fails(
        &["count", "/ops-count-missing"],
        1,
        "NoNode: /ops-count-missing",
    );

    assert_eq!(ok(&["whoami"]), "ip 127.0.0.1\n");
    let bob = SecretFile::new("ops-bob", "digest:bob:secret");
    let both = ok(&["--auth-file", bob.path(), "whoami"]);
    let mut lines: Vec<&str> = both.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["digest bob", "ip 127.0.0.1"], "{both}");
    fails(&["whoami", "extra"], 2, "unexpected argument 'extra'");
}

#[test]
fn ephemerals_of_a_resumed_session() {
    let connect = server().connect_string();
    let rt = runtime();
    let owner = rt
        .block_on(
            Client::builder(&connect)
                .session_timeout(Duration::from_secs(10))
                .connect(),
        )
        .unwrap();
    rt.block_on(async {
        owner
            .create("/ops-eph", b"", CreateMode::Persistent)
            .await
            .unwrap();
        for p in ["/ops-eph/b", "/ops-eph/a", "/ops-eph-other"] {
            owner.create(p, b"", CreateMode::Ephemeral).await.unwrap();
        }
    });
    let password = SecretFile::new("ops-eph", &password_hex(&owner.session_password()));
    let id = format!("{:#x}", owner.session_id());
    let resume = ["--resume", &id, "--resume-password-file", password.path()];
    rt.block_on(owner.detach());

    // Sorted; PATH is a prefix, as getEphemerals takes it.
    assert_eq!(
        ok(&[&resume[..], &["ephemerals", "/ops-eph/"]].concat()),
        "/ops-eph/a\n/ops-eph/b\n"
    );
    let all = ok(&[&resume[..], &["ephemerals"]].concat());
    assert_eq!(all, "/ops-eph-other\n/ops-eph/a\n/ops-eph/b\n");
    assert_eq!(
        ok(&[&resume[..], &["ephemerals", "/ops-eph"]].concat()),
        all,
        "a prefix, not a node"
    );
    // A new session has none.
    assert_eq!(ok(&["ephemerals"]), "");
    fails(&["ephemerals", "relative"], 1, "BadArguments");
    fails(&["ephemerals", "/a", "/b"], 2, "unexpected argument '/b'");
}

#[test]
fn watches_remove_asks_the_server_for_this_sessions_watches() {
    ok(&["create", "/ops-w"]);
    // zkctl's session has no watch: the server says so, for every kind.
    for kind in ["data", "children", "any"] {
        fails(
            &["watches", "remove", "/ops-w", "--kind", kind],
            1,
            "NoWatcher: /ops-w",
        );
    }
    fails(&["watches", "remove", "/ops-w"], 1, "NoWatcher: /ops-w");
    // Before 3.9 the server does not know the persistent type: one line that says what to
    // use. From 3.9 on, it knows it, and this session has none.
    let version = server().version().expect("the server's version");
    let persistent = ["watches", "remove", "/ops-w", "--kind", "persistent"];
    if version.at_least(3, 9) {
        fails(&persistent, 1, "NoWatcher: /ops-w");
    } else {
        fails(&persistent, 1, "ZooKeeper 3.9");
    }
    fails(
        &["watches", "remove", "/ops-w", "--kind", "bogus"],
        2,
        "invalid value 'bogus'",
    );
    fails(&["watches", "remove", "relative"], 1, "BadArguments");
}

#[test]
fn quota_set_get_delete_as_zkcli_keeps_them() {
    ok(&["create", "/ops-q", "ab"]);
    ok(&["create", "/ops-q/child", "cde"]);
    ok(&["quota", "set", "/ops-q", "--count", "5"]);
    // The text zkCli.sh 3.8 writes for `setquota -n 5 /ops-q`.
    let limits = "/zookeeper/quota/ops-q/zookeeper_limits";
    assert_eq!(
        ok(&["get", limits]),
        "count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1"
    );
    // The server keeps the counts: the node and its child, 5 bytes.
    let stats = "/zookeeper/quota/ops-q/zookeeper_stats";
    assert_eq!(ok(&["get", stats]), "count=2,bytes=5");
    assert_eq!(
        ok(&["quota", "get", "/ops-q"]),
        "limits count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1\nstats count=2,bytes=5\n"
    );
    // Another set keeps the limits it does not name.
    ok(&[
        "quota",
        "set",
        "/ops-q",
        "--bytes",
        "100",
        "--hard-count",
        "7",
    ]);
    assert_eq!(
        ok(&["get", limits]),
        "count=5,bytes=100=;byteHardLimit=-1;countHardLimit=7"
    );
    // No quota inside another.
    fails(
        &["quota", "set", "/ops-q/child", "--count", "1"],
        1,
        "/ops-q/child has a parent /ops-q which has a quota",
    );
    fails(
        &["quota", "set", "/", "--count", "1"],
        1,
        "has a child /ops-q which has a quota",
    );
    // delete --count unsets one limit; delete alone removes the quota's nodes.
    ok(&["quota", "delete", "/ops-q", "--count"]);
    assert_eq!(
        ok(&["get", limits]),
        "count=-1,bytes=100=;byteHardLimit=-1;countHardLimit=7"
    );
    ok(&["quota", "delete", "/ops-q"]);
    assert!(!ok(&["ls", "/zookeeper/quota"]).contains("ops-q"));
    fails(
        &["quota", "get", "/ops-q"],
        1,
        "quota for /ops-q does not exist",
    );
    fails(
        &["quota", "delete", "/ops-q"],
        1,
        "quota for /ops-q does not exist",
    );

    // Bad input.
    fails(
        &["quota", "set", "/ops-q-missing", "--count", "1"],
        1,
        "/ops-q-missing does not exist",
    );
    fails(&["quota", "get", "/ops-q-missing"], 1, "does not exist");
    fails(
        &["quota", "set", "/ops-q", "--count", "0"],
        2,
        "greater than zero",
    );
    fails(&["quota", "set", "/ops-q", "--bytes", "-1"], 2, "0 or more");
    fails(&["quota", "set", "/ops-q"], 2, "required");
    fails(
        &["quota", "set", "/zookeeper/quota", "--count", "1"],
        1,
        "cannot set a quota under the path: /zookeeper/quota",
    );
}

#[test]
fn quota_under_a_chroot_is_kept_at_the_full_path() {
    ok(&["create", "/ops-root/app", "--parents"]);
    let rooted = format!("{}/ops-root", server().connect_string());
    ok_on(&rooted, &["quota", "set", "/app", "--bytes", "10"]);
    assert_eq!(
        ok(&["get", "/zookeeper/quota/ops-root/app/zookeeper_limits"]),
        "count=-1,bytes=10=;byteHardLimit=-1;countHardLimit=-1"
    );
    assert!(ok_on(&rooted, &["quota", "get", "/app"]).starts_with("limits count=-1,bytes=10="));
    ok_on(&rooted, &["quota", "delete", "/app"]);
    assert!(!ok(&["ls", "/zookeeper/quota"]).contains("ops-root"));
}

#[test]
fn version_prints_zkctls_and_the_librarys() {
    let v = env!("CARGO_PKG_VERSION");
    // No server needed.
    let out = run_on("127.0.0.1:1", &["version"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("zkctl {v}\nzkrs-client {v}\n")
    );
    fails(&["version", "extra"], 2, "unexpected argument 'extra'");
}

#[test]
fn server_words_and_mntr_as_json() {
    assert_eq!(ok(&["server", "ruok"]), "imok\n");
    let srvr = ok(&["server", "srvr"]);
    assert!(srvr.contains("Mode: standalone"), "{srvr}");
    assert!(ok(&["server", "conf"]).contains("clientPort="));
    for word in ["stat", "cons", "envi"] {
        assert!(!ok(&["server", word]).trim().is_empty(), "{word}");
    }
    // Watches by session and by path: one set by a client of this test.
    let rt = runtime();
    let watcher = rt
        .block_on(Client::connect(&server().connect_string()))
        .unwrap();
    rt.block_on(watcher.create("/ops-4lw", b"", CreateMode::Persistent))
        .unwrap();
    // Kept (not awaited) so the watch stays registered while zkctl asks.
    let (_, _, _watch) = rt.block_on(watcher.get_data_and_watch("/ops-4lw")).unwrap();
    assert!(ok(&["server", "wchp"]).contains("/ops-4lw\n"));
    let by_session = ok(&["server", "wchc"]);
    assert!(
        by_session.contains(&format!("{:#x}", watcher.session_id())),
        "{by_session}"
    );

    let text = ok(&["server", "mntr"]);
    assert!(text.contains("zk_server_state\tstandalone\n"), "{text}");
    let json = ok(&["server", "mntr", "--json"]);
    let fields: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    // One field per line. The server adds metrics as it sees new kinds of request (the other
    // tests of this file share it), so the JSON's keys are checked between a text taken
    // before and one taken after, not against one count.
    let keys = |lines: &str| -> std::collections::BTreeSet<String> {
        lines
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_string())
            .collect()
    };
    let json_keys: std::collections::BTreeSet<String> = fields
        .iter()
        .map(|f| f["key"].as_str().expect("a key").to_string())
        .collect();
    assert_eq!(json_keys.len(), fields.len(), "one line per field: {json}");
    let after = ok(&["server", "mntr"]);
    assert!(keys(&text).is_subset(&json_keys), "{text}\n{json}");
    assert!(json_keys.is_subset(&keys(&after)), "{json}\n{after}");
    let field = |key: &str| {
        fields
            .iter()
            .find(|f| f["key"] == key)
            .unwrap_or_else(|| panic!("no {key} in {json}"))["value"]
            .clone()
    };
    assert_eq!(field("zk_server_state"), "standalone");
    assert!(field("zk_version").as_str().unwrap().starts_with("3."));
    assert!(field("zk_num_alive_connections").is_u64(), "{json}");
    assert!(field("zk_avg_latency").is_number(), "{json}");
    for f in &fields {
        assert_eq!(f.as_object().unwrap().len(), 2, "key and value only: {f}");
    }
    let srvr_json: serde_json::Value =
        serde_json::from_str(ok(&["server", "srvr", "--json"]).trim()).unwrap();
    assert_eq!(srvr_json["word"], "srvr");
    assert!(srvr_json["reply"]
        .as_str()
        .unwrap()
        .contains("Mode: standalone"));

    fails(&["server", "kill"], 2, "invalid value 'kill'");
    fails(&["server", "srvr", "--tls"], 2, "plain TCP");
    // Nothing listening.
    let out = run_on("127.0.0.1:1", &["server", "ruok"]);
    check_failure(&out, &["server", "ruok"], 1, "ruok to 127.0.0.1:1");
}

#[test]
fn a_word_left_out_of_the_whitelist_is_a_one_line_error() {
    let narrow =
        TestingServer::start_with(ServerOptions::new().config("4lw.commands.whitelist", "srvr"))
            .expect("ZooKeeper (scripts/install-zookeeper.sh)");
    let connect = narrow.connect_string();
    assert!(ok_on(&connect, &["server", "srvr"]).contains("Mode: standalone"));
    for word in ["mntr", "ruok", "conf"] {
        let out = run_on(&connect, &["server", word]);
        let line = check_failure(&out, &["server", word], 1, "4lw.commands.whitelist");
        assert!(line.contains(&format!("does not allow '{word}'")), "{line}");
    }
    let out = run_on(&connect, &["server", "mntr", "--json"]);
    check_failure(
        &out,
        &["server", "mntr", "--json"],
        1,
        "not in the server's",
    );
}

#[test]
fn a_server_enforcing_quotas_reads_the_hard_limits_zkctl_writes() {
    let enforcing = TestingServer::start_with(
        ServerOptions::new().system_property("zookeeper.enforceQuota", "true"),
    )
    .expect("ZooKeeper (scripts/install-zookeeper.sh)");
    let connect = enforcing.connect_string();
    ok_on(&connect, &["create", "/hq"]);
    // The node itself and one child: a third node is refused by the server.
    ok_on(&connect, &["quota", "set", "/hq", "--hard-count", "2"]);
    ok_on(&connect, &["create", "/hq/a"]);
    let out = run_on(&connect, &["create", "/hq/b"]);
    check_failure(&out, &["create", "/hq/b"], 1, "QuotaExceeded");
    // Unset, the limit is gone.
    ok_on(&connect, &["quota", "delete", "/hq", "--hard-count"]);
    ok_on(&connect, &["create", "/hq/b"]);
    // Bytes: 4 bytes in all (the nodes' data so far is empty).
    ok_on(&connect, &["quota", "set", "/hq", "--hard-bytes", "4"]);
    ok_on(&connect, &["set", "/hq/a", "abcd"]);
    let out = run_on(&connect, &["set", "/hq/b", "e"]);
    check_failure(&out, &["set", "/hq/b", "e"], 1, "QuotaExceeded");
}

#[test]
fn top_refreshes_the_servers_figures_with_rates() {
    // Two refreshes as JSON: the gauges each time, the rates from the second on.
    let json = ok(&[
        "--output",
        "json",
        "top",
        "--count",
        "2",
        "--interval",
        "200",
    ]);
    let views: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(views.len(), 2, "{json}");
    for view in &views {
        assert_eq!(view["state"], "standalone", "{view}");
        assert!(view["znodes"].as_u64().unwrap() >= 1, "{view}");
        assert!(view["connections"].as_u64().is_some(), "{view}");
    }
    assert!(
        views[0]["packets in/s"].is_null(),
        "no rate before a second refresh"
    );
    assert!(
        views[1]["packets in/s"].as_f64().unwrap() >= 0.0,
        "{}",
        views[1]
    );
    // As text: one `label  value` line per figure, a block per refresh.
    let text = ok(&["top", "--count", "1"]);
    assert!(text.contains("          state  standalone\n"), "{text}");
}
