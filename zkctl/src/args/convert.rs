//! From what clap parsed ([`super::cli`]) to the typed [`Command`] and [`Globals`]: the
//! defaults that depend on other values and the checks clap cannot say (flags given on
//! different levels, words that need `--` before them, a dynamic instance without a command).

use std::time::Duration;

use super::backup::BackupCommand;
use super::cli::{
    BenchFlags, CounterVerb, GlobalFlags, MemberFlags, QueueSub, RegisterFlags, ServiceSub, Sub,
};
use super::command::{
    BenchKind, BenchOptions, CacheKind, Command, CounterAction, CreateArgs, Globals, KerberosArgs,
    QueueAction, QueueKind, ServiceAction, ServiceKind, ServiceRegistration, Tls,
};
use super::ensemble;
use super::ops;
use super::secrets::{self, SaslDigest, SecretFile};
use super::usage::{usage, UsageError};

/// The default connect string when neither `--server` nor `ZK_SERVER` is given.
pub const DEFAULT_SERVER: &str = "127.0.0.1:2181";

/// The connection settings, from the global flags of every level. `env_server` is `$ZK_SERVER`.
///
/// The pairs of flags are checked here, not by clap: clap checks `requires` on each level by
/// itself, so `--tls-cert c ls / --tls-key k` would be refused.
pub fn globals(flags: GlobalFlags, env_server: Option<String>) -> Result<Globals, UsageError> {
    let env_server = env_server.filter(|s| !s.is_empty());
    let server_given = flags.server.is_some() || env_server.is_some();
    let any_tls = flags.tls
        || flags.tls_ca.is_some()
        || flags.tls_crl.is_some()
        || flags.tls_cert.is_some()
        || flags.tls_key.is_some()
        || flags.tls_server_name.is_some();
    let tls = if any_tls {
        let cert_and_key = match (flags.tls_cert, flags.tls_key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            (Some(_), None) => {
                return usage("--tls-cert needs --tls-key (the certificate's private key)")
            }
            (None, Some(_)) => return usage("--tls-key needs --tls-cert (the client certificate)"),
        };
        Some(Box::new(Tls {
            ca: flags.tls_ca,
            crl: flags.tls_crl,
            cert_and_key,
            server_name: flags.tls_server_name,
        }))
    } else {
        None
    };
    if !flags.auth.is_empty() {
        return usage(secrets::AUTH_INLINE);
    }
    let resume = secrets::resume(flags.resume, flags.resume_password_file)?;
    let sasl_digest = match (flags.sasl_digest, flags.sasl_password_file) {
        (None, None) => None,
        (Some(_), None) => {
            return usage(
                "--sasl-digest needs --sasl-password-file FILE (the password is never taken \
                 from the command line)",
            )
        }
        (None, Some(_)) => return usage("--sasl-password-file needs --sasl-digest USER"),
        (Some(user), Some(password_file)) => Some(SaslDigest {
            user,
            password: SecretFile::new("--sasl-password-file", password_file),
        }),
    };
    let kerberos = match flags.sasl_kerberos {
        None => {
            if flags.keytab.is_some() {
                return usage("--keytab needs --sasl-kerberos PRINCIPAL");
            }
            if flags.sasl_service_principal.is_some() {
                return usage("--sasl-service-principal needs --sasl-kerberos PRINCIPAL");
            }
            None
        }
        Some(_) if sasl_digest.is_some() => {
            return usage("--sasl-kerberos and --sasl-digest: one SASL mechanism at a time")
        }
        Some(principal) => Some(KerberosArgs {
            principal,
            keytab: flags.keytab,
            service_principal: flags.sasl_service_principal,
        }),
    };
    Ok(Globals {
        server: flags
            .server
            .or(env_server)
            .unwrap_or_else(|| DEFAULT_SERVER.to_string()),
        server_given,
        session_timeout: flags.session_timeout.unwrap_or(Duration::from_secs(10)),
        connect_timeout: flags.connect_timeout,
        auth_files: flags
            .auth_file
            .into_iter()
            .map(|file| SecretFile::new("--auth-file", file))
            .collect(),
        auth: Vec::new(),
        verbosity: flags.verbose,
        tls,
        sasl_digest,
        kerberos,
        resume,
        follow_ensemble: flags.follow_ensemble,
        output: flags.output.unwrap_or_default(),
    })
}

