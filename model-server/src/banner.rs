//! The settings printed on stderr at start, with what differs from a default ZooKeeper of the
//! release the model answers as (3.8 or 3.9):
//! what a test runs against is on record in its log.

use std::fmt::Write as _;
use std::net::SocketAddr;

use crate::args::Options;

/// The four-letter words the model answers.
const WORDS: &str = "ruok srvr stat mntr conf isro";

/// What a default ZooKeeper 3.8 or 3.9 does that the model does not, or does otherwise.
const DIFFERENCES: &[&str] = &[
    "in memory only: nothing on disk, every start begins with an empty tree",
    "no SASL (answered AuthFailed), TLS, reconfig, quotas, read-only mode, observers, admin server",
    "four-letter words: latencies 0, no JVM or file figures in mntr, no dataDir in conf",
];

/// What an ensemble of the model does otherwise.
const ENSEMBLE_DIFFERENCES: &[&str] = &[
    "the members share one process: no leader election over the network",
    "empty containers and expired TTL nodes are not reaped",
];

/// A warning when some address listened on is not loopback: the model checks no
/// credentials a test would not give it, and any host that reaches the port can use it.
pub fn exposure(listening: &[SocketAddr]) -> Option<String> {
    let open: Vec<String> = listening
        .iter()
        .filter(|a| !a.ip().is_loopback())
        .map(|a| a.to_string())
        .collect();
    (!open.is_empty()).then(|| {
        format!(
            "zkrs-model: warning: listening beyond loopback ({}): any host that reaches the \
             port can read and change the tree (a test server: keep it off shared networks)\n",
            open.join(", ")
        )
    })
}

/// The settings as `name  value` lines, then the differences.
pub fn settings(options: &Options, listening: &[SocketAddr]) -> String {
    let mut out = String::new();
    let kind = match listening.len() {
        1 => "standalone server".to_owned(),
        n => format!("ensemble of {n} members, member 1 leading"),
    };
    let _ = writeln!(
        out,
        "zkrs-model {}: a model of a ZooKeeper 3.{} {kind}",
        env!("CARGO_PKG_VERSION"),
        options.zookeeper.minor()
    );
    let mut line = |name: &str, value: String| {
        let _ = writeln!(out, "  {name:<26}{value}");
    };
    for (m, addr) in listening.iter().enumerate() {
        let name = match listening.len() {
            1 => "clientPort".to_owned(),
            _ => format!("clientPort (member {})", m + 1),
        };
        line(&name, addr.to_string());
    }
    line(
        "ZooKeeper version",
        format!("{} (--zookeeper-version)", options.zookeeper),
    );
    line("tickTime", format!("{} ms", options.tick_time.as_millis()));
    line(
        "minSessionTimeout",
        format!("{} ms", options.min_session_timeout.as_millis()),
    );
    line(
        "maxSessionTimeout",
        format!("{} ms", options.max_session_timeout.as_millis()),
    );
    line(
        "TTL nodes",
        format!(
            "{} (zookeeper.extendedTypesEnabled={})",
            if options.ttl_nodes { "on" } else { "off" },
            options.ttl_nodes
        ),
    );
    line(
        "container reaper",
        format!(
            "every {} ms (znode.container.checkIntervalMs)",
            options.container_check_interval.as_millis()
        ),
    );
    line(
        "jute.maxbuffer",
        format!("{} bytes", options.jute_maxbuffer),
    );
    line(
        "maxClientCnxns",
        match options.max_client_cnxns {
            0 => "no limit".to_owned(),
            n => format!("{n} per client address"),
        },
    );
    line("four-letter words", WORDS.to_owned());
    let _ = writeln!(
        out,
        "  differences from ZooKeeper 3.{}:",
        options.zookeeper.minor()
    );
    let ensemble = if listening.len() > 1 {
        ENSEMBLE_DIFFERENCES
    } else {
        &[]
    };
    for difference in DIFFERENCES.iter().chain(ensemble) {
        let _ = writeln!(out, "    - {difference}");
    }
    let _ = writeln!(out, "  stop with SIGINT or SIGTERM");
    out
}
