//! Invariant checkers for coordination recipes, usable in a simulated run or against real
//! servers: [`Beliefs`] records what participants believed and when, and says what broke;
//! [`tree`] compares a cache with a fresh read of the server; [`ledger`] accounts for a
//! queue's items.

mod beliefs;
pub mod ledger;
pub mod tree;

pub use beliefs::{Beliefs, Interval};
