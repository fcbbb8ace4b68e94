//! The client's error: one opaque type with a public [`ErrorKind`] and ZooKeeper's
//! [`ErrorCode`], in the style of `tokio-postgres` and `std::io::Error`. Match on
//! [`Error::kind`] (and on [`Error::code`] for the server's answers); print it for a message
//! that names the path; walk [`std::error::Error::source`] for what caused it.

use std::fmt;
use std::sync::Arc;

use zkrs_codec::DecodeError;
pub use zkrs_codec::ErrorCode;

/// Why an operation failed.
///
/// [`Error::kind`] says where the failure came from; [`Error::code`] gives ZooKeeper's code:
/// the server's code for [`ErrorKind::Server`], and for local failures the code the Java
/// client would report (`ConnectionLoss` when the connection dropped with the request in
/// flight, `SessionExpired` when the session was lost, `BadArguments` for input refused
/// before sending, `MarshallingError` for a malformed server frame). What caused the error
/// (the I/O error that dropped the connection, the frame that did not decode, the SASL
/// mechanism's refusal) is returned by `source()` and is not repeated in `Display`, so
/// error-chain printers show each cause once.
///
/// ```
/// use zkrs_session::{Error, ErrorCode, ErrorKind};
///
/// // What a service does with the outcome of reading its config node.
/// fn plan(read: Result<Vec<u8>, Error>) -> &'static str {
///     match read {
///         Ok(_) => "use it",
///         Err(e) if e.code() == ErrorCode::NoNode => "no config yet: use the defaults",
///         Err(e) if e.kind() == ErrorKind::ConnectionLoss => "in doubt: read again",
///         Err(e) if e.kind() == ErrorKind::Closed => "shutting down",
///         Err(_) => "fail",
///     }
/// }
/// # assert_eq!(plan(Ok(vec![])), "use it");
/// ```
#[derive(Clone)]
pub struct Error {
    code: ErrorCode,
    kind: ErrorKind,
    path: Option<String>,
    detail: Option<String>,
    /// What caused it, for `source()`.
    cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Where an [`Error`] came from: what a caller can act on.
///
/// More kinds may come (the enum is `#[non_exhaustive]`): match the ones you handle and
/// treat the rest as failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server answered with an error code: see [`Error::code`] (`NoNode`,
    /// `NodeExists`, `BadVersion`, ...).
    Server,
    /// The connection dropped with the request in flight: it may or may not have been
    /// applied. `source()` is the I/O error, when there was one. Retrying may help.
    ConnectionLoss,
    /// The session was lost (expired on the server, or disconnected for longer than its
    /// timeout): its ephemeral nodes and watches are gone.
    SessionExpired,
    /// Authentication failed (SASL, or the server refused the credentials): the client
    /// stops. `source()` is the [`SaslError`](crate::SaslError) when the mechanism refused.
    AuthFailed,
    /// The input was refused before anything was sent (a bad path, data over the limit,
    /// a bad argument).
    InvalidInput,
    /// The server sent bytes that do not decode; `source()` is the decoder's error.
    Protocol,
    /// A node's data is not what the recipe reading it expects (not a queue item, not a
    /// service instance, not a number).
    InvalidData,
    /// The client (or the recipe) was closed; no retry will help.
    Closed,
    /// A deadline passed.
    Timeout,
    /// The recipe was used before `start`.
    NotStarted,
    /// The recipe was started twice.
    AlreadyStarted,
    /// There was nothing to take (an empty queue).
    Empty,
}

impl Error {
    fn new(code: ErrorCode, kind: ErrorKind) -> Error {
        Error {
            code,
            kind,
            path: None,
            detail: None,
            cause: None,
        }
    }

    /// Where the error came from.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The ZooKeeper error code (the server's for [`ErrorKind::Server`]; for a local error,
    /// the code the Java client would report).
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The path the operation was about, if known.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// Whether retrying the same operation may succeed: connection loss, operation timeout,
    /// session moved (the errors Curator's retry loop retries). Not session expiry: a new
    /// session needs a new plan (ephemeral nodes are gone).
    pub fn is_retryable(&self) -> bool {
        match self.kind {
            // A local deadline (the Java client's `OperationTimeout`) may pass the next time.
            ErrorKind::ConnectionLoss | ErrorKind::Timeout => true,
            ErrorKind::Server => matches!(
                self.code,
                ErrorCode::ConnectionLoss
                    | ErrorCode::OperationTimeout
                    | ErrorCode::SessionMoved
                    | ErrorCode::RequestTimeout
                    | ErrorCode::ThrottledOp
            ),
            _ => false,
        }
    }

    /// Whether the client was closed (no retry will help): `kind() == ErrorKind::Closed`.
    pub fn is_closed(&self) -> bool {
        self.kind == ErrorKind::Closed
    }

    /// Whether the input was refused before anything was sent:
    /// `kind() == ErrorKind::InvalidInput`.
    pub fn is_invalid_input(&self) -> bool {
        self.kind == ErrorKind::InvalidInput
    }
}

