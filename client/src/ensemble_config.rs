//! [`EnsembleConfig`]: an ensemble's dynamic configuration as ZooKeeper writes it in
//! `/zookeeper/config`, parsed (pure: no I/O), and [`EnsembleMember`], one of its
//! `server.N=...` lines.
//!
//! The text (ZooKeeper's `QuorumVerifier.toString`) is one line per member, then the version
//! in hex:
//!
//! ```text
//! server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181
//! server.2=10.0.0.2:2888:3888|10.1.0.2:2888:3888:observer;0.0.0.0:2181
//! version=100000000
//! ```
//!
//! A member's value is `HOST:QUORUM_PORT:ELECTION_PORT[:ROLE]`, several of them joined by `|`
//! for a member with several addresses (3.6+), then optionally `;[CLIENT_HOST:]CLIENT_PORT`.
//! IPv6 hosts are written in brackets. The same grammar is what `reconfig` accepts, so
//! [`EnsembleMember::parse`] checks a member spec before it is sent.

use std::fmt;

use bytes::Bytes;

/// Why a configuration, or a member spec, could not be parsed. Its message names the line
/// and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigParseError {
    message: String,
}

impl ConfigParseError {
    fn new(message: impl Into<String>) -> ConfigParseError {
        ConfigParseError {
            message: message.into(),
        }
    }

    fn at_line(self, line: usize) -> ConfigParseError {
        ConfigParseError::new(format!("line {line}: {}", self.message))
    }
}

impl fmt::Display for ConfigParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigParseError {}

/// Whether a member votes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MemberRole {
    /// Votes in elections and commits (ZooKeeper's default).
    Participant,
    /// Follows the leader and serves clients without voting.
    Observer,
}

impl MemberRole {
    /// The word ZooKeeper uses: `participant` or `observer`.
    pub fn as_str(self) -> &'static str {
        match self {
            MemberRole::Participant => "participant",
            MemberRole::Observer => "observer",
        }
    }
}

impl fmt::Display for MemberRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One address a member talks to its peers on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PeerAddress {
    /// Host name or IP address (IPv6 without brackets).
    pub host: String,
    /// The port followers connect to the leader on.
    pub quorum_port: u16,
    /// The port of leader election.
    pub election_port: u16,
}

/// Where a member serves clients.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ClientAddress {
    /// Host name or IP address (IPv6 without brackets); `0.0.0.0` when the spec gave a port
    /// only, as ZooKeeper reads it.
    pub host: String,
    /// The client port.
    pub port: u16,
}

impl ClientAddress {
    /// `host:port` for a connect string (IPv6 in brackets).
    pub fn connect_address(&self) -> String {
        format!("{}:{}", bracketed(&self.host), self.port)
    }
}

/// One member of the ensemble: a `server.N=...` line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct EnsembleMember {
    /// The member's id (its `myid`).
    pub id: u64,
    /// Its peer addresses: at least one; more for a member with several networks.
    pub addresses: Vec<PeerAddress>,
    /// Whether it votes.
    pub role: MemberRole,
    /// Where it serves clients, when the line says so.
    pub client_address: Option<ClientAddress>,
}

impl EnsembleMember {
    /// Parses a whole member line, `server.N=HOST:QUORUM:ELECTION[:ROLE][;[CLIENT_HOST:]PORT]`
    /// (what `zkctl reconfig --add` and [`Reconfig::add_member`](crate::Reconfig::add_member)
    /// take).
    pub fn parse(line: &str) -> Result<EnsembleMember, ConfigParseError> {
        let line = line.trim();
        let Some((key, value)) = line.split_once('=') else {
            return Err(ConfigParseError::new(format!(
                "expected server.ID=HOST:QUORUM_PORT:ELECTION_PORT[:ROLE][;CLIENT], got {line:?}"
            )));
        };
        let Some(id) = key.trim().strip_prefix("server.") else {
            return Err(ConfigParseError::new(format!(
                "expected server.ID=..., got {key:?} before '='"
            )));
        };
        let id = id
            .parse::<u64>()
            .map_err(|_| ConfigParseError::new(format!("server id {id:?} is not a number")))?;
        EnsembleMember::parse_value(id, value.trim())
    }

