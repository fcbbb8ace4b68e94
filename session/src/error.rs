//! The client's error: one opaque type with a public [`ErrorCode`], in the style of
//! `tokio-postgres`. Match on [`Error::code`]; print it for a message that names the path.

use std::fmt;
use std::sync::Arc;

use zkrs_codec::DecodeError;
pub use zkrs_codec::ErrorCode;

/// Why an operation failed.
///
/// Every error has a ZooKeeper [`ErrorCode`]: the server's code for server errors, and for
/// local ones the code the Java client would use (`ConnectionLoss` when the connection dropped
/// with the request in flight, `SessionExpired` when the session was lost, `BadArguments` for
/// input refused before sending, `MarshallingError` for a malformed server frame).
#[derive(Clone)]
pub struct Error {
    code: ErrorCode,
    kind: Kind,
    path: Option<String>,
    detail: Option<String>,
    /// What caused it (the I/O error that dropped the connection), for `source()`.
    cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Where an error came from, for the message (the code is what callers match on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The server answered with an error code.
    Server,
    /// The connection dropped, or the session was lost, with the request in flight.
    Connection,
    /// The input was refused before anything was sent.
    InvalidInput,
    /// The server sent bytes that do not decode.
    Protocol,
    /// The client was closed.
    Closed,
    /// A deadline passed.
    Timeout,
}

/// The constructors and `with_*` methods are for the workspace's crates (the client, the
/// recipes, zkctl): hidden from the docs, not part of the API, and free to change.
impl Error {
    fn new(code: ErrorCode, kind: Kind) -> Error {
        Error {
            code,
            kind,
            path: None,
            detail: None,
            cause: None,
        }
    }

    /// An error code the server answered with.
    #[doc(hidden)]
    pub fn server(code: ErrorCode) -> Error {
        Error::new(code, Kind::Server)
    }

    /// The connection dropped with the request in flight: it may or may not have been applied.
    #[doc(hidden)]
    pub fn connection_loss() -> Error {
        Error::new(ErrorCode::ConnectionLoss, Kind::Connection)
    }

    /// The session was lost (expired on the server, or disconnected for longer than its
    /// timeout).
    #[doc(hidden)]
    pub fn session_expired() -> Error {
        Error::new(ErrorCode::SessionExpired, Kind::Connection)
    }

    /// Input refused before sending.
    #[doc(hidden)]
    pub fn invalid(detail: impl Into<String>) -> Error {
        let mut e = Error::new(ErrorCode::BadArguments, Kind::InvalidInput);
        e.detail = Some(detail.into());
        e
    }

    /// A malformed frame from the server.
    #[doc(hidden)]
    pub fn protocol(detail: impl fmt::Display) -> Error {
        let mut e = Error::new(ErrorCode::MarshallingError, Kind::Protocol);
        e.detail = Some(detail.to_string());
        e
    }

    /// The client was closed.
    #[doc(hidden)]
    pub fn closed() -> Error {
        let mut e = Error::new(ErrorCode::ConnectionLoss, Kind::Closed);
        e.detail = Some("the client is closed".into());
        e
    }

    /// A deadline passed.
    #[doc(hidden)]
    pub fn timeout(detail: impl Into<String>) -> Error {
        let mut e = Error::new(ErrorCode::OperationTimeout, Kind::Timeout);
        e.detail = Some(detail.into());
        e
    }

    /// Attaches what caused this error (returned by `source()`; its message is shown too).
    #[doc(hidden)]
    pub fn with_cause(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.cause = Some(Arc::new(cause));
        self
    }

    /// Attaches the path the failed operation was about (shown in the message).
    #[doc(hidden)]
    pub fn with_path(mut self, path: impl Into<String>) -> Error {
        self.path = Some(path.into());
        self
    }

    /// Adds a detail to the message.
    #[doc(hidden)]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Error {
        self.detail = Some(detail.into());
        self
    }

    /// The ZooKeeper error code.
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
        self.kind != Kind::Closed
            && matches!(
                self.code,
                ErrorCode::ConnectionLoss
                    | ErrorCode::OperationTimeout
                    | ErrorCode::SessionMoved
                    | ErrorCode::RequestTimeout
                    | ErrorCode::ThrottledOp
            )
    }

    /// Whether the client was closed (no retry will help).
    pub fn is_closed(&self) -> bool {
        self.kind == Kind::Closed
    }

    /// Whether the input was refused before anything was sent.
    pub fn is_invalid_input(&self) -> bool {
        self.kind == Kind::InvalidInput
    }
}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Error {
        Error::protocol(format_args!("malformed server frame: {e}"))
    }
}

impl fmt::Display for Error {
    /// `NoNode: /a/b`, `BadArguments: path must start with '/': a`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code)?;
        let mut sep = ": ";
        if let Some(detail) = &self.detail {
            write!(f, "{sep}{detail}")?;
            sep = ": ";
        }
        if let Some(cause) = &self.cause {
            write!(f, "{sep}{cause}")?;
        }
        if let Some(path) = &self.path {
            write!(f, "{sep}{path}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Error({self})")
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
