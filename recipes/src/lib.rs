//! Apache Curator's recipes on `zkrs-client`, sharing znodes with Curator: a Rust process and
//! a Java process can contend for the same lock or take part in the same election.
//!
//! - [`sequence`]: Curator's ordering of contender nodes, allocation-free.
//! - [`framework`]: retries, protected creates, guaranteed deletes, connection-state policy.
//! - Leader election ([`leader`]): [`leader::LeaderLatch`], [`leader::LeaderSelector`] (leads
//!   while a task runs), [`leader::LeaderElection`] (ZooKeeper's own election recipe, as a
//!   state machine), [`leader::MasterElection`] (one node); all four speak
//!   [`leader::Leadership`].
//! - Locks ([`lock`]): [`lock::InterProcessMutex`], [`lock::InterProcessReadWriteLock`],
//!   [`lock::InterProcessSemaphoreV2`] and its [`lock::Lease`]s,
//!   [`lock::InterProcessSemaphoreMutex`], [`lock::InterProcessMultiLock`].
//! - Caches ([`cache`]): [`cache::NodeCache`], [`cache::PathChildrenCache`],
//!   [`cache::TreeCache`], [`cache::CuratorCache`], and [`cache::PersistentWatcher`].
//! - Counters ([`counter`]): [`counter::SharedValue`], [`counter::SharedCount`],
//!   [`counter::DistributedAtomicLong`], [`counter::DistributedAtomicInteger`].
//! - Barriers ([`barrier`]): [`barrier::DistributedBarrier`],
//!   [`barrier::DistributedDoubleBarrier`].
//! - Nodes ([`node`]): [`node::PersistentNode`], [`node::PersistentTtlNode`],
//!   [`node::GroupMember`].
//! - Queues ([`queue`]): [`queue::DistributedQueue`], [`queue::DistributedIdQueue`],
//!   [`queue::DistributedPriorityQueue`], [`queue::DistributedDelayQueue`],
//!   [`queue::SimpleDistributedQueue`].
//! - Service discovery (`discovery`, with the `discovery` feature): Curator's registry,
//!   `ServiceDiscovery`, `ServiceCache`, `ServiceProvider`.
//! - Typed nodes (`typed`, with the `typed` feature): values of Rust types in znodes
//!   through serde, path templates, read-modify-write updates and a decoding cache, as
//!   Curator's `ModeledFramework`: `ZPath`, `TypedNode`, `TypedCache`.
//! - Figures for dashboards ([`metrics`]): [`metrics::metrics`].
//!
//! Each item has one path: the crate root holds only the modules (the connection-state
//! policy is [`framework::ConnectionStatePolicy`], the retry policy
//! [`framework::RetryPolicy`]).
#![warn(missing_docs)]
// On docs.rs: label each item with the cargo feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub mod barrier;
pub mod cache;
pub mod counter;
mod data_codec;
#[cfg(feature = "discovery")]
#[cfg_attr(docsrs, doc(cfg(feature = "discovery")))]
pub mod discovery;
mod error;
pub mod framework;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod leader;
mod line;
pub mod lock;
pub mod metrics;
pub mod node;
pub mod queue;
pub mod sequence;
#[cfg(feature = "typed")]
#[cfg_attr(docsrs, doc(cfg(feature = "typed")))]
pub mod typed;
