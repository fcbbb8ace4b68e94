//! A configuration node watched with `NodeCache`: a service keeps the current value of
//! `/example/config` in memory and is told of every change, while an operator (another
//! session) creates the node, changes it twice, deletes it and creates it again. A node
//! deleted and created again is told as removed, then added: never as an update.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example config_watcher`.

use std::time::Duration;

use zkrs::{Client, CreateMode, ErrorCode, EventStream};
use zkrs_recipes::cache::{CacheEvent, ChildData, NodeCache, StartMode};
use zkrs_testkit::TestingServer;

const PATH: &str = "/example/config";
const WAIT: Duration = Duration::from_secs(10);

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }

    // The operator's session, which changes the configuration.
    let operator = Client::connect(&connect).await?;
    match operator
        .create("/example", b"", CreateMode::Persistent)
        .await
    {
        Ok(_) => {}
        Err(e) if e.code() == Some(ErrorCode::NodeExists) => {}
        Err(e) => return Err(e.into()),
    }
    match operator.delete(PATH, None).await {
        Ok(()) => {}
        Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
        Err(e) => return Err(e.into()),
    }

    // The service's session and its cache of the node, which does not exist yet.
    let service = Client::connect(&connect).await?;
    let config = NodeCache::builder(&service, PATH)
        .start_mode(StartMode::BuildInitialCache)
        .start()?;
    let mut changes = config.events();
    config.initialized().await?;
    println!("service starts: {PATH} is {}", show(config.current()));

    operator
        .create(PATH, br#"{"workers":4}"#, CreateMode::Persistent)
        .await?;
    next(&mut changes).await?;
    operator.set_data(PATH, br#"{"workers":8}"#, None).await?;
    next(&mut changes).await?;
    operator
        .set_data(PATH, br#"{"workers":8,"debug":true}"#, Some(1))
        .await?;
    next(&mut changes).await?;
    operator.delete(PATH, None).await?;
    next(&mut changes).await?;
    operator
        .create(PATH, br#"{"workers":2}"#, CreateMode::Persistent)
        .await?;
    next(&mut changes).await?;

    // Reading the cache costs no round trip: it is the value the last event told.
    println!("service reads its cache: {}", show(config.current()));

    config.close().await;
    operator.delete(PATH, None).await?;
    service.close().await?;
    operator.close().await?;
    Ok(())
}

/// Waits (bounded) for the cache's next event and prints it.
async fn next(changes: &mut EventStream<CacheEvent>) -> Result<(), Error> {
    let event = tokio::time::timeout(WAIT, changes.next())
        .await
        .map_err(|_| "no change seen within 10 s")?
        .ok_or("the cache stopped")?;
    match event {
        CacheEvent::Added(node) => println!("  created:  {}", show(Some(node))),
        CacheEvent::Updated { old, new } => println!(
            "  changed:  {} (was version {})",
            show(Some(new)),
            old.stat.version
        ),
        CacheEvent::Removed(node) => println!("  deleted:  {} (last: {})", node.path, text(&node)),
        other => println!("  {other:?}"),
    }
    Ok(())
}

fn show(node: Option<std::sync::Arc<ChildData>>) -> String {
    match node {
        Some(node) => format!("{} version {}", text(&node), node.stat.version),
        None => "(missing)".to_string(),
    }
}

fn text(node: &ChildData) -> String {
    String::from_utf8_lossy(node.bytes()).into_owned()
}
