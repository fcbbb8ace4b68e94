//! The parser's unit tests: what each command line means, and what each mistake says.

use std::time::Duration;

use super::bench::{BenchArgs, BenchOptions};
use super::command::{KerberosArgs, Tls};
use super::convert::DEFAULT_SERVER;
use super::data::{CacheArgs, SetArgs};
use super::ensemble::Change;
use super::hold::{Grace, Policy};
use super::ops::WatchKind;
use super::recipes::MembersArgs;
use super::secrets::SecretFile;
use super::*;

fn run(line: &str) -> Result<Action, UsageError> {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    parse(&args, None)
}

fn command(line: &str) -> (Globals, Command) {
    match run(line) {
        Ok(Action::Run(g, c)) => (*g, c),
        other => panic!("{line}: {other:?}"),
    }
}

fn error(line: &str) -> String {
    match run(line) {
        Err(e) => e.0,
        other => panic!("{line}: expected an error, got {other:?}"),
    }
}

#[test]
fn globals_before_and_after_the_command() {
    let (g, c) = command("--server h:1/app --session-timeout 3000 ls /a --auth-file /f");
    assert_eq!(g.server, "h:1/app");
    assert!(g.server_given);
    assert_eq!(g.session_timeout, Duration::from_millis(3000));
    assert_eq!(g.auth_files, [SecretFile::new("--auth-file", "/f".into())]);
    assert_eq!(
        c,
        Command::Ls(LsArgs {
            path: "/a".into(),
            stat: false,
            recursive: false
        })
    );
    let (g, _) = command("ls /a --server=x:2");
    assert_eq!(g.server, "x:2");
}

#[test]
fn tls_flags() {
    assert_eq!(command("ls /").0.tls, None);
    assert_eq!(command("--tls ls /").0.tls, Some(Box::default()));
    let (g, _) =
        command("ls / --tls-ca ca.pem --tls-crl crl.pem --tls-cert c.pem --tls-key c.key --tls-server-name zk.test");
    assert_eq!(
        g.tls,
        Some(Box::new(Tls {
            ca: Some("ca.pem".into()),
            crl: Some("crl.pem".into()),
            cert_and_key: Some(("c.pem".into(), "c.key".into())),
            server_name: Some("zk.test".into()),
        }))
    );
    assert!(run("ls / --tls-cert c.pem").is_err());
    assert!(run("ls / --tls-key c.key").is_err());
}

#[test]
fn each_v_raises_the_verbosity() {
    assert_eq!(command("ls /").0.verbosity, 0);
    assert_eq!(command("-v ls /").0.verbosity, 1);
    assert_eq!(command("ls / --verbose").0.verbosity, 1);
    assert_eq!(command("-vv ls /").0.verbosity, 2);
    assert_eq!(command("-v ls / -v").0.verbosity, 2);
    assert!(run("-vx ls /").is_err());
}

#[test]
fn server_defaults_to_the_environment_then_localhost() {
    let args = vec!["ls".to_string(), "/".to_string()];
    match parse(&args, Some("env:1".into())).unwrap() {
        Action::Run(g, _) => assert_eq!((g.server.as_str(), g.server_given), ("env:1", true)),
        other => panic!("{other:?}"),
    }
    let (g, _) = command("ls /");
    assert_eq!((g.server.as_str(), g.server_given), (DEFAULT_SERVER, false));
}

#[test]
fn version_means_the_data_version_after_set() {
    let (_, c) = command("set /a hello --version 3");
    assert_eq!(
        c,
        Command::Set(SetArgs {
            path: "/a".into(),
            data: "hello".into(),
            version: Some(3)
        })
    );
    let (_, c) = command("set /n -1");
    assert!(matches!(c, Command::Set(SetArgs { data, .. }) if data == "-1"));
}

fn printed(line: &str) -> String {
    match run(line) {
        Ok(Action::Print(text)) => text,
        other => panic!("{line}: expected a text to print, got {other:?}"),
    }
}

