//! A tour of the client: starts a local ZooKeeper with the test kit (or uses `ZK_SERVER`),
//! then shows a session at work: nodes, a watch firing, an ephemeral node vanishing with its
//! session.
//!
//! Run: `cargo run --example client_tour`.

use std::time::Duration;

use zkrs::{Client, CreateMode};
use zkrs_testkit::TestingServer;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }

    let alice = Client::connect(&connect).await?;
    let bob = Client::connect(&connect).await?;
    println!(
        "alice has session {:#x}, bob has session {:#x}",
        alice.session_id(),
        bob.session_id()
    );

    if alice.exists("/demo").await?.is_none() {
        alice.create("/demo", b"", CreateMode::Persistent).await?;
    }
    let member = alice
        .create("/demo/member-", b"alice", CreateMode::EphemeralSequential)
        .await?;
    println!("alice joined as {member}");

    let (members, watch) = bob.get_children_and_watch("/demo").await?;
    println!(
        "bob sees members {:?} and watches for changes",
        members.to_vec()
    );

    alice.close().await?;
    println!("alice closed her session");
    let event = tokio::time::timeout(Duration::from_secs(10), watch).await?;
    println!(
        "bob's watch fired: {:?} on {}",
        event.event_type, event.path
    );
    let members = bob.get_children("/demo").await?;
    println!("bob now sees members {:?}", members.to_vec());
    bob.delete("/demo", None).await?;
    bob.close().await?;
    println!("done");
    Ok(())
}
