//! The consumer's listing cursor: the sorted item names of one listing, worked through in
//! order, and the rule for when to list again.
//!
//! Curator's consumer re-reads the whole child list on every child event (and
//! `SimpleDistributedQueue` on every take): with N items queued that is O(N) bytes per item,
//! the re-sync storm of its users' write-ups. Here one listing (with a child watch) is kept,
//! sorted, and consumed name by name. The queue is listed again only when:
//! - the names run out, and something changed since the listing (the watch fired, or a race
//!   was lost: another consumer deleted an item, so the watch is about to fire), or a busy
//!   item may have been freed; or
//! - (priority queue) the watch fired and `refresh_after` items were taken since the listing,
//!   so a new urgent item does not wait behind a long listing of old ones.
//!
//! When the names run out and nothing changed, the queue holds nothing we have not tried:
//! the consumer waits for the watch instead of listing again.
//!
//! Competing consumers that start from the same listing would all try the same first item
//! and every one but the winner would waste a delete on it, item after item (with 3
//! consumers, 2 wasted deletes per item, and half the throughput). After a lost race the
//! cursor skips a random distance ahead (growing while races keep being lost, at most
//! `MAX_JUMP` names, reset by a win), which spreads consumers over the listing. A lone
//! consumer never loses a race, so it never skips and takes items strictly in order;
//! competing ones take them in order within a listing, and an item skipped (and not taken
//! by another consumer meanwhile) comes in the next listing, so it may be handed out a few
//! places after a newer one. Nothing skipped is lost.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use zkrs_client::{Children, OneshotWatch};

use super::naming::Order;

/// Longest skip after lost races, in names: bounds how far ahead of an older item a
/// competing consumer may take one. (3 consumers moving 3,000 items: 2 lost races per item
/// without skipping, 0.9 with skips up to 4, 0.65 up to 16, 0.5 up to 64.)
const MAX_JUMP: usize = 16;

/// One item name from a listing.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    /// When it may be taken, in ms since the epoch (0: now).
    pub(crate) due_ms: u64,
}

/// What the cursor offers next.
#[derive(Debug)]
pub(crate) enum Next {
    /// Try this item.
    Item(Entry),
    /// The next item is due at this time (ms since the epoch): none before it is.
    NotDue(u64),
    /// No name left from this listing.
    Exhausted,
}

pub(crate) struct Cursor {
    order: Order,
    entries: std::vec::IntoIter<Entry>,
    /// The head, taken out of `entries` but not due yet.
    parked: Option<Entry>,
    watch: Option<OneshotWatch>,
    /// A listing is wanted once the names run out.
    stale: bool,
    /// Items taken since the listing (for `refresh_after`).
    taken: usize,
    /// Current skip range after lost races (0 while winning).
    jump: usize,
    rng: u64,
    /// Listings made (cost accounting, for tests and benches).
    pub(crate) listings: u64,
}

impl std::fmt::Debug for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("left", &self.entries.len())
            .field("stale", &self.stale)
            .field("listings", &self.listings)
            .finish()
    }
}

impl Cursor {
    pub(crate) fn new(order: Order) -> Cursor {
        // A fresh draw per call: consumers start their skips differently.
        Cursor {
            order,
            entries: Vec::new().into_iter(),
            parked: None,
            watch: None,
            stale: true,
            taken: 0,
            jump: 0,
            rng: zkrs_client::__private::random_u64() | 1,
            listings: 0,
        }
    }

    /// Takes a new listing (made with `watch`): its items, sorted.
    pub(crate) fn refill(&mut self, children: &Children, watch: Option<OneshotWatch>) {
        let order = self.order;
        let mut names: Vec<String> = children
            .iter()
            .filter(|n| order.is_item(n))
            .map(str::to_string)
            .collect();
        order.sort(&mut names);
        self.entries = names
            .into_iter()
            .map(|name| Entry {
                due_ms: order.due_ms(&name),
                name,
            })
            .collect::<Vec<_>>()
            .into_iter();
        self.parked = None;
        self.stale = watch.is_none();
        self.watch = watch;
        self.taken = 0;
        self.jump = 0;
        self.listings += 1;
    }

    /// Names left from the listing.
    pub(crate) fn remaining(&self) -> usize {
        self.entries.len() + usize::from(self.parked.is_some())
    }

    /// The next name to try, given the time now (ms since the epoch).
    pub(crate) fn next(&mut self, now_ms: u64) -> Next {
        let entry = match self.parked.take() {
            Some(e) => e,
            None => match self.entries.next() {
                Some(e) => e,
                None => return Next::Exhausted,
            },
        };
        if entry.due_ms > now_ms {
            let due = entry.due_ms;
            self.parked = Some(entry);
            return Next::NotDue(due);
        }
        Next::Item(entry)
    }

    /// Puts a name back at the head (it was offered but not tried).
    pub(crate) fn push_front(&mut self, entry: Entry) {
        debug_assert!(self.parked.is_none());
        self.parked = Some(entry);
    }

    /// An item was taken.
    pub(crate) fn won(&mut self) {
        self.taken += 1;
        self.jump = 0;
    }

    /// A race was lost: the item was gone (`changed`: the queue changed, so list again
    /// once the names run out), or locked by another consumer. Skips a random distance ahead.
    pub(crate) fn lost(&mut self, changed: bool) {
        if changed {
            self.stale = true;
        }
        self.jump = (self.jump * 2).clamp(1, MAX_JUMP);
        let skip = (self.random() % (self.jump as u64 + 1)) as usize;
        // Never skip past a parked (not yet due) head: skipping is for items due now.
        if self.parked.is_none() && skip > 0 {
            // Keep the last name: a skip never empties the listing by itself.
            let skip = skip.min(self.entries.len().saturating_sub(1));
            if skip > 0 {
                self.entries.nth(skip - 1);
            }
        }
    }

    /// Something outside the listing changed (a busy item was freed, the session changed):
    /// list again once the names run out.
    pub(crate) fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// Drops the names left, so the next step lists again.
    pub(crate) fn clear(&mut self) {
        self.entries = Vec::new().into_iter();
        self.parked = None;
        self.stale = true;
    }

    /// Whether the watch of the listing fired (polled, not awaited).
    pub(crate) async fn watch_fired(&mut self) -> bool {
        if self.stale {
            return true;
        }
        let Some(watch) = self.watch.as_mut() else {
            self.stale = true;
            return true;
        };
        let fired =
            std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *watch).poll(cx).is_ready())).await;
        if fired {
            self.watch = None;
            self.stale = true;
        }
        fired
    }

    /// Priority queue: whether to drop the rest of the listing and list again because the
    /// queue changed and `refresh_after` items were taken from this listing (a new urgent
    /// item must not wait behind a long listing). Clears the cursor when so.
    pub(crate) async fn refresh_due(&mut self, refresh_after: usize) -> bool {
        if self.remaining() > 0 && self.taken >= refresh_after && self.watch_fired().await {
            self.clear();
            return true;
        }
        false
    }

    /// Waits for the listing's watch to fire (forever if there is none and nothing is
    /// stale: the caller selects this against its other wake-ups).
    pub(crate) async fn changed(&mut self) {
        if self.stale {
            return;
        }
        match self.watch.as_mut() {
            Some(watch) => {
                watch.await;
                self.watch = None;
                self.stale = true;
            }
            None => self.stale = true,
        }
    }

    fn random(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}
