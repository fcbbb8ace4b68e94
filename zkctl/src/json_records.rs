//! The records `--output json` writes, one per line ([`crate::output_json`]); their field
//! names are the documented interface (README's table), so they are spelled out here, in one
//! place.
//!
//! Conventions: `path` is always a full path (as given, with a chroot: under it); node data
//! is `data` with `encoding` (`utf8`: the text; `base64`: standard, padded), as in `export`;
//! a Stat is an object with ZooKeeper's own field names (jute's `Stat`), times in
//! milliseconds since the epoch and zxids as numbers.

use serde::Serialize;
use zkrs_client::{Stat, WatchedEvent};

use crate::commands::export_format::{base64, Encoding};

/// A Stat, with the field names of ZooKeeper's `Stat` (zookeeper.jute).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatRecord {
    /// Created by this zxid.
    pub czxid: i64,
    /// Data last changed by this zxid.
    pub mzxid: i64,
    /// Children last changed by this zxid.
    pub pzxid: i64,
    /// Created at, ms since the epoch.
    pub ctime: i64,
    /// Data last changed at, ms since the epoch.
    pub mtime: i64,
    /// Data version.
    pub version: i32,
    /// Children version.
    pub cversion: i32,
    /// ACL version.
    pub aversion: i32,
    /// The owner's session id if ephemeral, else 0.
    pub ephemeral_owner: i64,
    /// Bytes of data.
    pub data_length: i32,
    /// Number of children.
    pub num_children: i32,
}

impl From<&Stat> for StatRecord {
    fn from(s: &Stat) -> StatRecord {
        StatRecord {
            czxid: s.czxid,
            mzxid: s.mzxid,
            pzxid: s.pzxid,
            ctime: s.ctime,
            mtime: s.mtime,
            version: s.version,
            cversion: s.cversion,
            aversion: s.aversion,
            ephemeral_owner: s.ephemeral_owner,
            data_length: s.data_length,
            num_children: s.num_children,
        }
    }
}

/// Node data as `encoding` and `data` (flattened into the record that has it).
#[derive(Debug, Serialize)]
pub struct Data {
    /// The data, as `encoding` says.
    pub data: String,
    /// `utf8` or `base64`.
    pub encoding: Encoding,
}

impl Data {
    /// The text when the bytes are UTF-8, else their base64.
    pub fn of(bytes: &[u8]) -> Data {
        match std::str::from_utf8(bytes) {
            Ok(text) => Data {
                data: text.to_string(),
                encoding: Encoding::Utf8,
            },
            Err(_) => Data {
                data: base64(bytes),
                encoding: Encoding::Base64,
            },
        }
    }
}

/// `get`: `{"path","data","encoding","stat"}`.
#[derive(Debug, Serialize)]
pub struct Node<'a> {
    /// The node.
    pub path: &'a str,
    /// Its data.
    #[serde(flatten)]
    pub data: Data,
    /// Its Stat.
    pub stat: StatRecord,
}

/// `stat`: `{"path","stat"}`.
#[derive(Debug, Serialize)]
pub struct NodeStat<'a> {
    /// The node.
    pub path: &'a str,
    /// Its Stat.
    pub stat: StatRecord,
}

/// `ls` (one per child, sorted): `{"path","name"}`.
#[derive(Debug, Serialize)]
pub struct Child<'a> {
    /// The child's full path.
    pub path: &'a str,
    /// Its name.
    pub name: &'a str,
}

/// `create`, `find`, `ephemerals`, `queue put`, `service register --type permanent`:
/// `{"path"}`.
#[derive(Debug, Serialize)]
pub struct PathOnly<'a> {
    /// The node.
    pub path: &'a str,
}

/// `tree` (one per node, the root first, depth-first, children by name): `{"path","depth"}`.
#[derive(Debug, Serialize)]
pub struct TreeNode<'a> {
    /// The node.
    pub path: &'a str,
    /// Levels below the root (the root: 0).
    pub depth: usize,
}

/// `watch` (one per event): `{"type","path","state"}`; `path` is `null` for a session event.
#[derive(Debug, Serialize)]
pub struct Event<'a> {
    /// `NodeCreated`, `NodeDeleted`, `NodeDataChanged`, `NodeChildrenChanged`, ...; `None`
    /// for a session event.
    #[serde(rename = "type")]
    pub kind: String,
    /// The node (`null` for a session event).
    pub path: Option<&'a str>,
    /// The connection state (`SyncConnected`, `Expired`, `Closed`, ...).
    pub state: String,
}

