//! A bounded queue's producers wait while it is full (Curator's `maxItems`).
//!
//! The count is the queue node's `numChildren` (one exists, no listing). While the queue is
//! full, a persistent watch on the queue node says when a child goes, and the count is read
//! again (Curator re-lists every child instead). On a server without `addWatch` (3.5) a child
//! watch is left with each check instead.
//!
//! The bound is loose, as Curator's: producers that see room at the same moment all put.

use tokio::time::Instant;
use zkrs_client::{AddWatchMode, Client, ErrorCode, PersistentWatch, Result};

use crate::framework::Backoff;

/// Waits until `path` has fewer than `max` children; `false` if `deadline` passed first.
pub(crate) async fn wait_for_room(
    client: &Client,
    path: &str,
    max: usize,
    deadline: Option<Instant>,
) -> Result<bool> {
    let mut backoff = Backoff::until(deadline);
    let room = match has_room(client, path, max, &mut backoff).await {
        Err(_) if backoff.is_deadline() => return Ok(false),
        room => room?,
    };
    if room {
        return Ok(true);
    }
    // Full: watch first, then read the count, so no departure is missed in between.
    let mut persistent: Option<PersistentWatch> = None;
    let mut no_add_watch = false;
    loop {
        let mut oneshot = None;
        if persistent.is_none() && !no_add_watch {
            match client.add_watch(path, AddWatchMode::Persistent).await {
                Ok(watch) => persistent = Some(watch),
                Err(e) if e.code() == Some(ErrorCode::Unimplemented) => no_add_watch = true,
                Err(e) if e.is_retryable() => match backoff.pause(client).await {
                    Ok(()) => continue,
                    Err(_) if backoff.is_deadline() => return Ok(false),
                    Err(e) => return Err(e),
                },
                Err(e) => return Err(e),
            }
        }
        if persistent.is_some() {
            match has_room(client, path, max, &mut backoff).await {
                Ok(true) => return Ok(true),
                Ok(false) => {}
                Err(_) if backoff.is_deadline() => return Ok(false),
                Err(e) => return Err(e),
            }
        } else {
            match client.get_children_and_watch(path).await {
                Ok((children, _)) if children.len() < max => return Ok(true),
                Ok((_, watch)) => oneshot = Some(watch),
                Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(true),
                Err(e) if e.is_retryable() => match backoff.pause(client).await {
                    Ok(()) => continue,
                    Err(_) if backoff.is_deadline() => return Ok(false),
                    Err(e) => return Err(e),
                },
                Err(e) => return Err(e),
            }
        }
        // `false`: the persistent watch ended with the session; make a new one.
        let woke = async {
            match (persistent.as_mut(), oneshot) {
                (Some(watch), _) => watch
                    .next()
                    .await
                    // A lag (`Err`) still means something changed: count again.
                    .is_some_and(|item| !matches!(item, Ok(event) if event.is_session_event())),
                (None, Some(watch)) => {
                    watch.await;
                    true
                }
                (None, None) => true,
            }
        };
        let alive = match deadline {
            Some(at) => match tokio::time::timeout_at(at, woke).await {
                Ok(alive) => alive,
                Err(_) => return Ok(false),
            },
            None => woke.await,
        };
        if !alive {
            persistent = None;
        }
    }
}

async fn has_room(client: &Client, path: &str, max: usize, backoff: &mut Backoff) -> Result<bool> {
    loop {
        match client.exists(path).await {
            Ok(Some(stat)) => return Ok((stat.num_children.max(0) as usize) < max),
            Ok(None) => return Ok(true),
            Err(e) if e.is_retryable() => backoff.pause(client).await?,
            Err(e) => return Err(e),
        }
    }
}
