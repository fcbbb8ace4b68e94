//! The `zkrs-model` binary: the connect string on stdout, the probes' four-letter words, the
//! settings given as flags, an ensemble, a clear exit 2 for a bad argument, exit 1 for a
//! taken port, and a graceful stop on SIGTERM and SIGINT.

mod support;

use std::net::TcpListener;
use std::process::Command;

use support::{four_letter_word, Model, BIN};

#[test]
fn serves_probes_then_stops_on_sigterm() {
    let model = Model::start(&["--port", "0"]);
    let addrs = model.addrs();
    assert_eq!(addrs.len(), 1, "{}", model.connect);
    let addr = addrs[0];
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");
    assert_eq!(four_letter_word(addr, "ruok"), "imok");
    assert_eq!(four_letter_word(addr, "isro"), "rw");
    let srvr = four_letter_word(addr, "srvr");
    assert!(srvr.starts_with("Zookeeper version: 3.8.0-"), "{srvr}");
    assert!(srvr.contains("\nMode: standalone\n"), "{srvr}");
    let stat = four_letter_word(addr, "stat");
    assert!(stat.contains("\nClients:\n /127.0.0.1:"), "{stat}");
    let mntr = four_letter_word(addr, "mntr");
    assert!(mntr.contains("zk_server_state\tstandalone\n"), "{mntr}");
    let conf = four_letter_word(addr, "conf");
    assert!(
        conf.starts_with(&format!("clientPort={}\n", addr.port())),
        "{conf}"
    );
    let (status, stderr) = model.signal("TERM");
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        stderr.ends_with("zkrs-model: stopped (SIGTERM)\n"),
        "{stderr}"
    );
}

#[test]
fn settings_are_flags_printed_at_start_and_applied() {
    let model = Model::start(&[
        "--port=0",
        "--tick-time",
        "100",
        "--max-session-timeout",
        "5000",
        "--ttl-nodes",
        "off",
    ]);
    let addr = model.addrs()[0];
    let conf = four_letter_word(addr, "conf");
    for line in [
        "tickTime=100",
        "minSessionTimeout=200",
        "maxSessionTimeout=5000",
    ] {
        assert!(conf.contains(&format!("\n{line}\n")), "{line}: {conf}");
    }
    // The settings are printed on stderr at start. Read once the process has stopped: the
    // thread that collects stderr may not have read them yet when the connect string is on
    // stdout (a busy machine showed it: an empty stderr).
    let (status, stderr) = model.signal("INT");
    assert_eq!(status.code(), Some(0), "{stderr}");
    for line in [
        format!("clientPort                {addr}"),
        "tickTime                  100 ms".to_owned(),
        "minSessionTimeout         200 ms".to_owned(),
        "maxSessionTimeout         5000 ms".to_owned(),
        "TTL nodes                 off (zookeeper.extendedTypesEnabled=false)".to_owned(),
        "differences from ZooKeeper 3.8:".to_owned(),
    ] {
        assert!(stderr.contains(&line), "{line}:\n{stderr}");
    }
    assert!(
        stderr.ends_with("zkrs-model: stopped (SIGINT)\n"),
        "{stderr}"
    );
}

#[test]
fn an_ensemble_has_a_leader_and_followers() {
    let model = Model::start(&["--members", "3", "--port", "0"]);
    let addrs = model.addrs();
    assert_eq!(addrs.len(), 3, "{}", model.connect);
    let modes: Vec<String> = addrs
        .iter()
        .map(|a| {
            let srvr = four_letter_word(*a, "srvr");
            let mode = srvr.lines().find_map(|l| l.strip_prefix("Mode: "));
            mode.unwrap_or_else(|| panic!("{srvr}")).to_owned()
        })
        .collect();
    assert_eq!(modes, ["leader", "follower", "follower"]);
    for (m, addr) in addrs.iter().enumerate() {
        let conf = four_letter_word(*addr, "conf");
        assert!(conf.contains(&format!("\nserverId={}\n", m + 1)), "{conf}");
    }
}

#[test]
fn a_bad_argument_exits_2_with_one_line() {
    for (args, message) in [
        (&["--port", "abc"][..], "invalid value \"abc\" for --port"),
        (
            &["--port", "65536"][..],
            "invalid value \"65536\" for --port",
        ),
        (&["--port", "-1"][..], "invalid value \"-1\" for --port"),
        (&["--members", "0"][..], "invalid value \"0\" for --members"),
        (
            &["--tick-time", "fast"][..],
            "invalid value \"fast\" for --tick-time",
        ),
        (
            &["--ttl-nodes", "maybe"][..],
            "invalid value \"maybe\" for --ttl-nodes",
        ),
        (
            &["--bind", "nowhere"][..],
            "invalid value \"nowhere\" for --bind",
        ),
        (&["--verbose"][..], "unknown option --verbose"),
        (&["--port"][..], "--port needs a value"),
    ] {
        let out = Command::new(BIN).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("zkrs-model: {message}")),
            "{args:?}: {stderr}"
        );
        assert!(stderr.ends_with("(see zkrs-model --help)\n"), "{stderr}");
    }
}

#[test]
fn a_taken_port_exits_1_and_never_picks_another() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = Command::new(BIN).args(["--port", &port]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "it served on another port");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("zkrs-model: cannot listen on 127.0.0.1:{port}: ")),
        "{stderr}"
    );
}

#[test]
fn help_and_version() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("--max-session-timeout MS"), "{help}");
    let out = Command::new(BIN).arg("-V").output().unwrap();
    let version = String::from_utf8(out.stdout).unwrap();
    assert!(version.starts_with("zkrs-model 0."), "{version}");
}
