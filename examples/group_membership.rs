//! Group membership with `GroupMember` (Curator's layout: `<group>/<id>`, ephemeral, with the
//! member's data): three members join, each sees the others; one changes its data, one
//! leaves, and the others see it.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example group_membership`.

use std::time::{Duration, Instant};

use zkr::Client;
use zkr_recipes::node::GroupMember;
use zkr_testkit::TestingServer;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Waits (at most 10 s) until `member` sees exactly these ids.
async fn sees(member: &GroupMember, ids: &[&str]) -> Result<(), Error> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now: Vec<String> = member.current_members().into_keys().collect();
        if now == ids {
            println!("{} sees {:?}", member.id(), now);
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("{} sees {now:?}, not {ids:?}", member.id()).into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }
    let group = format!("/example/group-{}", std::process::id());
    let mut members = Vec::new();
    for (id, address) in [("a", "10.0.0.1"), ("b", "10.0.0.2"), ("c", "10.0.0.3")] {
        let client = Client::connect(&connect).await?;
        let member = GroupMember::new(&client, &group, id, address.as_bytes())?;
        member.start().await?;
        members.push((client, member));
    }
    sees(&members[0].1, &["a", "b", "c"]).await?;
    members[1].1.set_this_data(b"10.0.0.22").await?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while members[2].1.current_members()["b"] != b"10.0.0.22"[..] {
        if Instant::now() > deadline {
            return Err("c never saw b's new address".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!("c sees b's new address");
    let (client, leaving) = members.remove(1);
    leaving.close().await?;
    client.close().await?;
    sees(&members[0].1, &["a", "c"]).await?;
    sees(&members[1].1, &["a", "c"]).await?;
    for (client, member) in members {
        member.close().await?;
        client.close().await?;
    }
    Ok(())
}
