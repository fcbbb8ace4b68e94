//! Invariant checkers for coordination recipes, usable in a simulated run or against real
//! servers: [`Beliefs`] records what participants believed and when, and says what broke;
//! [`tree`] compares a cache with a fresh read of the server; [`ledger`] accounts for a
//! queue's items. And ZooKeeper's own guarantees to a client ([`guarantees`]), checked over
//! the [`history`] of every simulated run.

mod beliefs;
mod fifo;
mod guarantee_violation;
pub mod guarantees;
#[cfg(test)]
mod guarantees_tests;
pub mod history;
pub mod ledger;
mod linearizable_writes;
mod monotonic_reads;
pub mod tree;
mod watch_order;

pub use beliefs::{Beliefs, Interval};
