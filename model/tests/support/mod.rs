//! Shared pieces of the differential test.
pub mod expiry;
pub mod normalize;
pub mod runner;
pub mod script;
pub mod wire_client;
