//! zkctl's care with what it writes, runs and reads: `export --out` makes a file only its
//! owner reads and never follows a symlink; `--grace` follows the help's rule by default; the
//! command `lock` runs never runs without its watchdog, which outlives a SIGTERM to the group;
//! exit codes around a command tell zkctl's outcomes from the command's; control characters
//! reach a terminal escaped and a pipe exact; a four-letter answer is bounded.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

mod support;
use support::*;
use support::{ok_plain as ok, run_plain as run};

/// A folder of its own, removed at drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("zkctl-hard-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn join(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mode(path: &str) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn export_out_is_private_and_never_follows_a_symlink() {
    ok(&["create", "/hard-export", "x"]);
    let dir = Scratch::new("export");

    let file = dir.join("tree.jsonl");
    ok(&["export", "/hard-export", "--out", &file]);
    assert_eq!(mode(&file), 0o600, "a new export file");

    // An existing file is truncated and made private too.
    let old = dir.join("old.jsonl");
    std::fs::write(&old, "old").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    ok(&["export", "/hard-export", "--out", &old]);
    assert_eq!(mode(&old), 0o600, "an existing export file");
    assert!(std::fs::read_to_string(&old).unwrap().contains("\"path\""));

    // A symlink is refused, and its target left alone.
    let target = dir.join("target");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = run(&["export", "/hard-export", "--out", &link]);
    let err = stderr(&out);
    assert_eq!(exit_code(out.status), 1, "{err}");
    assert!(err.contains("is a symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}

#[test]
fn no_watchdog_no_command() {
    // `sh` cannot be found (PATH holds an empty folder only), the command can (an absolute
    // path): zkctl must refuse before starting it, and leave the lock.
    let dir = Scratch::new("no-sh");
    let empty = dir.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let marker = dir.join("ran");
    let child = zkctl_on(
        &plain_server().connect_string(),
        &["lock", "/hard-no-sh", "--", "/usr/bin/touch", &marker],
    )
    .env("PATH", &empty)
    .spawn()
    .unwrap();
    let out = finish(child, COMMAND_DEADLINE);
    let err = stderr(&out);
    assert!(
        !std::path::Path::new(&marker).exists(),
        "the command ran without its watchdog: {err}"
    );
    assert!(err.contains("cannot start the watchdog (sh)"), "{err}");
    assert!(err.contains("'/usr/bin/touch' was not started"), "{err}");
    // zkctl's own failure, around a command: 125.
    assert_eq!(exit_code(out.status), 125, "{err}");
    assert_eq!(ok(&["ls", "/hard-no-sh"]), "", "the lock was left");
}

/// Whether a process runs: it exists and is not a zombie.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name: `pid (comm) S ...`.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `zkctl lock LOCK --grace GRACE -- sh -c SCRIPT`, once SCRIPT has written its pid to
/// `pid_file`: the holder and the command's pid.
fn hold_running(lock: &str, grace: &str, script: &str, pid_file: &str) -> (Child, u32) {
    let holder = zkctl_on(
        &plain_server().connect_string(),
        &["lock", lock, "--grace", grace, "--", "sh", "-c", script],
    )
    .spawn()
    .unwrap();
    wait_until("the command to start", COMMAND_DEADLINE, || {
        read(pid_file).ends_with('\n')
    });
    let cmd: u32 = read(pid_file).trim().parse().unwrap();
    (holder, cmd)
}

#[test]
fn the_watchdog_outlives_the_stops_sigterm() {
    // The command survives SIGTERM (it notes it and goes on); zkctl, stopping it, waits out
    // a long grace. SIGKILLed meanwhile, zkctl can no longer send SIGKILL itself: the
    // watchdog, which got the group's SIGTERM too and ignored it, must kill the command.
    let dir = Scratch::new("term-kill");
    let (pid_file, log) = (dir.join("pid"), dir.join("log"));
    let script = format!(
        "trap 'echo term >> {log}' TERM; echo $$ > {pid_file}; while :; do sleep 0.1; done"
    );
    let (holder, cmd) = hold_running("/hard-term", "60000", &script, &pid_file);
    signal(holder.id(), "TERM");
    wait_until("the command to get SIGTERM", COMMAND_DEADLINE, || {
        read(&log).contains("term")
    });
    assert!(alive(cmd), "the command ignores SIGTERM");
    let mut holder = holder;
    holder.kill().unwrap();
    holder.wait().unwrap();
    wait_until(
        "the watchdog to kill the command",
        Duration::from_secs(5),
        || !alive(cmd),
    );
}

#[test]
fn sigterm_then_sigkill_after_the_grace() {
    // A command that ignores SIGTERM is killed once --grace has passed; zkctl exits 128+15
    // for the SIGTERM it got, and releases the lock.
    let dir = Scratch::new("grace-kill");
    let pid_file = dir.join("pid");
    let script = format!("trap '' TERM; echo $$ > {pid_file}; exec sleep 60");
    let (holder, cmd) = hold_running("/hard-grace", "300", &script, &pid_file);
    let sent = Instant::now();
    signal(holder.id(), "TERM");
    let out = finish(holder, COMMAND_DEADLINE);
    assert_eq!(exit_code(out.status), 143, "{}", stderr(&out));
    assert!(
        sent.elapsed() >= Duration::from_millis(300),
        "killed before the grace"
    );
    assert!(!alive(cmd), "the command still runs");
    assert_eq!(ok(&["ls", "/hard-grace"]), "");
}

#[test]
fn exit_codes_around_a_command_tell_zkctls_outcomes_from_cmds() {
    // CMD's own code passes through, even one zkctl uses without a command (3: a timeout).
    let out = run(&["lock", "/hard-codes", "--", "sh", "-c", "exit 3"]);
    assert_eq!(exit_code(out.status), 3, "{}", stderr(&out));

    // Not acquired within --timeout: 124, as timeout(1). A holder keeps the lock meanwhile.
    let dir = Scratch::new("codes");
    let held = dir.join("held");
    let script = format!("echo $$ > {held}; exec sleep 60");
    let holder = zkctl_on(
        &plain_server().connect_string(),
        &["lock", "/hard-codes", "--", "sh", "-c", &script],
    )
    .spawn()
    .unwrap();
    wait_until("the holder's command to start", COMMAND_DEADLINE, || {
        read(&held).ends_with('\n')
    });
    let late = run(&["lock", "/hard-codes", "--timeout", "200", "--", "true"]);
    assert_eq!(exit_code(late.status), 124, "{}", stderr(&late));
    assert!(
        stderr(&late).contains("timed out after 200 ms"),
        "{}",
        stderr(&late)
    );
    signal(holder.id(), "TERM");
    assert_eq!(exit_code(finish(holder, COMMAND_DEADLINE).status), 143);

    // CMD not found: 127; found but not executable: 126 (as shells).
    let missing = run(&["lock", "/hard-codes", "--", "/no/such/program"]);
    assert_eq!(exit_code(missing.status), 127, "{}", stderr(&missing));
    let plain_file = dir.join("not-executable");
    std::fs::write(&plain_file, "true\n").unwrap();
    std::fs::set_permissions(&plain_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let refused = run(&["lock", "/hard-codes", "--", &plain_file]);
    assert_eq!(exit_code(refused.status), 126, "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains(&format!("cannot run '{plain_file}'")),
        "{}",
        stderr(&refused)
    );

    // zkctl's own failures with a command: 125 (a usage error, a ZooKeeper error).
    let usage = run(&["lock", "/hard-codes", "--frobnicate", "--", "true"]);
    assert_eq!(exit_code(usage.status), 125, "{}", stderr(&usage));
    let usage = run(&["--frobnicate", "elect", "/hard-codes", "--", "true"]);
    assert_eq!(exit_code(usage.status), 125, "{}", stderr(&usage));
    let bad_path = run(&["barrier", "relative", "--count", "1", "--", "true"]);
    assert_eq!(exit_code(bad_path.status), 125, "{}", stderr(&bad_path));
    assert_eq!(ok(&["ls", "/hard-codes"]), "");

    // Without a command the codes stay: 2 for usage, 1 for ZooKeeper, 3 for a timeout.
    assert_eq!(exit_code(run(&["ls", "/", "--frobnicate"]).status), 2);
    assert_eq!(exit_code(run(&["get", "/hard-codes/none"]).status), 1);
    let take = run(&["queue", "take", "/hard-codes-q", "--timeout", "100"]);
    assert_eq!(exit_code(take.status), 3, "{}", stderr(&take));
}

#[test]
fn control_characters_reach_a_terminal_escaped_and_a_pipe_exact() {
    // Clear the screen, then retitle the window: what a hostile writer may leave in a node.
    let data = "\x1b[2J\x1b]0;owned\x07 \u{9b}31m done";
    ok(&["create", "/hard-esc", data]);

    // Piped (as every test runs zkctl): the exact bytes, for scripts.
    let piped = run(&["get", "/hard-esc"]);
    assert_eq!(piped.stdout, data.as_bytes());

    // On a terminal: script(1) (util-linux, in Debian's essential bsdutils) runs zkctl on a
    // pseudo-terminal and copies what it shows.
    let line = format!(
        "{} --server {} get /hard-esc",
        env!("CARGO_BIN_EXE_zkctl"),
        plain_server().connect_string()
    );
    let out = finish(
        std::process::Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .env("SHELL", "/bin/sh")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("script(1)"),
        COMMAND_DEADLINE,
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown:?} {}", stderr(&out));
    assert!(
        shown.contains(r"\u001b[2J\u001b]0;owned\u0007 \u009b31m done"),
        "{shown:?}"
    );
    assert!(
        !out.stdout.contains(&0x1b) && !shown.contains('\u{9b}'),
        "a control character reached the terminal: {shown:?}"
    );
}

#[test]
fn a_four_letter_answer_over_the_limit_is_refused() {
    // A hostile peer, not a ZooKeeper stand-in: it takes the four letters and answers with
    // 64 MiB (bounded, so that a zkctl without a limit fails this test without exhausting
    // the machine), or less if zkctl hangs up first.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let peer = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut conn, _) = listener.accept().unwrap();
        let mut word = [0u8; 4];
        conn.read_exact(&mut word).unwrap();
        let chunk = [b'x'; 64 * 1024];
        let mut sent = 0usize;
        while sent < 64 << 20 && conn.write_all(&chunk).is_ok() {
            sent += chunk.len();
        }
        sent
    });
    // The timeout is far off: zkctl must stop at the size, not wait for the time.
    let started = Instant::now();
    let child = zkctl_on(&address, &["--connect-timeout", "60000", "server", "srvr"])
        .spawn()
        .unwrap();
    let out = finish(child, COMMAND_DEADLINE);
    let err = stderr(&out);
    assert_eq!(exit_code(out.status), 1, "{err}");
    assert!(err.contains("longer than 16777216 bytes (16 MiB)"), "{err}");
    assert!(out.stdout.is_empty(), "printed part of the answer");
    let sent = peer.join().unwrap();
    eprintln!(
        "refused after {:?}; the peer got {sent} bytes out",
        started.elapsed()
    );
}