/// The constructors the workspace's crates (the client, the recipes, zkctl) build errors
/// with. Reached through `__private`: not part of the API, free to change in any release.
#[doc(hidden)]
pub trait ErrorInternals: Sized {
    /// An error code the server answered with.
    fn server(code: ErrorCode) -> Error;
    /// The connection dropped with the request in flight.
    fn connection_loss() -> Error;
    /// The session was lost.
    fn session_expired() -> Error;
    /// Authentication failed.
    fn auth_failed() -> Error;
    /// Input refused before sending.
    fn invalid(detail: impl Into<String>) -> Error;
    /// A malformed frame from the server.
    fn protocol(detail: impl fmt::Display) -> Error;
    /// A node's data is not what the recipe expects.
    fn invalid_data(detail: impl Into<String>) -> Error;
    /// The client was closed.
    fn closed() -> Error;
    /// A deadline passed.
    fn timeout(detail: impl Into<String>) -> Error;
    /// A recipe used before `start`.
    fn not_started(detail: impl Into<String>) -> Error;
    /// A recipe started twice.
    fn already_started(detail: impl Into<String>) -> Error;
    /// Nothing to take.
    fn empty(detail: impl Into<String>) -> Error;
    /// Attaches what caused this error (returned by `source()`, not printed).
    fn with_cause(self, cause: impl std::error::Error + Send + Sync + 'static) -> Error;
    /// Attaches a cause shared by several errors (every request a dropped connection failed).
    fn with_shared_cause(self, cause: Arc<dyn std::error::Error + Send + Sync>) -> Error;
    /// Attaches the path the failed operation was about (shown in the message).
    fn with_path(self, path: impl Into<String>) -> Error;
    /// Adds a detail to the message.
    fn with_detail(self, detail: impl Into<String>) -> Error;
}

impl ErrorInternals for Error {
    fn server(code: ErrorCode) -> Error {
        Error::new(code, ErrorKind::Server)
    }

    fn connection_loss() -> Error {
        Error::new(ErrorCode::ConnectionLoss, ErrorKind::ConnectionLoss)
    }

    fn session_expired() -> Error {
        Error::new(ErrorCode::SessionExpired, ErrorKind::SessionExpired)
    }

    fn auth_failed() -> Error {
        Error::new(ErrorCode::AuthFailed, ErrorKind::AuthFailed)
    }

    fn invalid(detail: impl Into<String>) -> Error {
        Error::new(ErrorCode::BadArguments, ErrorKind::InvalidInput).with_detail(detail)
    }

    fn protocol(detail: impl fmt::Display) -> Error {
        Error::new(ErrorCode::MarshallingError, ErrorKind::Protocol).with_detail(detail.to_string())
    }

    fn invalid_data(detail: impl Into<String>) -> Error {
        Error::new(ErrorCode::MarshallingError, ErrorKind::InvalidData).with_detail(detail)
    }

    fn closed() -> Error {
        Error::new(ErrorCode::ConnectionLoss, ErrorKind::Closed).with_detail("the client is closed")
    }

    fn timeout(detail: impl Into<String>) -> Error {
        Error::new(ErrorCode::OperationTimeout, ErrorKind::Timeout).with_detail(detail)
    }

    fn not_started(detail: impl Into<String>) -> Error {
        Error::new(ErrorCode::BadArguments, ErrorKind::NotStarted).with_detail(detail)
    }

    fn already_started(detail: impl Into<String>) -> Error {
        Error::new(ErrorCode::BadArguments, ErrorKind::AlreadyStarted).with_detail(detail)
    }

    fn empty(detail: impl Into<String>) -> Error {
        Error::new(ErrorCode::NoNode, ErrorKind::Empty).with_detail(detail)
    }

    fn with_cause(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.cause = Some(Arc::new(cause));
        self
    }

    fn with_shared_cause(mut self, cause: Arc<dyn std::error::Error + Send + Sync>) -> Error {
        self.cause = Some(cause);
        self
    }

    fn with_path(mut self, path: impl Into<String>) -> Error {
        self.path = Some(path.into());
        self
    }

    fn with_detail(mut self, detail: impl Into<String>) -> Error {
        self.detail = Some(detail.into());
        self
    }
}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Error {
        Error::protocol("malformed server frame").with_cause(e)
    }
}

impl fmt::Display for Error {
    /// `NoNode: /a/b`, `BadArguments: path must start with '/': a`, ... The cause is not
    /// printed: `source()` returns it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code)?;
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        if let Some(path) = &self.path {
            write!(f, ": {path}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.kind).field("code", &self.code);
        if let Some(path) = &self.path {
            d.field("path", path);
        }
        if let Some(detail) = &self.detail {
            d.field("detail", detail);
        }
        if let Some(cause) = &self.cause {
            d.field("cause", cause);
        }
        d.finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// The result of a client operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Each cause is said once: `Display` says what failed, `source()` says why, so an
    /// error-chain printer (anyhow, eyre, zkctl) does not repeat it.
    #[test]
    fn causes_come_through_source_only() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer 42");
        let e = Error::connection_loss()
            .with_detail("the connection to h:2181 ended")
            .with_cause(io);
        assert_eq!(e.kind(), ErrorKind::ConnectionLoss);
        assert!(!e.to_string().contains("reset by peer 42"), "{e}");
        let source = std::error::Error::source(&e).expect("the I/O error");
        assert_eq!(source.to_string(), "reset by peer 42");

        let decode = DecodeError::UnexpectedEof {
            needed: 8,
            remaining: 3,
        };
        let said = decode.to_string();
        let e = Error::from(decode);
        assert_eq!(e.kind(), ErrorKind::Protocol);
        assert!(!e.to_string().contains(&said), "{e}");
        let source = std::error::Error::source(&e).expect("the decoder's error");
        assert!(source.downcast_ref::<DecodeError>().is_some());
    }
}
