//! A subtree mirrored in memory with `CuratorCache`: one persistent recursive watch on
//! `/example/app` (one-shot watches on every node with a 3.5 server) keeps a sorted map of
//! every node below it. The nodes already there are told as `added`, then `initialized`;
//! then another session changes the tree (new services, a config change, a subtree deleted)
//! and each change is printed as it arrives. At the end the mirror's snapshot (an `Arc` of
//! the map: no copy, no round trip) is printed and compared with a fresh read of the server.
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example subtree_mirror`.

use std::time::Duration;

use zkrs::{Client, CreateMode, ErrorCode, EventStream};
use zkrs_recipes::cache::{CacheEvent, CuratorCache};
use zkrs_testkit::TestingServer;

const ROOT: &str = "/example/app";
const WAIT: Duration = Duration::from_secs(10);

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }

    // The tree before the mirror starts.
    let writer = Client::connect(&connect).await?;
    match writer.create("/example", b"", CreateMode::Persistent).await {
        Ok(_) => {}
        Err(e) if e.code() == Some(ErrorCode::NodeExists) => {}
        Err(e) => return Err(e.into()),
    }
    delete_tree(&writer, ROOT).await?;
    for (path, data) in [
        (ROOT, "app"),
        ("/example/app/config", "timeout=30"),
        ("/example/app/services", ""),
        ("/example/app/services/web", "10.0.0.1:80"),
        ("/example/app/jobs", ""),
        ("/example/app/jobs/nightly", "02:00"),
    ] {
        writer
            .create(path, data.as_bytes(), CreateMode::Persistent)
            .await?;
    }

    // The mirror, on a session of its own.
    let reader = Client::connect(&connect).await?;
    let mirror = CuratorCache::builder(&reader, ROOT).start()?;
    let mut events = mirror.events();
    println!("mirror of {ROOT} starts:");
    until(&mut events, |e| matches!(e, CacheEvent::Initialized)).await?;

    println!("another session changes the tree:");
    writer
        .create(
            "/example/app/services/api",
            b"10.0.0.2:8080",
            CreateMode::Persistent,
        )
        .await?;
    writer
        .set_data("/example/app/config", b"timeout=60", None)
        .await?;
    writer.delete("/example/app/jobs/nightly", None).await?;
    writer.delete("/example/app/jobs", None).await?;
    writer
        .create(
            "/example/app/services/api/v2",
            b"beta",
            CreateMode::Persistent,
        )
        .await?;
    // Events come in the order the server applied the changes: once the last one is told,
    // the others were.
    until(
        &mut events,
        |e| matches!(e, CacheEvent::Added(n) if n.path == "/example/app/services/api/v2"),
    )
    .await?;

    let snapshot = mirror.snapshot();
    println!("the mirror holds {} nodes:", snapshot.len());
    for (path, node) in snapshot.iter() {
        println!(
            "  {path:<28} v{} {:?}",
            node.stat.version,
            String::from_utf8_lossy(node.bytes())
        );
    }
    // Data and identity are settled by the events told so far. (The child counts in a
    // parent's Stat are read again just after a child's event, silently: compared here they
    // could still be on their way.)
    let mut same = true;
    for (path, node) in snapshot.iter() {
        let (data, stat) = writer.get_data(path).await?;
        same &= data[..] == *node.bytes()
            && (stat.czxid, stat.mzxid, stat.version)
                == (node.stat.czxid, node.stat.mzxid, node.stat.version);
    }
    let on_server = count(&writer, ROOT).await?;
    same &= on_server == snapshot.len();
    println!(
        "a fresh read of the server finds {on_server} nodes; the mirror {}",
        if same {
            "equals it (paths, data, versions)"
        } else {
            "DIFFERS"
        }
    );

    mirror.close().await;
    reader.close().await?;
    delete_tree(&writer, ROOT).await?;
    writer.close().await?;
    if same {
        Ok(())
    } else {
        Err("the mirror differs from the server".into())
    }
}

/// Prints events until one matches `last` (bounded).
async fn until(
    events: &mut EventStream<CacheEvent>,
    last: impl Fn(&CacheEvent) -> bool,
) -> Result<(), Error> {
    loop {
        let event = tokio::time::timeout(WAIT, events.next())
            .await
            .map_err(|_| "no event within 10 s")?
            .ok_or("the cache stopped")?;
        match &event {
            CacheEvent::Added(n) => println!("  added   {} v{}", n.path, n.stat.version),
            CacheEvent::Updated { new, .. } => {
                println!("  updated {} v{}", new.path, new.stat.version)
            }
            CacheEvent::Removed(n) => println!("  removed {}", n.path),
            other => println!("  {other:?}"),
        }
        if last(&event) {
            return Ok(());
        }
    }
}

/// How many nodes the subtree at `path` has, `path` included (0 if it does not exist).
async fn count(client: &Client, path: &str) -> Result<usize, Error> {
    let mut todo = vec![path.to_string()];
    let mut n = 0;
    while let Some(p) = todo.pop() {
        match client.get_children(&p).await {
            Ok(children) => {
                n += 1;
                todo.extend(children.iter().map(|c| format!("{p}/{c}")));
            }
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}

/// Deletes the subtree at `path`, deepest first (nothing if it does not exist).
async fn delete_tree(client: &Client, path: &str) -> Result<(), Error> {
    let mut order = Vec::new();
    let mut todo = vec![path.to_string()];
    while let Some(p) = todo.pop() {
        match client.get_children(&p).await {
            Ok(children) => todo.extend(children.iter().map(|c| format!("{p}/{c}"))),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => continue,
            Err(e) => return Err(e.into()),
        }
        order.push(p);
    }
    for p in order.iter().rev() {
        match client.delete(p, None).await {
            Ok(()) => {}
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
