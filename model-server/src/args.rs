//! The command line, parsed with the standard library: a handful of `--flag VALUE` (or
//! `--flag=VALUE`) options, each checked, so a bad value is an error naming the flag rather
//! than a silent default.

use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use zkrs_model::{ServerConfig, ZooKeeperVersion};

/// The help text (`--help`).
pub const HELP: &str = "\
zkrs-model: a model of a ZooKeeper 3.8 or 3.9 server (or ensemble) for tests, in any language.
Serves in milliseconds, no JVM, nothing on disk. Prints its settings on stderr, then the
connect string as one line on stdout; runs until SIGINT or SIGTERM.

Usage: zkrs-model [OPTIONS]

Options:
  --port PORT[,PORT...]      Client port; 0: a free port [default: 2181]. With --members N,
                             one port per member, or one: the first of N consecutive ports
                             (0: N free ports)
  --members N                1: a standalone server; 2 to 32: an ensemble of N members,
                             member 1 leading [default: 1]
  --bind ADDR                Address to listen on (0.0.0.0: every interface)
                             [default: 127.0.0.1]
  --tick-time MS             tickTime, the unit of session timeouts [default: 200]
  --min-session-timeout MS   minSessionTimeout [default: 2 ticks]
  --max-session-timeout MS   maxSessionTimeout [default: 60000]
  --ttl-nodes on|off         TTL nodes (zookeeper.extendedTypesEnabled) [default: on]
  --container-check-interval MS
                             How often empty containers and expired TTL nodes are reaped
                             (znode.container.checkIntervalMs) [default: 60000]
  --jute-maxbuffer BYTES     The largest request (jute.maxbuffer) [default: 1048575]
  --max-client-cnxns N       Connections one client address may hold, 0: no limit
                             (maxClientCnxns) [default: 60]
  --zookeeper-version 3.MINOR[.PATCH]
                             The release to answer as, 3.8.0 to 3.9.x (3.9: 3.9.0); where
                             they differ (watch modes, event zxids, create2 in multi,
                             exists' ACL check, srvr's version) [default: 3.8.0]
  -h, --help                 Print this help
  -V, --version              Print the version

Four-letter words on the client port: ruok, srvr, stat, mntr, conf, isro (the other words
ZooKeeper knows are answered as left out of 4lw.commands.whitelist).

In a script, read the first line of stdout:
  coproc ZK { exec zkrs-model --port 0; }
  read -r CONNECT <&\"${ZK[0]}\"
  ... tests against \"$CONNECT\" ...
  kill \"$ZK_PID\"; wait \"$ZK_PID\"

Exit status: 0 after SIGINT or SIGTERM; 1 when a port cannot be bound; 2 for a bad argument.
";

/// Ensembles larger than this are refused (a typo, not a test).
const MAX_MEMBERS: usize = 32;

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    /// Serve with these options.
    Serve(Options),
    /// Print the help.
    Help,
    /// Print the version.
    Version,
}

/// The settings of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// One address per member.
    pub addrs: Vec<SocketAddr>,
    /// `tickTime`.
    pub tick_time: Duration,
    /// `minSessionTimeout`.
    pub min_session_timeout: Duration,
    /// `maxSessionTimeout`.
    pub max_session_timeout: Duration,
    /// TTL nodes.
    pub ttl_nodes: bool,
    /// `znode.container.checkIntervalMs`.
    pub container_check_interval: Duration,
    /// `jute.maxbuffer`.
    pub jute_maxbuffer: usize,
    /// `maxClientCnxns` (0: no limit).
    pub max_client_cnxns: u32,
    /// The ZooKeeper release the model answers as.
    pub zookeeper: ZooKeeperVersion,
}

impl Options {
    /// The model's settings (without the wall clock's epoch, which the caller sets).
    pub fn config(&self) -> ServerConfig {
        let mut config = ServerConfig::default();
        config.tick_time = self.tick_time;
        config.min_session_timeout = Some(self.min_session_timeout);
        config.max_session_timeout = Some(self.max_session_timeout);
        config.extended_types = self.ttl_nodes;
        config.container_check_interval = self.container_check_interval;
        config.max_frame_len = self.jute_maxbuffer;
        config.max_client_cnxns = self.max_client_cnxns;
        config.zookeeper = self.zookeeper;
        config
    }
}

/// A bad command line: the message, one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

fn invalid(flag: &str, value: &str, why: &str) -> UsageError {
    UsageError(format!("invalid value {value:?} for {flag}: {why}"))
}

fn number<T: std::str::FromStr>(flag: &str, value: &str, what: &str) -> Result<T, UsageError> {
    value.parse().map_err(|_| invalid(flag, value, what))
}

