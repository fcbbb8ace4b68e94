//! `quota set|get|delete PATH`: ZooKeeper's quotas, kept as zkCli.sh 3.8 keeps them.
//!
//! A quota on PATH is two nodes under `/zookeeper/quota/PATH` (always outside any chroot:
//! the path is the full one): `zookeeper_limits`, the limits the client writes
//! (`count=N,bytes=N=;byteHardLimit=N;countHardLimit=N`, -1 for none), and
//! `zookeeper_stats`, what the server counts (`count=N,bytes=N`). The text is that of
//! ZooKeeper's `StatsTrack`: `count` and `bytes` first (for 3.4's parser), then, after an
//! extra `=`, the other keys sorted, each after a `;`.

use std::collections::BTreeMap;
use std::fmt;

use zkrs_client::{validate_path, Client, ConnectString, CreateMode, ErrorCode};

use crate::args::{Globals, QuotaLimits, QuotaSub};
use crate::connection::{close, connect};
use crate::failure::{Failure, Outcome};
use crate::output::say;

/// Where quotas live.
pub const QUOTA_ROOT: &str = "/zookeeper/quota";
/// The limits node's name.
pub const LIMITS: &str = "zookeeper_limits";
/// The server's counts' node name.
pub const STATS: &str = "zookeeper_stats";

const COUNT: &str = "count";
const BYTES: &str = "bytes";
const COUNT_HARD: &str = "countHardLimit";
const BYTES_HARD: &str = "byteHardLimit";

/// ZooKeeper's `StatsTrack`: `key=value` pairs, a missing key reads -1.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatsTrack(BTreeMap<String, i64>);

impl StatsTrack {
    /// Reads the text as `StatsTrack(String)` does: pairs split by runs of `,` or `;`, each
    /// `key=value` (what follows a second `=` is ignored; an empty value is -1).
    pub fn parse(text: &str) -> Result<StatsTrack, String> {
        let mut values = BTreeMap::new();
        for pair in text.split([',', ';']).filter(|p| !p.is_empty()) {
            let mut kv = pair.split('=');
            let key = kv.next().unwrap_or_default();
            let value = match kv.next() {
                Some("") => -1,
                Some(v) => v
                    .parse()
                    .map_err(|_| format!("'{pair}' in '{text}' is not key=number"))?,
                None => return Err(format!("'{pair}' in '{text}' is not key=number")),
            };
            values.insert(key.to_string(), value);
        }
        Ok(StatsTrack(values))
    }

    /// A key's value, -1 when missing.
    pub fn get(&self, key: &str) -> i64 {
        self.0.get(key).copied().unwrap_or(-1)
    }

    fn set(&mut self, key: &str, value: i64) {
        self.0.insert(key.to_string(), value);
    }

    /// Sets the limits that are `Some`.
    fn apply(&mut self, limits: &QuotaLimits) {
        for (key, value) in [
            (COUNT, limits.count),
            (BYTES, limits.bytes),
            (COUNT_HARD, limits.hard_count),
            (BYTES_HARD, limits.hard_bytes),
        ] {
            if let Some(v) = value {
                self.set(key, v);
            }
        }
    }
}

impl fmt::Display for StatsTrack {
    /// `StatsTrack.toString()` of ZooKeeper 3.8.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{COUNT}={},{BYTES}={}", self.get(COUNT), self.get(BYTES))?;
        let mut rest = self.0.iter().filter(|(k, _)| *k != COUNT && *k != BYTES);
        if let Some((k, v)) = rest.next() {
            write!(f, "=;{k}={v}")?;
            for (k, v) in rest {
                write!(f, ";{k}={v}")?;
            }
        }
        Ok(())
    }
}

/// Runs a quota command, on a session without the chroot (quotas are outside it).
pub async fn run(g: &Globals, command: &QuotaSub) -> Outcome {
    let path = command.path();
    validate_path(path)?;
    let connect_string = ConnectString::parse(&g.server)?;
    let chroot = connect_string.chroot.as_str().unwrap_or("");
    let full = match (chroot, path) {
        ("", p) => p.to_string(),
        (c, "/") => c.to_string(),
        (c, p) => format!("{c}{p}"),
    };
    let mut unrooted = g.clone();
    unrooted.server = g.server[..g.server.find('/').unwrap_or(g.server.len())].to_string();
    let client = connect(&unrooted).await?;
    let limits = command.limits();
    let result = match command {
        QuotaSub::Set { .. } => set(&client, &full, &limits.unwrap_or_default()).await,
        QuotaSub::Get { .. } => get(&client, &full).await,
        QuotaSub::Delete { .. } => delete(&client, &full, limits.as_ref()).await,
    };
    close(&client).await;
    result
}

