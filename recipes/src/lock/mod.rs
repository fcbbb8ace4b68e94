//! Locks: mutex, read/write lock, semaphores, multi-lock.

mod guard;
pub(crate) mod internals;
mod multi_lock;
mod mutex;
mod read_write;
mod semaphore;
mod semaphore_mutex;

/// The SharedCount format, which a semaphore's shared maximum uses (it lives in [`crate::counter`]).
pub use crate::counter::{decode_count, encode_count};
pub use guard::{revoke, LockGuard, REVOKE_MESSAGE};
pub use multi_lock::{InterProcessMultiLock, Lockable, MultiLockGuard};
pub use mutex::InterProcessMutex;
pub use read_write::{InterProcessReadWriteLock, ReadLock, WriteLock, WriteLockGuard};
pub use semaphore::{
    InterProcessSemaphoreV2, Lease, LEASE_NAME, SEMAPHORE_LEASE_PARENT, SEMAPHORE_LOCK_PARENT,
};
pub use semaphore_mutex::InterProcessSemaphoreMutex;

/// The lock names of Curator's nodes (they belong to the ordering rules in [`crate::sequence`]).
pub use crate::sequence::{LOCK_NAME, READ_LOCK_NAME, WRITE_LOCK_NAME};
