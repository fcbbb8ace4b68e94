//! The command line, parsed by hand (std only: a small dependency tree is a feature).
//!
//! Grammar: `zkctl [GLOBAL FLAGS] COMMAND [ARGS] [FLAGS] [-- CMD ARGS...]`.
//!
//! Parsing happens in two steps, so each stays simple:
//! 1. [`scan`] splits the tokens into the command name, its positional arguments, its flags
//!    (`--name VALUE`, `--name=VALUE` or `--name`), the global flags, and the trailing command
//!    of `lock`/`elect`. Only the tables in [`spec`] decide what a token is.
//! 2. [`parse`] turns that into a typed [`Command`] ([`command`]), checking numbers and
//!    combinations.
//!
//! Flags may come before or after the command (global ones too). Once the command is known its
//! own flags win over global ones of the same name: `zkctl --version` prints the version, but
//! `zkctl set /a x --version 3` is a conditional set.

mod command;
mod ensemble;
#[cfg(any(test, fuzzing))]
pub mod fuzz;
mod spec;

use std::time::Duration;

pub use command::{
    Action, BenchKind, BenchOptions, BenchRuntime, CacheKind, Command, CounterAction, CreateArgs,
    Globals, KerberosArgs, PickStrategy, QueueAction, QueueKind, SaslDigest, ServiceAction,
    ServiceKind, ServiceRegistration, Tls,
};
pub use spec::{command_help, general_help};
use spec::{command_spec, CommandSpec, GLOBAL_FLAGS};

/// The default connect string when neither `--server` nor `ZK_SERVER` is given.
pub const DEFAULT_SERVER: &str = "127.0.0.1:2181";

/// A command-line mistake: printed as one line with a hint to `--help`; exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn usage<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}

/// The tokens, sorted by role (step 1).
#[derive(Debug, Default)]
struct Scanned {
    command: Option<&'static CommandSpec>,
    positionals: Vec<String>,
    /// Command and global flags in order: `(name, value)`.
    flags: Vec<(&'static str, Option<String>)>,
    /// The command to run (`lock`, `elect`, `barrier`, `member`).
    trailing: Vec<String>,
    /// Whether `--` introduced it (`member` requires it, as its DATA is optional).
    dashes: bool,
    help: bool,
    version: bool,
}

/// Step 1: sorts tokens into command, positionals, flags and the trailing command.
fn scan(args: &[String]) -> Result<Scanned, UsageError> {
    let mut s = Scanned::default();
    let mut i = 0;
    let mut only_positionals = false; // after a bare `--`
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let is_flag = !only_positionals && arg.starts_with('-') && arg.len() > 1;
        if arg == "--" && !only_positionals {
            match s.command {
                // `lock PATH -- CMD...`: everything after `--` is the command.
                Some(c) if c.takes_command => {
                    s.trailing = args[i..].to_vec();
                    s.dashes = true;
                    return Ok(s);
                }
                // Elsewhere `--` ends the flags (`set /a -- --data`).
                _ => only_positionals = true,
            }
            continue;
        }
        if is_flag && arg.starts_with("--") {
            let (name, inline) = match arg[2..].split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (&arg[2..], None),
            };
            // The command's own flags win once it is known (`set --version V`).
            let spec = s
                .command
                .and_then(|c| c.flags.iter().find(|f| f.name == name))
                .or_else(|| GLOBAL_FLAGS.iter().find(|f| f.name == name));
            let Some(spec) = spec else {
                return usage(match s.command {
                    Some(c) => format!("unknown flag --{name} for '{}'", c.name),
                    None => format!("unknown flag --{name}"),
                });
            };
            match (spec.value, inline) {
                (None, Some(_)) => return usage(format!("--{name} takes no value")),
                (None, None) if name == "help" => s.help = true,
                (None, None) if name == "version" => s.version = true,
                (None, None) => s.flags.push((spec.name, None)),
                (Some(_), Some(v)) => s.flags.push((spec.name, Some(v))),
                (Some(meta), None) => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        s.flags.push((spec.name, Some(v.clone())));
                    }
                    None => return usage(format!("--{name} needs a value ({meta})")),
                },
            }
            continue;
        }
        if is_flag {
            match arg.as_str() {
                "-h" => s.help = true,
                "-V" => s.version = true,
                // -v, -vv: each v counts once (like --verbose given that many times).
                a if a[1..].chars().all(|c| c == 'v') => {
                    s.flags.extend(a[1..].chars().map(|_| ("verbose", None)))
                }
                // A negative number is data (`set /n -1`), not a flag.
                a if a[1..].starts_with(|c: char| c.is_ascii_digit()) => {
                    s.positionals.push(a.to_string())
                }
                a => {
                    return usage(format!(
                        "unknown flag {a} (flags are --long; put data starting with '-' after --)"
                    ))
                }
            }
            continue;
        }
        match s.command {
            None => match command_spec(arg) {
                Some(c) => s.command = Some(c),
                None => return usage(format!("unknown command '{arg}'")),
            },
            // `lock PATH CMD...`: the first word after PATH starts the command, and
            // everything from there on belongs to it (like `env` or `nice`).
            Some(c) if c.takes_command && s.positionals.len() == c.max_args => {
                s.trailing = args[i - 1..].to_vec();
                return Ok(s);
            }
            Some(_) => s.positionals.push(arg.clone()),
        }
    }
    Ok(s)
}