/// `/zookeeper/quota` + PATH (`/` is the quota root itself).
fn quota_dir(path: &str) -> String {
    if path == "/" {
        QUOTA_ROOT.to_string()
    } else {
        format!("{QUOTA_ROOT}{path}")
    }
}

/// Reads a quota node's text.
async fn read(client: &Client, path: &str) -> Result<String, Failure> {
    let (data, _) = client.get_data(path).await?;
    Ok(String::from_utf8_lossy(&data).into_owned())
}

/// `setquota`: creates the quota's nodes, or updates the limits given.
async fn set(client: &Client, path: &str, limits: &QuotaLimits) -> Outcome {
    if path.starts_with(QUOTA_ROOT) {
        return Err(Failure::msg(format!(
            "cannot set a quota under the path: {QUOTA_ROOT}"
        )));
    }
    if client.exists(path).await?.is_none() {
        return Err(Failure::msg(format!("{path} does not exist")));
    }
    check_descendants(client, path).await?;
    check_ancestors(client, path).await?;
    let dir = quota_dir(path);
    let mut at = QUOTA_ROOT.to_string();
    create_if_missing(client, &at).await?;
    for name in path.split('/').filter(|n| !n.is_empty()) {
        at = format!("{at}/{name}");
        create_if_missing(client, &at).await?;
    }
    let limits_path = format!("{dir}/{LIMITS}");
    if client.exists(&limits_path).await?.is_none() {
        // Every limit written, -1 for those not given (zkCli.sh 3.8 does the same).
        let mut track = StatsTrack::default();
        track.apply(&QuotaLimits {
            count: Some(-1),
            bytes: Some(-1),
            hard_count: Some(-1),
            hard_bytes: Some(-1),
        });
        track.apply(limits);
        let text = track.to_string();
        client
            .create(&limits_path, text.as_bytes(), CreateMode::Persistent)
            .await?;
        let stats = StatsTrack::parse("count=0,bytes=0").expect("constant");
        client
            .create(
                &format!("{dir}/{STATS}"),
                stats.to_string().as_bytes(),
                CreateMode::Persistent,
            )
            .await?;
    } else {
        let text = read(client, &limits_path).await?;
        let mut track = StatsTrack::parse(&text).map_err(Failure::msg)?;
        track.apply(limits);
        client
            .set_data(&limits_path, track.to_string().as_bytes(), None)
            .await?;
    }
    Ok(0)
}

