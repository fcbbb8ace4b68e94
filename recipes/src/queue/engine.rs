//! The consumer's engine, shared by every queue kind: claims items in the cursor's order
//! with a few in flight at once, and keeps what it has claimed in itself, not in the caller's
//! future, so that a dropped `take()` loses nothing (the next call gets it) and a dropped
//! consumer gives everything it claimed but did not hand out back to the queue.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;
use zkrs_client::{ErrorCode, Result, Watcher, WatcherEvents};

use super::claim::{claim_by_delete, claim_by_lock, Claimed, Taken};
use super::cursor::{Cursor, Entry, Next};
use super::spec::{ensure_node, requeue, Spec};
use crate::framework::{join, Backoff};

/// What a consumer has done so far: the cost of its work, for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsumerStats {
    /// Listings of the queue (each a getChildren of the whole queue).
    pub listings: u64,
    /// Items taken.
    pub taken: u64,
    /// Claims lost to another consumer (the item was gone when we tried).
    pub lost: u64,
    /// Claims that found the item locked by another consumer (lock path only).
    pub busy: u64,
    /// Items whose delete was in flight when the connection dropped, gone afterwards: ours
    /// (and lost: without a lock path delivery is at most once) or another consumer's.
    pub in_doubt: u64,
}

type ClaimFuture = Pin<Box<dyn Future<Output = Claimed> + Send>>;

enum Slot {
    Running(ClaimFuture),
    Done(Claimed),
}

struct InFlight {
    entry: Entry,
    slot: Slot,
}

/// How long [`Engine::take`] may wait for an item.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wait {
    /// Not at all: `None` when nothing is there now.
    No,
    /// Until one comes.
    Forever,
    /// Until then.
    Until(Instant),
}

pub(crate) struct Engine {
    spec: Arc<Spec>,
    cursor: Cursor,
    inflight: VecDeque<InFlight>,
    ready: VecDeque<Taken>,
    depth: usize,
    /// One stream for the watches on other consumers' lock nodes (lock path only).
    lock_watch: Option<(Watcher, WatcherEvents)>,
    /// The head of the listing is not due before this (delay queue).
    not_due: Option<u64>,
    /// Our own released locks (the item stays in the queue; no watch tells us).
    released: Arc<Notify>,
    pub(crate) stats: ConsumerStats,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("path", &self.spec.path)
            .field("cursor", &self.cursor)
            .field("in_flight", &self.inflight.len())
            .field("ready", &self.ready.len())
            .field("stats", &self.stats)
            .finish()
    }
}

/// The wall clock in ms (the client's: a simulation's when one runs).
pub(crate) fn now_ms() -> u64 {
    zkrs_client::__private::unix_time_ms()
}

impl Engine {
    pub(crate) fn new(spec: Arc<Spec>, depth: usize) -> Engine {
        let cursor = Cursor::new(spec.order);
        Engine {
            spec,
            cursor,
            inflight: VecDeque::new(),
            ready: VecDeque::new(),
            depth: depth.max(1),
            lock_watch: None,
            not_due: None,
            released: Arc::new(Notify::new()),
            stats: ConsumerStats::default(),
        }
    }

    pub(crate) fn spec(&self) -> &Arc<Spec> {
        &self.spec
    }

    pub(crate) fn stats(&self) -> ConsumerStats {
        let mut stats = self.stats;
        stats.listings = self.cursor.listings;
        stats
    }

