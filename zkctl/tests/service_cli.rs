//! `zkctl service` end to end, against a real server: an instance registered while a command
//! runs (listed with its JSON, picked, watched, gone when the command ends), a permanent one
//! registered without a command and unregistered, nodes that are not instances, nothing to
//! pick, and usage errors.
//!
//! Every wait polls a condition or reads a line under a deadline; nothing sleeps and hopes.
//! The commands run by `register` wait on their stdin, which the test writes.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

mod support;
use support::*;
use zkrs_testkit::{FaultyProxy, ServerOptions, TestingServer};

fn server() -> &'static TestingServer {
    static SERVER: OnceLock<TestingServer> = OnceLock::new();
    SERVER.get_or_init(|| TestingServer::start().expect("ZooKeeper (scripts/install-zookeeper.sh)"))
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

/// A file in the temporary folder, named for this process and test, deleted when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let path =
            std::env::temp_dir().join(format!("zkctl-service-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        Scratch(path)
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.0).unwrap_or_default()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The command `register` runs: writes its node and id to the file `$0`, then waits for a
/// line on stdin and exits with the code it reads.
const WAIT_ON_STDIN: &str =
    "echo \"$ZKCTL_SERVICE_NODE $ZKCTL_SERVICE_ID\" > \"$0\"; read -r code; exit \"$code\"";

/// `zkctl service register ... -- sh -c WAIT_ON_STDIN FILE`, its stdin a pipe the test holds.
fn register_while_waiting(args: &[&str], file: &Scratch) -> Child {
    register_on(&server().connect_string(), args, file)
}

/// [`register_while_waiting`] through `server`.
fn register_on(server: &str, args: &[&str], file: &Scratch) -> Child {
    let file = file.0.display().to_string();
    let mut all = vec!["service", "register"];
    all.extend_from_slice(args);
    all.extend(["--", "sh", "-c", WAIT_ON_STDIN, &file]);
    zkctl_on(server, &all)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Ends the command `register_while_waiting` started, with exit code `code`.
fn release(child: &mut Child, code: u8) {
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{code}").unwrap();
}

/// The lines a running zkctl prints, read on a thread.
struct Lines {
    rx: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Lines {
    fn of(child: &mut Child) -> Lines {
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines {
            rx,
            seen: Vec::new(),
        }
    }

    /// Waits (20 s at most) for a line equal to `line`.
    fn wait_for(&mut self, line: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(got) => {
                    let found = got == line;
                    self.seen.push(got);
                    if found {
                        return;
                    }
                }
                Err(_) => panic!("no line {line:?}; seen: {:?}", self.seen),
            }
        }
    }

    /// Every line, once the process has exited (its stdout closed).
    fn all(mut self) -> Vec<String> {
        self.seen.extend(self.rx.iter());
        self.seen
    }
}

/// Splits a `list`/`pick` line into `NAME ID ADDRESS:PORT` and the JSON.
fn split_line(line: &str) -> (String, String) {
    let mut parts = line.splitn(4, ' ');
    let head: Vec<&str> = parts.by_ref().take(3).collect();
    (head.join(" "), parts.next().unwrap_or_default().to_string())
}

const URI_SPEC_JSON: &str = r#"{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},{"value":"port","variable":true}]}"#;

#[test]
fn registered_while_the_command_runs_listed_picked_and_watched() {
    let base = "/svc";
    // A watch first: it sees the service from nothing.
    let mut watch = zkctl(&["service", "watch", base, "api"]).spawn().unwrap();
    let mut events = Lines::of(&mut watch);
    events.wait_for("initialized");

    let one = Scratch::new("one");
    let mut first = register_while_waiting(
        &[
            base,
            "api",
            "--address",
            "10.0.0.5",
            "--port",
            "8080",
            "--id",
            "i-1",
            "--payload",
            r#"{"zone":"a","weight":[1,2]}"#,
            "--uri-spec",
            "{scheme}://{address}:{port}",
        ],
        &one,
    );
    wait_until(
        "the first command to start",
        Duration::from_secs(20),
        || one.text().ends_with('\n'),
    );
    assert_eq!(one.text(), "/svc/api/i-1 i-1\n");
    events.wait_for("added api i-1 10.0.0.5:8080");

    // Listed with its JSON as Curator writes it (compatible format: no `enabled` key), the
    // node's bytes exactly.
    let listed = ok(&["service", "list", base, "api"]);
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let (head, json) = split_line(listed.trim_end());
    assert_eq!(head, "api i-1 10.0.0.5:8080");
    let prefix = r#"{"name":"api","id":"i-1","address":"10.0.0.5","port":8080,"sslPort":null,"payload":{"zone":"a","weight":[1,2]},"registrationTimeUTC":"#;
    assert!(json.starts_with(prefix), "{json}");
    assert!(
        json.ends_with(&format!(
            r#","serviceType":"DYNAMIC","uriSpec":{URI_SPEC_JSON}}}"#
        )),
        "{json}"
    );
    assert_eq!(ok(&["get", "/svc/api/i-1"]), json);
    let stat = ok(&["stat", "/svc/api/i-1"]);
    assert!(!stat.contains("ephemeralOwner = 0x0\n"), "{stat}");

    // Picked: the same line as listed.
    assert_eq!(ok(&["service", "pick", base, "api"]), listed);

    // A second, disabled instance (TLS port only): listed with `"enabled":false`, never picked.
    let two = Scratch::new("two");
    let second = register_while_waiting(
        &[
            base,
            "api",
            "--address",
            "10.0.0.6",
            "--ssl-port",
            "8443",
            "--id",
            "i-2",
            "--enabled",
            "false",
        ],
        &two,
    );
    events.wait_for("added api i-2 10.0.0.6:-");
    let listed = ok(&["service", "list", base, "api"]);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    let (head, json) = split_line(lines[1]);
    assert_eq!(head, "api i-2 10.0.0.6:-");
    assert!(
        json.starts_with(
            r#"{"name":"api","id":"i-2","address":"10.0.0.6","port":null,"sslPort":8443,"payload":null,"#
        ),
        "{json}"
    );
    assert!(
        json.ends_with(r#","serviceType":"DYNAMIC","uriSpec":null,"enabled":false}"#),
        "{json}"
    );
    let picked = ok(&["service", "pick", base, "api", "--count", "3"]);
    assert_eq!(
        picked,
        lines[0].to_string() + "\n" + lines[0] + "\n" + lines[0] + "\n"
    );
    let random = ok(&["service", "pick", base, "api", "--strategy", "random"]);
    assert_eq!(random, lines[0].to_string() + "\n");
    // Without NAME: the service's name, then its instances.
    assert_eq!(ok(&["service", "list", base]), format!("api\n{listed}"));

    // The first command exits 7: so does zkctl, and the instance is gone when it has exited.
    release(&mut first, 7);
    let out = finish(first, Duration::from_secs(20));
    assert_eq!(exit_code(out.status), 7, "{}", stderr(&out));
    assert_eq!(stderr(&out), "zkctl: registered /svc/api/i-1\n");
    assert_eq!(
        ok(&["service", "list", base, "api"]),
        lines[1].to_string() + "\n"
    );
    events.wait_for("removed api i-1 10.0.0.5:8080");
    // Only a disabled one is left: nothing to pick, exit 5.
    let none = run(&["service", "pick", base, "api"]);
    assert_eq!(exit_code(none.status), 5);
    assert_eq!(
        stderr(&none),
        "zkctl: nothing to pick: none of the 1 instances at /svc/api is enabled\n"
    );

    // SIGTERM to the second zkctl: its command is stopped, then it unregisters.
    wait_until(
        "the second command to start",
        Duration::from_secs(20),
        || two.text().ends_with('\n'),
    );
    signal(second.id(), "TERM");
    let out = finish(second, Duration::from_secs(20));
    assert_eq!(exit_code(out.status), 143, "{}", stderr(&out));
    events.wait_for("removed api i-2 10.0.0.6:-");
    assert_eq!(ok(&["service", "list", base, "api"]), "");

    // The watch ends on SIGTERM with exit 0 and prints what it holds (nothing now).
    signal(watch.id(), "TERM");
    let out = finish(watch, Duration::from_secs(20));
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    assert_eq!(
        events.all(),
        [
            "initialized",
            "added api i-1 10.0.0.5:8080",
            "added api i-2 10.0.0.6:-",
            "removed api i-1 10.0.0.5:8080",
            "removed api i-2 10.0.0.6:-",
        ]
    );
}

#[test]
fn permanent_instances_stay_until_unregistered_static_ones_go_with_the_command() {
    let base = "/perm";
    let out = run(&[
        "service",
        "register",
        base,
        "jobs",
        "--address",
        "batch-1",
        "--port",
        "9000",
        "--id",
        "p-1",
        "--type",
        "permanent",
        "--payload",
        "\"nightly\"",
    ]);
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "/perm/jobs/p-1\n");
    // zkctl has exited; the node is persistent and still there.
    let stat = ok(&["stat", "/perm/jobs/p-1"]);
    assert!(stat.contains("ephemeralOwner = 0x0\n"), "{stat}");
    let listed = ok(&["service", "list", base, "jobs"]);
    let (head, json) = split_line(listed.trim_end());
    assert_eq!(head, "jobs p-1 batch-1:9000");
    assert!(json.contains(r#""payload":"nightly","#), "{json}");
    assert!(
        json.ends_with(r#""serviceType":"PERMANENT","uriSpec":null}"#),
        "{json}"
    );
    assert_eq!(ok(&["service", "pick", base, "jobs"]), listed);

    // With a command, a permanent instance also stays after it ends.
    let file = Scratch::new("perm");
    let mut with_command = register_while_waiting(
        &[
            base,
            "jobs",
            "--address",
            "batch-2",
            "--port",
            "9000",
            "--id",
            "p-2",
            "--type",
            "permanent",
        ],
        &file,
    );
    wait_until("the command to start", Duration::from_secs(20), || {
        file.text().ends_with('\n')
    });
    release(&mut with_command, 0);
    let out = finish(with_command, Duration::from_secs(20));
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/perm/jobs/p-2 stays registered"),
        "{}",
        stderr(&out)
    );
    assert_eq!(ok(&["service", "list", base, "jobs"]).lines().count(), 2);

    // A static instance is persistent too, but unregistered when its command ends.
    let file = Scratch::new("static");
    let mut with_static = register_while_waiting(
        &[
            base,
            "jobs",
            "--address",
            "batch-3",
            "--port",
            "9000",
            "--id",
            "s-1",
            "--type",
            "static",
        ],
        &file,
    );
    wait_until(
        "the static command to start",
        Duration::from_secs(20),
        || file.text().ends_with('\n'),
    );
    let stat = ok(&["stat", "/perm/jobs/s-1"]);
    assert!(stat.contains("ephemeralOwner = 0x0\n"), "{stat}");
    assert!(ok(&["get", "/perm/jobs/s-1"]).contains(r#""serviceType":"STATIC""#));
    release(&mut with_static, 3);
    let out = finish(with_static, Duration::from_secs(20));
    assert_eq!(exit_code(out.status), 3, "{}", stderr(&out));
    assert_eq!(stderr(&out), "zkctl: registered /perm/jobs/s-1\n");
    assert_eq!(
        stderr(&run(&["get", "/perm/jobs/s-1"])),
        "zkctl: NoNode: /perm/jobs/s-1\n"
    );

    // unregister deletes them; a second time it is NoNode (exit 1).
    assert_eq!(ok(&["service", "unregister", base, "jobs", "p-1"]), "");
    assert_eq!(ok(&["service", "unregister", base, "jobs", "p-2"]), "");
    assert_eq!(ok(&["service", "list", base, "jobs"]), "");
    let again = run(&["service", "unregister", base, "jobs", "p-1"]);
    assert_eq!(exit_code(again.status), 1);
    assert_eq!(stderr(&again), "zkctl: NoNode: /perm/jobs/p-1\n");
}

#[test]
fn nodes_that_are_not_instances_are_named_and_skipped() {
    let base = "/mixed";
    ok(&["create", "/mixed/web/junk", "not json", "--parents"]);
    ok(&["create", "/mixed/web/no-id", r#"{"name":"web"}"#]);
    ok(&["create", "/mixed/web/zz-empty"]);
    let registered = run(&[
        "service",
        "register",
        base,
        "web",
        "--address",
        "h",
        "--port",
        "80",
        "--id",
        "ok",
        "--type",
        "permanent",
    ]);
    assert!(registered.status.success(), "{}", stderr(&registered));

    let out = run(&["service", "list", base, "web"]);
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.starts_with("web ok h:80 {\"name\":\"web\",\"id\":\"ok\","),
        "{stdout}"
    );
    let errors = stderr(&out);
    let errors: Vec<&str> = errors.lines().collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0].starts_with("zkctl: /mixed/web/junk: skipped: not a service instance: "),
        "{errors:?}"
    );
    assert_eq!(
        errors[1],
        "zkctl: /mixed/web/no-id: skipped: not a service instance: no name or no id"
    );
    assert!(
        errors[2].starts_with("zkctl: /mixed/web/zz-empty: skipped: not a service instance: "),
        "{errors:?}"
    );
    // Without NAME too, and a provider still picks the valid one.
    assert_eq!(ok(&["service", "list", base]), format!("web\n{stdout}"));
    assert_eq!(ok(&["service", "pick", base, "web"]), stdout);

    // A watch names the bad nodes there when it starts, and one written while it runs.
    let mut watch = zkctl(&["service", "watch", base, "web"]).spawn().unwrap();
    let mut events = Lines::of(&mut watch);
    events.wait_for("initialized");
    // A Java process updating the instance (updateService: a setData of its JSON).
    ok(&[
        "set",
        "/mixed/web/ok",
        r#"{"name":"web","id":"ok","address":"h","port":81,"serviceType":"PERMANENT"}"#,
    ]);
    events.wait_for("updated web ok h:81");
    ok(&["create", "/mixed/web/later", "[1,2]"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    // The one written now (the start's skipped lines are there already).
    while !events
        .seen
        .iter()
        .any(|l| l.starts_with("skipped /mixed/web/later "))
    {
        let left = deadline.saturating_duration_since(Instant::now());
        match events.rx.recv_timeout(left) {
            Ok(line) => events.seen.push(line),
            Err(_) => panic!("no skipped line: {:?}", events.seen),
        }
    }
    signal(watch.id(), "TERM");
    let out = finish(watch, Duration::from_secs(20));
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    let lines = events.all();
    // The nodes that were bad when it started are named before `initialized`, the one
    // written later as it comes.
    assert_eq!(lines[0], "added web ok h:80", "{lines:?}");
    for (line, node) in lines[1..4].iter().zip(["junk", "no-id", "zz-empty"]) {
        assert!(
            line.starts_with(&format!(
                "skipped /mixed/web/{node} not a service instance: "
            )),
            "{lines:?}"
        );
    }
    assert_eq!(
        lines[4..6],
        ["initialized", "updated web ok h:81"],
        "{lines:?}"
    );
    assert!(
        lines[6].starts_with("skipped /mixed/web/later not a service instance: "),
        "{lines:?}"
    );
    assert_eq!(lines[7..], ["instance web ok h:81"], "{lines:?}");
}

#[test]
fn nothing_to_pick_and_commands_that_cannot_start() {
    let none = run(&["service", "pick", "/nothing", "api"]);
    assert_eq!(exit_code(none.status), 5);
    assert_eq!(
        stderr(&none),
        "zkctl: nothing to pick: no instance of service api is registered at /nothing/api\n"
    );
    assert!(none.stdout.is_empty());
    // An empty registry lists nothing.
    assert_eq!(ok(&["service", "list", "/nothing"]), "");
    assert_eq!(ok(&["service", "list", "/nothing", "api"]), "");

    // A command that cannot start: exit 127, and the instance is unregistered.
    let missing = run(&[
        "service",
        "register",
        "/cannot",
        "api",
        "--address",
        "h",
        "--port",
        "1",
        "--",
        "/no/such/program",
    ]);
    assert_eq!(exit_code(missing.status), 127, "{}", stderr(&missing));
    assert_eq!(ok(&["service", "list", "/cannot", "api"]), "");
}

#[test]
fn bad_arguments_exit_with_the_usage_code() {
    let register = ["service", "register", "/s", "api"];
    for (args, message) in [
        (
            &["--port", "80", "--", "true"][..],
            "the following required arguments were not provided: --address <A>; usage: zkctl \
             service register --address <A> <--port <P>|--ssl-port <P>> <BASE> <NAME> -- <CMD>...",
        ),
        (
            &["--address", "h", "--", "true"][..],
            "the following required arguments were not provided: <--port <P>|--ssl-port <P>>; \
             usage: zkctl service register --address <A> <--port <P>|--ssl-port <P>> <BASE> \
             <NAME> -- <CMD>...",
        ),
        (
            &["--address", "h", "--port", "65536", "--", "true"][..],
            "invalid value '65536' for '--port <P>': not a port number (1-65535)",
        ),
        (
            &[
                "--address",
                "h",
                "--port",
                "80",
                "--type",
                "forever",
                "--",
                "true",
            ][..],
            "invalid value 'forever' for '--type <TYPE>' [possible values: dynamic, static, \
             permanent]",
        ),
        (
            &[
                "--address",
                "h",
                "--port",
                "80",
                "--payload",
                "{zone:a}",
                "--",
                "true",
            ][..],
            "--payload is not JSON (key must be a string at line 1 column 2)",
        ),
        (
            &[
                "--address",
                "h",
                "--port",
                "80",
                "--uri-spec",
                "{port",
                "--",
                "true",
            ][..],
            "--uri-spec: uri spec \"{port\": a variable is not closed",
        ),
        (
            &["--address", "h", "--port", "80"][..],
            "'service register' needs -- CMD to run while registered: a dynamic instance's \
             node is ephemeral and goes with zkctl's session (--type permanent registers and \
             exits)",
        ),
    ] {
        let mut all = register.to_vec();
        all.extend_from_slice(args);
        let out = run(&all);
        // With `-- CMD` zkctl's own failures exit 125, out of CMD's way.
        let code = if all.contains(&"--") { 125 } else { 2 };
        assert_eq!(exit_code(out.status), code, "{all:?}");
        assert_eq!(
            stderr(&out),
            format!("zkctl: {message} (see zkctl --help)\n"),
            "{all:?}"
        );
        assert!(out.stdout.is_empty());
    }
    // Nothing was registered by any of them.
    assert_eq!(ok(&["service", "list", "/s"]), "");
    for args in [
        &["service"][..],
        &["service", "find", "/s"],
        &["service", "pick", "/s"],
        &["service", "pick", "/s", "api", "--strategy", "sticky"],
        &["service", "watch", "/s", "api", "--count", "2"],
        &["service", "unregister", "/s", "api"],
    ] {
        let out = run(args);
        assert_eq!(exit_code(out.status), 2, "{args:?}");
        assert_eq!(stderr(&out).lines().count(), 1, "{args:?}");
    }
    let help = ok(&["service", "--help"]);
    assert!(
        help.contains("Usage: zkctl service [OPTIONS] <COMMAND>")
            && ["register", "unregister", "list", "watch", "pick"]
                .iter()
                .all(|action| help.contains(&format!("\n  {action} "))),
        "{help}"
    );
    assert!(ok(&["--help"]).contains("5 no instance to pick"));
}

#[test]
fn a_dynamic_instance_comes_back_after_a_restart_and_an_expired_session() {
    // Its own server; the registering zkctl reaches it through a proxy that can cut it off,
    // the observers directly.
    let own = TestingServer::start_with(ServerOptions::new().max_session_timeout_ms(4000))
        .expect("ZooKeeper");
    let proxy = FaultyProxy::start(own.address()).unwrap();
    let direct = own.connect_string();
    let list = || {
        let out = finish(
            zkctl_on(&direct, &["service", "list", "/far", "api"])
                .spawn()
                .unwrap(),
            Duration::from_secs(20),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let mut watch = zkctl_on(&direct, &["service", "watch", "/far", "api"])
        .spawn()
        .unwrap();
    let mut events = Lines::of(&mut watch);
    events.wait_for("initialized");

    let file = Scratch::new("far");
    let mut registered = register_on(
        &proxy.connect_string(),
        &[
            "--session-timeout",
            "2000",
            "/far",
            "api",
            "--address",
            "10.0.0.7",
            "--port",
            "80",
            "--id",
            "far-1",
        ],
        &file,
    );
    wait_until("the command to start", Duration::from_secs(20), || {
        file.text().ends_with('\n')
    });
    events.wait_for("added api far-1 10.0.0.7:80");
    let first = list();
    assert!(first.starts_with("api far-1 10.0.0.7:80 {"), "{first}");

    // A server restart: the connection drops and comes back; the instance is there after it.
    own.restart().unwrap();
    wait_until(
        "the instance after a restart",
        Duration::from_secs(30),
        || list() == first,
    );

    // Cut off past the session timeout: the server expires the session and its ephemeral
    // node; once back, zkctl registers the instance again (the same JSON), CMD still running.
    proxy.partition();
    wait_until("the session to expire", Duration::from_secs(30), || {
        list().is_empty()
    });
    events.wait_for("removed api far-1 10.0.0.7:80");
    proxy.heal();
    wait_until("the instance to come back", Duration::from_secs(30), || {
        list() == first
    });
    events.wait_for("added api far-1 10.0.0.7:80");

    release(&mut registered, 0);
    let out = finish(registered, Duration::from_secs(20));
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    assert_eq!(list(), "");
    signal(watch.id(), "TERM");
    let out = finish(watch, Duration::from_secs(20));
    assert_eq!(exit_code(out.status), 0, "{}", stderr(&out));
    eprintln!(
        "service events across a restart and an expiry: {:?}",
        events.all()
    );
}
