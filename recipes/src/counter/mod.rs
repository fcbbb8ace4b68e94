//! Counters on Curator's znodes and formats: a shared value or count that every process sees
//! change ([`SharedValue`], [`SharedCount`]), and atomic counters
//! ([`DistributedAtomicLong`], [`DistributedAtomicInteger`]).
//!
//! | recipe | Curator class | node data |
//! |---|---|---|
//! | [`SharedValue`] | `SharedValue` | any bytes |
//! | [`SharedCount`] | `SharedCount` | 4-byte big-endian int |
//! | [`DistributedAtomicLong`] | `DistributedAtomicLong` | 8-byte big-endian int |
//! | [`DistributedAtomicInteger`] | `DistributedAtomicInteger` | 4-byte big-endian int |

mod atomic;
mod number;
mod shared;

pub use atomic::{
    AtomicStats, AtomicValue, DistributedAtomicInteger, DistributedAtomicIntegerBuilder,
    DistributedAtomicLong, DistributedAtomicLongBuilder, PromotedToLock,
};
pub use number::{decode_count, encode_count};
pub use shared::{
    SharedCount, SharedCountBuilder, SharedValue, SharedValueBuilder, SharedValueEvent,
    VersionedValue,
};