impl<'a> From<&'a WatchedEvent> for Event<'a> {
    fn from(e: &'a WatchedEvent) -> Event<'a> {
        Event {
            kind: format!("{:?}", e.event_type),
            path: (!e.is_session_event()).then_some(e.path.as_str()),
            state: format!("{:?}", e.state),
        }
    }
}

/// `members` (one per member, by id): `{"id","path","data","encoding"}`.
#[derive(Debug, Serialize)]
pub struct Member<'a> {
    /// The member's id (its node's name).
    pub id: &'a str,
    /// Its node.
    pub path: &'a str,
    /// Its data.
    #[serde(flatten)]
    pub data: Data,
}

/// `acl get` (one per entry, in the server's order): `{"scheme","id","perms"}`, as in
/// `export`'s `acl`.
#[derive(Debug, Serialize)]
pub struct AclLine<'a> {
    /// The scheme.
    pub scheme: &'a str,
    /// The id within the scheme.
    pub id: &'a str,
    /// zkCli's letters, in the order `cdrwa`.
    pub perms: String,
}

/// `whoami` (one per identity): `{"scheme","id"}`.
#[derive(Debug, Serialize)]
pub struct Identity<'a> {
    /// The scheme (`ip`, `digest`, `sasl`, ...).
    pub scheme: &'a str,
    /// The id.
    pub id: &'a str,
}

/// `count`: `{"path","count"}`.
#[derive(Debug, Serialize)]
pub struct Count<'a> {
    /// The node.
    pub path: &'a str,
    /// Its descendants (itself not counted).
    pub count: i32,
}

/// `du` (one per child, largest first; the last one is PATH with the totals):
/// `{"path","bytes","nodes"}`.
#[derive(Debug, Serialize)]
pub struct Usage<'a> {
    /// The child (or PATH, last).
    pub path: &'a str,
    /// Data bytes in its subtree.
    pub bytes: u64,
    /// Nodes in its subtree, itself included.
    pub nodes: u64,
}

/// `diff` (one per difference): `{"kind","path"}`, `kind` one of `only-left`,
/// `only-right`, `data`, `acl`, `mode`; `path` relative to each side's root.
#[derive(Debug, Serialize)]
pub struct Difference<'a> {
    /// What differs.
    pub kind: &'a str,
    /// Where.
    pub path: &'a str,
}

/// `import --dry-run` (one per node): `{"action","path"}`, `action` `create`, `skip` or
/// `overwrite`.
#[derive(Debug, Serialize)]
pub struct Planned<'a> {
    /// What the import would do.
    pub action: &'a str,
    /// The node it would do it to.
    pub path: &'a str,
}

/// `import`: `{"created","skipped","overwritten"}`.
#[derive(Debug, Serialize)]
pub struct Imported {
    /// Nodes created.
    pub created: usize,
    /// Existing nodes left as they were.
    pub skipped: usize,
    /// Existing nodes given the file's data and ACL.
    pub overwritten: usize,
}

/// `counter`: `{"path","value"}`.
#[derive(Debug, Serialize)]
pub struct Counter<'a> {
    /// The counter's node.
    pub path: &'a str,
    /// The value after the action (for a `cas` not applied: the value read).
    pub value: i64,
}

/// `queue take` (one per item): `{"data","encoding"}`.
#[derive(Debug, Serialize)]
pub struct Item {
    /// The item.
    #[serde(flatten)]
    pub data: Data,
}

/// `quota get`: `{"path","limits","stats"}`, each the `StatsTrack` text zkCli.sh prints.
#[derive(Debug, Serialize)]
pub struct Quota<'a> {
    /// The node.
    pub path: &'a str,
    /// `count=N,bytes=N=;byteHardLimit=N;countHardLimit=N`.
    pub limits: &'a str,
    /// `count=N,bytes=N` (empty when the server has not counted yet).
    pub stats: &'a str,
}

/// `config` and `reconfig`: `{"members","version"}`, `members` the `server.N=...` lines,
/// `version` hex as `config` prints it.
#[derive(Debug, Serialize)]
pub struct Config<'a> {
    /// One `server.N=...` line per member.
    pub members: Vec<&'a str>,
    /// The configuration's version (hex), or `null` when it has none.
    pub version: Option<&'a str>,
}

impl<'a> Config<'a> {
    /// From the text `config` prints: member lines, then `version=V`.
    pub fn parse(text: &'a str) -> Config<'a> {
        let mut config = Config {
            members: Vec::new(),
            version: None,
        };
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            match line.strip_prefix("version=") {
                Some(v) => config.version = Some(v),
                None => config.members.push(line),
            }
        }
        config
    }
}

