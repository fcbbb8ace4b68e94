//! `cache PATH [--depth N] [--children] [--for MS]`: a live view of a subtree kept by one of
//! the recipes' caches, one line per event while it runs, and the whole view when it ends.
//!
//! The caches do the hard part (convergence across reconnects, server restarts and session
//! expiry, identity across delete and re-create); this file picks one, prints what it says and
//! what it holds:
//! - the subtree with PATH (default): [`CuratorCache`], one persistent recursive watch (it
//!   falls back to one-shot watches by itself on a 3.5 server);
//! - `--depth N`: [`TreeCache`] with `max_depth(N)`;
//! - `--children`: [`PathChildrenCache`] started with [`StartMode::PostInitializedEvent`]
//!   (PATH itself is not in the view).
//!
//! Runs on the current-thread runtime: between two awaits the cache's task cannot run, so the
//! events queued when zkctl stops are exactly those of the changes in the view it prints.

use std::time::Duration;

use zkrs_client::Client;
use zkrs_recipes::cache::{
    CacheEvent, ChildData, CuratorCache, PathChildrenCache, Snapshot, StartMode, TreeCache,
};

use crate::args::{CacheKind, Globals};
use crate::connection::{close, connect};
use crate::failure::{Failure, Outcome};
use crate::json_records::Happening;
use crate::output::{self, printable};
use crate::signals::Shutdown;

/// Prints events until `run_for` has passed (once connected) or a signal comes, then the
/// view; exits 0.
pub async fn run(g: &Globals, path: &str, kind: CacheKind, run_for: Option<Duration>) -> Outcome {
    let mut shutdown = Shutdown::install()?;
    let client = connect(g).await?;
    let result = keep(&client, path, kind, run_for, &mut shutdown).await;
    close(&client).await;
    result
}

/// One of the caches, behind the two calls zkctl needs.
enum View {
    Subtree(CuratorCache),
    Depth(TreeCache),
    Children(PathChildrenCache),
}

impl View {
    fn snapshot(&self) -> Snapshot {
        match self {
            View::Subtree(c) => c.snapshot(),
            View::Depth(c) => c.snapshot(),
            View::Children(c) => c.snapshot(),
        }
    }
}

async fn keep(
    client: &Client,
    path: &str,
    kind: CacheKind,
    run_for: Option<Duration>,
    shutdown: &mut Shutdown,
) -> Outcome {
    // Each stream is taken right after its cache starts (on this current-thread runtime its
    // task has not run yet), so the initial build's events are in it.
    let (view, mut events) = match kind {
        CacheKind::Subtree => {
            let cache = CuratorCache::builder(client, path).start()?;
            let events = cache.events();
            (View::Subtree(cache), events)
        }
        CacheKind::Depth(depth) => {
            let cache = TreeCache::builder(client, path).max_depth(depth).start()?;
            let events = cache.events();
            (View::Depth(cache), events)
        }
        CacheKind::Children => {
            let cache = PathChildrenCache::builder(client, path)
                .start_mode(StartMode::PostInitializedEvent)
                .start()?;
            let events = cache.events();
            (View::Children(cache), events)
        }
    };
    let until_deadline = crate::connection::run_for(run_for);
    tokio::pin!(until_deadline);
    loop {
        tokio::select! {
            _ = shutdown.recv() => break,
            () = &mut until_deadline => break,
            event = events.next() => match event {
                Some(event) => {
                    print_event(&event)?;
                }
                // The cache's task ended: the client was closed, or the watch was refused
                // for good (no permission).
                None => return Err(Failure::msg(format!("the cache of {path} stopped"))),
            },
        }
    }
    // The events already queued belong to the view below: print them first. No await from
    // here on, so the cache's task cannot change the view in between.
    while let Some(event) = events.try_next() {
        print_event(&event)?;
    }
    let snapshot = view.snapshot();
    for node in snapshot.values() {
        if crate::output_json::on() {
            crate::output_json::say(&Happening {
                kind: "node",
                path: Some(&node.path),
                version: Some(node.stat.version),
                data: Some(crate::json_records::Data::of(node.bytes())),
                ..Happening::default()
            })?;
        } else {
            output::say(node_line(node))?;
        }
    }
    // Dropping the cache stops its task; closing the session removes its watches.
    drop(view);
    Ok(0)
}

