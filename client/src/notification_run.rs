//! Which [`Watcher`](crate::Watcher) groups one server notification has reached, so that each
//! hears it once, as a Java `Watcher` object does.
//!
//! The core emits one watch event per registration, and a group may hold several registrations
//! of one path (`getData` and `exists` with the same watcher, or the same call twice). The
//! Java client gathers the watchers a notification triggers into a set, so a watcher object
//! hears it once; a group does the same here. The core emits one notification's events one
//! after another, with nothing between them, and a later notification with the same content
//! can only reach registrations made since, whose replies came as events in between: so a run
//! of equal events with no other event between them is one notification.

use crate::protocol::WatcherGroup;
use zkrs_codec::{EventType, KeeperState};

/// The current run of equal watch events and the groups it has reached.
#[derive(Debug, Default)]
pub(crate) struct NotificationRun {
    /// The run's event (type, state, path); `None` between runs. The path's buffer is reused
    /// from run to run.
    event: Option<(EventType, KeeperState)>,
    path: String,
    groups: Vec<WatcherGroup>,
}

impl NotificationRun {
    /// Ends the run: the core emitted something other than a watch event.
    pub(crate) fn end(&mut self) {
        self.event = None;
        self.groups.clear();
    }

    /// Whether `group` hears the event (`event_type`, `state`, `path`): true the first time
    /// the run reaches it.
    pub(crate) fn first_for(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn first(run: &mut NotificationRun, group: WatcherGroup, path: &str) -> bool {
        let changed = EventType::NodeDataChanged;
        run.first_for(group, changed, KeeperState::SyncConnected, path)
    }

    #[test]
    fn a_group_hears_a_notification_once() {
        let mut run = NotificationRun::default();
        assert!(first(&mut run, 1, "/a"));
        assert!(first(&mut run, 2, "/a"));
        assert!(!first(&mut run, 1, "/a"));
        // Another notification: every group again.
        assert!(first(&mut run, 1, "/b"));
        assert!(!first(&mut run, 1, "/b"));
        run.end();
        assert!(first(&mut run, 1, "/b"));
    }
}
