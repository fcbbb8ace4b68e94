//! An async Apache ZooKeeper client.
//!
//! - [`Client`]: a cheap, cloneable handle with every ZooKeeper 3.5-3.9 operation.
//! - The session itself is `zkrs-session`'s sans-I/O core (xid matching, pipelining, pings,
//!   timeouts, reconnects, session expiry, watch re-registration), driven here by a thin
//!   tokio task.
//! - Connection states as Curator names them ([`ConnectionState`]), with a subscription that
//!   never misses a transition ([`Client::state_changes`]).
//!
//! ```no_run
//! # async fn demo() -> zkrs_client::Result<()> {
//! use zkrs_client::{Client, CreateMode};
//! let client = Client::connect("127.0.0.1:2181/app").await?;
//! let path = client.create("/jobs/job-", b"{}", CreateMode::PersistentSequential).await?;
//! let (_data, _stat, watch) = client.get_data_and_watch(&path).await?;
//! client.set_data(&path, b"done", None).await?;
//! let event = watch.await;
//! assert_eq!(event.path, path);
//! # Ok(()) }
//! ```
#![warn(missing_docs)]
// On docs.rs: label each item with the cargo feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// No `unsafe` anywhere, except the GSS-API calls of the `sasl-gssapi` feature (in
// `sasl/gss.rs` alone, which allows it for itself).
#![cfg_attr(not(feature = "sasl-gssapi"), forbid(unsafe_code))]
#![cfg_attr(feature = "sasl-gssapi", deny(unsafe_code))]

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod builder;
mod calls;
mod children;
mod client;
mod clock;
#[cfg(feature = "compression")]
mod compressed_calls;
#[cfg(feature = "compression")]
#[cfg_attr(docsrs, doc(cfg(feature = "compression")))]
pub mod compression;
mod connect;
mod connect_diagnosis;
mod connect_string;
mod create_options;
mod created_path;
mod current;
mod driver;
mod ensemble_config;
mod ensemble_tracker;
mod event_stream;
mod frame;
mod frame_arena;
mod history;
mod host_list;
mod host_provider;
mod in_flight;
mod listeners;
mod log;
mod memory_link;
mod metrics;
#[cfg(feature = "metrics")]
mod metrics_report;
mod multi;
mod multi_call;
mod path;
mod protocol;
mod random;
mod reconfig;
mod reply_slot;
mod resolve;
pub mod sasl;
mod session_bound;
mod session_handoff;
mod state_changes;
#[cfg(feature = "tls")]
mod tls;
mod transport;
mod watch;
mod watched_event;

pub use builder::ClientBuilder;
pub use bytes::Bytes;
pub use children::Children;
pub use client::Client;
pub use connect_string::{ConnectString, DEFAULT_PORT};
pub use create_options::CreateOptions;
pub use current::Current;
pub use ensemble_config::{
    ClientAddress, ConfigParseError, EnsembleConfig, EnsembleMember, MemberRole, PeerAddress,
};
pub use host_provider::{HostProvider, HostsFuture};
pub use in_flight::DEFAULT_MAX_IN_FLIGHT;
pub use metrics::{ClientMetrics, LatencyHistogram, OperationMetrics};
/// The sans-I/O session core this client drives (its own crate, `zkrs-session`).
use zkrs_session as session;
pub use zkrs_session::{Error, ErrorCode, ErrorKind, Result};
/// The error type, from the session core.
mod error {
    pub(crate) use zkrs_session::{Error, ErrorKind, Result};

    /// The client's shorthands for the local errors it makes most, built with the public
    /// API ([`Error::new`]).
    pub(crate) trait ErrorExt {
        /// Input refused before anything was sent ([`ErrorKind::InvalidInput`]).
        fn invalid(detail: impl Into<String>) -> Error;
        /// The client was closed ([`ErrorKind::Closed`]).
        fn closed() -> Error;
    }

    impl ErrorExt for Error {
        fn invalid(detail: impl Into<String>) -> Error {
            Error::new(ErrorKind::InvalidInput, detail)
        }

        fn closed() -> Error {
            Error::new(ErrorKind::Closed, "the client is closed")
        }
    }
}
pub use event_stream::{EventStream, Lagged, DEFAULT_EVENT_CAPACITY};
pub use multi::{Op, OpResult};
pub use path::{validate_create_path, validate_path, Chroot};
pub use reconfig::{Reconfig, CONFIG_NODE};
pub use state_changes::StateChanges;
#[cfg(feature = "tls")]
pub use tls::{TlsError, TlsErrorKind, TlsOptions};
pub use watch::{OneshotWatch, PersistentWatch, Watcher, WatcherEvents};
pub use watched_event::{PersistentWatchItem, WatchedEvent};
pub use zkrs_codec::{
    AclEntry, AddWatchMode, CreateMode, EventType, KeeperState, OpCode, Perms, Secret, Stat,
    WatcherType,
};
pub use zkrs_session::{ConnectionState, StateChange};
