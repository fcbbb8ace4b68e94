//! Invariant checkers for coordination recipes, usable in a simulated run or against real
//! servers: they record what participants believed and when, and say what broke.

mod beliefs;

pub use beliefs::{Beliefs, Interval};
