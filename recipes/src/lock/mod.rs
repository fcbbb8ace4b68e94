//! Locks: mutex, read/write lock, semaphores, multi-lock. Each is made by its `builder`, ending
//! in `build()`; nothing is sent until it is acquired. (The lock names of their nodes are in
//! [`crate::sequence`]; the SharedCount format a semaphore's shared maximum uses, in
//! [`crate::counter`].)

mod guard;
pub(crate) mod internals;
mod multi_lock;
mod mutex;
mod options;
mod read_write;
mod semaphore;
mod semaphore_mutex;

pub use guard::{revoke, LockGuard, REVOKE_MESSAGE};
pub use multi_lock::{
    InterProcessMultiLock, InterProcessMultiLockBuilder, Lockable, MultiLockGuard,
};
pub use mutex::{InterProcessMutex, InterProcessMutexBuilder};
pub use read_write::{
    InterProcessReadWriteLock, InterProcessReadWriteLockBuilder, ReadLock, WriteLock,
    WriteLockGuard,
};
pub use semaphore::{
    InterProcessSemaphoreV2, InterProcessSemaphoreV2Builder, Lease, MaxLeases, LEASE_NAME,
    SEMAPHORE_LEASE_PARENT, SEMAPHORE_LOCK_PARENT,
};
pub use semaphore_mutex::{InterProcessSemaphoreMutex, InterProcessSemaphoreMutexBuilder};

// The lock names of Curator's nodes belong to the ordering rules: `crate::sequence`.
use crate::sequence::{LOCK_NAME, READ_LOCK_NAME, WRITE_LOCK_NAME};