    /// The next item, in the queue's order: claimed (deleted, or locked with a lock path).
    /// `Ok(None)` when `wait` ran out first.
    ///
    /// Cancel-safe: claims in flight and items claimed live in the engine, so dropping this
    /// future loses nothing; the next call carries on.
    pub(crate) async fn take(&mut self, wait: Wait) -> Result<Option<Taken>> {
        // Listings this call made: without waiting, one is all a call may make.
        let mut listed = 0;
        loop {
            if let Some(taken) = self.ready.pop_front() {
                crate::metrics::count::queue_taken();
                return Ok(Some(taken));
            }
            // The deadline holds even while every claim loses a race and the listing's watch
            // keeps firing, so that the loop never reaches the wait below (found by the
            // simulation: a consumer behind another, the queue holding one or two items,
            // listed and claimed for 30 s inside a 300 ms take).
            if let Wait::Until(d) = wait {
                if Instant::now() >= d {
                    return Ok(None);
                }
            }
            self.fill().await;
            if !self.inflight.is_empty() {
                let (entry, claimed) = self.settle_front().await;
                self.handle(entry, claimed).await?;
                continue;
            }
            // Nothing in flight or ready, and no name to try now.
            if (self.cursor.remaining() == 0 || self.not_due.is_some())
                && self.cursor.watch_fired().await
                && !(matches!(wait, Wait::No) && listed > 0)
            {
                self.cursor.clear();
                let until = match wait {
                    Wait::Until(d) => Some(d),
                    Wait::No | Wait::Forever => None,
                };
                if !self.list(until).await? {
                    return Ok(None);
                }
                listed += 1;
                continue;
            }
            let deadline = match wait {
                Wait::No => return Ok(None),
                Wait::Forever => None,
                Wait::Until(d) => Some(d),
            };
            if !self.wait_for_change(deadline).await {
                return Ok(None);
            }
        }
    }