    /// Parses the value of a `server.ID=` line.
    fn parse_value(id: u64, value: &str) -> Result<EnsembleMember, ConfigParseError> {
        let mut parts = value.split(';');
        let peer_part = parts.next().unwrap_or_default();
        let client_part = parts.next();
        if parts.next().is_some() {
            return Err(ConfigParseError::new(format!(
                "server.{id}: more than one ';' in {value:?}"
            )));
        }
        let mut role = MemberRole::Participant;
        let mut addresses = Vec::new();
        for address in peer_part.split('|') {
            let (host, rest) =
                split_host(address).ok_or_else(|| bad(id, value, "an address has no host"))?;
            let fields: Vec<&str> = rest.split(':').collect();
            let (quorum, election) = match fields.as_slice() {
                [q, e] => (q, e),
                [q, e, r] => {
                    role = match *r {
                        "participant" => MemberRole::Participant,
                        "observer" => MemberRole::Observer,
                        other => {
                            return Err(bad(
                                id,
                                value,
                                &format!("role {other:?} is neither participant nor observer"),
                            ))
                        }
                    };
                    (q, e)
                }
                _ => {
                    return Err(bad(
                        id,
                        value,
                        "expected HOST:QUORUM_PORT:ELECTION_PORT[:ROLE]",
                    ))
                }
            };
            addresses.push(PeerAddress {
                host: host.to_string(),
                quorum_port: port(id, value, quorum)?,
                election_port: port(id, value, election)?,
            });
        }
        let client_address = match client_part.map(str::trim) {
            None => None,
            Some(client) => {
                let (host, port_text) = match client.rsplit_once(':') {
                    None => ("0.0.0.0", client),
                    Some(_) => {
                        let (host, rest) = split_host(client)
                            .ok_or_else(|| bad(id, value, "the client address has no host"))?;
                        (host, rest)
                    }
                };
                Some(ClientAddress {
                    host: host.to_string(),
                    port: port(id, value, port_text)?,
                })
            }
        };
        Ok(EnsembleMember {
            id,
            addresses,
            role,
            client_address,
        })
    }

    /// The first peer address (every member has one).
    pub fn address(&self) -> &PeerAddress {
        &self.addresses[0]
    }
}

/// `server.N=HOST:QUORUM:ELECTION[|...]:ROLE[;CLIENT_HOST:CLIENT_PORT]`, as ZooKeeper writes it.
impl fmt::Display for EnsembleMember {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "server.{}=", self.id)?;
        for (i, a) in self.addresses.iter().enumerate() {
            if i > 0 {
                f.write_str("|")?;
            }
            write!(
                f,
                "{}:{}:{}",
                bracketed(&a.host),
                a.quorum_port,
                a.election_port
            )?;
        }
        write!(f, ":{}", self.role)?;
        if let Some(client) = &self.client_address {
            write!(f, ";{}", client.connect_address())?;
        }
        Ok(())
    }
}

/// An ensemble's dynamic configuration: its members and its version (the zxid of the change
/// that made it), from [`Client::get_config`](crate::Client::get_config) or
/// [`Client::reconfig`](crate::Client::reconfig), with the bytes it was parsed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnsembleConfig {
    members: Vec<EnsembleMember>,
    other: Vec<(String, String)>,
    version: i64,
    raw: Bytes,
}