/// One event as a line (`added /a 3`); `None` for kinds this version does not know.
/// Prints an event's line (or record, with `--output json`), if it has one.
fn print_event(event: &CacheEvent) -> std::io::Result<()> {
    if !crate::output_json::on() {
        return match event_line(event) {
            Some(line) => output::say(line),
            None => Ok(()),
        };
    }
    fn node<'a>(kind: &'a str, node: &'a ChildData) -> Happening<'a> {
        Happening {
            kind,
            path: Some(&node.path),
            version: Some(node.stat.version),
            ..Happening::default()
        }
    }
    let record = match event {
        CacheEvent::Added(n) => node("added", n),
        CacheEvent::Updated { new, .. } => node("updated", new),
        CacheEvent::Removed(n) => Happening {
            version: None,
            ..node("removed", n)
        },
        CacheEvent::Initialized => Happening::named("initialized"),
        CacheEvent::Suspended => Happening::named("suspended"),
        CacheEvent::Reconnected => Happening::named("reconnected"),
        CacheEvent::Lost => Happening::named("lost"),
        CacheEvent::Lagged { missed } => Happening {
            missed: Some(*missed),
            ..Happening::named("lagged")
        },
        CacheEvent::Failed(error) => Happening {
            error: Some(error.to_string()),
            ..Happening::named("failed")
        },
        _ => return Ok(()),
    };
    crate::output_json::say(&record)
}

fn event_line(event: &CacheEvent) -> Option<String> {
    Some(match event {
        CacheEvent::Added(node) => format!("added {} {}", node.path, node.stat.version),
        CacheEvent::Updated { new, .. } => format!("updated {} {}", new.path, new.stat.version),
        CacheEvent::Removed(node) => format!("removed {}", node.path),
        CacheEvent::Initialized => "initialized".to_string(),
        CacheEvent::Suspended => "suspended".to_string(),
        CacheEvent::Reconnected => "reconnected".to_string(),
        CacheEvent::Lost => "lost".to_string(),
        CacheEvent::Lagged { missed } => format!("lagged {missed}"),
        CacheEvent::Failed(error) => format!("failed {error}"),
        _ => return None,
    })
}

/// One node of the final view: `node PATH VERSION DATA` (no trailing space when empty).
fn node_line(node: &ChildData) -> String {
    let mut line = format!("node {} {}", node.path, node.stat.version);
    let data = node.bytes();
    if !data.is_empty() {
        line.push(' ');
        line.push_str(&printable(data));
    }
    line
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use zkrs_client::{Bytes, Stat};

    use super::*;

    fn node(path: &str, version: i32, data: &'static [u8]) -> Arc<ChildData> {
        Arc::new(ChildData {
            path: path.to_string(),
            stat: Stat {
                version,
                ..Stat::default()
            },
            data: Some(Bytes::from_static(data)),
        })
    }

    #[test]
    fn node_lines() {
        assert_eq!(
            node_line(&node("/a", 3, b"hello world")),
            "node /a 3 hello world"
        );
        assert_eq!(node_line(&node("/a", 0, b"")), "node /a 0");
        assert_eq!(
            node_line(&node("/a", 1, b"\x00\xffA")),
            "node /a 1 0x00ff41"
        );
        assert_eq!(
            node_line(&node("/a", 1, b"two\nlines")),
            "node /a 1 0x74776f0a6c696e6573"
        );
        assert_eq!(node_line(&node("/a", 1, b"cr\r")), "node /a 1 0x63720d");
        assert_eq!(node_line(&node("/a", 2, "é".as_bytes())), "node /a 2 é");
        let no_data = ChildData {
            data: None,
            ..(*node("/b", 4, b"")).clone()
        };
        assert_eq!(node_line(&no_data), "node /b 4");
    }

    #[test]
    fn event_lines() {
        let old = node("/a", 3, b"x");
        let new = node("/a", 4, b"y");
        let line = |e: CacheEvent| event_line(&e).unwrap();
        assert_eq!(line(CacheEvent::Added(old.clone())), "added /a 3");
        assert_eq!(
            line(CacheEvent::Updated {
                old: old.clone(),
                new
            }),
            "updated /a 4"
        );
        assert_eq!(line(CacheEvent::Removed(old)), "removed /a");
        assert_eq!(line(CacheEvent::Initialized), "initialized");
        assert_eq!(line(CacheEvent::Suspended), "suspended");
        assert_eq!(line(CacheEvent::Reconnected), "reconnected");
        assert_eq!(line(CacheEvent::Lost), "lost");
        assert_eq!(line(CacheEvent::Lagged { missed: 7 }), "lagged 7");
    }
}