/// The flags of one invocation, with typed accessors.
struct Flags(Vec<(&'static str, Option<String>)>);

impl Flags {
    fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| *n == name)
    }

    /// The last value given (a repeated flag overrides).
    fn value(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(n, _)| *n == name)
            .filter_map(|(_, v)| v.as_deref())
    }

    fn number<T: std::str::FromStr>(
        &self,
        name: &str,
        what: &str,
    ) -> Result<Option<T>, UsageError> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => match v.parse() {
                Ok(n) => Ok(Some(n)),
                Err(_) => usage(format!("--{name} needs {what}, not '{v}'")),
            },
        }
    }

    fn millis(&self, name: &str) -> Result<Option<Duration>, UsageError> {
        Ok(self
            .number::<u64>(name, "a number of milliseconds")?
            .map(Duration::from_millis))
    }

    fn positive(&self, name: &str) -> Result<Option<usize>, UsageError> {
        match self.number::<usize>(name, "a positive number")? {
            Some(0) => usage(format!("--{name} must be at least 1")),
            n => Ok(n),
        }
    }
}

/// Step 2: the typed command line. `env_server` is `$ZK_SERVER`.
pub fn parse(args: &[String], env_server: Option<String>) -> Result<Action, UsageError> {
    let s = scan(args)?;
    if s.help {
        return Ok(Action::Help(s.command.filter(|c| c.name != "help")));
    }
    if s.version {
        return Ok(Action::Version);
    }
    let Some(spec) = s.command else {
        return usage("no command given");
    };
    if spec.name == "help" {
        return match s.positionals.first() {
            None => Ok(Action::Help(None)),
            Some(name) => match command_spec(name) {
                Some(c) => Ok(Action::Help(Some(c))),
                None => usage(format!("unknown command '{name}'")),
            },
        };
    }
    let n = s.positionals.len();
    if n < spec.min_args {
        let missing = match (spec.name, n) {
            ("service", 0) => "an action: register, unregister, list, watch or pick",
            (_, 0) => "PATH",
            ("counter", _) => "an action: get, add N, set N or cas OLD NEW",
            _ => spec.synopsis.split(' ').nth(n).unwrap_or("an argument"),
        };
        return usage(format!("'{}' needs {missing}", spec.name));
    }
    if n > spec.max_args {
        return usage(format!(
            "'{}' takes {} argument{} ({}), got {n}",
            spec.name,
            spec.max_args,
            if spec.max_args == 1 { "" } else { "s" },
            spec.synopsis
        ));
    }
    // `service` runs a command only for `register`, and there optionally (checked below).
    if spec.takes_command && s.trailing.is_empty() && spec.name != "service" {
        return usage(format!(
            "'{}' needs a command to run: zkctl {} {}",
            spec.name, spec.name, spec.synopsis
        ));
    }
    if spec.name == "member" && !s.dashes {
        // Else `member /g a ./serve 80` would take ./serve as DATA and run `80`.
        return usage(format!(
            "'member' needs -- before the command (DATA is optional): zkctl member {}",
            spec.synopsis
        ));
    }
    let flags = Flags(s.flags);
    let globals = globals(&flags, env_server)?;
    let mut pos = s.positionals.into_iter();
    let mut path = || pos.next().unwrap_or_default();
    let command = match spec.name {
        "ls" => Command::Ls { path: path() },
        "get" => Command::Get { path: path() },
        "stat" => Command::Stat { path: path() },
        "tree" => Command::Tree { path: path() },
        "set" => Command::Set {
            path: path(),
            data: path().into_bytes(),
            version: flags.number("version", "a version number")?,
        },
        "create" => create(&flags, path(), path().into_bytes())?,
        "delete" => Command::Delete {
            path: path(),
            recursive: flags.has("recursive"),
            version: flags.number("version", "a version number")?,
        },
        "watch" => Command::Watch {
            path: path(),
            recursive: flags.has("recursive"),
            count: flags.number("count", "a number of events")?,
        },
        "cache" => cache(&flags, path())?,
        "counter" => {
            let (counter_path, verb) = (path(), path());
            let mut numbers = Vec::new();
            for _ in 2..n {
                numbers.push(path());
            }
            counter(&flags, counter_path, &verb, &numbers)?
        }
        "barrier" => Command::Barrier {
            path: path(),
            count: match flags.positive("count")? {
                Some(n) => n,
                None => return usage("'barrier' needs --count N (the number of members)"),
            },
            timeout: flags.millis("timeout")?,
            grace: grace(&flags)?,
            command: s.trailing,
        },
        "member" => {
            let (group, id) = (path(), path());
            let data = if n == 3 {
                path().into_bytes()
            } else {
                Vec::new()
            };
            if id.is_empty() || id.contains('/') || id == "." || id == ".." {
                return usage(format!(
                    "a member id is a node name (not empty, no '/'), not '{id}'"
                ));
            }
            Command::Member {
                path: group,
                id,
                data,
                grace: grace(&flags)?,
                command: s.trailing,
            }
        }
        "members" => Command::Members { path: path() },
        "service" => {
            let args = (0..n).map(|_| path()).collect();
            service(&flags, args, s.trailing, s.dashes)?
        }
        "queue" => {
            let (action, queue_path) = (path(), path());
            let data = (n == 3).then(&mut path);
            queue(&flags, action, queue_path, data)?
        }
        "lock" => Command::Lock {
            path: path(),
            timeout: flags.millis("timeout")?,
            grace: grace(&flags)?,
            command: s.trailing,
        },
        "elect" => Command::Elect {
            path: path(),
            id: flags.value("id").map(str::to_string),
            once: flags.has("once"),
            grace: grace(&flags)?,
            command: s.trailing,
        },
        "config" => Command::Config,
        "reconfig" => ensemble::reconfig(&flags)?,
        "bench" | "demo" if globals.resume.is_some() => {
            return usage(format!(
                "--resume takes one session; '{}' opens several",
                spec.name
            ))
        }
        "bench" => Command::Bench(bench(&flags, &path())?),
        "demo" => match flags.positive("participants")?.unwrap_or(10) {
            // The story needs a leader and someone to take over.
            n if n < 2 => return usage("--participants must be at least 2"),
            participants => Command::Demo { participants },
        },
        other => unreachable!("command '{other}' has a spec but no parser"),
    };
    Ok(Action::Run(Box::new(globals), command))
}

