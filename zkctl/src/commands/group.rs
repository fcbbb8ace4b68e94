//! `member PATH ID [DATA] -- CMD...` (membership of a group while CMD runs, as Curator's
//! `GroupMember`) and `members PATH` (the group's members, `ID DATA` sorted by id).

use std::time::Duration;

use zkr_client::ErrorCode;
use zkr_recipes::node::GroupMember;

use crate::args::Globals;
use crate::child::{exit_code, Supervised};
use crate::commands::{close, connect};
use crate::failure::{Failure, Outcome};
use crate::output::{printable, say};
use crate::signals::Shutdown;

/// Joins the group, runs `argv`, leaves; the exit code is the command's.
pub async fn member(
    g: &Globals,
    path: &str,
    id: &str,
    data: &[u8],
    grace: Duration,
    argv: &[String],
) -> Outcome {
    zkr_client::validate_path(path, false)?;
    let mut shutdown = Shutdown::install()?;
    let client = tokio::select! {
        client = connect(g) => client?,
        signal = shutdown.recv() => return Ok(signal.exit_code()),
    };
    let membership = GroupMember::new(&client, path, id, data)?;
    let joined = tokio::select! {
        joined = membership.start() => joined,
        signal = shutdown.recv() => {
            let _ = membership.close().await;
            close(&client).await;
            return Ok(signal.exit_code());
        }
    };
    if let Err(e) = joined {
        close(&client).await;
        return Err(e.into());
    }
    let node = format!("{path}/{id}");
    let result = match Supervised::spawn(argv, &[("ZKCTL_MEMBER_NODE", &node)]) {
        Err(e) => Err(e),
        Ok(mut child) => tokio::select! {
            status = child.wait() => status.map(exit_code).map_err(Failure::from),
            signal = shutdown.recv() => {
                eprintln!("zkctl: {}: stopping pid {}, then leaving {path}", signal.name, child.pid());
                child.stop(grace, Some(&mut shutdown)).await?;
                Ok(signal.exit_code())
            }
        },
    };
    if let Err(e) = membership.close().await {
        eprintln!("zkctl: leaving {path}: {e} (the node goes with the session)");
    }
    close(&client).await;
    result
}

/// Prints `ID DATA` per member, sorted by id.
pub async fn members(g: &Globals, path: &str) -> Outcome {
    let client = connect(g).await?;
    let result = async {
        let mut ids = client.get_children(path).await?.to_vec();
        ids.sort();
        for id in ids {
            match client.get_data(&format!("{path}/{id}")).await {
                Ok((data, _)) if data.is_empty() => say(&id)?,
                Ok((data, _)) => say(format!("{id} {}", printable(&data)))?,
                // Left between the listing and the read.
                Err(e) if e.code() == ErrorCode::NoNode => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(0)
    }
    .await;
    close(&client).await;
    result
}