/// The typed command. `resume`: whether `--resume` was given (one session only);
/// `session_timeout`: the session's, for the default `--grace`.
pub fn command(sub: Sub, resume: bool, session_timeout: Duration) -> Result<Command, UsageError> {
    Ok(match sub {
        Sub::Ls {
            path,
            stat,
            recursive,
        } => ls(path, stat, recursive),
        Sub::Get { path, stat, watch } => Command::Get { path, stat, watch },
        Sub::Stat { path, watch } => Command::Stat { path, watch },
        Sub::Deleteall { path } => Command::Delete {
            path,
            recursive: true,
            version: None,
        },
        Sub::Tree { path } => Command::Tree { path },
        Sub::Members { path } => Command::Members { path },
        Sub::Set {
            path,
            data,
            version,
        } => Command::Set {
            path,
            data: data.into_bytes(),
            version,
        },
        Sub::Create(c) => create(c),
        Sub::Delete {
            path,
            recursive,
            version,
        } => Command::Delete {
            path,
            recursive,
            version,
        },
        Sub::Watch {
            path,
            recursive,
            count,
        } => Command::Watch {
            path,
            recursive,
            count,
        },
        Sub::Cache {
            path,
            depth,
            children,
            run_for,
        } => Command::Cache {
            path,
            kind: cache_kind(depth, children),
            run_for,
        },
        Sub::Queue(q) => queue(q),
        Sub::Counter {
            path,
            action,
            numbers,
            int,
        } => Command::Counter {
            path,
            action: counter(action, &numbers, int)?,
            int,
        },
        Sub::Barrier(b) => Command::Barrier {
            grace: b.grace.or_default(session_timeout),
            path: b.path,
            count: b.count,
            timeout: b.timeout,
            command: b.command,
        },
        Sub::Member(m) => member(m, session_timeout)?,
        Sub::Lock(l) => Command::Lock {
            grace: l.grace.or_default(session_timeout),
            path: l.path,
            timeout: l.timeout,
            policy: l.policy.policy,
            command: l.command,
        },
        Sub::Elect(e) => Command::Elect {
            grace: e.grace.or_default(session_timeout),
            path: e.path,
            id: e.id,
            once: e.once,
            policy: e.policy.policy,
            command: e.command,
        },
        Sub::Service(s) => service(s, session_timeout)?,
        Sub::Config => Command::Config,
        Sub::Ops(o) => Command::Ops(ops::command(o)),
        Sub::Reconfig {
            add,
            remove,
            members,
            from_version,
        } => ensemble::reconfig(add, remove, members, from_version)?,
        Sub::Bench(_) | Sub::Demo { .. } if resume => {
            let name = if matches!(sub, Sub::Bench(_)) {
                "bench"
            } else {
                "demo"
            };
            return usage(format!(
                "--resume takes one session; '{name}' opens several"
            ));
        }
        Sub::Bench(b) => bench(b)?,
        Sub::Demo { participants } => Command::Demo { participants },
        Sub::Backup(b) => Command::Backup(super::backup::convert(b)),
        Sub::Completions { .. } => unreachable!("completions is an action, not a command"),
    })
}

/// `ls PATH [-s] [-R]`: zkCli.sh's `ls -R` prints every path of the subtree, as `find` does.
fn ls(path: String, stat: bool, recursive: bool) -> Command {
    if recursive {
        return Command::Backup(BackupCommand::Find {
            path,
            name: None,
            data: None,
        });
    }
    Command::Ls { path, stat }
}

fn create(c: super::cli::CreateFlags) -> Command {
    Command::Create(CreateArgs {
        path: c.path,
        data: c.data.unwrap_or_default().into_bytes(),
        ephemeral: c.ephemeral,
        sequential: c.sequential,
        container: c.container,
        ttl: c.ttl,
        parents: c.parents,
        acl: ops::entries(c.acl.acl),
    })
}

/// `cache --depth N` (a TreeCache), `--children` (a PathChildrenCache), else the subtree.
fn cache_kind(depth: Option<usize>, children: bool) -> CacheKind {
    match (depth, children) {
        (Some(n), _) => CacheKind::Depth(n),
        (None, true) => CacheKind::Children,
        (None, false) => CacheKind::Subtree,
    }
}

/// `member PATH ID [DATA] -- CMD...`: the command after `--`, and one.
fn member(m: MemberFlags, session_timeout: Duration) -> Result<Command, UsageError> {
    if !m.extra.is_empty() {
        // Else `member /g a ./serve 80` would take ./serve as DATA and run `80`.
        return usage(
            "'member' needs -- before the command (DATA is optional): \
             zkctl member PATH ID [DATA] -- CMD [ARGS...]",
        );
    }
    if m.command.is_empty() {
        return usage(
            "'member' needs a command to run: zkctl member PATH ID [DATA] -- CMD [ARGS...]",
        );
    }
    Ok(Command::Member {
        grace: m.grace.or_default(session_timeout),
        path: m.path,
        id: m.id,
        data: m.data.unwrap_or_default().into_bytes(),
        command: m.command,
    })
}