/// `--sasl-digest USER --sasl-password-file FILE` (the file is read later, not here).
fn sasl_digest(flags: &Flags) -> Result<Option<SaslDigest>, UsageError> {
    match (
        flags.value("sasl-digest"),
        flags.value("sasl-password-file"),
    ) {
        (None, None) => Ok(None),
        (Some(_), None) => usage(
            "--sasl-digest needs --sasl-password-file FILE (the password is never taken from \
             the command line)",
        ),
        (None, Some(_)) => usage("--sasl-password-file needs --sasl-digest USER"),
        (Some(user), Some(file)) => Ok(Some(SaslDigest {
            user: user.to_string(),
            password_file: file.to_string(),
            password: None,
        })),
    }
}

/// `--sasl-kerberos PRINCIPAL [--keytab FILE] [--sasl-service-principal NAME]`.
fn kerberos(flags: &Flags) -> Result<Option<KerberosArgs>, UsageError> {
    let Some(principal) = flags.value("sasl-kerberos") else {
        return match ["keytab", "sasl-service-principal"]
            .into_iter()
            .find(|f| flags.has(f))
        {
            Some(f) => usage(format!("--{f} needs --sasl-kerberos PRINCIPAL")),
            None => Ok(None),
        };
    };
    if principal.trim().is_empty() {
        return usage("--sasl-kerberos needs a principal (e.g. app@EXAMPLE.COM)");
    }
    if flags.has("sasl-digest") {
        return usage("--sasl-kerberos and --sasl-digest: one SASL mechanism at a time");
    }
    Ok(Some(KerberosArgs {
        principal: principal.to_string(),
        keytab: flags.value("keytab").map(str::to_string),
        service_principal: flags.value("sasl-service-principal").map(str::to_string),
    }))
}

/// The `--tls*` flags: `None` when none is given.
fn tls(flags: &Flags) -> Result<Option<Box<Tls>>, UsageError> {
    let any = ["tls", "tls-ca", "tls-cert", "tls-key", "tls-server-name"]
        .iter()
        .any(|f| flags.has(f));
    if !any {
        return Ok(None);
    }
    let cert_and_key = match (flags.value("tls-cert"), flags.value("tls-key")) {
        (Some(cert), Some(key)) => Some((cert.to_string(), key.to_string())),
        (None, None) => None,
        (Some(_), None) => {
            return usage("--tls-cert needs --tls-key (the certificate's private key)")
        }
        (None, Some(_)) => return usage("--tls-key needs --tls-cert (the client certificate)"),
    };
    Ok(Some(Box::new(Tls {
        ca: flags.value("tls-ca").map(str::to_string),
        cert_and_key,
        server_name: flags.value("tls-server-name").map(str::to_string),
    })))
}

fn globals(flags: &Flags, env_server: Option<String>) -> Result<Globals, UsageError> {
    let env_server = env_server.filter(|s| !s.is_empty());
    if flags.value("server").is_some_and(|s| s.trim().is_empty()) {
        // Found by the zkctl_args fuzz target: an empty --server used to be taken as is.
        return usage("--server needs a connect string (host:port,...), not an empty value");
    }
    let server_given = flags.has("server") || env_server.is_some();
    let server = flags
        .value("server")
        .map(str::to_string)
        .or(env_server)
        .unwrap_or_else(|| DEFAULT_SERVER.to_string());
    let session_timeout = flags
        .millis("session-timeout")?
        .unwrap_or(Duration::from_secs(10));
    if session_timeout.is_zero() {
        return usage("--session-timeout must be positive");
    }
    let connect_timeout = flags.millis("connect-timeout")?;
    let auth = flags
        .all("auth")
        .map(|a| match a.split_once(':') {
            Some((scheme, creds)) if !scheme.is_empty() => {
                Ok((scheme.to_string(), creds.to_string()))
            }
            _ => usage(format!(
                "--auth needs SCHEME:CREDENTIALS (e.g. digest:user:password), not '{a}'"
            )),
        })
        .collect::<Result<_, _>>()?;
    let verbosity = flags.0.iter().filter(|(n, _)| *n == "verbose").count();
    let tls = tls(flags)?;
    let sasl_digest = sasl_digest(flags)?;
    let kerberos = kerberos(flags)?;
    let resume = ensemble::resume(flags)?;
    Ok(Globals {
        server,
        server_given,
        session_timeout,
        connect_timeout,
        verbosity: verbosity.min(u8::MAX.into()) as u8,
        tls,
        sasl_digest,
        kerberos,
        auth,
        resume,
        follow_ensemble: flags.has("follow-ensemble"),
    })
}

