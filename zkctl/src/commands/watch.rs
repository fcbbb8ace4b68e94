//! `watch PATH [--recursive] [--count N]`: one line per event, from a persistent watch.
//!
//! A persistent watch (`addWatch`, ZooKeeper 3.6+) stays after it fires and is re-registered
//! by the client after a reconnect, so unlike a chain of one-shot watches no change between
//! two events goes unseen.

use zkrs_client::AddWatchMode;

use crate::args::{Globals, WatchArgs};
use crate::connection::{close, connect};
use crate::failure::{Failure, Outcome};
use crate::json_records::Event;
use crate::output::{self, note};
use crate::output_json;
use crate::signals::Shutdown;

/// Prints events until interrupted, `count` events were seen, or the session ends.
pub async fn run(g: &Globals, a: &WatchArgs) -> Outcome {
    let mut shutdown = Shutdown::install()?;
    let client = connect(g).await?;
    let result = watch(&client, &a.path, a.recursive, a.count, &mut shutdown).await;
    close(&client).await;
    result
}

async fn watch(
    client: &zkrs_client::Client,
    path: &str,
    recursive: bool,
    count: Option<u64>,
    shutdown: &mut Shutdown,
) -> Outcome {
    let mode = if recursive {
        AddWatchMode::PersistentRecursive
    } else {
        AddWatchMode::Persistent
    };
    let mut events = client.add_watch(path, mode).await?;
    // On stderr, so scripts (and tests) know when changes start to be seen.
    note!(
        "zkctl: watching {path}{} (Ctrl-C to stop)",
        if recursive { " and its subtree" } else { "" }
    );
    let mut seen = 0u64;
    while count.is_none_or(|n| seen < n) {
        tokio::select! {
            signal = shutdown.recv() => return Ok(signal.exit_code()),
            event = events.next() => match event {
                Some(Err(lagged)) => {
                    note!("zkctl: output fell behind; {} events dropped", lagged.missed);
                    seen += lagged.missed;
                }
                Some(Ok(e)) if e.is_session_event() => {
                    print(&e)?;
                    return Err(Failure::msg(format!("the watch on {path} ended: session {:?}", e.state)));
                }
                Some(Ok(e)) => {
                    print(&e)?;
                    seen += 1;
                }
                None => return Err(Failure::msg(format!("the watch on {path} ended"))),
            },
        }
    }
    Ok(0)
}

/// One event: `NodeDataChanged /a/b`, or `{"type","path","state"}` with `--output json`.
pub fn print(e: &zkrs_client::WatchedEvent) -> std::io::Result<()> {
    if output_json::on() {
        output_json::say(&Event::from(e))
    } else {
        output::say(output::event(e))
    }
}
