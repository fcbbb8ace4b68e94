//! Leader election with `LeaderLatch`: ten participants, each on its own session (as ten
//! processes would be), elect one leader; the leader leaves and the next in line takes over;
//! then a leader's process "crashes" (its session ends without a goodbye) and again the next
//! one takes over. Every participant agrees on who leads at each step.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example leader_latch`.

use std::time::{Duration, Instant};

use zkrs::Client;
use zkrs_recipes::leader::{CloseMode, LeaderLatch};
use zkrs_testkit::TestingServer;

const PATH: &str = "/example/leader";
const WAIT: Duration = Duration::from_secs(10);

type Error = Box<dyn std::error::Error + Send + Sync>;

struct Member {
    client: Client,
    latch: LeaderLatch,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }

    println!("10 participants join the election at {PATH}, each with its own session");
    let mut members = Vec::new();
    for i in 0..10 {
        let client = Client::connect(&connect).await?;
        let latch = LeaderLatch::builder(&client, PATH)
            .id(format!("p{i}"))
            .start()?;
        // One after the other, so the line is p0..p9 (the latch joins in the background).
        let deadline = Instant::now() + WAIT;
        while latch.node_path().is_none() {
            if Instant::now() >= deadline {
                return Err("a participant could not join".into());
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        members.push(Member { client, latch });
    }

    let leader = settle(&members).await?;
    let line: Vec<String> = members[0]
        .latch
        .participants()
        .await?
        .into_iter()
        .map(|p| p.id)
        .collect();
    println!("in line (first come, first served): {}", line.join(" "));
    println!(
        "{} leads; all 10 participants agree",
        members[leader].latch.id()
    );

    // The leader leaves politely: its node is deleted, the next in line is woken.
    let next = line[1].clone();
    let leaving = members.remove(leader);
    let id = leaving.latch.id().to_string();
    let started = Instant::now();
    leaving.latch.close_with(CloseMode::NotifyLeader).await?;
    leaving.client.close().await?;
    println!("{id} leaves the election");
    let leader = settle(&members).await?;
    let successor = members[leader].latch.id();
    println!(
        "{successor} takes over after {} ms{}; all 9 agree",
        started.elapsed().as_millis(),
        if successor == next {
            ", as the next in line"
        } else {
            " (NOT the next in line)"
        }
    );

    // The new leader's process dies: no close, its session just ends. Its ephemeral node goes
    // with the session, and the next in line takes over.
    let crashed = members.remove(leader);
    let id = crashed.latch.id().to_string();
    let started = Instant::now();
    crashed.client.close().await?;
    println!("{id}'s session ends abruptly (a crash, as far as ZooKeeper can tell)");
    let leader = settle(&members).await?;
    println!(
        "{} takes over after {} ms; all 8 agree",
        members[leader].latch.id(),
        started.elapsed().as_millis()
    );
    drop(crashed);

    for m in members {
        m.latch.close_with(CloseMode::Silent).await?;
        m.client.close().await?;
    }
    let checker = Client::connect(&connect).await?;
    let left = checker
        .get_children(PATH)
        .await
        .map(|c| c.len())
        .unwrap_or(0);
    println!("everyone left: {left} election nodes remain");
    checker.close().await?;
    Ok(())
}

/// Waits until exactly one participant leads and every participant names it as leader;
/// returns its index.
async fn settle(members: &[Member]) -> Result<usize, Error> {
    let deadline = Instant::now() + WAIT;
    loop {
        let leaders: Vec<usize> = (0..members.len())
            .filter(|&i| members[i].latch.is_leader())
            .collect();
        if let [only] = leaders[..] {
            let mut agreed = true;
            for m in members {
                let named = m.latch.leader().await?.map(|p| p.id);
                agreed &= named.as_deref() == Some(members[only].latch.id());
            }
            if agreed {
                return Ok(only);
            }
        }
        if leaders.len() > 1 {
            return Err(format!("two leaders at once: {leaders:?}").into());
        }
        if Instant::now() >= deadline {
            return Err("no leader within 10 s".into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