impl EnsembleConfig {
    /// Parses the text of `/zookeeper/config`. Blank lines and `#` comments are skipped;
    /// lines other than `server.N=` and `version=` (a hierarchical quorum's `group.N=` and
    /// `weight.N=`) are kept as they are ([`EnsembleConfig::other_lines`]). A missing version
    /// is 0.
    pub fn parse(raw: impl Into<Bytes>) -> Result<EnsembleConfig, ConfigParseError> {
        let raw = raw.into();
        let text = std::str::from_utf8(&raw)
            .map_err(|e| ConfigParseError::new(format!("not UTF-8 text: {e}")))?;
        let mut members: Vec<EnsembleMember> = Vec::new();
        let mut other = Vec::new();
        let mut version = None;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |e: ConfigParseError| e.at_line(n + 1);
            let Some((key, value)) = line.split_once('=') else {
                return Err(at(ConfigParseError::new(format!(
                    "expected KEY=VALUE, got {line:?}"
                ))));
            };
            let key = key.trim();
            if key == "version" {
                if version.is_some() {
                    return Err(at(ConfigParseError::new("a second version line")));
                }
                let v = u64::from_str_radix(value.trim(), 16).map_err(|_| {
                    at(ConfigParseError::new(format!(
                        "version {value:?} is not a hexadecimal number"
                    )))
                })?;
                version = Some(v as i64);
            } else if key.starts_with("server.") {
                let member = EnsembleMember::parse(line).map_err(at)?;
                if members.iter().any(|m| m.id == member.id) {
                    return Err(at(ConfigParseError::new(format!(
                        "server.{} appears twice",
                        member.id
                    ))));
                }
                members.push(member);
            } else {
                other.push((key.to_string(), value.trim().to_string()));
            }
        }
        Ok(EnsembleConfig {
            members,
            other,
            version: version.unwrap_or(0),
            raw,
        })
    }

    /// The members, in the order of the text.
    pub fn members(&self) -> &[EnsembleMember] {
        &self.members
    }

    /// The member with this id.
    pub fn member(&self, id: u64) -> Option<&EnsembleMember> {
        self.members.iter().find(|m| m.id == id)
    }

    /// The version: the zxid of the reconfiguration that made this configuration, what
    /// [`Reconfig::from_config`](crate::Reconfig::from_config) checks (written in hex in the
    /// text: [`EnsembleConfig::version_hex`]).
    pub fn version(&self) -> i64 {
        self.version
    }

    /// The version as ZooKeeper writes it (`100000000`).
    pub fn version_hex(&self) -> String {
        format!("{:x}", self.version)
    }

    /// Lines other than members and the version (`group.N`, `weight.N`), as key and value.
    pub fn other_lines(&self) -> &[(String, String)] {
        &self.other
    }

    /// The client addresses of the members (`host:port`, for a connect string), in order.
    pub fn client_addresses(&self) -> Vec<String> {
        self.members
            .iter()
            .filter_map(|m| {
                m.client_address
                    .as_ref()
                    .map(ClientAddress::connect_address)
            })
            .collect()
    }

    /// The bytes this was parsed from.
    pub fn raw(&self) -> &Bytes {
        &self.raw
    }
}

/// The members (`server.N=...`), the other lines, then `version=HEX`, one per line, as
/// ZooKeeper writes them.
impl fmt::Display for EnsembleConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for member in &self.members {
            writeln!(f, "{member}")?;
        }
        for (key, value) in &self.other {
            writeln!(f, "{key}={value}")?;
        }
        write!(f, "version={}", self.version_hex())
    }
}

/// Splits `HOST:REST` where HOST may be `[IPv6]`; `None` without a host.
fn split_host(s: &str) -> Option<(&str, &str)> {
    let s = s.trim();
    if let Some(inner) = s.strip_prefix('[') {
        let (host, rest) = inner.split_once(']')?;
        let rest = rest.strip_prefix(':')?;
        return (!host.is_empty()).then_some((host, rest));
    }
    let (host, rest) = s.split_once(':')?;
    (!host.is_empty()).then_some((host, rest))
}

fn port(id: u64, value: &str, text: &str) -> Result<u16, ConfigParseError> {
    match text.trim().parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(bad(id, value, &format!("{text:?} is not a port (1-65535)"))),
    }
}

fn bad(id: u64, value: &str, why: &str) -> ConfigParseError {
    ConfigParseError::new(format!("server.{id}={value}: {why}"))
}

