//! Group membership with `GroupMember` (Curator's layout: `<group>/<id>`, ephemeral, with the
//! member's data, so Java and Rust members see each other). Member `a` keeps a live member
//! list from its events while others join, change their data, leave, and one simply goes away
//! (its session closes without leaving: its ephemeral node goes with the session).
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example group_membership`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use zkrs::{Bytes, Client};
use zkrs_recipes::cache::CacheEvent;
use zkrs_recipes::node::GroupMember;
use zkrs_testkit::TestingServer;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// How long to wait for the live list to show a change.
const WAIT: Duration = Duration::from_secs(10);

/// `a=10.0.0.1 b=10.0.0.2`
fn show(members: &BTreeMap<String, Bytes>) -> String {
    members
        .iter()
        .map(|(id, data)| format!("{id}={}", String::from_utf8_lossy(data)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Waits until the live list is `expected` (`id=data` words).
async fn until(lists: &mut mpsc::UnboundedReceiver<String>, expected: &str) -> Result<(), Error> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match tokio::time::timeout_at(deadline, lists.recv()).await {
            Ok(Some(list)) if list == expected => return Ok(()),
            Ok(Some(_)) => {}
            Ok(None) => return Err("the member list ended".into()),
            Err(_) => return Err(format!("the member list never became {expected:?}").into()),
        }
    }
}

async fn join(
    connect: &str,
    group: &str,
    id: &str,
    data: &str,
) -> Result<(Client, GroupMember), Error> {
    let client = Client::connect(connect).await?;
    let member = GroupMember::builder(&client, group)
        .id(id)
        .data(data.as_bytes())
        .start()?;
    member.initialized().await?;
    Ok((client, member))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }
    let group = format!("/example/group-{}", std::process::id());

    // Member a, and its live view of the group: one line per change, then the whole list.
    let (a_client, a) = join(&connect, &group, "a", "10.0.0.1").await?;
    let a = Arc::new(a);
    let mut events = a.events();
    println!("a joined; members: {}", show(&a.current_members()));
    let (tx, mut lists) = mpsc::unbounded_channel();
    let viewer = {
        // Weak: the viewer must not keep `a` from closing (closing takes it).
        let a = Arc::downgrade(&a);
        tokio::spawn(async move {
            while let Some(event) = events.next().await {
                let change = match &event {
                    CacheEvent::Added(m) => format!("+ {} joined", m.name()),
                    CacheEvent::Updated { new, .. } => format!(
                        "~ {} now at {}",
                        new.name(),
                        String::from_utf8_lossy(new.bytes())
                    ),
                    CacheEvent::Removed(m) => format!("- {} left", m.name()),
                    other => format!("  ({other:?})"),
                };
                let Some(member) = a.upgrade() else { break };
                let list = show(&member.current_members());
                drop(member);
                println!("{change:<22} members: {list}");
                if tx.send(list).is_err() {
                    break;
                }
            }
        })
    };

    let (b_client, b) = join(&connect, &group, "b", "10.0.0.2").await?;
    until(&mut lists, "a=10.0.0.1 b=10.0.0.2").await?;
    let (c_client, c) = join(&connect, &group, "c", "10.0.0.3").await?;
    until(&mut lists, "a=10.0.0.1 b=10.0.0.2 c=10.0.0.3").await?;

    // b moves: its new data is written now, and kept if its node must be created again.
    b.set_this_data(b"10.0.0.22").await?;
    until(&mut lists, "a=10.0.0.1 b=10.0.0.22 c=10.0.0.3").await?;

    // b leaves properly.
    b.close().await?;
    b_client.close().await?;
    until(&mut lists, "a=10.0.0.1 c=10.0.0.3").await?;

    // c's session ends without c leaving (its process died, say): the server deletes its
    // ephemeral node with the session.
    c_client.close().await?;
    until(&mut lists, "a=10.0.0.1").await?;
    drop(c);

    // a leaves; its event stream ends, and so does the viewer.
    let a = Arc::try_unwrap(a).map_err(|_| "the viewer still holds a")?;
    a.close().await?;
    tokio::time::timeout(WAIT, viewer).await??;
    a_client.close().await?;
    println!("the group is empty again");
    Ok(())
}