fn grace(flags: &Flags) -> Result<Duration, UsageError> {
    Ok(flags.millis("grace")?.unwrap_or(Duration::from_secs(2)))
}

fn create(flags: &Flags, path: String, data: Vec<u8>) -> Result<Command, UsageError> {
    let args = CreateArgs {
        path,
        data,
        ephemeral: flags.has("ephemeral"),
        sequential: flags.has("sequential"),
        container: flags.has("container"),
        ttl: flags.millis("ttl")?,
        parents: flags.has("parents"),
    };
    // ZooKeeper has no ephemeral container, no sequential container and no ephemeral TTL.
    let kinds = [args.ephemeral, args.container, args.ttl.is_some()];
    if kinds.iter().filter(|k| **k).count() > 1 {
        return usage("--ephemeral, --container and --ttl exclude each other");
    }
    if args.container && args.sequential {
        return usage("a container cannot be --sequential");
    }
    if args.ttl == Some(Duration::ZERO) {
        return usage("--ttl must be positive");
    }
    Ok(Command::Create(args))
}

fn cache(flags: &Flags, path: String) -> Result<Command, UsageError> {
    let depth = flags.number::<usize>("depth", "a number of levels (0 or more)")?;
    let kind = match (depth, flags.has("children")) {
        (Some(_), true) => return usage("--depth and --children exclude each other"),
        (Some(n), false) => CacheKind::Depth(n),
        (None, true) => CacheKind::Children,
        (None, false) => CacheKind::Subtree,
    };
    Ok(Command::Cache {
        path,
        kind,
        run_for: flags.millis("for")?,
    })
}

fn counter(
    flags: &Flags,
    path: String,
    verb: &str,
    numbers: &[String],
) -> Result<Command, UsageError> {
    let int = flags.has("int");
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
    let action = match (verb, numbers) {
        ("get", []) => CounterAction::Get,
        ("add", [n]) => CounterAction::Add(number(n)?),
        ("set", [n]) => CounterAction::Set(number(n)?),
        ("cas", [old, new]) => CounterAction::Cas(number(old)?, number(new)?),
        ("get" | "add" | "set" | "cas", _) => {
            return usage(format!(
                "'counter PATH {verb}' takes {}",
                match verb {
                    "get" => "no number",
                    "cas" => "OLD and NEW",
                    _ => "one number",
                }
            ))
        }
        _ => return usage(format!("'counter' does get, add, set or cas, not '{verb}'")),
    };
    Ok(Command::Counter { path, action, int })
}

fn queue(
    flags: &Flags,
    action: String,
    path: String,
    data: Option<String>,
) -> Result<Command, UsageError> {
    let action = match action.as_str() {
        "put" => {
            let Some(data) = data else {
                return usage("'queue put' needs PATH and DATA (or - for stdin)");
            };
            let chosen = [
                flags.has("priority"),
                flags.has("id"),
                flags.has("delay-until"),
                flags.has("simple"),
            ];
            if chosen.iter().filter(|c| **c).count() > 1 {
                return usage("--priority, --id, --delay-until and --simple exclude each other");
            }
            for take_only in ["count", "timeout", "lock-path"] {
                if flags.has(take_only) {
                    return usage(format!("--{take_only} is for 'queue take'"));
                }
            }
            let kind = if let Some(p) = flags.number::<i32>("priority", "a priority (an int)")? {
                QueueKind::Priority(p)
            } else if let Some(id) = flags.value("id") {
                if id.is_empty() {
                    return usage("--id needs a non-empty id");
                }
                QueueKind::Id(id.to_string())
            } else if let Some(due) =
                flags.number::<u64>("delay-until", "milliseconds since the epoch")?
            {
                QueueKind::DelayUntil(due)
            } else if flags.has("simple") {
                QueueKind::Simple
            } else {
                QueueKind::Plain
            };
            let data = (data != "-").then(|| data.into_bytes());
            QueueAction::Put { kind, data }
        }
        "take" => {
            if data.is_some() {
                return usage("'queue take' takes only PATH");
            }
            for put_only in ["priority", "id", "delay-until"] {
                if flags.has(put_only) {
                    return usage(format!("--{put_only} is for 'queue put'"));
                }
            }
            let lock_path = flags.value("lock-path").map(str::to_string);
            if flags.has("simple") && lock_path.is_some() {
                return usage("a simple queue has no lock path");
            }
            QueueAction::Take {
                count: flags.number("count", "a number of items")?.unwrap_or(1),
                timeout: flags.millis("timeout")?,
                lock_path,
                simple: flags.has("simple"),
            }
        }
        other => return usage(format!("'queue' does put or take, not '{other}'")),
    };
    Ok(Command::Queue { path, action })
}

/// The forms of `service`: each action and what follows it.
const SERVICE_FORMS: &[(&str, &str)] = &[
    (
        "register",
        "BASE NAME --address A --port P [FLAGS] [-- CMD [ARGS...]]",
    ),
    ("unregister", "BASE NAME ID"),
    ("list", "BASE [NAME]"),
    ("watch", "BASE NAME [--for MS]"),
    (
        "pick",
        "BASE NAME [--strategy round-robin|random] [--count N]",
    ),
];

