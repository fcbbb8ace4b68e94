//! `demo`: the leader-latch story with N participants (default 10), each on its own session
//! as separate processes would be: who leads, the leader leaves, who leads next, a
//! participant leaves from the middle of the line, the new leader's session ends.
//!
//! Every line it prints is checked against the server (`participants()`), not assumed.

use std::time::{Duration, Instant};

use zkrs_client::{Client, Result};
use zkrs_recipes::leader::{CloseMode, LeaderLatch};

use crate::args::Globals;
use crate::commands::data::delete_tree;
use crate::connection::{builder, close, connect};
use crate::failure::{Failure, Outcome};
use crate::lab;
use crate::pipeline;

/// `println!` that returns an I/O error instead of panicking on a closed stdout.
macro_rules! say {
    ($($arg:tt)*) => {
        crate::output::say(format_args!($($arg)*))
    };
}

const NAMES: [&str; 10] = [
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
];

/// How long any step may take before the demo reports it as stuck.
const STEP: Duration = Duration::from_secs(20);

/// One participant: its own session and latch.
struct Participant {
    name: String,
    client: Client,
    latch: LeaderLatch,
}

/// Runs the story on a test-kit server, or on `--server`/`$ZK_SERVER` when given.
pub async fn run(g: &Globals, participants: usize) -> Outcome {
    let mut g = g.clone();
    // Kept alive until the end of the story; dropping it stops the server.
    let _server = if g.server_given {
        say!("ZooKeeper at {}", g.server)?;
        None
    } else {
        let Some(local_server) = lab::get().local_server else {
            return Err(Failure::Usage(format!(
                "demo needs a server: --server HOSTS or $ZK_SERVER ({})",
                lab::needs_bench("starting one")
            )));
        };
        say!("starting a local ZooKeeper with the test kit...")?;
        let (connect_string, server) = tokio::task::spawn_blocking(local_server)
            .await
            .map_err(|e| Failure::msg(format!("starting ZooKeeper: {e}")))?
            .map_err(|e| {
                Failure::msg(format!(
                    "cannot start a local ZooKeeper: {e} (install it with \
                     scripts/install-zookeeper.sh, or pass --server HOSTS)"
                ))
            })?;
        g.server = connect_string;
        say!("ZooKeeper at {} (started with the test kit)", g.server)?;
        Some(server)
    };
    let admin = connect(&g).await?;
    let base = format!("/zkctl-demo-{}", std::process::id());
    let result = story(&g, &admin, &base, participants).await;
    // Whatever happened, leave nothing behind.
    let cleaned = delete_tree(&admin, &base, None).await;
    close(&admin).await;
    result?;
    cleaned?;
    say!("everyone left; {base} is deleted")?;
    Ok(0)
}

/// Friendly names for up to ten participants, numbered ones beyond.
fn name(i: usize, n: usize) -> String {
    if n <= NAMES.len() {
        NAMES[i].to_string()
    } else {
        format!("p{i}")
    }
}

async fn story(
    g: &Globals,
    admin: &Client,
    base: &str,
    n: usize,
) -> std::result::Result<(), Failure> {
    let path = format!("{base}/election");
    let clients: Vec<Client> = pipeline::all((0..n).map(|_| builder(g).connect()))
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    // Join one after the other, so the line is in name order (the oldest node leads).
    let mut line = Vec::with_capacity(n);
    for (i, client) in clients.into_iter().enumerate() {
        let name = name(i, n);
        let latch = LeaderLatch::builder(&client, &path).id(&name).start()?;
        step("a participant to join", async {
            while latch.node_path().is_none() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await?;
        line.push(Participant {
            name,
            client,
            latch,
        });
    }
    say!("{n} participants joined the election at {path}, each with its own session")?;
    step("the first leader", line[0].latch.await_leadership()).await??;
    show_line(admin, &path).await?;

    // 1. The leader leaves cleanly: its node is deleted, and the next in line is told.
    let leaving = line.remove(0);
    let started = Instant::now();
    leaving.latch.close_with(CloseMode::Silent).await?;
    step("the next leader", line[0].latch.await_leadership()).await??;
    say!(
        "{} leaves (closes its latch): {} is told it leads {} later",
        leaving.name,
        line[0].name,
        ms(started.elapsed())
    )?;
    close(&leaving.client).await;

    // 2. Someone in the middle leaves: the leader is not disturbed; only the participant
    //    behind it (which watched its node) moves up to watch the one before.
    if line.len() > 3 {
        let middle = line.remove(line.len() / 2);
        middle.latch.close_with(CloseMode::Silent).await?;
        close(&middle.client).await;
        let leader = &line[0];
        let still = leader.latch.is_leader();
        say!(
            "{} leaves from the middle of the line: {} {} leads",
            middle.name,
            leader.name,
            if still { "still" } else { "no longer" }
        )?;
    }

    // 3. The leader's session ends without leaving the election (its process exits): the
    //    server deletes its ephemeral node with the session, and the next one takes over.
    if line.len() > 1 {
        let ending = line.remove(0);
        let started = Instant::now();
        close(&ending.client).await;
        step("the next leader", line[0].latch.await_leadership()).await??;
        say!(
            "{}'s session is closed without leaving the election (as when its process exits): {} leads {} later",
            ending.name,
            line[0].name,
            ms(started.elapsed())
        )?;
    }
    show_line(admin, &path).await?;
    for p in line {
        p.latch.close_with(CloseMode::Silent).await?;
        close(&p.client).await;
    }
    Ok(())
}

/// Prints the line as the server has it: ids in election order, the leader first.
async fn show_line(admin: &Client, path: &str) -> std::result::Result<(), Failure> {
    let participants = zkrs_recipes::leader::participants(admin, path).await?;
    let names: Vec<&str> = participants.iter().map(|p| p.id.as_str()).collect();
    say!("  leader: {}", names.first().copied().unwrap_or("(none)"))?;
    say!("  line:   {}", names.join(", "))?;
    Ok(())
}

async fn step<T>(
    what: &str,
    f: impl std::future::Future<Output = T>,
) -> std::result::Result<T, Failure> {
    tokio::time::timeout(STEP, f)
        .await
        .map_err(|_| Failure::msg(format!("stuck waiting for {what}")))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