/// `bench KIND [...]`: the flags that are for the recipes only, and the defaults by kind.
fn bench(b: BenchFlags) -> Result<Command, UsageError> {
    let recipe = matches!(
        b.kind,
        BenchKind::Lock | BenchKind::Latch | BenchKind::Semaphore
    );
    if !recipe && (b.contenders.is_some() || !b.in_line.is_empty() || b.curator) {
        return usage("--contenders, --in-line and --curator are for lock, latch and semaphore");
    }
    Ok(Command::Bench(BenchOptions {
        kind: b.kind,
        clients: b.clients.unwrap_or(if recipe { 1 } else { 4 }),
        in_flight: b.in_flight.unwrap_or(if recipe { 1 } else { 32 }),
        ops: b.ops.unwrap_or(if recipe { 1000 } else { 20_000 }),
        size: b.size,
        rounds: b.rounds,
        contenders: b.contenders.unwrap_or(4),
        in_line: b.in_line,
        curator: b.curator,
        rt: b.rt,
    }))
}

/// `counter PATH ACTION [N...]`: the numbers' count and width (`--int`: 32 bits).
fn counter(verb: CounterVerb, numbers: &[String], int: bool) -> Result<CounterAction, UsageError> {
    let number = |s: &str| -> Result<i64, UsageError> {
        let parsed = if int {
            s.parse::<i32>().map(i64::from).ok()
        } else {
            s.parse::<i64>().ok()
        };
        match parsed {
            Some(n) => Ok(n),
            None => usage(format!(
                "'{s}' is not a {} integer",
                if int { "32-bit" } else { "64-bit" }
            )),
        }
    };
    Ok(match (verb, numbers) {
        (CounterVerb::Get, []) => CounterAction::Get,
        (CounterVerb::Add, [n]) => CounterAction::Add(number(n)?),
        (CounterVerb::Set, [n]) => CounterAction::Set(number(n)?),
        (CounterVerb::Cas, [old, new]) => CounterAction::Cas(number(old)?, number(new)?),
        (verb, _) => {
            let (name, takes) = match verb {
                CounterVerb::Get => ("get", "no number"),
                CounterVerb::Cas => ("cas", "OLD and NEW"),
                CounterVerb::Add => ("add", "one number"),
                CounterVerb::Set => ("set", "one number"),
            };
            return usage(format!("'counter PATH {name}' takes {takes}"));
        }
    })
}

fn queue(q: QueueSub) -> Command {
    match q {
        QueueSub::Put {
            path,
            data,
            priority,
            id,
            delay_until,
            simple,
        } => {
            let kind = match (priority, id, delay_until) {
                (Some(p), _, _) => QueueKind::Priority(p),
                (_, Some(id), _) => QueueKind::Id(id),
                (_, _, Some(due)) => QueueKind::DelayUntil(due),
                _ if simple => QueueKind::Simple,
                _ => QueueKind::Plain,
            };
            let data = (data != "-").then(|| data.into_bytes());
            Command::Queue {
                path,
                action: QueueAction::Put { kind, data },
            }
        }
        QueueSub::Take {
            path,
            count,
            timeout,
            lock_path,
            simple,
        } => Command::Queue {
            path,
            action: QueueAction::Take {
                count,
                timeout,
                lock_path,
                simple,
            },
        },
    }
}

fn service(s: ServiceSub, session_timeout: Duration) -> Result<Command, UsageError> {
    let (base, action) = match s {
        ServiceSub::Register(r) => {
            let RegisterFlags {
                base,
                name,
                address,
                port,
                ssl_port,
                id,
                payload,
                kind,
                enabled,
                uri_spec,
                grace,
                extra,
                command,
            } = *r;
            if !extra.is_empty() {
                // As with `member`: without `--` the words cannot be told apart.
                return usage(
                    "'service register' needs -- before the command: zkctl service register \
                     BASE NAME --address A --port P [FLAGS] [-- CMD [ARGS...]]",
                );
            }
            if command.is_empty() && kind != ServiceKind::Permanent {
                let why = match kind {
                    ServiceKind::Dynamic => {
                        "a dynamic instance's node is ephemeral and goes with zkctl's session"
                    }
                    _ => "a static instance is unregistered when zkctl ends",
                };
                return usage(format!(
                    "'service register' needs -- CMD to run while registered: {why} \
                     (--type permanent registers and exits)"
                ));
            }
            let registration = ServiceRegistration {
                name,
                id,
                address,
                port,
                ssl_port,
                payload,
                kind,
                enabled,
                uri_spec,
                grace: grace.or_default(session_timeout),
                command,
            };
            (base, ServiceAction::Register(Box::new(registration)))
        }
        ServiceSub::Unregister { base, name, id } => (base, ServiceAction::Unregister { name, id }),
        ServiceSub::List { base, name } => (base, ServiceAction::List { name }),
        ServiceSub::Watch {
            base,
            name,
            run_for,
        } => (base, ServiceAction::Watch { name, run_for }),
        ServiceSub::Pick {
            base,
            name,
            strategy,
            count,
        } => (
            base,
            ServiceAction::Pick {
                name,
                strategy,
                count,
            },
        ),
    };
    Ok(Command::Service { base, action })
}
