//! zkCli.sh's flags and commands, tried as an operator used to zkCli.sh would: each means in
//! zkctl what it means in zkCli.sh (ZooKeeper 3.8's `cli/*Command.java`), against a real
//! server from the test kit.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc;
use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

mod support;
use support::*;
use zkrs_testkit::{ServerOptions, TestingServer};

const WAIT: Duration = Duration::from_secs(20);

/// A server that checks containers and TTL nodes every 100 ms (default: every minute), so
/// a test sees them go.
fn server() -> &'static TestingServer {
    static SERVER: OnceLock<TestingServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        let options =
            ServerOptions::new().system_property("znode.container.checkIntervalMs", "100");
        TestingServer::start_with(options).expect("ZooKeeper (scripts/install-zookeeper.sh)")
    })
}

fn ok(args: &[&str]) -> String {
    ok_on(&server().connect_string(), args)
}

fn exists(path: &str) -> bool {
    run_on(&server().connect_string(), &["stat", path])
        .status
        .success()
}

/// Starts `zkctl ARGS` and waits for its stderr line saying the watch is in place.
fn watching(args: &[&str]) -> Child {
    let mut child = zkctl_on(&server().connect_string(), args).spawn().unwrap();
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx.recv_timeout(WAIT).expect("the watch is in place");
    assert!(line.contains("watching"), "{line}");
    child
}

#[test]
fn ls_recursive_lists_every_path_and_ls_s_adds_the_stat() {
    ok(&["create", "/habits-ls", "top"]);
    ok(&["create", "/habits-ls/a"]);
    ok(&["create", "/habits-ls/a/b"]);
    ok(&["create", "/habits-ls/c"]);
    assert_eq!(
        ok(&["ls", "-R", "/habits-ls"]),
        "/habits-ls\n/habits-ls/a\n/habits-ls/a/b\n/habits-ls/c\n"
    );
    assert_eq!(ok(&["ls", "-R", "/habits-ls"]), ok(&["find", "/habits-ls"]));
    let with_stat = ok(&["ls", "-s", "/habits-ls"]);
    let stat = ok(&["stat", "/habits-ls"]);
    assert_eq!(with_stat, format!("a\nc\n{stat}"));
    assert!(stat.contains("numChildren = 2\n"), "{stat}");
}

#[test]
fn create_e_s_holds_an_ephemeral_sequential_node() {
    ok(&["create", "/habits-create"]);
    let mut child = zkctl_on(
        &server().connect_string(),
        &["create", "-e", "-s", "/habits-create/x", "data"],
    )
    .spawn()
    .unwrap();
    let pid = child.id();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "/habits-create/x0000000000\n");
    let node = line.trim_end();
    assert_eq!(ok(&["get", node]), "data");
    let stat = ok(&["stat", node]);
    assert!(!stat.contains("ephemeralOwner = 0x0\n"), "{stat}");
    signal(pid, "TERM");
    finish(child, WAIT);
    assert!(!exists(node));
}

#[test]
fn create_c_makes_a_container_the_server_removes_when_emptied() {
    assert_eq!(ok(&["create", "-c", "/habits-box"]), "/habits-box\n");
    ok(&["create", "/habits-box/kid"]);
    ok(&["delete", "/habits-box/kid"]);
    // A persistent node would stay; a container goes once its last child is gone.
    wait_until("the container to go", WAIT, || !exists("/habits-box"));
}

#[test]
fn create_t_makes_a_node_with_a_time_to_live() {
    assert_eq!(ok(&["create", "-t", "200", "/habits-ttl"]), "/habits-ttl\n");
    wait_until("the TTL node to go", WAIT, || !exists("/habits-ttl"));
}

#[test]
fn get_s_prints_the_data_then_the_stat() {
    ok(&["create", "/habits-get", "hello"]);
    let stat = ok(&["stat", "/habits-get"]);
    assert_eq!(ok(&["get", "-s", "/habits-get"]), format!("hello\n{stat}"));
}

#[test]
fn get_w_prints_the_data_then_the_watch_event() {
    ok(&["create", "/habits-get-w", "before"]);
    let child = watching(&["get", "-w", "/habits-get-w"]);
    ok(&["set", "/habits-get-w", "after"]);
    let done = finish(child, WAIT);
    assert!(done.status.success(), "{}", stderr(&done));
    assert_eq!(
        String::from_utf8(done.stdout).unwrap(),
        "beforeNodeDataChanged /habits-get-w\n"
    );
}

#[test]
fn stat_w_prints_the_stat_then_the_watch_event() {
    ok(&["create", "/habits-stat-w"]);
    let stat = ok(&["stat", "/habits-stat-w"]);
    let child = watching(&["stat", "-w", "/habits-stat-w"]);
    ok(&["delete", "/habits-stat-w"]);
    let done = finish(child, WAIT);
    assert!(done.status.success(), "{}", stderr(&done));
    assert_eq!(
        String::from_utf8(done.stdout).unwrap(),
        format!("{stat}NodeDeleted /habits-stat-w\n")
    );
}

#[test]
fn deleteall_deletes_the_subtree() {
    ok(&["create", "/habits-rm"]);
    ok(&["create", "/habits-rm/a"]);
    ok(&["create", "/habits-rm/a/b"]);
    assert_eq!(ok(&["deleteall", "/habits-rm"]), "");
    assert!(!exists("/habits-rm"));
}
