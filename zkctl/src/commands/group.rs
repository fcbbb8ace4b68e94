//! `member PATH ID [DATA] -- CMD...` (membership of a group while CMD runs, as Curator's
//! `GroupMember`) and `members PATH` (the group's members, `ID DATA` sorted by id).
//!
//! `member` runs CMD as `lock` does (see [`crate::child`]): in its own process group, stopped
//! with SIGTERM then SIGKILL after `--grace` when zkctl gets SIGINT/SIGTERM/SIGHUP, killed by
//! a watchdog if zkctl dies; the group is left (our node deleted) once CMD has ended.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use zkrs_client::{Client, ErrorCode};
use zkrs_recipes::node::GroupMember;

use crate::args::Globals;
use crate::child::{exit_code, Supervised};
use crate::connection::{close, connect};
use crate::failure::{Outcome, ZkMessage};
use crate::output::{note, printable, say};
use crate::pipeline;
use crate::signals::{Shutdown, Terminate};

/// Joins the group, runs `argv`, leaves; the exit code is the command's.
pub async fn member(
    g: &Globals,
    path: &str,
    id: &str,
    data: &[u8],
    grace: Duration,
    argv: &[String],
) -> Outcome {
    zkrs_client::validate_path(path)?;
    // Listen first: from here on a termination request is handled, never fatal.
    let mut shutdown = Shutdown::install()?;
    let client = tokio::select! {
        client = connect(g) => client?,
        signal = shutdown.recv() => return Ok(signal.exit_code()),
    };
    let started = GroupMember::builder(&client, path)
        .id(id)
        .data(data)
        .start();
    let result = match started {
        Ok(membership) => {
            let result = hold(&membership, path, grace, argv, &mut shutdown).await;
            leave(&client, membership, path).await;
            result
        }
        Err(e) => Err(e.into()),
    };
    // Closing the session deletes our node now if leaving could not.
    close(&client).await;
    result
}

/// How the command's run ended.
enum End {
    Exited(io::Result<ExitStatus>),
    Signal(Terminate),
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
    let end = tokio::select! {
        status = child.wait() => End::Exited(status),
        signal = shutdown.recv() => End::Signal(signal),
    };
    match end {
        End::Exited(status) => Ok(exit_code(status?)),
        End::Signal(signal) => {
            note!(
                "zkctl: {}: stopping pid {}, then leaving {path}",
                signal.name,
                child.pid()
            );
            if let Err(e) = child.stop(grace, Some(shutdown)).await {
                note!("zkctl: stopping pid {}: {e}", child.pid());
            }
            Ok(signal.exit_code())
        }
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