/// The `service` action a flag belongs to (`None`: a global flag).
fn service_flag_action(flag: &str) -> Option<&'static str> {
    match flag {
        "address" | "port" | "ssl-port" | "id" | "payload" | "type" | "enabled" | "uri-spec"
        | "grace" => Some("register"),
        "for" => Some("watch"),
        "strategy" | "count" => Some("pick"),
        _ => None,
    }
}

/// A service name or instance id: one node name.
fn node_name(what: &str, name: String) -> Result<String, UsageError> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return usage(format!(
            "{what} is a node name (not empty, no '/', not . or ..), not '{name}'"
        ));
    }
    Ok(name)
}

/// `--port P`, `--ssl-port P`: 1 to 65535.
fn port(flags: &Flags, name: &str) -> Result<Option<u16>, UsageError> {
    match flags.value(name) {
        None => Ok(None),
        Some(v) => match v.parse::<u16>() {
            Ok(p) if p > 0 => Ok(Some(p)),
            _ => usage(format!("--{name} needs a port number (1-65535), not '{v}'")),
        },
    }
}

fn service(
    flags: &Flags,
    args: Vec<String>,
    trailing: Vec<String>,
    dashes: bool,
) -> Result<Command, UsageError> {
    let mut args = args.into_iter();
    let action = args.next().unwrap_or_default();
    let Some(&(action, form)) = SERVICE_FORMS.iter().find(|(a, _)| *a == action) else {
        return usage(format!(
            "'service' does register, unregister, list, watch or pick, not '{action}'"
        ));
    };
    for (flag, _) in &flags.0 {
        match service_flag_action(flag) {
            Some(owner) if owner != action => {
                return usage(format!("--{flag} is for 'service {owner}'"))
            }
            _ => {}
        }
    }
    let rest: Vec<String> = args.collect();
    let (min, max) = match action {
        "unregister" => (3, 3),
        "list" => (1, 2),
        _ => (2, 2),
    };
    if rest.len() < min {
        let missing = ["BASE", "NAME", "ID"][rest.len()];
        return usage(format!(
            "'service {action}' needs {missing}: zkctl service {action} {form}"
        ));
    }
    if rest.len() > max || (!trailing.is_empty() && !dashes) {
        return usage(if action == "register" {
            // As with `member`: without `--` the words cannot be told apart.
            format!("'service register' needs -- before the command: zkctl service register {form}")
        } else {
            format!(
                "'service {action}' takes {form}, got {} arguments",
                rest.len()
            )
        });
    }
    if !trailing.is_empty() && action != "register" {
        return usage(format!(
            "'service {action}' runs no command (-- CMD is for 'service register')"
        ));
    }
    let mut rest = rest.into_iter();
    let base = rest.next().unwrap_or_default();
    let name = rest
        .next()
        .map(|n| node_name("a service name", n))
        .transpose()?;
    let name_given = || name.clone().unwrap_or_default();
    let action = match action {
        "register" => {
            ServiceAction::Register(Box::new(registration(flags, name_given(), trailing)?))
        }
        "unregister" => ServiceAction::Unregister {
            name: name_given(),
            id: node_name("an instance id", rest.next().unwrap_or_default())?,
        },
        "list" => ServiceAction::List { name },
        "watch" => ServiceAction::Watch {
            name: name_given(),
            run_for: flags.millis("for")?,
        },
        _ => ServiceAction::Pick {
            name: name_given(),
            strategy: match flags.value("strategy") {
                None | Some("round-robin") => PickStrategy::RoundRobin,
                Some("random") => PickStrategy::Random,
                Some(other) => {
                    return usage(format!(
                        "--strategy: '{other}' is not round-robin or random"
                    ))
                }
            },
            count: flags.positive("count")?.unwrap_or(1),
        },
    };
    Ok(Command::Service { base, action })
}

/// `service register`'s flags.
fn registration(
    flags: &Flags,
    name: String,
    command: Vec<String>,
) -> Result<ServiceRegistration, UsageError> {
    let address = match flags.value("address") {
        Some(a) if !a.trim().is_empty() => a.to_string(),
        Some(_) => return usage("--address needs a host name or address, not an empty value"),
        None => {
            return usage("'service register' needs --address A (where the instance is reached)")
        }
    };
    let (port, ssl_port) = (port(flags, "port")?, port(flags, "ssl-port")?);
    if port.is_none() && ssl_port.is_none() {
        return usage("'service register' needs --port P (or --ssl-port P)");
    }
    let id = flags
        .value("id")
        .map(|id| node_name("an instance id", id.to_string()))
        .transpose()?;
    let kind = match flags.value("type") {
        None | Some("dynamic") => ServiceKind::Dynamic,
        Some("static") => ServiceKind::Static,
        Some("permanent") => ServiceKind::Permanent,
        Some(other) => {
            return usage(format!(
                "--type: '{other}' is not dynamic, static or permanent"
            ))
        }
    };
    let enabled = match flags.value("enabled") {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => return usage(format!("--enabled: '{other}' is not true or false")),
    };
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
    Ok(ServiceRegistration {
        name,
        id,
        address,
        port,
        ssl_port,
        payload: flags.value("payload").map(str::to_string),
        kind,
        enabled,
        uri_spec: flags.value("uri-spec").map(str::to_string),
        grace: grace(flags)?,
        command,
    })
}

