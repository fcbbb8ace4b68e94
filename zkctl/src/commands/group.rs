//! `member PATH ID [DATA] -- CMD...` (membership of a group while CMD runs, as Curator's
//! `GroupMember`) and `members PATH` (the group's members, `ID DATA` sorted by id).
//!
//! `member` runs CMD as `lock` does (see [`crate::child`]): in its own process group, stopped
//! with SIGTERM then SIGKILL after `--grace` when zkctl gets SIGINT/SIGTERM/SIGHUP, killed by
//! a watchdog if zkctl dies; the group is left (our node deleted) once CMD has ended.

use std::time::Duration;

use zkrs_client::{Client, ErrorCode};
use zkrs_recipes::node::GroupMember;

use crate::args::{Globals, MemberArgs};
use crate::child::Supervised;
use crate::commands::hold::{run_to_end, with_session, Ran};
use crate::connection::{close, connect};
use crate::failure::{Outcome, ZkMessage};
use crate::output::{note, printable, say};
use crate::pipeline;
use crate::signals::Shutdown;

/// Joins the group, runs `argv`, leaves; the exit code is the command's.
pub async fn member(g: &Globals, a: &MemberArgs) -> Outcome {
    let (path, id, argv) = (a.path.as_str(), a.id.as_str(), &a.command);
    let data = a.data.as_deref().unwrap_or_default().as_bytes();
    let grace = a.grace.or_default(g.session_timeout);
    zkrs_client::validate_path(path)?;
    with_session(g, async |client, shutdown| {
        let membership = GroupMember::builder(client, path)
            .id(id)
            .data(data)
            .start()?;
        let result = hold(&membership, path, grace, argv, shutdown).await;
        leave(client, membership, path).await;
        result
    })
    .await
}

async fn hold(
    membership: &GroupMember,
    path: &str,
    grace: Duration,
    argv: &[String],
    shutdown: &mut Shutdown,
) -> Outcome {
    tokio::select! {
        joined = membership.initialized() => joined?,
        signal = shutdown.recv() => return Ok(signal.exit_code()),
    }
    let node = format!("{}/{}", path.trim_end_matches('/'), membership.id());
    let mut child = Supervised::spawn(argv, &[("ZKCTL_MEMBER_NODE", &node)])?;
    match run_to_end(&mut child, grace, shutdown, &format!("leaving {path}")).await? {
        Ran::Exited(code) => Ok(code),
        Ran::Stopped(signal) => Ok(signal.exit_code()),
    }
}

/// Leaves the group (deletes our node), waiting at most a session timeout for the server: if
/// it cannot be reached, the node goes when the session ends.
async fn leave(client: &Client, membership: GroupMember, path: &str) {
    match tokio::time::timeout(client.session_timeout(), membership.close()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => note!(
            "zkctl: leaving {path}: {} (the node goes with the session)",
            ZkMessage(&e)
        ),
        Err(_) => {
            note!("zkctl: could not confirm leaving {path}; the node goes when the session ends")
        }
    }
}

/// Prints `ID DATA` per member, sorted by id (only reads: a listing, then every member's data,
/// pipelined).
pub async fn members(g: &Globals, path: &str) -> Outcome {
    zkrs_client::validate_path(path)?;
    let client = connect(g).await?;
    let result = list(&client, path).await;
    close(&client).await;
    result
}

async fn list(client: &Client, path: &str) -> Outcome {
    let mut ids = client.get_children(path).await?.to_vec();
    ids.sort();
    let nodes: Vec<String> = ids
        .iter()
        .map(|id| format!("{}/{id}", path.trim_end_matches('/')))
        .collect();
    let data = pipeline::all_chunked(&nodes, |node| client.get_data(node)).await;
    for ((id, node), read) in ids.iter().zip(&nodes).zip(data) {
        match read {
            Ok((data, _)) if crate::output_json::on() => {
                crate::output_json::say(&crate::json_records::Member {
                    id,
                    path: node,
                    data: crate::json_records::Data::of(&data),
                })?
            }
            Ok((data, _)) if data.is_empty() => say(id)?,
            Ok((data, _)) => say(format!("{id} {}", printable(&data)))?,
            // Left between the listing and the read.
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(0)
}
