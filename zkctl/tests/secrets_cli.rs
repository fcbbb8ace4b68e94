//! No secret on the command line: `--auth` and `--resume` with a password are refused
//! (argv shows in `ps`, `/proc/PID/cmdline`, a `lock -- CMD` child's view and shell
//! history) with a usage error that says how to pass it, never echoing it; `--auth-file`
//! and `--resume ID --resume-password-file FILE` read it from a file, against a real server.

use std::time::Duration;

mod support;
use support::*;
use support::{ok_plain as ok, plain_server as server, run_plain as run};
use zkrs_client::{Client, CreateMode};

const PASSWORD: &str = "hunter2-zkrs";

/// A usage error (exit 2, one line) that says `says` and does not repeat `secret`.
fn refused(args: &[&str], says: &str, secret: &str) {
    let out = run(args);
    let err = stderr(&out);
    assert_eq!(exit_code(out.status), 2, "zkctl {args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(err.contains(says), "{err:?} does not say {says:?}");
    assert!(
        !err.contains(secret),
        "the error repeats the secret: {err:?}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn an_inline_password_is_refused_with_the_way_to_pass_it() {
    let auth = format!("digest:bob:{PASSWORD}");
    refused(&["--auth", &auth, "whoami"], "--auth-file FILE", PASSWORD);
    refused(
        &["whoami", &format!("--auth={auth}")],
        "--auth-file FILE",
        PASSWORD,
    );
    refused(
        &["--resume", "0x1234:68756e74657232", "whoami"],
        "--resume-password-file FILE",
        "68756e74657232",
    );
    refused(
        &["--resume", "0x1234", "whoami"],
        "--resume-password-file FILE",
        "\0",
    );
    refused(
        &["--resume-password-file", "/f", "whoami"],
        "needs --resume ID",
        "\0",
    );
}

#[test]
fn auth_file_gives_the_session_its_identity() {
    let file = SecretFile::new("auth", &format!("digest:bob:{PASSWORD}\nignored\n"));
    let both = ok(&["--auth-file", file.path(), "whoami"]);
    let mut lines: Vec<&str> = both.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["digest bob", "ip 127.0.0.1"], "{both}");

    // What is wrong with a file is said without its content.
    let missing = run(&["--auth-file", "/no/such/file", "whoami"]);
    assert_eq!(exit_code(missing.status), 2);
    assert!(stderr(&missing).contains("cannot read --auth-file /no/such/file"));
    let bad = SecretFile::new("bad-auth", PASSWORD);
    refused(
        &["--auth-file", bad.path(), "whoami"],
        "is not SCHEME:CREDENTIALS",
        PASSWORD,
    );
}

#[test]
fn resume_password_file_resumes_the_session() {
    let connect = server().connect_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let owner = rt
        .block_on(
            Client::builder(&connect)
                .session_timeout(Duration::from_secs(10))
                .connect(),
        )
        .unwrap();
    rt.block_on(owner.create("/secret-eph", b"", CreateMode::Ephemeral))
        .unwrap();
    let hex = password_hex(&owner.session_password());
    let id = format!("{:#x}", owner.session_id());
    rt.block_on(owner.detach());

    let file = SecretFile::new("resume", &format!("{hex}\n"));
    let args = [
        "--resume",
        &id,
        "--resume-password-file",
        file.path(),
        "ephemerals",
    ];
    assert_eq!(ok(&args), "/secret-eph\n");

    let bad = SecretFile::new("bad-resume", "not hex\n");
    refused(
        &[
            "--resume",
            &id,
            "--resume-password-file",
            bad.path(),
            "ephemerals",
        ],
        "is not a hex password",
        "not hex",
    );
}