fn bench(flags: &Flags, kind: &str) -> Result<BenchOptions, UsageError> {
    let kind = match kind {
        "get" => BenchKind::Get,
        "set" => BenchKind::Set,
        "create" => BenchKind::Create,
        "lock" => BenchKind::Lock,
        "latch" => BenchKind::Latch,
        other => {
            return usage(format!(
                "unknown benchmark '{other}' (get, set, create, lock or latch)"
            ))
        }
    };
    let recipe = matches!(kind, BenchKind::Lock | BenchKind::Latch);
    let size = flags.number("size", "a number of bytes")?.unwrap_or(100);
    Ok(BenchOptions {
        kind,
        clients: flags
            .positive("clients")?
            .unwrap_or(if recipe { 1 } else { 4 }),
        in_flight: flags
            .positive("in-flight")?
            .unwrap_or(if recipe { 1 } else { 32 }),
        ops: flags
            .positive("ops")?
            .unwrap_or(if recipe { 1000 } else { 20_000 }),
        size,
        rounds: flags.positive("rounds")?.unwrap_or(100),
        rt: match flags.value("rt") {
            None | Some("multi") => BenchRuntime::Multi,
            Some("current") => BenchRuntime::Current,
            Some(other) => return usage(format!("--rt: '{other}' is not current or multi")),
        },
    })
}

