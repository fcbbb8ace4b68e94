//! Other languages' clients against the `zkrs-model` process: zkCli.sh runs a script
//! (create, get, ls, delete) and a Curator 5.4 peer takes a lock (the root crate's Java peers,
//! `tests/java`), read back with zkrs.

mod support;

#[path = "../../tests/support/mod.rs"]
mod curator_support;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;

use curator_support::{children_until, within, Peer};
use support::{wait, Model};
use zkrs_client::Client;

/// zkCli.sh: `ZKCLI`, else Debian's.
fn zkcli() -> PathBuf {
    let path = std::env::var_os("ZKCLI")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/share/zookeeper/bin/zkCli.sh"));
    assert!(
        path.is_file(),
        "{} not found: run scripts/install-zookeeper.sh (Debian's zookeeper package) or set ZKCLI",
        path.display()
    );
    path
}

#[test]
fn zkcli_runs_a_script() {
    let model = Model::start(&["--port", "0"]);
    let mut child = Command::new(zkcli())
        .args(["-server", &model.connect])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run zkCli.sh");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"create /tool hello\nget /tool\nls /\ncreate -e /tool/e\nls /tool\n\
              delete /tool/e\ndelete /tool\nls /\nquit\n",
        )
        .unwrap();
    // Read both pipes while it runs (a full pipe would stall it).
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let err = thread::spawn(move || {
        let mut err = String::new();
        let _ = stderr.read_to_string(&mut err);
        err
    });
    let status = wait(&mut child);
    let out = out.join().unwrap();
    let err = err.join().unwrap();
    assert!(status.success(), "zkCli.sh: {status}\n{out}\n{err}");
    // zkCli prints each answer on its own line of stdout, log lines aside; "Created" on stderr.
    let answers: Vec<&str> = out
        .lines()
        .filter(|l| *l == "hello" || (l.starts_with('[') && l.ends_with(']')))
        .collect();
    assert_eq!(
        answers,
        ["hello", "[tool, zookeeper]", "[e]", "[zookeeper]"],
        "{out}"
    );
    let created: Vec<&str> = err.lines().filter(|l| l.starts_with("Created ")).collect();
    assert_eq!(created, ["Created /tool", "Created /tool/e"], "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_curator_peer_takes_a_lock() {
    let model = Model::start(&["--port", "0"]);
    let path = "/tool/mutex";
    let mut peer = Peer::start("curator-mutex", &["mutex", &model.connect, path]).await;
    let node = peer.expect("ACQUIRED").await;
    assert!(node.starts_with(path), "{node}");
    // Curator's lock node, seen by another client.
    let client = within("connect", Client::connect(&model.connect))
        .await
        .expect("connect");
    let children = children_until(&client, path, "curator's lock node", |c| c.len() == 1).await;
    assert!(node.ends_with(&children[0]), "{node} {children:?}");
    assert_eq!(peer.ask("release", "RELEASED").await, "");
    peer.exit().await;
    children_until(&client, path, "no lock node left", |c| c.is_empty()).await;
}
