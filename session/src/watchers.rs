//! The watchers a driver holds a receiver for, and the two rules about them that the core
//! keeps so that a driver only routes what it says:
//!
//! - **Once per watcher group.** The core emits one watch event per registration, and one
//!   [`WatcherGroup`] (the client's `Watcher`) may hold several registrations of one path
//!   (`getData` and `exists` with the same watcher, or the same call twice). The Java client
//!   gathers the watchers a notification triggers into a set, so a `Watcher` object hears it
//!   once; here the first of a group's registrations that a notification ends gets the
//!   [`Event::Watch`], and each other one an [`Event::WatcherUnused`]. The core emits one
//!   notification's events one after another with nothing between them, and a later
//!   notification with the same content can only reach registrations made since, whose
//!   replies come as events in between: so a run of equal watch events with no other event
//!   between them is one notification.
//! - **The abandoned-watch sweep.** A one-shot watch whose receiver was dropped before its
//!   event came is never told anything, so without a sweep a service that leaves a watch on
//!   a node that never changes, again and again, would hold one more watcher per call for
//!   the life of the session. When the watchers held have doubled since the last sweep (and
//!   number at least [`MIN_SWEEP`]), [`Session::sweep_abandoned`] asks the driver which
//!   one-shot watchers nobody waits for and forgets them: O(1) amortised per watch.
//!
//! A watcher is held from the [`Session::submit`] that hands it in until the core hands
//! out the event that ends it ([`Event::WatcherUnused`], or any [`Event::Watch`] of a
//! one-shot watcher), or until [`Session::forget_watcher`]: the very watchers a driver
//! keeps a receiver for.

use std::collections::HashMap;
use std::time::Instant;

use zkrs_codec::{EventType, KeeperState};

use crate::{Event, Session, WatchKind};

/// Identifies one watcher (one waiting future, one stream, or one registration made through a
/// [`WatcherGroup`]) to the driver. The driver picks the values; each must be new to the
/// session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WatcherId(u64);

impl WatcherId {
    /// The watcher numbered `raw`.
    pub const fn new(raw: u64) -> WatcherId {
        WatcherId(raw)
    }

    /// Its number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl std::fmt::Display for WatcherId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Identifies a group of one-shot registrations that hear each notification once, as the
/// registrations of one Java `Watcher` object do (the client's `Watcher`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WatcherGroup(u64);

impl WatcherGroup {
    /// The group numbered `raw`.
    pub const fn new(raw: u64) -> WatcherGroup {
        WatcherGroup(raw)
    }

    /// Its number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl std::fmt::Display for WatcherGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The fewest watchers held worth a sweep for abandoned one-shot watches.
pub(crate) const MIN_SWEEP: usize = 64;

/// One watcher held: what its request registers, and its group.
#[derive(Debug)]
struct Held {
    kind: WatchKind,
    path: String,
    group: Option<WatcherGroup>,
}

fn is_one_shot(kind: WatchKind) -> bool {
    !matches!(kind, WatchKind::Persistent | WatchKind::PersistentRecursive)
}

/// The watchers held, the sweep's threshold and the current notification's run.
#[derive(Debug)]
pub(crate) struct Watchers {
    held: HashMap<WatcherId, Held>,
    /// `held.len()` at which [`Session::sweep_abandoned`] sweeps.
    sweep_at: usize,
    run: NotificationRun,
}

impl Default for Watchers {
    fn default() -> Watchers {
        Watchers {
            held: HashMap::new(),
            sweep_at: MIN_SWEEP,
            run: NotificationRun::default(),
        }
    }
}

impl Watchers {
    /// A watcher handed in with a request.
    pub(crate) fn hold(
        &mut self,
        watcher: WatcherId,
        kind: WatchKind,
        path: &str,
        group: Option<WatcherGroup>,
    ) {
        let held = Held {
            kind,
            path: path.to_string(),
            group,
        };
        self.held.insert(watcher, held);
    }

    /// Lets a watcher go; returns what it registers (if it was held).
    fn release(&mut self, watcher: WatcherId) -> Option<(WatchKind, String)> {
        self.held.remove(&watcher).map(|h| (h.kind, h.path))
    }

    /// How many one-shot watchers are held (live ones, and abandoned ones not yet swept).
    pub(crate) fn one_shot(&self) -> usize {
        self.held.values().filter(|h| is_one_shot(h.kind)).count()
    }

    pub(crate) fn shrink_to(&mut self, min: usize) {
        self.held.shrink_to(min);
    }

