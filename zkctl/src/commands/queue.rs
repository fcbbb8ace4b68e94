//! `queue put PATH DATA` and `queue take PATH`: the recipes' queues from a shell, on Curator's
//! nodes, so a shell script can feed a Java consumer or drain a Java producer's queue.
//!
//! - put: one item, or one per line of stdin (`-`), each as its own node, into the queue kind
//!   the flags choose; prints each node's path.
//! - take: prints one item's data per line until `--count` items were taken, within
//!   `--timeout` in all (exit 3 when it passes first). A node put as a batch (Curator's
//!   `putMulti`) holds several items: each is a line, and counts. With `--lock-path` a node
//!   is removed only after its items were printed (and flushed).

use std::io::BufRead;
use std::time::{Duration, Instant, SystemTime};

use zkrs_client::{Bytes, Client};
use zkrs_recipes::queue::{
    DistributedDelayQueue, DistributedIdQueue, DistributedPriorityQueue, DistributedQueue,
    SimpleDistributedQueue,
};

use crate::args::{Globals, QueueKind, QueueSub};
use crate::connection::{close, connect};
use crate::failure::{Failure, Outcome, EXIT_LOCK_TIMEOUT};
use crate::output::say;

/// Runs `queue put` or `queue take`.
pub async fn run(g: &Globals, queue: QueueSub) -> Outcome {
    let client = connect(g).await?;
    let result = match queue {
        QueueSub::Put(a) => put(&client, &a.path, &a.kind(), a.item()).await,
        QueueSub::Take(a) => {
            take(&client, &a.path, a.count, a.timeout, a.lock_path, a.simple).await
        }
    };
    close(&client).await;
    result
}

async fn put(client: &Client, path: &str, kind: &QueueKind, item: Option<&[u8]>) -> Outcome {
    let items: Vec<Vec<u8>> = match item {
        Some(item) => vec![item.to_vec()],
        None => std::io::stdin()
            .lock()
            .lines()
            .map(|l| l.map(String::into_bytes))
            .collect::<Result<_, _>>()
            .map_err(|e| Failure::msg(format!("reading items from stdin: {e}")))?,
    };
    for item in items {
        let node = match kind {
            QueueKind::Plain => {
                DistributedQueue::builder(client, path)
                    .build()?
                    .put(&item)
                    .await?
            }
            QueueKind::Priority(p) => {
                DistributedPriorityQueue::builder(client, path)
                    .build()?
                    .put(&item, *p)
                    .await?
            }
            QueueKind::Id(id) => {
                DistributedIdQueue::builder(client, path)
                    .build()?
                    .put(&item, id)
                    .await?
            }
            QueueKind::DelayUntil(ms) => {
                let due = SystemTime::UNIX_EPOCH + Duration::from_millis(*ms);
                DistributedDelayQueue::builder(client, path)
                    .build()?
                    .put(&item, due)
                    .await?
            }
            QueueKind::Simple => {
                SimpleDistributedQueue::builder(client, path)
                    .build()?
                    .put(&item)
                    .await?
            }
        };
        if crate::output_json::on() {
            crate::output_json::say(&crate::json_records::PathOnly { path: &node })?;
        } else {
            say(node).map_err(Failure::from)?;
        }
    }
    Ok(0)
}

/// What is left of the time allowed, or `None` when there is no limit.
fn left(deadline: Option<Instant>) -> Option<Duration> {
    deadline.map(|d| d.saturating_duration_since(Instant::now()))
}

async fn take(
    client: &Client,
    path: &str,
    count: u64,
    timeout: Option<Duration>,
    lock_path: Option<String>,
    simple: bool,
) -> Outcome {
    let deadline = timeout.map(|t| Instant::now() + t);
    let timed_out = || {
        Failure::Message(
            format!("{path}: fewer than {count} items within the timeout"),
            EXIT_LOCK_TIMEOUT,
        )
    };
    let mut taken = 0;
    if simple {
        let queue = SimpleDistributedQueue::builder(client, path).build()?;
        while taken < count {
            let item = match left(deadline) {
                None => queue.take().await?,
                Some(wait) => queue.take_timeout(wait).await?.ok_or_else(timed_out)?,
            };
            print_item(&item)?;
            taken += 1;
        }
        return Ok(0);
    }
    let mut queue = DistributedQueue::builder(client, path);
    if let Some(lock_path) = &lock_path {
        queue = queue.lock_path(lock_path);
    }
    let queue = queue.build()?;
    let mut consumer = queue.consumer();
    while taken < count {
        let message = match left(deadline) {
            None => consumer.take().await?,
            Some(wait) => consumer.take_timeout(wait).await?.ok_or_else(timed_out)?,
        };
        for item in message.items() {
            print_item(item)?;
            taken += 1;
        }
        // Printed and flushed: now the item may go (with a lock path it stayed until here).
        message.complete().await?;
    }
    Ok(0)
}

fn print_item(item: &Bytes) -> Result<(), Failure> {
    if crate::output_json::on() {
        let data = crate::json_records::Data::of(item);
        return crate::output_json::say(&crate::json_records::Item { data }).map_err(Failure::from);
    }
    say(String::from_utf8_lossy(item)).map_err(Failure::from)
}
