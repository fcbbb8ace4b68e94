//! The guide: how to use zkrs, chapter by chapter.
//!
//! These chapters are documentation only (the modules hold no items). Their examples are
//! compiled as doc tests, so they follow the crate's API version by version; examples that
//! need a running ZooKeeper are `no_run`.
//!
//! - [`conventions`]: how every recipe is built, started and closed; the names used throughout.
//! - [`connecting`]: connect strings, hosts, chroot, timeouts, authentication, TLS, SASL, read-only
//!   mode, sessions that outlive a process.
//! - [`operations`]: reads, writes, transactions, watches and what ZooKeeper guarantees about them;
//!   errors; backpressure.
//! - [`recipes`]: every recipe, one page each: when to use it, what it promises, what happens on a
//!   suspended connection, a lost session and a dropped future, its Curator counterpart.
//! - [`caches`]: `NodeCache`, `PathChildrenCache`, `TreeCache`, `CuratorCache`,
//!   `PersistentWatcher`.
//! - [`queues`]: Curator's distributed queues.
//! - `discovery`: Curator's service discovery (feature `discovery`).
//! - `typed`: typed nodes: serde values in znodes, path templates, read-modify-write updates, a
//!   decoding cache (feature `typed`).
//! - [`ensembles`]: membership that changes: `get_config`, `reconfig`, `update_hosts`, following
//!   the ensemble.
//! - [`testing`]: testing a service without Java: the model and the simulation.
//! - [`operating`]: zkctl, metrics, logs.
//! - [`migrating`]: coming from Curator, kazoo or the `zookeeper-client` crate.
//!
//! Design notes (how the crates are built and checked, benchmarks, what the tests found) live
//! in the repository's `docs/` folder, not here.

#[doc = include_str!("conventions.md")]
pub mod conventions {}

#[doc = include_str!("connecting.md")]
pub mod connecting {}

#[doc = include_str!("operations.md")]
pub mod operations {}

#[doc = include_str!("recipes/mod.md")]
pub mod recipes {
    #[doc = include_str!("recipes/leader_latch.md")]
    pub mod leader_latch {}

    #[doc = include_str!("recipes/leader_selector.md")]
    pub mod leader_selector {}

    #[doc = include_str!("recipes/leader_election.md")]
    pub mod leader_election {}

    #[doc = include_str!("recipes/master_election.md")]
    pub mod master_election {}

    #[doc = include_str!("recipes/mutex.md")]
    pub mod mutex {}

    #[doc = include_str!("recipes/read_write_lock.md")]
    pub mod read_write_lock {}

    #[doc = include_str!("recipes/semaphore.md")]
    pub mod semaphore {}

    #[doc = include_str!("recipes/multi_lock.md")]
    pub mod multi_lock {}

    #[doc = include_str!("recipes/counters.md")]
    pub mod counters {}

    #[doc = include_str!("recipes/barriers.md")]
    pub mod barriers {}

    #[doc = include_str!("recipes/nodes.md")]
    pub mod nodes {}
}

#[doc = include_str!("caches.md")]
pub mod caches {}

#[doc = include_str!("queues.md")]
pub mod queues {}

#[cfg(feature = "discovery")]
#[cfg_attr(docsrs, doc(cfg(feature = "discovery")))]
#[doc = include_str!("discovery.md")]
pub mod discovery {}

#[cfg(feature = "typed")]
#[cfg_attr(docsrs, doc(cfg(feature = "typed")))]
#[doc = include_str!("typed.md")]
pub mod typed {}

#[doc = include_str!("ensembles.md")]
pub mod ensembles {}

#[doc = include_str!("testing.md")]
pub mod testing {}

#[doc = include_str!("operating.md")]
pub mod operating {}

#[doc = include_str!("migrating.md")]
pub mod migrating {}
