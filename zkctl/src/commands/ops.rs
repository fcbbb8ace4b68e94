//! The operator's commands ([`OpsSub`]): those that need no file of their own (`sync`,
//! `whoami`, `ephemerals`, `count`, `watches remove`, `version`) and the dispatch to
//! `acl`, `quota` and `server`.

use std::io::Write;
use std::time::Duration;

use zkrs_client::{Client, ErrorCode, WatcherType};

use crate::args::{acl_entries, AclSub, Globals, OpsSub, WatchKind, WatchesSub};
use crate::commands::{acl, quota, server_words, top};
use crate::connection::{close, connect};
use crate::failure::{java_code, Failure, Outcome, ZkMessage};
use crate::json_records as rec;
use crate::output_json;

/// Runs an operator command.
pub async fn run(g: &Globals, command: OpsSub) -> Outcome {
    match command {
        OpsSub::Version => version(),
        OpsSub::Server { word, json } => server_words::run(g, word, json || output_json::on()),
        OpsSub::Top { interval, count } => {
            top::run(g, Duration::from_millis(interval.max(1)), count).await
        }
        OpsSub::Quota(q) => quota::run(g, &q).await,
        session_command => {
            let client = connect(g).await?;
            let result = on_session(&client, session_command).await;
            close(&client).await;
            result
        }
    }
}

/// `zkctl X` and `zkrs-client X`: every crate of the workspace has the workspace's version
/// (`version.workspace = true`), and zkctl is built with the library of its own workspace.
fn version() -> Outcome {
    let v = env!("CARGO_PKG_VERSION");
    let mut out = crate::output::stdout();
    if output_json::on() {
        let record = rec::Version {
            zkctl: v,
            zkrs_client: v,
        };
        output_json::line(&mut out, &record)?;
    } else {
        writeln!(out, "zkctl {v}")?;
        writeln!(out, "zkrs-client {v}")?;
    }
    out.flush()?;
    Ok(0)
}

/// The commands that are one request on a session.
async fn on_session(client: &Client, command: OpsSub) -> Outcome {
    let mut out = crate::output::stdout();
    match command {
        OpsSub::Acl(AclSub::Get { path }) => {
            drop(out);
            return acl::get(client, &path).await;
        }
        OpsSub::Acl(AclSub::Set { path, acl, version }) => {
            drop(out);
            return acl::set(client, &path, &acl_entries(&acl), version).await;
        }
        OpsSub::Sync { path } => client.sync(&path).await?,
        OpsSub::Whoami => {
            for (scheme, id) in client.who_am_i().await? {
                if output_json::on() {
                    let record = rec::Identity {
                        scheme: &scheme,
                        id: &id,
                    };
                    output_json::line(&mut out, &record)?;
                } else {
                    writeln!(out, "{scheme} {id}")?;
                }
            }
        }
        OpsSub::Ephemerals { path } => {
            let prefix = path.as_deref().unwrap_or("/");
            let mut paths = client.get_ephemerals(prefix).await?;
            paths.sort_unstable();
            for path in paths {
                if output_json::on() {
                    output_json::line(&mut out, &rec::PathOnly { path: &path })?;
                } else {
                    writeln!(out, "{path}")?;
                }
            }
        }
        OpsSub::Count { path } => {
            let count = client.get_all_children_number(&path).await?;
            if output_json::on() {
                output_json::line(&mut out, &rec::Count { path: &path, count })?;
            } else {
                writeln!(out, "{count}")?;
            }
        }
        OpsSub::Watches(WatchesSub::Remove { path, kind }) => {
            let watcher_type = match kind {
                WatchKind::Data => WatcherType::Data,
                WatchKind::Children => WatcherType::Children,
                WatchKind::Persistent => WatcherType::Persistent,
                WatchKind::Any => WatcherType::Any,
            };
            match client.remove_watches(&path, watcher_type).await {
                Ok(()) => {}
                // ZooKeeper 3.8 does not know this watcher type (added in 3.9).
                Err(e)
                    if kind == WatchKind::Persistent
                        && java_code(&e) == ErrorCode::MarshallingError =>
                {
                    return Err(Failure::msg(format!(
                        "{} (the server cannot remove persistent watches alone: that needs \
                         ZooKeeper 3.9; --kind any removes them too)",
                        ZkMessage(&e)
                    )));
                }
                Err(e) => return Err(e.into()),
            }
        }
        other => unreachable!("not a session command: {other:?}"),
    }
    out.flush()?;
    Ok(0)
}
