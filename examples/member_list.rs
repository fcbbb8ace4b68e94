//! A live member list with `PathChildrenCache`: every member process registers an ephemeral
//! node under `/example/members` from its own session, holding its address and status; a
//! monitor caches the children and prints the list whenever it changes. Members join, change
//! their status, leave (closing the session deletes their node at once), and one session is
//! lost without a goodbye (its node goes when the server expires it).
//!
//! `StartMode::BuildInitialCache`: `start` returns once the members already there are read,
//! and they are not told as events; every later change is.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example member_list`.

use std::time::Duration;

use zkrs::{Client, CreateMode, ErrorCode, EventStream};
use zkrs_recipes::cache::{CacheEvent, PathChildrenCache, StartMode};
use zkrs_testkit::TestingServer;

const PATH: &str = "/example/members";
const WAIT: Duration = Duration::from_secs(10);

type Error = Box<dyn std::error::Error + Send + Sync>;

/// One member: its own session and its ephemeral node.
struct Member {
    name: &'static str,
    client: Client,
}

impl Member {
    async fn join(connect: &str, name: &'static str, address: &str) -> Result<Member, Error> {
        let client = Client::connect(connect).await?;
        Member::register(client, name, address).await
    }

    async fn register(client: Client, name: &'static str, address: &str) -> Result<Member, Error> {
        let data = format!("{address} ready");
        client
            .create(
                &format!("{PATH}/{name}"),
                data.as_bytes(),
                CreateMode::Ephemeral,
            )
            .await?;
        Ok(Member { name, client })
    }

    async fn status(&self, address: &str, status: &str) -> Result<(), Error> {
        let data = format!("{address} {status}");
        self.client
            .set_data(&format!("{PATH}/{}", self.name), data.as_bytes(), None)
            .await?;
        Ok(())
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }
    let setup = Client::connect(&connect).await?;
    for path in ["/example", PATH] {
        match setup.create(path, b"", CreateMode::Persistent).await {
            Ok(_) => {}
            Err(e) if e.code() == Some(ErrorCode::NodeExists) => {}
            Err(e) => return Err(e.into()),
        }
    }

    let alice = Member::join(&connect, "alice", "10.0.0.1:8080").await?;
    let bob = Member::join(&connect, "bob", "10.0.0.2:8080").await?;

    // The monitor: the two members already there are read before `start` returns.
    let monitor = Client::connect(&connect).await?;
    let members = PathChildrenCache::builder(&monitor, PATH)
        .start_mode(StartMode::BuildInitialCache)
        .start()?;
    let mut events = members.events();
    members.initialized().await?;
    print_list("monitor starts", &members);

    let carol = Member::join(&connect, "carol", "10.0.0.3:8080").await?;
    next(&mut events, &members).await?;
    bob.status("10.0.0.2:8080", "draining").await?;
    next(&mut events, &members).await?;
    alice.client.close().await?;
    println!("(alice closes her session)");
    next(&mut events, &members).await?;

    // A member whose process dies: its client runs on a runtime of its own (its "process"),
    // which is shut down without closing the session. The server keeps the node until the
    // session times out (the shortest timeout the server grants), then deletes it.
    let process = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let target = connect.clone();
    let client = process
        .spawn(async move {
            Client::builder(&target)
                .session_timeout(Duration::from_millis(500))
                .connect()
                .await
        })
        .await??;
    let dave = Member::register(client, "dave", "10.0.0.4:8080").await?;
    next(&mut events, &members).await?;
    let granted = dave.client.session_timeout();
    process.shutdown_background();
    println!(
        "(dave's process dies; the server expires its session after {} ms)",
        granted.as_millis()
    );
    next(&mut events, &members).await?;
    drop(dave);

    members.close().await;
    for m in [bob, carol] {
        m.client.close().await?;
    }
    monitor.close().await?;
    setup.delete(PATH, None).await?;
    setup.close().await?;
    Ok(())
}

/// Waits (bounded) for the next change and prints it with the list it leaves.
async fn next(
    events: &mut EventStream<CacheEvent>,
    members: &PathChildrenCache,
) -> Result<(), Error> {
    let event = tokio::time::timeout(WAIT, events.next())
        .await
        .map_err(|_| "no change seen within 10 s")?
        .ok_or("the cache stopped")?;
    let what = match event {
        CacheEvent::Added(m) => format!("{} joins", m.name()),
        CacheEvent::Updated { new, .. } => {
            format!(
                "{} updates: {}",
                new.name(),
                String::from_utf8_lossy(new.bytes())
            )
        }
        CacheEvent::Removed(m) => format!("{} leaves", m.name()),
        other => format!("{other:?}"),
    };
    print_list(&what, members);
    Ok(())
}

fn print_list(what: &str, members: &PathChildrenCache) {
    let list: Vec<String> = members
        .current_data()
        .iter()
        .map(|m| format!("{} ({})", m.name(), String::from_utf8_lossy(m.bytes())))
        .collect();
    println!("{what}\n    members: {}", list.join(", "));
}
