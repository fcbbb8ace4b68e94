//! TLS to ZooKeeper's `secureClientPort` (feature `tls`): [`TlsOptions`] say what to trust
//! and who to be; the files they name are read again when they change (`files.rs`), so
//! rotated certificates are used without restarting the client; the driver runs rustls's
//! connection state machine itself over the same non-blocking socket calls as a plain
//! connection (`handshake.rs`, `transport.rs`), so no async TLS wrapper crate is needed;
//! a failed handshake is a [`TlsError`] whose [`TlsErrorKind`] says who refused what.

mod error;
mod files;
mod handshake;
mod options;

pub use error::{TlsError, TlsErrorKind};
pub(crate) use handshake::{SocketIo, TlsConnector};
pub use options::TlsOptions;
