//! Shared pieces of the tests that talk to a real ZooKeeper and the model over the wire.
#![allow(dead_code)] // each test binary uses part of it

pub mod diagnose;
pub mod expiry;
pub mod normalize;
pub mod runner;
pub mod script;
pub mod wire_client;