/// `version`: `{"zkctl","zkrs_client"}`.
#[derive(Debug, Serialize)]
pub struct Version<'a> {
    /// zkctl's version.
    pub zkctl: &'a str,
    /// The client library's version.
    pub zkrs_client: &'a str,
}

/// `bench` (one per figure): `{"name","value","unit"}`, `value` a number.
#[derive(Debug, Serialize)]
pub struct Figure<'a> {
    /// What was measured (`ops_per_sec`, `p99_us`, ...).
    pub name: &'a str,
    /// The figure.
    pub value: serde_json::Value,
    /// Its unit.
    pub unit: &'a str,
}

impl<'a> Figure<'a> {
    /// From a text figure, `name value unit` ([`crate::output::figure`]).
    pub fn parse(line: &'a str) -> Figure<'a> {
        let mut words = line.splitn(3, ' ');
        let name = words.next().unwrap_or_default();
        let value = words.next().unwrap_or_default();
        let unit = words.next().unwrap_or_default();
        let value = serde_json::from_str::<serde_json::Number>(value)
            .map(serde_json::Value::Number)
            .unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
        Figure { name, value, unit }
    }
}

/// `cache` and `service watch` (one per event, then one per node or instance of the view at
/// the end): `{"kind",...}`, `kind` the first word of the text line (`added`, `updated`,
/// `removed`, `initialized`, `suspended`, `reconnected`, `lost`, `lagged`, `failed`,
/// `skipped`; `node` for `cache`'s view, `instance` for `service watch`'s), then the fields
/// that kind has: `cache`: `path`, `version` (and `data`, `encoding` for `node`); `service
/// watch`: `name`, `id`, `address`, `port` (`null` when missing); `skipped`: `path`, `error`;
/// `lagged`: `missed`; `failed`: `error`.
#[derive(Debug, Default, Serialize)]
pub struct Happening<'a> {
    /// What happened (or `node`/`instance` for the view).
    pub kind: &'a str,
    /// The node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
    /// The node's data version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
    /// The service instance, for `service watch`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub instance: Option<Instance<'a>>,
    /// Events dropped (`lagged`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missed: Option<u64>,
    /// Why (`failed`, `skipped`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The node's data (`node`).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub data: Option<Data>,
}

impl<'a> Happening<'a> {
    /// A record with only its kind.
    pub fn named(kind: &'a str) -> Happening<'a> {
        Happening {
            kind,
            ..Happening::default()
        }
    }
}

/// A service instance: `{"name","id","address","port"}` (`service watch`), and with `json`
/// (the instance as stored, a JSON object) for `service list` and `service pick`.
#[derive(Debug, Serialize)]
pub struct Instance<'a> {
    /// The service's name.
    pub name: &'a str,
    /// The instance's id.
    pub id: &'a str,
    /// Its address (`null` when missing).
    pub address: Option<&'a str>,
    /// Its port (`null` when missing).
    pub port: Option<u16>,
    /// The node's JSON (`list`, `pick`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json: Option<serde_json::Value>,
}

/// A failure, on stderr: `{"error","code","exit"}`.
#[derive(Debug, Serialize)]
pub struct Error<'a> {
    /// The message of the text line, without `zkctl: `.
    pub error: &'a str,
    /// ZooKeeper's error name (`NoNode`, `NoAuth`, ...), `usage` for a usage error, else
    /// `null`.
    pub code: Option<&'a str>,
    /// The exit code.
    pub exit: u8,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(record: &impl Serialize) -> String {
        serde_json::to_string(record).unwrap()
    }

    #[test]
    fn data_is_text_or_base64() {
        let node = Node {
            path: "/a",
            data: Data::of(b"x\"y"),
            stat: StatRecord::from(&Stat::default()),
        };
        let text = json(&node);
        assert!(
            text.starts_with(r#"{"path":"/a","data":"x\"y","encoding":"utf8","stat":{"czxid":0,"#),
            "{text}"
        );
        assert!(text.contains(r#""ephemeralOwner":0,"dataLength":0,"numChildren":0}}"#));
        assert_eq!(
            json(&Item {
                data: Data::of(&[0xff, 0])
            }),
            r#"{"data":"/wA=","encoding":"base64"}"#
        );
    }

    #[test]
    fn figures_and_configs() {
        assert_eq!(
            json(&Figure::parse("p99_us 12.5 us")),
            r#"{"name":"p99_us","value":12.5,"unit":"us"}"#
        );
        assert_eq!(
            json(&Config::parse(
                "server.1=h:1:2:participant;h:3\nversion=100000000\n"
            )),
            r#"{"members":["server.1=h:1:2:participant;h:3"],"version":"100000000"}"#
        );
    }
}