fn bracketed(host: &str) -> std::borrow::Cow<'_, str> {
    if host.contains(':') {
        format!("[{host}]").into()
    } else {
        host.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THREE: &str = "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n\
                         server.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n\
                         server.3=127.0.0.1:2890:3890:observer;0.0.0.0:2183\n\
                         version=100000003";

    #[test]
    fn parses_what_zookeeper_writes_and_writes_it_back() {
        let config = EnsembleConfig::parse(THREE).unwrap();
        assert_eq!(config.version(), 0x1_0000_0003);
        assert_eq!(config.version_hex(), "100000003");
        assert_eq!(config.members().len(), 3);
        let first = &config.members()[0];
        assert_eq!(first.id, 1);
        assert_eq!(
            first.address(),
            &PeerAddress {
                host: "127.0.0.1".into(),
                quorum_port: 2888,
                election_port: 3888
            }
        );
        assert_eq!(first.role, MemberRole::Participant);
        assert_eq!(
            first.client_address,
            Some(ClientAddress {
                host: "127.0.0.1".into(),
                port: 2181
            })
        );
        assert_eq!(config.member(3).unwrap().role, MemberRole::Observer);
        assert_eq!(
            config.client_addresses(),
            ["127.0.0.1:2181", "127.0.0.1:2182", "0.0.0.0:2183"]
        );
        assert_eq!(config.to_string(), THREE);
        assert_eq!(config.raw(), THREE.as_bytes());
    }

    #[test]
    fn parses_the_lenient_forms_reconfig_accepts() {
        // No role (participant), a client port alone (0.0.0.0), no client address.
        let m = EnsembleMember::parse("server.4=zk4:2888:3888;2181").unwrap();
        assert_eq!(m.role, MemberRole::Participant);
        assert_eq!(m.client_address.as_ref().unwrap().host, "0.0.0.0");
        assert_eq!(
            m.to_string(),
            "server.4=zk4:2888:3888:participant;0.0.0.0:2181"
        );
        let m = EnsembleMember::parse(" server.5 = zk5:1:2:observer ").unwrap();
        assert_eq!(
            (m.id, m.role, m.client_address),
            (5, MemberRole::Observer, None)
        );
        // IPv6 and several addresses.
        let m =
            EnsembleMember::parse("server.6=[::1]:1:2|10.0.0.6:3:4:participant;[::1]:5").unwrap();
        assert_eq!(m.addresses.len(), 2);
        assert_eq!(m.address().host, "::1");
        assert_eq!(m.addresses[1].election_port, 4);
        assert_eq!(
            m.client_address.as_ref().unwrap().connect_address(),
            "[::1]:5"
        );
        assert_eq!(
            m.to_string(),
            "server.6=[::1]:1:2|10.0.0.6:3:4:participant;[::1]:5"
        );
    }

    #[test]
    fn keeps_other_lines_and_skips_blank_ones() {
        let text = "\n# comment\nserver.1=h:1:2;3\ngroup.1=1:2\nweight.1=1\n\n";
        let config = EnsembleConfig::parse(text).unwrap();
        assert_eq!(config.version(), 0);
        assert_eq!(
            config.other_lines(),
            [
                ("group.1".to_string(), "1:2".to_string()),
                ("weight.1".to_string(), "1".to_string())
            ]
        );
        assert_eq!(
            config.to_string(),
            "server.1=h:1:2:participant;0.0.0.0:3\ngroup.1=1:2\nweight.1=1\nversion=0"
        );
    }

    #[test]
    fn malformed_input_is_an_error_naming_the_line() {
        for (text, expected) in [
            ("server.1=h:1:2\nnonsense", "line 2: expected KEY=VALUE"),
            ("server.x=h:1:2", "line 1: server id \"x\" is not a number"),
            ("server.1=h:1", "expected HOST:QUORUM_PORT:ELECTION_PORT"),
            (
                "server.1=h:1:2:3:4",
                "expected HOST:QUORUM_PORT:ELECTION_PORT",
            ),
            ("server.1=h:1:99999", "\"99999\" is not a port"),
            ("server.1=h:0:2", "\"0\" is not a port"),
            ("server.1=h:1:2:voter", "role \"voter\""),
            ("server.1=:1:2", "an address has no host"),
            ("server.1=[::1:1:2", "an address has no host"),
            ("server.1=h:1:2;a;b", "more than one ';'"),
            ("server.1=h:1:2;h:x", "\"x\" is not a port"),
            ("server.1=h:1:2;:5", "the client address has no host"),
            (
                "server.1=h:1:2\nserver.1=h:3:4",
                "line 2: server.1 appears twice",
            ),
            (
                "version=zz",
                "line 1: version \"zz\" is not a hexadecimal number",
            ),
            ("version=1\nversion=2", "line 2: a second version line"),
            ("server.1=h:1:2|", "an address has no host"),
        ] {
            let err = EnsembleConfig::parse(text.to_string()).unwrap_err();
            assert!(
                err.to_string().contains(expected),
                "{text:?}: {err} should contain {expected:?}"
            );
        }
        let err = EnsembleConfig::parse(Bytes::from_static(b"\xff\xfe")).unwrap_err();
        assert!(err.to_string().contains("not UTF-8"), "{err}");
        for spec in ["", "1=h:1:2", "server.=h:1:2", "h:1:2"] {
            assert!(EnsembleMember::parse(spec).is_err(), "{spec:?}");
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A cheap deterministic sweep of mangled configurations (xorshift).
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let alphabet = b"server.=:;|[]0123456789abcdef\n#versionparticipantobserver ";
        for _ in 0..20_000 {
            let len = (x % 48) as usize;
            let mut text = Vec::with_capacity(len);
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push(alphabet[(x % alphabet.len() as u64) as usize]);
            }
            let _ = EnsembleConfig::parse(text);
        }
    }
}
