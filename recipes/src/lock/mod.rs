//! Locks: mutex, read/write lock, semaphores, multi-lock.

mod guard;
pub(crate) mod internals;
mod mutex;

pub use guard::{revoke, LockGuard, REVOKE_MESSAGE};
pub use mutex::InterProcessMutex;

/// The lock name of Curator's mutex nodes.
pub const LOCK_NAME: &str = "lock-";
/// The lock name of read-lock nodes (same length as the write one: Curator relies on it).
pub const READ_LOCK_NAME: &str = "__READ__";
/// The lock name of write-lock nodes.
pub const WRITE_LOCK_NAME: &str = "__WRIT__";
