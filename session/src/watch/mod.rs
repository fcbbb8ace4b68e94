//! Watches: the registrations on server paths (`registry.rs`), the watchers a driver holds
//! a receiver for and the rules about them (`watchers.rs`), the driver's calls about them
//! (`calls.rs`), the ids they are named by (`id.rs`), and the notification a watcher hears
//! (`event.rs`).

mod calls;
mod event;
mod id;
mod registry;
mod watchers;

use std::collections::HashSet;

pub use event::WatchedEvent;
pub use id::{WatcherGroup, WatcherId};
pub use registry::WatchKind;
pub(crate) use registry::WatchRegistry;
pub(crate) use watchers::Watchers;

/// The session's watch state, as one part.
#[derive(Default)]
pub(crate) struct Watching {
    /// Which watchers wait on which server paths.
    pub(crate) registry: WatchRegistry,
    /// The watchers the driver holds a receiver for, and the rules about them.
    pub(crate) watchers: Watchers,
    /// Registrations forgotten while their request was in flight: dropped (and removed
    /// from the server) when the reply comes.
    pub(crate) forgotten: HashSet<WatcherId>,
    /// The watchers a notification just ended, reused between notifications.
    pub(crate) triggered: Vec<WatcherId>,
}
