//! `zkrs-model`: an Apache ZooKeeper 3.8 or 3.9 server as a deterministic, sans-I/O state
//! machine.
//!
//! The [`Server`] keeps the data tree (every create mode, Stat as ZooKeeper keeps it, ACLs),
//! sessions (negotiated timeouts, expiry on explicit time, close), and the watch tables
//! (one-shot, persistent, persistent recursive), and answers every operation a 3.5-3.9 client
//! sends, byte for byte through `zkrs-codec`. It holds no socket, no clock, no thread and no
//! randomness: the caller feeds bytes and the current time (`handle_*`, `now: Instant` last)
//! and reads the bytes to send ([`Server::poll_transmit`]) and when to wake
//! ([`Server::poll_timeout`]), in the same dialect as `zkrs-session`'s core on the client
//! side. [`TcpServer`] serves it over TCP with tokio, so any client can connect; a connection
//! that opens with a four-letter word (`ruok`, `srvr`, `stat`, `mntr`, `conf`, `isro`) gets
//! ZooKeeper's answer. The `zkrs-model` binary (package `zkrs-model-server`) serves it as a
//! process, for tests in any language.
//!
//! [`WireEnsemble`] (served over TCP by [`TcpEnsemble`], one port per member) is an ensemble of
//! such servers around one committed log: members answer reads from their own state and apply
//! the log when the caller lets them, so a follower can lag, be cut off, crash and catch up.
//! [`OperationEnsemble`] states the same guarantees at the level of operations (method calls,
//! no wire).
//!
//! Every error code, Stat field and watch event is meant to be what a real server of the
//! release [`ServerConfig::zookeeper`] names (3.8.0 by default, up to 3.9.x) gives for the same
//! request: `tests/differential.rs` runs random scripts against both and
//! compares. The differences that remain on purpose (orders ZooKeeper leaves to a hash set,
//! times and ids) are listed in the crate's documentation draft.
//!
//! ```
//! use std::time::Instant;
//! use zkrs_model::{Server, ServerConfig};
//!
//! let start = Instant::now();
//! let mut server = Server::new(ServerConfig::default(), start);
//! let conn = server.accept("127.0.0.1", start);
//! // ConnectRequest: protocol 0, lastZxidSeen 0, timeout 30000, session 0, 16-byte password.
//! let mut connect = vec![0, 0, 0, 44, 0, 0, 0, 0];
//! connect.extend_from_slice(&[0; 8]);
//! connect.extend_from_slice(&30_000i32.to_be_bytes());
//! connect.extend_from_slice(&[0; 8]);
//! connect.extend_from_slice(&[0, 0, 0, 16]);
//! connect.extend_from_slice(&[0; 16]);
//! server.handle_input(conn, &connect, start);
//! let reply = server.poll_transmit().expect("a connect response");
//! assert!(!reply.close);
//! assert_eq!(server.session_ids().len(), 1);
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod acl;
mod config;
mod connection_id;
mod digest;
mod ensemble;
mod four_letter;
// The fuzz target's body: for fuzz/ and the seed replay, no promise.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod member;
mod membership;
mod multi;
mod notify;
mod path;
mod requests;
mod server;
mod sessions;
mod tcp;
mod tree;
mod version;
mod watch_manager;
mod wire_ensemble;
mod write;

pub use acl::{AuthId, AuthProviders};
pub use config::{Randomness, ServerConfig};
pub use connection_id::ConnectionId;
pub use digest::digest_id;
pub use ensemble::{EnsembleError, EnsembleWrite, OperationEnsemble, Txn, TxnKind, WriteOutcome};
pub use server::{Server, Transmit};
pub use tcp::{TcpEnsemble, TcpServer};
pub use tree::{DataTree, Node, OwnerKind, CONTAINER_OWNER, MAX_TTL_MS};
pub use version::{VersionError, ZooKeeperVersion};
pub use wire_ensemble::WireEnsemble;