fn millis(flag: &str, value: &str) -> Result<Duration, UsageError> {
    let ms: u64 = number(flag, value, "not a number of milliseconds")?;
    if ms == 0 || ms > i32::MAX as u64 {
        return Err(invalid(flag, value, "must be 1 to 2147483647 ms"));
    }
    Ok(Duration::from_millis(ms))
}

/// The flags that take a value.
const VALUE_FLAGS: &[&str] = &[
    "--port",
    "--members",
    "--bind",
    "--tick-time",
    "--min-session-timeout",
    "--max-session-timeout",
    "--ttl-nodes",
    "--container-check-interval",
    "--jute-maxbuffer",
    "--max-client-cnxns",
    "--zookeeper-version",
];

/// Parses the arguments after the program's name.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut given: Vec<(&'static str, String)> = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| UsageError(format!("argument {a:?} is not UTF-8")))?;
        match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            _ => {}
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let Some(flag) = VALUE_FLAGS.iter().find(|f| **f == name) else {
            return Err(if name.starts_with('-') {
                UsageError(format!("unknown option {name}"))
            } else {
                UsageError(format!("unexpected argument {arg:?}"))
            });
        };
        let value = match inline {
            Some(value) => value,
            None => args
                .next()
                .and_then(|v| v.into_string().ok())
                .ok_or_else(|| UsageError(format!("{flag} needs a value")))?,
        };
        if given.iter().any(|(f, _)| f == flag) {
            return Err(UsageError(format!("{flag} is given twice")));
        }
        given.push((flag, value));
    }
    let get = |flag: &str| {
        given
            .iter()
            .find(|(f, _)| *f == flag)
            .map(|(_, v)| v.as_str())
    };
    options(get).map(Command::Serve)
}

/// The options from the flags given (`get`), defaults applied and every value checked.
fn options<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Options, UsageError> {
    let members = match get("--members") {
        None => 1,
        Some(v) => {
            let n: usize = number("--members", v, "not a number of members")?;
            if !(1..=MAX_MEMBERS).contains(&n) {
                return Err(invalid("--members", v, "must be 1 to 32"));
            }
            n
        }
    };
    let bind: IpAddr = match get("--bind") {
        None => IpAddr::V4(Ipv4Addr::LOCALHOST),
        Some(v) => number(
            "--bind",
            v,
            "not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1)",
        )?,
    };
    let ports = ports(get("--port").unwrap_or("2181"), members)?;
    let tick_time =
        get("--tick-time").map_or(Ok(Duration::from_millis(200)), |v| millis("--tick-time", v))?;
    let min_session_timeout = get("--min-session-timeout")
        .map_or(Ok(tick_time * 2), |v| millis("--min-session-timeout", v))?;
    let max_session_timeout = get("--max-session-timeout")
        .map_or(Ok(Duration::from_secs(60)), |v| {
            millis("--max-session-timeout", v)
        })?;
    if min_session_timeout > max_session_timeout {
        return Err(UsageError(format!(
            "--min-session-timeout ({} ms) is over --max-session-timeout ({} ms)",
            min_session_timeout.as_millis(),
            max_session_timeout.as_millis()
        )));
    }
    let ttl_nodes = match get("--ttl-nodes") {
        None | Some("on") => true,
        Some("off") => false,
        Some(v) => return Err(invalid("--ttl-nodes", v, "must be on or off")),
    };
    let container_check_interval = get("--container-check-interval")
        .map_or(Ok(Duration::from_secs(60)), |v| {
            millis("--container-check-interval", v)
        })?;
    let jute_maxbuffer = match get("--jute-maxbuffer") {
        None => 0xfffff,
        Some(v) => {
            let n: usize = number("--jute-maxbuffer", v, "not a number of bytes")?;
            if !(1024..=i32::MAX as usize).contains(&n) {
                return Err(invalid("--jute-maxbuffer", v, "must be 1024 to 2147483647"));
            }
            n
        }
    };
    let max_client_cnxns = match get("--max-client-cnxns") {
        None => 60,
        Some(v) => number("--max-client-cnxns", v, "not a number of connections")?,
    };
    let zookeeper = match get("--zookeeper-version") {
        None => ZooKeeperVersion::default(),
        Some(v) => v.parse().map_err(|e: zkrs_model::VersionError| {
            invalid("--zookeeper-version", v, &e.to_string())
        })?,
    };
    Ok(Options {
        addrs: ports
            .into_iter()
            .map(|p| SocketAddr::new(bind, p))
            .collect(),
        tick_time,
        min_session_timeout,
        max_session_timeout,
        ttl_nodes,
        container_check_interval,
        jute_maxbuffer,
        max_client_cnxns,
        zookeeper,
    })
}