#[cfg(test)]
mod tests {
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
        let (g, c) = command("--server h:1/app --session-timeout 3000 ls /a --auth digest:u:p");
        assert_eq!(g.server, "h:1/app");
        assert!(g.server_given);
        assert_eq!(g.session_timeout, Duration::from_millis(3000));
        assert_eq!(g.auth, vec![("digest".into(), "u:p".into())]);
        assert_eq!(c, Command::Ls { path: "/a".into() });
        let (g, _) = command("ls /a --server=x:2");
        assert_eq!(g.server, "x:2");
    }

    #[test]
    fn tls_flags() {
        assert_eq!(command("ls /").0.tls, None);
        assert_eq!(command("--tls ls /").0.tls, Some(Box::default()));
        let (g, _) = command(
            "ls / --tls-ca ca.pem --tls-cert c.pem --tls-key c.key --tls-server-name zk.test",
        );
        assert_eq!(
            g.tls,
            Some(Box::new(Tls {
                ca: Some("ca.pem".into()),
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
        assert_eq!(run("--version").unwrap(), Action::Version);
        let (_, c) = command("set /a hello --version 3");
        assert_eq!(
            c,
            Command::Set {
                path: "/a".into(),
                data: b"hello".to_vec(),
                version: Some(3)
            }
        );
        let (_, c) = command("set /n -1");
        assert!(matches!(c, Command::Set { data, .. } if data == b"-1"));
    }

    #[test]
    fn help_forms() {
        assert_eq!(run("--help").unwrap(), Action::Help(None));
        assert_eq!(run("-h").unwrap(), Action::Help(None));
        assert_eq!(run("help").unwrap(), Action::Help(None));
        let lock = command_spec("lock");
        assert_eq!(run("lock --help").unwrap(), Action::Help(lock));
        assert_eq!(run("help lock").unwrap(), Action::Help(lock));
        assert!(general_help().contains("elect PATH"));
        assert!(command_help(lock.unwrap()).contains("--timeout MS"));
    }

    #[test]
    fn lock_command_after_dashes_or_path() {
        let (_, c) = command("lock /l --timeout 500 -- sh -c true --grace 1");
        assert_eq!(
            c,
            Command::Lock {
                path: "/l".into(),
                timeout: Some(Duration::from_millis(500)),
                grace: Duration::from_secs(2),
                command: vec![
                    "sh".into(),
                    "-c".into(),
                    "true".into(),
                    "--grace".into(),
                    "1".into()
                ],
            }
        );
        let (_, c) = command("elect /e --once sleep 1 --id x");
        assert_eq!(
            c,
            Command::Elect {
                path: "/e".into(),
                id: None,
                once: true,
                grace: Duration::from_secs(2),
                command: vec!["sleep".into(), "1".into(), "--id".into(), "x".into()],
            }
        );
        assert!(error("lock /l").contains("needs a command to run"));
    }

    #[test]
    fn create_modes() {
        let (_, c) = command("create /a/b- data --sequential --ephemeral --parents");
        let Command::Create(a) = c else { panic!() };
        assert!(a.sequential && a.ephemeral && a.parents && !a.container);
        assert_eq!(a.data, b"data");
        assert!(error("create /a --ephemeral --ttl 5").contains("exclude"));
        assert!(error("create /a --container --sequential").contains("container"));
    }

    #[test]
    fn usage_errors() {
        assert_eq!(
            error("--server= ls /"),
            "--server needs a connect string (host:port,...), not an empty value"
        );
        assert_eq!(error("ls / --bogus"), "unknown flag --bogus for 'ls'");
        assert_eq!(error("--bogus ls /"), "unknown flag --bogus");
        assert_eq!(error("frobnicate"), "unknown command 'frobnicate'");
        assert_eq!(error(""), "no command given");
        assert_eq!(error("ls"), "'ls' needs PATH");
        assert_eq!(error("set /a"), "'set' needs DATA");
        assert!(error("ls /a /b").starts_with("'ls' takes 1 argument"));
        assert!(error("lock /l --timeout soon -- true").contains("milliseconds"));
        assert!(error("ls / --server").contains("needs a value"));
        assert!(error("ls / -x").contains("unknown flag -x"));
        assert!(error("bench frob").contains("unknown benchmark"));
        assert!(error("bench get --clients 0").contains("at least 1"));
        assert!(error("demo --participants 1").contains("at least 2"));
        assert!(error("ls / --auth nocolon").contains("SCHEME:CREDENTIALS"));
        assert!(error("ls / --recursive=yes").contains("unknown flag"));
        assert!(error("delete / --recursive=yes").contains("takes no value"));
    }

    #[test]
    fn cache_kinds_and_limits() {
        let (_, c) = command("cache /app");
        assert_eq!(
            c,
            Command::Cache {
                path: "/app".into(),
                kind: CacheKind::Subtree,
                run_for: None,
            }
        );
        let (_, c) = command("cache /app --depth 0 --for 1500");
        assert_eq!(
            c,
            Command::Cache {
                path: "/app".into(),
                kind: CacheKind::Depth(0),
                run_for: Some(Duration::from_millis(1500)),
            }
        );
        let (_, c) = command("cache --children /app");
        assert!(matches!(
            c,
            Command::Cache {
                kind: CacheKind::Children,
                ..
            }
        ));
        assert_eq!(error("cache"), "'cache' needs PATH");
        assert!(error("cache /a --depth -1").contains("--depth needs a number of levels"));
        assert!(error("cache /a --depth deep").contains("--depth needs"));
        assert!(error("cache /a --depth").contains("needs a value"));
        assert!(error("cache /a --depth 2 --children").contains("exclude"));
        assert!(error("cache /a --for soon").contains("milliseconds"));
        assert!(error("cache /a /b").starts_with("'cache' takes 1 argument"));
        assert!(general_help().contains("cache PATH"));
    }

    #[test]
    fn counter_actions_and_widths() {
        let counter = |line: &str| match command(line).1 {
            Command::Counter { path, action, int } => (path, action, int),
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
        assert!(error("counter /c").contains("needs an action"));
        assert!(error("counter /c add").contains("takes one number"));
        assert!(error("counter /c get 1").contains("takes no number"));
        assert!(error("counter /c cas 1").contains("OLD and NEW"));
        assert!(error("counter /c bump 1").contains("get, add, set or cas"));
        assert!(error("counter /c get --count 3").contains("unknown flag --count"));
    }

    #[test]
    fn barrier_and_member_run_a_command() {
        let (_, c) = command("barrier /b --count 3 --timeout 500 -- sh -c true --count 9");
        assert_eq!(
            c,
            Command::Barrier {
                path: "/b".into(),
                count: 3,
                timeout: Some(Duration::from_millis(500)),
                grace: Duration::from_secs(2),
                command: vec![
                    "sh".into(),
                    "-c".into(),
                    "true".into(),
                    "--count".into(),
                    "9".into()
                ],
            }
        );
        // As with `lock`, the first word after PATH starts the command.
        let (_, c) = command("barrier --count 2 /b true");
        assert!(matches!(c, Command::Barrier { count: 2, command, .. } if command == ["true"]));
        assert!(error("barrier /b -- true").contains("needs --count N"));
        assert!(error("barrier /b --count 0 -- true").contains("at least 1"));
        assert!(error("barrier /b --count 3").contains("needs a command to run"));

        let (_, c) = command("member /g host-a 10.0.0.1:80 --grace 500 -- ./serve --port 80");
        assert_eq!(
            c,
            Command::Member {
                path: "/g".into(),
                id: "host-a".into(),
                data: b"10.0.0.1:80".to_vec(),
                grace: Duration::from_millis(500),
                command: vec!["./serve".into(), "--port".into(), "80".into()],
            }
        );
        let (_, c) = command("member /g host-a -- true");
        assert!(matches!(c, Command::Member { data, .. } if data.is_empty()));
        // Without `--`, DATA and CMD cannot be told apart.
        assert!(error("member /g a data true").contains("needs -- before the command"));
        assert!(error("member /g a ./serve").contains("needs a command to run"));
        assert_eq!(error("member /g"), "'member' needs ID");
        assert!(error("member /g x/y -- true").contains("member id"));
        assert!(error("member /g .. -- true").contains("member id"));
        let (_, c) = command("members /g");
        assert_eq!(c, Command::Members { path: "/g".into() });
        assert!(error("members /g extra").starts_with("'members' takes 1 argument"));
    }

    #[test]
    fn service_actions() {
        let (_, c) = command(
            "service register /services api --address 10.0.0.5 --port 8080 --ssl-port 8443 \
             --id i-1 --payload {\"zone\":\"a\"} --type static --enabled false \
             --uri-spec {scheme}://{address}:{port} --grace 500 -- ./serve --port 80",
        );
        assert_eq!(
            c,
            Command::Service {
                base: "/services".into(),
                action: ServiceAction::Register(Box::new(ServiceRegistration {
                    name: "api".into(),
                    id: Some("i-1".into()),
                    address: "10.0.0.5".into(),
                    port: Some(8080),
                    ssl_port: Some(8443),
                    payload: Some(r#"{"zone":"a"}"#.into()),
                    kind: ServiceKind::Static,
                    enabled: Some(false),
                    uri_spec: Some("{scheme}://{address}:{port}".into()),
                    grace: Duration::from_millis(500),
                    command: vec!["./serve".into(), "--port".into(), "80".into()],
                })),
            }
        );
        // A permanent instance needs no command; --ssl-port alone will do.
        let (_, c) = command("service register /s api --address h --ssl-port 443 --type permanent");
        let Command::Service {
            action: ServiceAction::Register(r),
            ..
        } = c
        else {
            panic!("{c:?}")
        };
        assert_eq!(
            (r.port, r.ssl_port, r.kind),
            (None, Some(443), ServiceKind::Permanent)
        );
        assert!(r.command.is_empty() && r.id.is_none() && r.enabled.is_none());
        let service = |line: &str| match command(line).1 {
            Command::Service { base, action } => (base, action),
            other => panic!("{line}: {other:?}"),
        };
        assert_eq!(
            service("service unregister /s api i-1"),
            (
                "/s".into(),
                ServiceAction::Unregister {
                    name: "api".into(),
                    id: "i-1".into()
                }
            )
        );
        assert_eq!(
            service("service list /s").1,
            ServiceAction::List { name: None }
        );
        assert_eq!(
            service("service list /s api").1,
            ServiceAction::List {
                name: Some("api".into())
            }
        );
        assert_eq!(
            service("service watch /s api --for 1500").1,
            ServiceAction::Watch {
                name: "api".into(),
                run_for: Some(Duration::from_millis(1500))
            }
        );
        assert_eq!(
            service("service pick /s api").1,
            ServiceAction::Pick {
                name: "api".into(),
                strategy: PickStrategy::RoundRobin,
                count: 1
            }
        );
        assert_eq!(
            service("service pick /s api --strategy random --count 3").1,
            ServiceAction::Pick {
                name: "api".into(),
                strategy: PickStrategy::Random,
                count: 3
            }
        );
        assert!(general_help().contains("service register|unregister|list|watch|pick"));
    }

    #[test]
    fn service_usage_errors() {
        let register = "service register /s api --address h --port 80";
        assert!(error("service").contains("needs an action: register, unregister"));
        assert!(error("service frob /s").contains("not 'frob'"));
        assert!(error("service list").starts_with("'service list' needs BASE"));
        assert!(error("service watch /s").starts_with("'service watch' needs NAME"));
        assert!(error("service unregister /s api").starts_with("'service unregister' needs ID"));
        assert!(error("service list /s a b").contains("takes BASE [NAME], got 3"));
        assert!(error("service pick /s a -- true").contains("runs no command"));
        assert!(error(&format!("{register} ./serve")).contains("needs -- before the command"));
        assert!(error(&format!("{register} ./serve 80")).contains("needs -- before the command"));
        // Dynamic and static instances go when zkctl ends: they need a command.
        assert!(error(register).contains("ephemeral"));
        assert!(error(&format!("{register} --type static")).contains("static"));
        assert_eq!(
            error("service register /s api --port 80 -- true"),
            "'service register' needs --address A (where the instance is reached)"
        );
        assert!(error("service register /s api --address h -- true").contains("needs --port P"));
        assert!(error("service register /s api --address= --port 1 -- true").contains("empty"));
        for bad in ["0", "65536", "-1", "http"] {
            assert_eq!(
                error(&format!("{register} --port {bad} -- true").replace("--port 80 ", "")),
                format!("--port needs a port number (1-65535), not '{bad}'")
            );
        }
        assert!(error(&format!("{register} --ssl-port 70000 -- true")).contains("--ssl-port"));
        assert!(error(&format!("{register} --type forever -- true")).contains("'forever'"));
        assert!(error(&format!("{register} --enabled yes -- true")).contains("'yes'"));
        assert!(error(&format!("{register} --id a/b -- true")).contains("an instance id"));
        assert!(error("service list /s a/b").contains("a service name"));
        assert!(error("service unregister /s a ..").contains("an instance id"));
        // Each action's flags are its own.
        assert_eq!(
            error(&format!("{register} --count 2 -- true")),
            "--count is for 'service pick'"
        );
        assert_eq!(
            error("service watch /s api --port 1"),
            "--port is for 'service register'"
        );
        assert_eq!(
            error("service pick /s api --for 1"),
            "--for is for 'service watch'"
        );
        assert!(error("service pick /s api --strategy sticky").contains("'sticky'"));
        assert!(error("service pick /s api --count 0").contains("at least 1"));
        assert!(error("service watch /s api --for soon").contains("milliseconds"));
        assert!(error("service list /s --bogus").contains("unknown flag --bogus"));
    }

    #[test]
    fn help_texts_are_flush_left() {
        // A line break in a details string without `\n\` keeps the source's indentation.
        for c in spec::COMMANDS {
            for line in c.details.lines() {
                assert!(!line.starts_with(' '), "{}: {line:?}", c.name);
            }
            assert!(general_help().contains(&format!("{} {}", c.name, c.synopsis)));
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
        let (_, c) = command("bench get");
        assert!(matches!(
            c,
            Command::Bench(BenchOptions {
                clients: 4,
                in_flight: 32,
                ops: 20_000,
                size: 100,
                rt: BenchRuntime::Multi,
                ..
            })
        ));
        let (_, c) = command("bench get --rt current");
        assert!(matches!(
            c,
            Command::Bench(BenchOptions {
                rt: BenchRuntime::Current,
                ..
            })
        ));
        assert!(run("bench get --rt tokio")
            .unwrap_err()
            .to_string()
            .contains("not current or multi"));
        let (_, c) = command("bench lock --ops 10");
        assert!(matches!(
            c,
            Command::Bench(BenchOptions {
                kind: BenchKind::Lock,
                clients: 1,
                in_flight: 1,
                ops: 10,
                ..
            })
        ));
    }
}