    /// An event on its way out: applies the once-per-group rule (the event that a group
    /// already heard becomes [`Event::WatcherUnused`]), and lets go of the watcher an event
    /// ends.
    pub(crate) fn output<T>(&mut self, event: Event<T>) -> Event<T> {
        match event {
            Event::Watch { watcher, event } => {
                let Some(held) = self.held.get(&watcher) else {
                    return Event::Watch { watcher, event };
                };
                let heard = held.group.is_some_and(|group| {
                    !self
                        .run
                        .first_for(group, event.event_type, event.state, &event.path)
                });
                if is_one_shot(held.kind) {
                    self.held.remove(&watcher);
                }
                if heard {
                    Event::WatcherUnused(watcher)
                } else {
                    Event::Watch { watcher, event }
                }
            }
            other => {
                self.run.end();
                if let Event::WatcherUnused(watcher) = &other {
                    self.held.remove(watcher);
                }
                other
            }
        }
    }
}

/// The current run of equal watch events and the groups it has reached.
#[derive(Debug, Default)]
struct NotificationRun {
    /// The run's event (type, state); `None` between runs. The path's buffer is reused from
    /// run to run.
    event: Option<(EventType, KeeperState)>,
    path: String,
    groups: Vec<WatcherGroup>,
}

impl NotificationRun {
    /// Ends the run: the core handed out something other than a watch event.
    fn end(&mut self) {
        self.event = None;
        self.groups.clear();
    }

    /// Whether `group` hears the event (`event_type`, `state`, `path`): true the first time
    /// the run reaches it.
    fn first_for(
        &mut self,
        group: WatcherGroup,
        event_type: EventType,
        state: KeeperState,
        path: &str,
    ) -> bool {
        if self.event != Some((event_type, state)) || self.path != path {
            self.event = Some((event_type, state));
            self.path.clear();
            self.path.push_str(path);
            self.groups.clear();
        }
        if self.groups.contains(&group) {
            return false;
        }
        self.groups.push(group);
        true
    }
}

impl<T> Session<T> {
    /// The sweep for abandoned one-shot watches (see the module's docs): call it after each
    /// [`Session::submit`] that hands in a watcher. When the watchers held have doubled
    /// since the last sweep, `abandoned` is asked about each one-shot watcher held (whether
    /// its receiver is gone), and those are forgotten as by [`Session::forget_watcher`], in
    /// the order they were made. Returns them, for the driver to drop their receivers;
    /// empty (and `abandoned` is not asked) when no sweep is due.
    pub fn sweep_abandoned(
        &mut self,
        mut abandoned: impl FnMut(WatcherId) -> bool,
        now: Instant,
    ) -> Vec<WatcherId> {
        if self.watchers.held.len() < self.watchers.sweep_at {
            return Vec::new();
        }
        let mut gone: Vec<WatcherId> = self
            .watchers
            .held
            .iter()
            .filter(|(id, held)| is_one_shot(held.kind) && abandoned(**id))
            .map(|(id, _)| *id)
            .collect();
        // In the order they were made, not the map's hash order: a run repeats exactly.
        gone.sort_unstable();
        for &watcher in &gone {
            self.forget_watcher(watcher, now);
        }
        self.watchers.sweep_at = (self.watchers.held.len() * 2).max(MIN_SWEEP);
        gone
    }

    /// Forgets every watcher of `group` still held (its receiver is gone), as by
    /// [`Session::forget_watcher`], in the order they were made; returns them, for the driver
    /// to drop their senders.
    pub fn forget_group(&mut self, group: WatcherGroup, now: Instant) -> Vec<WatcherId> {
        let mut gone: Vec<WatcherId> = self
            .watchers
            .held
            .iter()
            .filter(|(_, held)| held.group == Some(group))
            .map(|(id, _)| *id)
            .collect();
        gone.sort_unstable();
        for &watcher in &gone {
            self.forget_watcher(watcher, now);
        }
        gone
    }

    /// The driver dropped a watcher's receiver: forget it, and remove the server's watch when
    /// no other watcher of the session needs it. A one-shot watch whose request is in flight
    /// is forgotten when its reply comes.
    pub fn forget_watcher(&mut self, watcher: WatcherId, now: Instant) {
        match self.watchers.release(watcher) {
            Some((kind, path)) if is_one_shot(kind) => {
                self.forget_registration(watcher, kind, &path, now)
            }
            _ => self.forget_persistent(watcher, now),
        }
    }
}
