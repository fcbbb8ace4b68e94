//! [`ErrorMode`]: what a queue does with an item whose handler failed (a setting of the
//! queue, applied when a [`super::Message`] is settled).

/// What happens to an item whose handler failed (lock path only: without one the item left
/// the queue when it was taken). Curator's `ErrorMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ErrorMode {
    /// Put it back at the end of the queue, in the same transaction that deletes it (the
    /// default, as in Curator). An id item keeps its id; a priority or delay item keeps its
    /// priority or due time (Curator makes those plain `queue-` items).
    #[default]
    Requeue,
    /// Delete it anyway.
    Delete,
}
