//! kazoo (Python) against the `zkrs-model` process: it connects, writes, reads, watches and
//! leaves an ephemeral that goes with its session.
//!
//! Needs a Python with kazoo: `ZKRS_KAZOO_PYTHON`, else Debian's `/usr/bin/python3` with
//! `python3-kazoo` (which `scripts/install-zookeeper.sh` installs), else `python3` on the
//! PATH. Nothing skips: without kazoo the test fails and says how to get it.

mod support;

use std::ffi::OsString;
use std::io::Read;
use std::process::{Command, Stdio};
use std::thread;

use support::{four_letter_word, wait, Model};

const SCRIPT: &str = r#"
import sys, threading
from kazoo.client import KazooClient

zk = KazooClient(hosts=sys.argv[1], timeout=10.0)
zk.start(timeout=20)
zk.ensure_path("/kazoo/app")
zk.set("/kazoo/app", b"from kazoo")
data, stat = zk.get("/kazoo/app")
print("GET", data.decode(), stat.version)
fired = threading.Event()
zk.exists("/kazoo/app/job", watch=lambda event: fired.set())
zk.create("/kazoo/app/job", b"", ephemeral=True)
print("WATCH", fired.wait(20))
print("CHILDREN", ",".join(sorted(zk.get_children("/kazoo/app"))))
zk.stop()
zk.close()
"#;

/// A Python that imports kazoo.
fn python() -> OsString {
    let candidates: Vec<OsString> = match std::env::var_os("ZKRS_KAZOO_PYTHON") {
        Some(python) => vec![python],
        None => vec!["/usr/bin/python3".into(), "python3".into()],
    };
    for python in &candidates {
        let imports = Command::new(python)
            .args(["-c", "import kazoo"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if imports {
            return python.clone();
        }
    }
    panic!(
        "no Python with kazoo among {candidates:?}: run scripts/install-zookeeper.sh (Debian's \
         python3-kazoo), or set ZKRS_KAZOO_PYTHON to one (python3 -m venv v && v/bin/pip install \
         kazoo)"
    );
}

#[test]
fn kazoo_connects_writes_reads_and_watches() {
    let model = Model::start(&["--port", "0"]);
    let mut child = Command::new(python())
        .args(["-c", SCRIPT, &model.connect])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python");
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
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "kazoo: {status}\n{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..3],
        ["GET from kazoo 1", "WATCH True", "CHILDREN job"],
        "{out}\n{err}"
    );
    // kazoo closed its session: its ephemeral went with it.
    let mntr = four_letter_word(model.addrs()[0], "mntr");
    assert!(mntr.contains("zk_ephemerals_count\t0\n"), "{mntr}");
    assert!(mntr.contains("zk_global_sessions\t0\n"), "{mntr}");
}
