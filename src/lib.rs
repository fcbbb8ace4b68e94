//! `zkrs`: an Apache ZooKeeper client for Rust with Curator-compatible recipes.
//!
//! This crate re-exports the workspace's parts, each by one path:
//! - the async client at the top level ([`Client`], [`ClientBuilder`], [`Error`], ...),
//! - [`recipes`]: Curator-compatible recipes (elections, locks, caches, queues, counters, ...),
//! - [`codec`]: the Jute wire codec (no I/O).
//!
//! The [`guide`] explains how to use them, chapter by chapter: connecting, operations and
//! watches, each recipe, caches, queues, discovery, typed nodes, ensembles that change,
//! testing without Java, operating, and coming from Curator, kazoo or zookeeper-client.
//!
//! Real ZooKeeper servers for tests and examples come from the `zkrs-testkit` crate (a
//! dev-dependency: a service that depends on `zkrs` does not build a server launcher).
//!
//! ```no_run
//! # async fn demo() -> zkrs::Result<()> {
//! let client = zkrs::Client::connect("127.0.0.1:2181").await?;
//! client.create("/hello", b"world", zkrs::CreateMode::Ephemeral).await?;
//! # Ok(()) }
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]
// On docs.rs: label each item with the cargo feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use zkrs_client::*;
pub use zkrs_codec as codec;
pub use zkrs_recipes as recipes;

pub mod guide;

/// The README's Rust examples, compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

/// The design notes' Rust examples (docs/), compiled as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../docs/model.md")]
struct DesignNotesModel;

/// The crates' READMEs (their crates.io pages): their Rust examples, compiled too.
#[cfg(doctest)]
#[doc = include_str!("../client/README.md")]
#[doc = include_str!("../recipes/README.md")]
#[doc = include_str!("../model/README.md")]
#[doc = include_str!("../sim/README.md")]
struct CrateReadmes;