    /// The data of the next item without taking it (`SimpleDistributedQueue::peek`).
    pub(crate) async fn peek(&mut self) -> Result<Option<zkrs_client::Bytes>> {
        if let Some(taken) = self.ready.front() {
            return Ok(Some(taken.data.clone()));
        }
        let mut backoff = Backoff::new();
        loop {
            match self.cursor.next(now_ms()) {
                Next::Item(entry) => {
                    let path = join(&self.spec.path, &entry.name);
                    match self.spec.client.get_data(&path).await {
                        Ok((data, _)) => {
                            self.cursor.push_front(entry);
                            return Ok(Some(data));
                        }
                        // Gone: the next name is the head (no skipping while peeking).
                        Err(e) if e.code() == Some(ErrorCode::NoNode) => self.cursor.mark_stale(),
                        Err(e) if e.is_retryable() => {
                            self.cursor.push_front(entry);
                            backoff.pause(&self.spec.client).await?;
                        }
                        Err(e) => {
                            self.cursor.push_front(entry);
                            return Err(e);
                        }
                    }
                }
                Next::NotDue(_) | Next::Exhausted => {
                    if self.cursor.watch_fired().await {
                        self.cursor.clear();
                        self.list(None).await?;
                    } else {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Starts claims until `depth` are in flight or no name is left to try now.
    async fn fill(&mut self) {
        self.not_due = None;
        while self.inflight.len() < self.depth {
            if let Some(n) = self.spec.refresh_after {
                if self.cursor.refresh_due(n).await {
                    break;
                }
            }
            match self.cursor.next(now_ms()) {
                Next::Item(entry) => {
                    let claim = self.start_claim(&entry.name);
                    self.inflight.push_back(InFlight {
                        entry,
                        slot: Slot::Running(claim),
                    });
                }
                Next::NotDue(due) => {
                    self.not_due = Some(due);
                    break;
                }
                Next::Exhausted => break,
            }
        }
    }

    fn start_claim(&mut self, name: &str) -> ClaimFuture {
        let spec = self.spec.clone();
        let name = name.to_string();
        match &spec.lock_path {
            None => Box::pin(async move {
                let client = spec.client.clone();
                claim_by_delete(client, &spec.path, name).await
            }),
            Some(_) => {
                let (watcher, _) = self.lock_watch.get_or_insert_with(|| spec.client.watcher());
                let watcher = watcher.clone();
                let released = self.released.clone();
                Box::pin(async move {
                    let client = spec.client.clone();
                    let lock_dir = spec.lock_path.as_deref().unwrap_or_default();
                    claim_by_lock(client, &spec.path, lock_dir, name, watcher, released).await
                })
            }
        }
    }

    /// Polls every claim in flight (so their requests go out together) until the oldest is
    /// done; returns it.
    async fn settle_front(&mut self) -> (Entry, Claimed) {
        let inflight = &mut self.inflight;
        std::future::poll_fn(|cx| {
            for f in inflight.iter_mut() {
                if let Slot::Running(fut) = &mut f.slot {
                    if let Poll::Ready(claimed) = fut.as_mut().poll(cx) {
                        f.slot = Slot::Done(claimed);
                    }
                }
            }
            if matches!(
                inflight.front(),
                Some(InFlight {
                    slot: Slot::Done(_),
                    ..
                })
            ) {
                let front = inflight.pop_front().expect("checked");
                match front.slot {
                    Slot::Done(claimed) => Poll::Ready((front.entry, claimed)),
                    Slot::Running(_) => unreachable!("checked"),
                }
            } else {
                Poll::Pending
            }
        })
        .await
    }

    async fn handle(&mut self, entry: Entry, claimed: Claimed) -> Result<()> {
        match claimed {
            Claimed::Won(taken) => {
                self.cursor.won();
                self.stats.taken += 1;
                self.ready.push_back(taken);
            }
            Claimed::Gone => {
                self.stats.lost += 1;
                self.cursor.lost(true);
            }
            Claimed::Busy => {
                // Its lock's release wakes us through the lock watch; no listing needed.
                self.stats.busy += 1;
                self.cursor.lost(false);
            }
            Claimed::Freed => self.cursor.mark_stale(),
            Claimed::InDoubt => {
                self.stats.in_doubt += 1;
                self.cursor.mark_stale();
            }
            Claimed::NoLockDir => {
                // Made persistent, as Curator's start() does; then list and try again (later
                // claims in flight meet the same and come back here).
                if let Some(lock) = &self.spec.lock_path {
                    ensure_node(&self.spec.client, lock, false).await?;
                }
                self.cursor.clear();
                drop(entry);
            }
            Claimed::Failed(e) => {
                self.cursor.mark_stale();
                return Err(e);
            }
        }
        Ok(())
    }

    /// Lists the queue (with a child watch) into the cursor; creates the queue node if it
    /// is missing. `false` when `deadline` passed while retrying.
    async fn list(&mut self, deadline: Option<Instant>) -> Result<bool> {
        let client = &self.spec.client;
        let mut backoff = Backoff::until(deadline);
        loop {
            match client.get_children_and_watch(&self.spec.path).await {
                Ok((children, watch)) => {
                    self.cursor.refill(&children, Some(watch));
                    return Ok(true);
                }
                Err(e) if e.code() == Some(ErrorCode::NoNode) => self.spec.ensure_dir().await?,
                Err(e) if e.is_closed() => return Err(e),
                Err(e) if e.is_retryable() || e.is_session_expired() => {
                    match backoff.pause(client).await {
                        Ok(()) => {}
                        Err(_) if backoff.is_deadline() => return Ok(false),
                        Err(e) => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Waits for the queue to change, a busy item to be freed, or the head to become due.
    /// `false` when `deadline` passed first.
    async fn wait_for_change(&mut self, deadline: Option<Instant>) -> bool {
        let due = self
            .not_due
            .map(|due| Instant::now() + Duration::from_millis(due.saturating_sub(now_ms())));
        let cursor = &mut self.cursor;
        let lock_events = async {
            match self.lock_watch.as_mut() {
                Some((_, events)) => {
                    events.next().await;
                }
                None => std::future::pending().await,
            }
        };
        let until = |at: Option<Instant>| async move {
            match at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = cursor.changed() => true,
            _ = lock_events => {
                cursor.mark_stale();
                true
            }
            _ = self.released.notified() => {
                cursor.mark_stale();
                true
            }
            _ = until(due) => true,
            _ = until(deadline) => false,
        }
    }
}

impl Drop for Engine {
    /// Gives back what was claimed and not handed out: a locked item's lock is deleted (the
    /// item never left the queue); an item already deleted is put back at the end.
    fn drop(&mut self) {
        let inflight = std::mem::take(&mut self.inflight);
        let ready = std::mem::take(&mut self.ready);
        if inflight.is_empty() && ready.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let spec = self.spec.clone();
        runtime.spawn(async move {
            for taken in ready {
                give_back(&spec, taken).await;
            }
            for f in inflight {
                let claimed = match f.slot {
                    Slot::Running(fut) => fut.await,
                    Slot::Done(claimed) => claimed,
                };
                if let Claimed::Won(taken) = claimed {
                    give_back(&spec, taken).await;
                }
            }
        });
    }
}

/// Returns a claimed item to the queue.
pub(crate) async fn give_back(spec: &Spec, taken: Taken) {
    match taken.lock {
        Some(lock) => {
            let _ = lock.release().await;
        }
        None => {
            let _ = requeue(spec, &taken.name, &taken.data).await;
        }
    }
}
