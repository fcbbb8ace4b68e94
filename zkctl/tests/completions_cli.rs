//! `zkctl completions bash|zsh|fish`: each prints a script that knows zkctl's commands and
//! flags; bash's is sourced by bash (when bash is on the machine) to show it parses and
//! registers the completion. No server needed.

mod support;

use std::process::{Command, Output, Stdio};

use support::{exit_code, finish, run_on, stderr, COMMAND_DEADLINE};

/// Runs `zkctl --server ... ARGS`: the server is never used (these commands do not connect;
/// nothing listens at port 1).
fn zkctl(args: &[&str]) -> Output {
    run_on("127.0.0.1:1", args)
}

fn script(shell: &str) -> String {
    let out = zkctl(&["completions", shell]);
    assert!(out.status.success(), "{shell}: {}", stderr(&out));
    assert!(out.stderr.is_empty(), "{shell}: {}", stderr(&out));
    String::from_utf8(out.stdout).expect("utf-8 script")
}

#[test]
fn every_shell_gets_the_commands_and_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let text = script(shell);
        for word in [
            "lock",
            "elect",
            "members",
            "service",
            "register",
            "reconfig",
            "completions",
            "session-timeout",
            "follow-ensemble",
            "lock-path",
        ] {
            assert!(text.contains(word), "{shell} script lacks {word}");
        }
    }
    // Possible values come along: `--type` of `service register`, bench's kinds.
    let fish = script("fish");
    assert!(fish.contains("permanent"), "{fish}");
    assert!(fish.contains("latch"), "{fish}");
}

#[test]
fn bash_sources_the_script() {
    let have_bash = Command::new("bash")
        .args(["-c", "true"])
        .status()
        .is_ok_and(|s| s.success());
    // Not a skip: zkctl's scripts and CI run on bash, so a machine without it is broken.
    assert!(
        have_bash,
        "bash is needed to check the completion script's syntax (Debian: apt-get install bash)"
    );
    let path = std::env::temp_dir().join(format!("zkctl-completion-{}.bash", std::process::id()));
    std::fs::write(&path, script("bash")).unwrap();
    // Sourcing defines the function and registers it for zkctl; `complete -p` prints that.
    let child = Command::new("bash")
        .args([
            "--norc",
            "--noprofile",
            "-c",
            "source \"$1\" && complete -p zkctl",
        ])
        .arg("bash")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = finish(child, COMMAND_DEADLINE);
    let _ = std::fs::remove_file(&path);
    assert!(out.status.success(), "bash: {}", stderr(&out));
    assert!(out.stderr.is_empty(), "bash: {}", stderr(&out));
    let registered = String::from_utf8_lossy(&out.stdout);
    assert!(registered.contains("zkctl"), "{registered}");
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = zkctl(&["completions", "tcsh"]);
    assert_eq!(exit_code(out.status), 2);
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("zkctl: invalid value 'tcsh' for '<SHELL>'"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