/// `--port`'s value: one port per member, or the first of `members` consecutive ones.
fn ports(value: &str, members: usize) -> Result<Vec<u16>, UsageError> {
    let given = value
        .split(',')
        .map(|p| number("--port", p.trim(), "not a port number (0 to 65535)"))
        .collect::<Result<Vec<u16>, _>>()?;
    match given.as_slice() {
        [0] => Ok(vec![0; members]),
        [first] => (0..members)
            .map(|i| u16::try_from(usize::from(*first) + i).ok())
            .collect::<Option<Vec<u16>>>()
            .ok_or_else(|| {
                invalid(
                    "--port",
                    value,
                    &format!("{members} consecutive ports from {first} pass 65535"),
                )
            }),
        _ if given.len() == members => Ok(given),
        _ => Err(invalid(
            "--port",
            value,
            &format!(
                "{} ports for {members} member(s): give one port, or one per member",
                given.len()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Options, UsageError> {
        match parse(args.iter().map(OsString::from))? {
            Command::Serve(options) => Ok(options),
            other => panic!("{other:?}"),
        }
    }

    fn error(args: &[&str]) -> String {
        run(args).unwrap_err().0
    }

    #[test]
    fn defaults_are_a_standalone_server_on_2181() {
        let o = run(&[]).unwrap();
        assert_eq!(o.addrs, ["127.0.0.1:2181".parse().unwrap()]);
        assert_eq!(o.tick_time, Duration::from_millis(200));
        assert_eq!(o.min_session_timeout, Duration::from_millis(400));
        assert_eq!(o.max_session_timeout, Duration::from_secs(60));
        assert!(o.ttl_nodes);
        assert_eq!(o.config().max_frame_len, 0xfffff);
        assert_eq!(o.config().zookeeper, ZooKeeperVersion::V3_8_0);
    }

    #[test]
    fn the_zookeeper_version_is_a_modelled_release() {
        let o = run(&["--zookeeper-version", "3.9.5"]).unwrap();
        assert_eq!(o.config().zookeeper, ZooKeeperVersion::V3_9_5);
        let o = run(&["--zookeeper-version=3.9"]).unwrap();
        assert_eq!(o.zookeeper.to_string(), "3.9.0");
        assert_eq!(
            error(&["--zookeeper-version", "3.7.2"]),
            "invalid value \"3.7.2\" for --zookeeper-version: \
             ZooKeeper 3.7.2 is not modelled: 3.8.0 to 3.9.x are"
        );
        assert!(error(&["--zookeeper-version", "latest"]).contains("not a ZooKeeper version"));
    }

    #[test]
    fn ports_for_an_ensemble() {
        let o = run(&["--members", "3", "--port=2181"]).unwrap();
        let ports: Vec<u16> = o.addrs.iter().map(SocketAddr::port).collect();
        assert_eq!(ports, [2181, 2182, 2183]);
        let o = run(&["--members", "2", "--port", "0", "--bind", "::1"]).unwrap();
        assert_eq!(o.addrs, ["[::1]:0".parse().unwrap(); 2]);
        let o = run(&["--members", "2", "--port", "5000,4000"]).unwrap();
        assert_eq!(o.addrs[1].port(), 4000);
        let o = run(&["--tick-time", "1000"]).unwrap();
        assert_eq!(o.min_session_timeout, Duration::from_secs(2));
    }

    #[test]
    fn bad_values_name_their_flag() {
        assert_eq!(
            error(&["--port", "abc"]),
            "invalid value \"abc\" for --port: not a port number (0 to 65535)"
        );
        assert!(error(&["--port", "70000"]).contains("not a port number"));
        assert!(error(&["--port", ""]).contains("--port"));
        assert!(error(&["--port", "65535", "--members", "2"]).contains("pass 65535"));
        assert!(error(&["--port", "1,2", "--members", "3"]).contains("one per member"));
        assert!(error(&["--members", "0"]).contains("must be 1 to 32"));
        assert!(error(&["--tick-time", "0"]).contains("--tick-time"));
        assert!(error(&["--ttl-nodes", "yes"]).contains("on or off"));
        assert!(error(&["--bind", "localhost"]).contains("not an IP address"));
        assert_eq!(error(&["--port"]), "--port needs a value");
        assert_eq!(
            error(&["--port", "1", "--port", "2"]),
            "--port is given twice"
        );
        assert_eq!(error(&["--prot", "1"]), "unknown option --prot");
        assert_eq!(error(&["2181"]), "unexpected argument \"2181\"");
        assert!(error(&[
            "--min-session-timeout",
            "5000",
            "--max-session-timeout",
            "4000"
        ])
        .contains("is over"));
    }
}