/// Creates an empty persistent node unless it exists.
async fn create_if_missing(client: &Client, path: &str) -> Result<(), Failure> {
    match client.create(path, b"", CreateMode::Persistent).await {
        Ok(_) => Ok(()),
        Err(e) if e.code() == Some(ErrorCode::NodeExists) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// No node below PATH may have a quota (zkCli.sh's `checkIfChildQuota`).
async fn check_descendants(client: &Client, path: &str) -> Result<(), Failure> {
    let dir = quota_dir(path);
    let mut pending = vec![dir.clone()];
    while let Some(at) = pending.pop() {
        let children = match client.get_children(&at).await {
            Ok(c) => c.to_vec(),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => continue,
            Err(e) => return Err(e.into()),
        };
        for child in children {
            if child == LIMITS && at != dir {
                return Err(Failure::msg(format!(
                    "{path} has a child {} which has a quota",
                    &at[QUOTA_ROOT.len()..]
                )));
            }
            pending.push(format!("{at}/{child}"));
        }
    }
    Ok(())
}

/// No node above PATH may have a quota (zkCli.sh's `checkIfParentQuota`).
async fn check_ancestors(client: &Client, path: &str) -> Result<(), Failure> {
    let names: Vec<&str> = path.split('/').filter(|n| !n.is_empty()).collect();
    let mut at = QUOTA_ROOT.to_string();
    for name in &names[..names.len().saturating_sub(1)] {
        at = format!("{at}/{name}");
        let children = match client.get_children(&at).await {
            Ok(c) => c.to_vec(),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        if children.iter().any(|c| c == LIMITS) {
            return Err(Failure::msg(format!(
                "{path} has a parent {} which has a quota",
                &at[QUOTA_ROOT.len()..]
            )));
        }
    }
    Ok(())
}

/// `listquota`: `limits TEXT` and `stats TEXT`.
async fn get(client: &Client, path: &str) -> Outcome {
    if client.exists(path).await?.is_none() {
        return Err(Failure::msg(format!("{path} does not exist")));
    }
    let dir = quota_dir(path);
    let limits = match client.get_data(&format!("{dir}/{LIMITS}")).await {
        Ok((data, _)) => String::from_utf8_lossy(&data).into_owned(),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => {
            return Err(Failure::msg(format!("quota for {path} does not exist")))
        }
        Err(e) => return Err(e.into()),
    };
    let stats = match client.get_data(&format!("{dir}/{STATS}")).await {
        Ok((data, _)) => String::from_utf8_lossy(&data).into_owned(),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => String::new(),
        Err(e) => return Err(e.into()),
    };
    // As zkCli.sh prints them: read and written again (the text as stored if unreadable).
    let normal = |text: &str| StatsTrack::parse(text).map_or(text.to_string(), |t| t.to_string());
    let (limits, stats) = (normal(&limits), normal(&stats));
    if crate::output_json::on() {
        crate::output_json::say(&crate::json_records::Quota {
            path,
            limits: &limits,
            stats: &stats,
        })?;
    } else {
        say(format!("limits {limits}"))?;
        say(format!("stats {stats}"))?;
    }
    Ok(0)
}

/// `delquota`: the limits named set to -1, or (`None`) the whole quota.
async fn delete(client: &Client, path: &str, unset: Option<&QuotaLimits>) -> Outcome {
    let dir = quota_dir(path);
    let limits_path = format!("{dir}/{LIMITS}");
    let text = match read(client, &limits_path).await {
        Ok(text) => text,
        Err(Failure::Zk(e)) if e.code() == Some(ErrorCode::NoNode) => {
            return Err(Failure::msg(format!("quota for {path} does not exist")))
        }
        Err(e) => return Err(e),
    };
    if let Some(unset) = unset {
        let mut track = StatsTrack::parse(&text).map_err(Failure::msg)?;
        track.apply(unset);
        client
            .set_data(&limits_path, track.to_string().as_bytes(), None)
            .await?;
        return Ok(0);
    }
    for child in [LIMITS, STATS] {
        match client.delete(&format!("{dir}/{child}"), None).await {
            Ok(()) => {}
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
            Err(e) => return Err(e.into()),
        }
    }
    // Then the quota's folders that are left empty, up to /zookeeper/quota.
    let mut at = dir;
    while at != QUOTA_ROOT {
        if !client.get_children(&at).await?.is_empty() {
            break;
        }
        match client.delete(&at, None).await {
            Ok(()) => {}
            Err(e) if matches!(e.code(), Some(ErrorCode::NoNode | ErrorCode::NotEmpty)) => break,
            Err(e) => return Err(e.into()),
        }
        at = at[..at.rfind('/').unwrap_or(0)].to_string();
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_track_text_as_zookeeper_writes_it() {
        let mut t = StatsTrack::default();
        t.apply(&QuotaLimits {
            count: Some(5),
            bytes: Some(-1),
            hard_count: Some(-1),
            hard_bytes: Some(-1),
        });
        // zkCli.sh 3.8, `setquota -n 5 /q`, then `get /zookeeper/quota/q/zookeeper_limits`.
        assert_eq!(
            t.to_string(),
            "count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1"
        );
        let read = StatsTrack::parse("count=5,bytes=100=;byteHardLimit=-1;countHardLimit=7");
        assert_eq!(read.as_ref().unwrap().get(COUNT_HARD), 7);
        assert_eq!(read.unwrap().get(BYTES), 100);
        assert_eq!(
            StatsTrack::parse("count=2,bytes=2").unwrap().to_string(),
            "count=2,bytes=2"
        );
        assert!(StatsTrack::parse("count").is_err());
    }
}
