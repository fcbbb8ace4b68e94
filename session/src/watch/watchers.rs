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

use zkrs_codec::{EventType, KeeperState};

use crate::{Event, WatchKind, WatcherGroup, WatcherId};

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

    /// The one-shot watchers `abandoned` says nobody waits for, in the order they were made
    /// (not the map's hash order: a run repeats exactly), if a sweep is due (the watchers
    /// held have doubled since the last one); `None` (and `abandoned` is not asked) if not.
    /// The next sweep is due at twice what is held after this one's are released.
    pub(crate) fn sweep(
        &mut self,
        mut abandoned: impl FnMut(WatcherId) -> bool,
    ) -> Option<Vec<WatcherId>> {
        if self.held.len() < self.sweep_at {
            return None;
        }
        let mut gone: Vec<WatcherId> = self
            .held
            .iter()
            .filter(|(id, held)| is_one_shot(held.kind) && abandoned(**id))
            .map(|(id, _)| *id)
            .collect();
        gone.sort_unstable();
        self.sweep_at = ((self.held.len() - gone.len()) * 2).max(MIN_SWEEP);
        Some(gone)
    }

    /// The watchers of `group` still held, in the order they were made.
    pub(crate) fn of_group(&self, group: WatcherGroup) -> Vec<WatcherId> {
        let mut ids: Vec<WatcherId> = self
            .held
            .iter()
            .filter(|(_, held)| held.group == Some(group))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    /// Lets a watcher go: what it registered, if it was held, and whether that was a
    /// one-shot watch.
    pub(crate) fn release(&mut self, watcher: WatcherId) -> Option<(WatchKind, String, bool)> {
        self.held
            .remove(&watcher)
            .map(|h| (h.kind, h.path, is_one_shot(h.kind)))
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