#[test]
fn help_forms() {
    let general = printed("--help");
    assert!(
        general.starts_with("A ZooKeeper command-line tool"),
        "{general}"
    );
    assert!(
        general.contains("Usage: zkctl [OPTIONS] <COMMAND>"),
        "{general}"
    );
    assert!(general.contains("5 no instance to pick"), "{general}");
    assert_eq!(printed("-h"), printed("help"));
    let lock = printed("lock --help");
    assert!(
        lock.contains("Usage: zkctl lock [OPTIONS] <PATH> <CMD>..."),
        "{lock}"
    );
    assert!(lock.contains("--timeout <MS>"), "{lock}");
    assert!(lock.contains("ZKCTL_LOCK_NODE"), "{lock}");
    assert_eq!(printed("help lock"), lock);
    // A global flag shows on every command's help.
    assert!(lock.contains("--server <HOSTS>"), "{lock}");
    assert!(printed("service register --help").contains("--uri-spec <TEMPLATE>"));
}

#[test]
fn version_anywhere_but_where_it_is_a_flag() {
    let version = format!("zkctl {}\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(printed("--version"), version);
    assert_eq!(printed("-V"), version);
    assert_eq!(printed("ls / --version"), version);
    assert_eq!(printed("service list /s -V"), version);
}

#[test]
fn completions_for_three_shells() {
    for (name, shell) in [
        ("bash", Shell::Bash),
        ("zsh", Shell::Zsh),
        ("fish", Shell::Fish),
    ] {
        assert_eq!(
            run(&format!("completions {name}")),
            Ok(Action::Completions(shell))
        );
    }
    assert!(error("completions tcsh").contains("invalid value 'tcsh'"));
}

#[test]
fn lock_command_after_dashes_or_path() {
    let (g, c) = command("lock /l --timeout 500 -- sh -c true --grace 1");
    let Command::Lock(lock) = &c else {
        panic!("{c:?}")
    };
    assert_eq!(
        lock.grace.or_default(g.session_timeout),
        Duration::from_millis(500)
    );
    assert_eq!(
        c,
        Command::Lock(LockArgs {
            path: "/l".into(),
            timeout: Some(Duration::from_millis(500)),
            policy: Policy {
                policy: HoldPolicy::SessionDeadline
            },
            grace: Grace { grace: None },
            command: vec![
                "sh".into(),
                "-c".into(),
                "true".into(),
                "--grace".into(),
                "1".into()
            ],
        })
    );
    let (_, c) = command("elect /e --once sleep 1 --id x");
    assert_eq!(
        c,
        Command::Elect(ElectArgs {
            path: "/e".into(),
            id: None,
            once: true,
            policy: Policy {
                policy: HoldPolicy::SessionDeadline
            },
            grace: Grace { grace: None },
            command: vec!["sleep".into(), "1".into(), "--id".into(), "x".into()],
        })
    );
    assert!(error("lock /l").contains("not provided: <CMD>..."));
    for (flag, policy) in [
        ("standard", HoldPolicy::Standard),
        ("session-deadline", HoldPolicy::SessionDeadline),
        ("session-only", HoldPolicy::SessionOnly),
    ] {
        let (_, c) = command(&format!("lock /l --policy {flag} -- true"));
        assert!(
            matches!(&c, Command::Lock(l) if l.policy.policy == policy),
            "{flag}"
        );
        let (_, c) = command(&format!("elect /e --policy {flag} -- true"));
        assert!(
            matches!(&c, Command::Elect(e) if e.policy.policy == policy),
            "{flag}"
        );
    }
    assert!(error("lock /l --policy careful -- true").contains("invalid value 'careful'"));
}

#[test]
fn create_modes() {
    let (_, c) = command("create /a/b- data --sequential --ephemeral --parents");
    let Command::Create(a) = c else { panic!() };
    assert!(a.sequential && a.ephemeral && a.parents && !a.container);
    assert_eq!(a.data.as_deref(), Some("data"));
    assert!(error("create /a --ephemeral --ttl 5").contains("cannot be used with"));
    assert!(error("create /a --container --sequential").contains("cannot be used with"));
}

#[test]
fn usage_errors() {
    assert_eq!(
        error("--server= ls /"),
        "invalid value '' for '--server <HOSTS>': a connect string (host:port,...) is needed, not an empty value"
    );
    assert_eq!(error("ls / --bogus"), "unexpected argument '--bogus' found");
    assert_eq!(
        error("delete / --recursiv"),
        "unexpected argument '--recursiv' found; a similar argument exists: '--recursive'"
    );
    assert_eq!(error("--bogus ls /"), "unexpected argument '--bogus' found");
    assert_eq!(error("frobnicate"), "unrecognized subcommand 'frobnicate'");
    assert!(error("").starts_with("'zkctl' requires a subcommand but one was not provided"));
    assert_eq!(
        error("ls"),
        "the following required arguments were not provided: <PATH>; usage: zkctl ls <PATH>"
    );
    assert!(error("set /a").contains("not provided: <DATA>"));
    assert!(error("ls /a /b").contains("unexpected argument '/b'"));
    assert!(error("lock /l --timeout soon -- true").contains("milliseconds"));
    assert!(error("ls / --server").contains("a value is required"));
    assert!(error("ls / -x").contains("unexpected argument '-x'"));
    assert!(
        error("bench frob").contains("[possible values: get, set, create, lock, latch, semaphore]")
    );
    assert!(error("bench get --clients 0").contains("at least 1"));
    assert!(error("demo --participants 1").contains("at least 2"));
    assert!(error("ls / --auth nocolon").contains("--auth-file FILE"));
    assert!(error("ls / --recursive=yes").contains("unexpected argument '--recursive'"));
    assert!(error("delete / --recursive=yes").contains("unexpected value 'yes'"));
}

#[test]
fn cache_kinds_and_limits() {
    let cache = |line: &str| match command(line).1 {
        Command::Cache(a) => a,
        other => panic!("{line}: {other:?}"),
    };
    let a = cache("cache /app");
    assert_eq!(
        a,
        CacheArgs {
            path: "/app".into(),
            depth: None,
            children: false,
            run_for: None,
        }
    );
    assert_eq!(a.kind(), CacheKind::Subtree);
    let a = cache("cache /app --depth 0 --for 1500");
    assert_eq!(
        (a.path.as_str(), a.kind(), a.run_for),
        (
            "/app",
            CacheKind::Depth(0),
            Some(Duration::from_millis(1500))
        )
    );
    assert_eq!(cache("cache --children /app").kind(), CacheKind::Children);
    assert!(error("cache").contains("not provided: <PATH>"));
    assert!(error("cache /a --depth -1").contains("not a number of levels"));
    assert!(error("cache /a --depth deep").contains("--depth <N>"));
    assert!(error("cache /a --depth").contains("a value is required"));
    assert!(error("cache /a --depth 2 --children").contains("cannot be used with"));
    assert!(error("cache /a --for soon").contains("milliseconds"));
    assert!(error("cache /a /b").contains("unexpected argument '/b'"));
    assert!(printed("cache --help").contains("Usage: zkctl cache [OPTIONS] <PATH>"));
}

#[test]
fn counter_actions_and_widths() {
    let counter = |line: &str| match command(line).1 {
        Command::Counter(a) => (a.path.clone(), a.action().unwrap(), a.int),
        other => panic!("{line}: {other:?}"),
    };
    assert_eq!(
        counter("counter /c get"),
        ("/c".into(), CounterAction::Get, false)
    );
    assert_eq!(counter("counter /c add -5").1, CounterAction::Add(-5));
    assert_eq!(
        counter("counter /c set 9223372036854775807").1,
        CounterAction::Set(i64::MAX)
    );
    assert_eq!(
        counter("counter /c cas -1 2 --int"),
        ("/c".into(), CounterAction::Cas(-1, 2), true)
    );
    assert_eq!(
        counter("counter --int /c add 2147483647").1,
        CounterAction::Add(i64::from(i32::MAX))
    );
    assert!(error("counter /c add 2147483648 --int").contains("32-bit"));
    assert!(error("counter /c add 9223372036854775808").contains("64-bit"));
    assert!(error("counter /c add x").contains("'x' is not a 64-bit integer"));
    assert!(error("counter /c").contains("not provided: <ACTION>"));
    assert!(error("counter /c add").contains("takes one number"));
    assert!(error("counter /c get 1").contains("takes no number"));
    assert!(error("counter /c cas 1").contains("OLD and NEW"));
    assert!(error("counter /c bump 1").contains("[possible values: get, add, set, cas]"));
    assert!(error("counter /c get --count 3").contains("unexpected argument '--count'"));
}

#[test]
fn barrier_and_member_run_a_command() {
    let (g, c) = command("barrier /b --count 3 --timeout 500 -- sh -c true --count 9");
    let Command::Barrier(barrier) = &c else {
        panic!("{c:?}")
    };
    assert_eq!(
        barrier.grace.or_default(g.session_timeout),
        Duration::from_millis(500)
    );
    assert_eq!(
        c,
        Command::Barrier(BarrierArgs {
            path: "/b".into(),
            count: 3,
            timeout: Some(Duration::from_millis(500)),
            grace: Grace { grace: None },
            command: vec![
                "sh".into(),
                "-c".into(),
                "true".into(),
                "--count".into(),
                "9".into()
            ],
        })
    );
    // As with `lock`, the first word after PATH starts the command.
    let (_, c) = command("barrier --count 2 /b true");
    assert!(
        matches!(c, Command::Barrier(BarrierArgs { count: 2, command, .. }) if command == ["true"])
    );
    assert!(error("barrier /b -- true").contains("not provided: --count <N>"));
    assert!(error("barrier /b --count 0 -- true").contains("at least 1"));
    assert!(error("barrier /b --count 3").contains("not provided: <CMD>..."));

    let (_, c) = command("member /g host-a 10.0.0.1:80 --grace 500 -- ./serve --port 80");
    assert_eq!(
        c,
        Command::Member(MemberArgs {
            path: "/g".into(),
            id: "host-a".into(),
            data: Some("10.0.0.1:80".into()),
            extra: vec![],
            command: vec!["./serve".into(), "--port".into(), "80".into()],
            grace: Grace {
                grace: Some(Duration::from_millis(500))
            },
        })
    );
    let (_, c) = command("member /g host-a -- true");
    assert!(matches!(c, Command::Member(MemberArgs { data: None, .. })));
    // Without `--`, DATA and CMD cannot be told apart.
    assert!(error("member /g a data true").contains("needs -- before the command"));
    assert!(error("member /g a ./serve").contains("needs a command to run"));
    assert!(error("member /g").contains("not provided: <ID>"));
    assert!(error("member /g x/y -- true").contains("member id"));
    assert!(error("member /g .. -- true").contains("member id"));
    let (_, c) = command("members /g");
    assert_eq!(c, Command::Members(MembersArgs { path: "/g".into() }));
    assert!(error("members /g extra").contains("unexpected argument 'extra'"));
}

#[test]
fn help_texts_are_flush_left() {
    // A line break in an `after_help` string without `\n\` keeps the source's indentation.
    let cmd = command_line();
    for sub in cmd
        .get_subcommands()
        .chain(cmd.get_subcommands().flat_map(|c| c.get_subcommands()))
    {
        for line in sub
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default()
            .lines()
        {
            assert!(!line.starts_with(' '), "{}: {line:?}", sub.get_name());
        }
    }
}

#[test]
fn the_command_line_is_well_formed() {
    // clap's own checks (unique flags, positional order, groups naming real arguments).
    command_line().debug_assert();
}

#[test]
fn quoted_values_are_escaped() {
    // Found by the zkctl_args fuzz target: a value with line breaks made a usage error of
    // several lines (and cut clap's message at the first blank line).
    let args = |v: &str| vec!["counter".to_string(), "/c".into(), "set".into(), v.into()];
    let e = parse(&args("1\n\n2"), None).unwrap_err().0;
    assert_eq!(e, "'1\\n\\n2' is not a 64-bit integer");
    let args = vec![
        "cache".to_string(),
        "/a".into(),
        "--depth".into(),
        "x\n\ny".into(),
    ];
    let e = parse(&args, None).unwrap_err().0;
    assert_eq!(
        e,
        "invalid value 'x\\n\\ny' for '--depth <N>': not a number of levels (0 or more)"
    );
}

#[test]
fn usage_errors_are_one_line() {
    for line in [
        "",
        "ls",
        "ls / --bogus",
        "service",
        "queue",
        "barrier /b",
        "cache /a --depth x",
    ] {
        let e = error(line);
        assert!(!e.contains('\n'), "{line}: {e}");
    }
}

#[test]
fn kerberos_flags() {
    let (g, _) = command("--sasl-kerberos app@ZKR.TEST --keytab /k/app.keytab ls /");
    assert_eq!(
        g.kerberos,
        Some(KerberosArgs {
            principal: "app@ZKR.TEST".into(),
            keytab: Some("/k/app.keytab".into()),
            service_principal: None,
        })
    );
    let (g, _) = command("--sasl-kerberos app --sasl-service-principal zookeeper/zk1 ls /");
    let k = g.kerberos.unwrap();
    assert_eq!(k.keytab, None);
    assert_eq!(k.service_principal.as_deref(), Some("zookeeper/zk1"));
    assert!(error("--keytab /k/app.keytab ls /").contains("needs --sasl-kerberos"));
    assert!(error("--sasl-service-principal zk ls /").contains("needs --sasl-kerberos"));
    assert!(
        error("--sasl-kerberos app --sasl-digest u --sasl-password-file f ls /")
            .contains("one SASL mechanism")
    );
}

#[test]
fn bench_defaults_depend_on_the_kind() {
    let bench = |line: &str| match command(line).1 {
        Command::Bench(b) => b.settings(),
        other => panic!("{line}: {other:?}"),
    };
    assert!(matches!(
        bench("bench get"),
        BenchOptions {
            clients: 4,
            in_flight: 32,
            ops: 20_000,
            size: 100,
            rt: BenchRuntime::Multi,
            ..
        }
    ));
    assert!(matches!(
        bench("bench get --rt current"),
        BenchOptions {
            rt: BenchRuntime::Current,
            ..
        }
    ));
    assert!(run("bench get --rt tokio")
        .unwrap_err()
        .to_string()
        .contains("[possible values: current, multi]"));
    assert!(matches!(
        bench("bench lock --ops 10"),
        BenchOptions {
            kind: BenchKind::Lock,
            clients: 1,
            in_flight: 1,
            ops: 10,
            contenders: 4,
            curator: false,
            ..
        }
    ));
}

#[test]
fn bench_contention_flags() {
    let (_, c) = command("bench latch --contenders 3 --in-line 100,1000 --curator");
    match c {
        Command::Bench(b) => {
            let o = b.settings();
            assert_eq!(o.kind, BenchKind::Latch);
            assert_eq!(o.contenders, 3);
            assert_eq!(o.in_line, vec![100, 1000]);
            assert!(o.curator);
        }
        other => panic!("{other:?}"),
    }
    let (_, c) = command("bench lock --in-line 10 --in-line 20");
    assert!(matches!(c, Command::Bench(BenchArgs { ref in_line, .. }) if in_line == &[10, 20]));
    assert!(error("bench lock --contenders 1").contains("at least 2"));
    assert!(error("bench lock --in-line 100,1").contains("at least 2"));
    for flags in ["--contenders 3", "--in-line 100", "--curator"] {
        let e = error(&format!("bench get {flags}"));
        assert!(
            e.contains("are for lock, latch and semaphore"),
            "{flags}: {e}"
        );
    }
}

// The flags of changing ensembles (ensemble.rs).

#[test]
fn output_is_a_global_flag() {
    use super::OutputFormat::{Json, Text};
    assert_eq!(command("ls /").0.output, Text);
    assert_eq!(command("--output json ls /").0.output, Json);
    assert_eq!(command("ls / --output=json").0.output, Json);
    assert_eq!(command("--output json ls / --output text").0.output, Text);
    assert_eq!(command("acl get /a --output json").0.output, Json);
    assert!(error("ls / --output yaml").contains("[possible values: text, json]"));
}

#[test]
fn follow_ensemble_is_a_global_switch() {
    assert!(command("--follow-ensemble ls /").0.follow_ensemble);
    assert!(command("ls / --follow-ensemble").0.follow_ensemble);
    assert!(!command("ls /").0.follow_ensemble);
    assert!(error("--follow-ensemble=yes ls /").contains("follow-ensemble"));
}

#[test]
fn reconfig_flags() {
    let (_, c) = command(
        "reconfig --add server.4=h:1:2;3 --add=server.5=h:4:5;6,server.6=h:7:8 \
         --remove 1,2 --remove 3 --from-version 10000000a",
    );
    let Command::Reconfig(r) = c else {
        panic!("{c:?}")
    };
    assert_eq!(r.from_version, Some(0x1_0000_000a));
    assert_eq!(
        r.change(),
        Ok(Change {
            add: vec![
                "server.4=h:1:2;3".into(),
                "server.5=h:4:5;6".into(),
                "server.6=h:7:8".into()
            ],
            remove: vec![1, 2, 3],
            members: vec![],
        })
    );
    let (_, c) = command("reconfig --members server.1=h:1:2 --members server.2=h:3:4");
    assert!(matches!(c, Command::Reconfig(r) if r.members.len() == 2));
    assert_eq!(command("config").1, Command::Config);
    for (line, expected) in [
        (
            "reconfig",
            "not provided: <--add <SPEC>|--remove <ID>|--members <SPEC>>",
        ),
        (
            "reconfig --members a --add b",
            "'--members <SPEC>' cannot be used with '--add <SPEC>'",
        ),
        ("reconfig --remove x", "--remove needs a member id"),
        (
            "reconfig --remove 1 --from-version g",
            "not a version in hex",
        ),
        ("config extra", "unexpected argument 'extra'"),
    ] {
        let e = error(line);
        assert!(e.contains(expected), "{line}: {e}");
    }
}

fn ops(line: &str) -> OpsSub {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    match parse(&args, None) {
        Ok(Action::Run(_, Command::Ops(op))) => op,
        other => panic!("{line}: {other:?}"),
    }
}

fn quota(line: &str) -> QuotaSub {
    match ops(line) {
        OpsSub::Quota(q) => q,
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn what_the_operator_commands_mean() {
    // No PATH: the prefix `/` (commands/ops.rs).
    assert_eq!(ops("ephemerals"), OpsSub::Ephemerals { path: None });
    let delete = quota("quota delete /q");
    assert_eq!((delete.path(), delete.limits()), ("/q", None));
    let delete = quota("quota delete /q --bytes");
    assert_eq!(
        (delete.path(), delete.limits()),
        (
            "/q",
            Some(QuotaLimits {
                bytes: Some(-1),
                ..QuotaLimits::default()
            })
        )
    );
    match ops("acl set /a world:anyone:r,ip:1.2.3.4:cdrwa auth::a --version 3") {
        OpsSub::Acl(AclSub::Set { acl, version, .. }) => {
            assert_eq!(acl_entries(&acl).len(), 3);
            assert_eq!(version, Some(3));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        ops("watches remove /w"),
        OpsSub::Watches(WatchesSub::Remove {
            path: "/w".into(),
            kind: WatchKind::Any
        })
    );
    let args: Vec<String> = ["create", "/n", "--acl", "a:b:r", "--acl", "c:d:w"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    match parse(&args, None) {
        Ok(Action::Run(_, Command::Create(c))) => assert_eq!(c.acl.specs().count(), 2),
        other => panic!("{other:?}"),
    }
}
