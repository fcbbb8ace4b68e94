//! The single-node master election (`MasterElection`): five workers, each on its own session,
//! race to create one ephemeral node holding their id; exactly one wins. The master leaves,
//! the others race again and exactly one wins; that one resigns, and another takes over.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example master`.

use std::time::{Duration, Instant};

use zkrs::Client;
use zkrs_recipes::leader::MasterElection;
use zkrs_testkit::TestingServer;

const PATH: &str = "/example/master";
const WAIT: Duration = Duration::from_secs(10);

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }

    let mut workers = Vec::new();
    for i in 1..=5 {
        let client = Client::connect(&connect).await?;
        let election = MasterElection::builder(&client, PATH)
            .id(format!("worker-{i}"))
            .start()?;
        workers.push((client, election));
    }
    println!("5 workers contend for {PATH}");

    let master = sole_master(&workers).await?;
    println!(
        "{} is master; the node says {:?}",
        workers[master].1.id(),
        workers[master]
            .1
            .leader()
            .await?
            .map(|p| p.id)
            .unwrap_or_default()
    );

    let (client, leaving) = workers.remove(master);
    let started = Instant::now();
    println!("{} leaves (its node is deleted)", leaving.id());
    leaving.close().await?;
    client.close().await?;
    let master = sole_master(&workers).await?;
    println!(
        "{} is master after {} ms (4 raced for it, one won)",
        workers[master].1.id(),
        started.elapsed().as_millis()
    );

    let started = Instant::now();
    println!("{} resigns and stays out", workers[master].1.id());
    workers[master].1.resign().await?;
    let resigned = master;
    let master = sole_master(&workers).await?;
    println!(
        "{} is master after {} ms; {} is out: master? {}",
        workers[master].1.id(),
        started.elapsed().as_millis(),
        workers[resigned].1.id(),
        workers[resigned].1.is_leader()
    );

    for (client, election) in workers {
        election.close().await?;
        client.close().await?;
    }
    let checker = Client::connect(&connect).await?;
    println!(
        "everyone left: the master node exists? {}",
        checker.exists(PATH).await?.is_some()
    );
    checker.close().await?;
    Ok(())
}

/// Waits until exactly one worker is master; returns its index.
async fn sole_master(workers: &[(Client, MasterElection)]) -> Result<usize, Error> {
    let deadline = Instant::now() + WAIT;
    loop {
        let masters: Vec<usize> = (0..workers.len())
            .filter(|&i| workers[i].1.is_leader())
            .collect();
        match masters[..] {
            [only] => return Ok(only),
            [] if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(5)).await,
            [] => return Err("no master within 10 s".into()),
            _ => return Err(format!("two masters at once: {masters:?}").into()),
        }
    }
}
