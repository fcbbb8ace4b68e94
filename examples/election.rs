//! ZooKeeper's own election recipe as a state machine (`LeaderElection`): three hosts offer
//! themselves one after the other; each one's events are printed as they happen. The first
//! is ELECTED, the others are READY (each watching the offer just before its own). Then the
//! leader leaves, and only the next in line goes through DETERMINE to ELECTED.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example election`.

use std::time::{Duration, Instant};

use zkrs::Client;
use zkrs::EventStream;
use zkrs_recipes::leader::{ElectionEvent, LeaderElection};
use zkrs_testkit::TestingServer;

const ROOT: &str = "/example/election";
const WAIT: Duration = Duration::from_secs(10);

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }
    let start = Instant::now();

    let mut hosts = Vec::new();
    for name in ["alpha.example.com", "beta.example.com", "gamma.example.com"] {
        let client = Client::connect(&connect).await?;
        let builder = LeaderElection::builder(&client, ROOT).id(name);
        let mut events = builder.events();
        let election = builder.start()?;
        // Print this host's events until it has settled (ELECTED or READY).
        print_until(start, name, &mut events, |e| {
            matches!(
                e,
                ElectionEvent::ElectedComplete | ElectionEvent::ReadyComplete
            )
        })
        .await?;
        println!(
            "{:>5} ms  {name}: offer {}",
            start.elapsed().as_millis(),
            election.node_path().unwrap_or_default()
        );
        hosts.push((client, election, events));
    }
    let (_, observer, _) = &hosts[2];
    println!(
        "{:>5} ms  the leader, as gamma reads it: {}",
        start.elapsed().as_millis(),
        observer.leader().await?.map(|p| p.id).unwrap_or_default()
    );

    // The leader leaves: its offer is deleted. beta (watching it) runs the election again.
    let (alpha_client, alpha, mut alpha_events) = hosts.remove(0);
    alpha.close().await?;
    print_until(start, "alpha.example.com", &mut alpha_events, |e| {
        e == ElectionEvent::StopComplete
    })
    .await?;
    let (_, _, beta_events) = &mut hosts[0];
    print_until(start, "beta.example.com", beta_events, |e| {
        e == ElectionEvent::ElectedComplete
    })
    .await?;
    let (_, gamma, gamma_events) = &mut hosts[1];
    println!(
        "{:>5} ms  gamma.example.com is still {:?} (it watches beta, which is still there; {} new events)",
        start.elapsed().as_millis(),
        gamma.state(),
        std::iter::from_fn(|| gamma_events.try_next()).count()
    );
    println!(
        "{:>5} ms  the leader now: {}",
        start.elapsed().as_millis(),
        gamma.leader().await?.map(|p| p.id).unwrap_or_default()
    );

    for (client, election, _) in hosts {
        election.close().await?;
        client.close().await?;
    }
    alpha_client.close().await?;
    Ok(())
}

/// Prints `host`'s events until one matches `last`.
async fn print_until(
    start: Instant,
    host: &str,
    events: &mut EventStream<ElectionEvent>,
    last: impl Fn(ElectionEvent) -> bool,
) -> Result<(), Error> {
    loop {
        let event = tokio::time::timeout(WAIT, events.next())
            .await?
            .ok_or("election gone")?;
        println!(
            "{:>5} ms  {host}: {event:?} (state {:?})",
            start.elapsed().as_millis(),
            event.state()
        );
        if last(event) {
            return Ok(());
        }
    }
}
