//! The client's error: one opaque type with a public [`ErrorKind`] and, for a server's
//! answer, ZooKeeper's [`ErrorCode`], in the style of `tokio-postgres` and `std::io::Error`.
//! Match on [`Error::kind`] (and on [`Error::code`] for the server's answers); print it for a
//! message that names the path; walk [`std::error::Error::source`] for what caused it.

use std::fmt;
use std::sync::Arc;

use zkrs_codec::DecodeError;
pub use zkrs_codec::ErrorCode;

/// Why an operation failed.
///
/// [`Error::kind`] says where the failure came from. [`Error::code`] is ZooKeeper's error
/// code, and only for what a server answered ([`ErrorKind::Server`]): a local failure (the
/// connection dropped, the session was lost, the input was refused before sending, the client
/// was closed, a deadline passed, ...) is only a kind, and its `code()` is `None`. What caused
/// the error (the I/O error that dropped the connection, the frame that did not decode, the
/// SASL mechanism's refusal) is returned by `source()` and is not repeated in `Display`, so
/// error-chain printers show each cause once.
///
/// `Display` starts with the server's code for a server's answer (`NoNode: /a/b`) and with the
/// kind for a local failure (`invalid input: path must start with '/': a`, `closed: the
/// client is closed`); the rest is the detail, then the path. The text is for people: match on
/// [`Error::kind`] and [`Error::code`], never on the message.
///
/// ```
/// use zkrs_session::{Error, ErrorCode, ErrorKind};
///
/// // What a service does with the outcome of reading its config node.
/// fn plan(read: Result<Vec<u8>, Error>) -> &'static str {
///     match read {
///         Ok(_) => "use it",
///         Err(e) if e.code() == Some(ErrorCode::NoNode) => "no config yet: use the defaults",
///         Err(e) if e.kind() == ErrorKind::ConnectionLoss => "in doubt: read again",
///         Err(e) if e.kind() == ErrorKind::Closed => "shutting down",
///         Err(_) => "fail",
///     }
/// }
/// # assert_eq!(plan(Ok(vec![])), "use it");
/// # assert_eq!(plan(Err(Error::from(ErrorCode::NoNode))), "no config yet: use the defaults");
/// ```
///
/// # Making errors
///
/// A recipe of your own fails the way this crate's do: [`Error::new`] for a local failure,
/// `Error::from(code)` for a server's answer you pass on or stand in for, then
/// [`with_path`](Error::with_path), [`with_detail`](Error::with_detail) and
/// [`with_source`](Error::with_source) as they apply:
///
/// ```
/// use zkrs_session::{Error, ErrorCode, ErrorKind};
///
/// let refused = Error::new(ErrorKind::InvalidInput, "the lease count must be positive")
///     .with_path("/app/semaphore");
/// assert_eq!(refused.kind(), ErrorKind::InvalidInput);
/// assert_eq!(refused.code(), None);
/// assert_eq!(
///     refused.to_string(),
///     "invalid input: the lease count must be positive: /app/semaphore"
/// );
///
/// let gone = Error::from(ErrorCode::NoNode).with_path("/app/config");
/// assert_eq!((gone.kind(), gone.code()), (ErrorKind::Server, Some(ErrorCode::NoNode)));
/// assert_eq!(gone.to_string(), "NoNode: /app/config");
///
/// let bad = Error::new(ErrorKind::InvalidData, "not a number")
///     .with_source("x".parse::<u64>().unwrap_err());
/// assert!(std::error::Error::source(&bad).is_some());
/// ```
#[derive(Clone)]
pub struct Error {
    kind: ErrorKind,
    /// The server's code: `Some` exactly when `kind` is [`ErrorKind::Server`].
    code: Option<ErrorCode>,
    path: Option<String>,
    detail: Option<String>,
    /// What caused it, for `source()`.
    cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Where an [`Error`] came from: what a caller can act on.
///
/// [`ErrorKind::Server`] is a server's answer (its code is [`Error::code`]); every other kind
/// is a local condition, with no code. `Display` gives the words an error's message starts
/// with (`connection lost`, `invalid input`, ...).
///
/// More kinds may come (the enum is `#[non_exhaustive]`): match the ones you handle and
/// treat the rest as failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The server answered with an error code: see [`Error::code`] (`NoNode`,
    /// `NodeExists`, `BadVersion`, ...). Made with `Error::from(code)`.
    Server,
    /// The connection dropped with the request in flight: it may or may not have been
    /// applied. `source()` is the I/O error, when there was one. Retrying may help.
    ConnectionLoss,
    /// The session was lost (expired on the server, or disconnected for longer than its
    /// timeout): its ephemeral nodes and watches are gone. A server may also answer a
    /// request with the code `SessionExpired` ([`Error::is_session_expired`] says either).
    SessionExpired,
    /// Authentication failed (SASL, or the server refused the credentials): the client
    /// stops. `source()` is the [`SaslError`](crate::SaslError) when the mechanism refused.
    AuthFailed,
    /// The input was refused before anything was sent (a bad path, data over the limit,
    /// a bad argument).
    InvalidInput,
    /// The server sent bytes that do not decode (the connection is dropped); `source()` is
    /// the decoder's error.
    Protocol,
    /// A node's data is not what the code reading it expects (not a queue item, not a
    /// service instance, not a number, not an ensemble configuration). The frame that carried
    /// it decoded and the connection is fine: unlike [`ErrorKind::Protocol`], this is about
    /// what is stored in ZooKeeper, not about the session. Any code reading nodes can meet
    /// it (the recipes, a recipe of your own, a tool like zkctl), so it is a kind of the one
    /// error, beside the client's, rather than something of the recipes alone.
    InvalidData,
    /// The client (or the recipe) was closed; no retry will help.
    Closed,
    /// A deadline passed.
    Timeout,
    /// The server's reply to this request was larger than the client's reply limit
    /// (`ClientBuilder::max_reply_len` in `zkrs-client`,
    /// [`SessionConfig::max_reply_len`](crate::SessionConfig::max_reply_len) here): the client
    /// skipped its bytes without keeping them, and only this request failed; the connection, the
    /// session and every other request go on. The message names the reply's size and the limit. Not
    /// retryable: the same request gets the same reply until the data shrinks or the limit is
    /// raised.
    ReplyTooLarge,
}

impl ErrorKind {
    /// The words an error of this kind starts its message with.
    fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Server => "server error",
            ErrorKind::ConnectionLoss => "connection lost",
            ErrorKind::SessionExpired => "session expired",
            ErrorKind::AuthFailed => "authentication failed",
            ErrorKind::InvalidInput => "invalid input",
            ErrorKind::Protocol => "protocol error",
            ErrorKind::InvalidData => "invalid data",
            ErrorKind::Closed => "closed",
            ErrorKind::Timeout => "timed out",
            ErrorKind::ReplyTooLarge => "reply too large",
        }
    }
}

impl fmt::Display for ErrorKind {
    /// `connection lost`, `session expired`, `invalid input`, `closed`, `timed out`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// A local failure of `kind`, with `detail` saying what went wrong (shown after the
    /// kind: `invalid input: the lease count must be positive`; an empty `detail` shows
    /// nothing). Its [`code`](Error::code) is `None`.
    ///
    /// A server's answer is not made here but with `Error::from(code)` (see
    /// [`From<ErrorCode>`](#impl-From%3CErrorCode%3E-for-Error)), so that every error of kind
    /// [`ErrorKind::Server`] has its code.
    ///
    /// # Panics
    ///
    /// If `kind` is [`ErrorKind::Server`] (a server error without its code cannot be made).
    ///
    /// ```
    /// use zkrs_session::{Error, ErrorKind};
    ///
    /// let e = Error::new(ErrorKind::Timeout, "no answer within 5 s");
    /// assert_eq!(e.to_string(), "timed out: no answer within 5 s");
    /// assert!(e.is_retryable());
    /// ```
    #[track_caller]
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Error {
        assert!(
            kind != ErrorKind::Server,
            "Error::new(ErrorKind::Server, ..): a server error is made from its code, \
             with Error::from(ErrorCode)"
        );
        Error::bare(kind, None).with_detail(detail)
    }

    fn bare(kind: ErrorKind, code: Option<ErrorCode>) -> Error {
        Error {
            kind,
            code,
            path: None,
            detail: None,
            cause: None,
        }
    }

    /// This error with the path the failed operation was about (shown at the end of the
    /// message: `NoNode: /a/b`), replacing any path it had.
    pub fn with_path(mut self, path: impl Into<String>) -> Error {
        self.path = Some(path.into());
        self
    }

    /// This error with `detail` saying what went wrong (shown after the kind or code:
    /// `NodeExists: the node kept coming back: /a`), replacing any detail it had; an empty
    /// `detail` removes it.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Error {
        let detail = detail.into();
        self.detail = (!detail.is_empty()).then_some(detail);
        self
    }

    /// This error with what caused it (the I/O error, the parse error), returned by
    /// [`source()`](std::error::Error::source) and not printed by `Display`; replaces any
    /// cause it had.
    pub fn with_source(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.cause = Some(Arc::new(cause));
        self
    }

    /// Where the error came from.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The ZooKeeper error code the server answered with: `Some` exactly when
    /// [`kind`](Error::kind) is [`ErrorKind::Server`]. A local failure has no code (the
    /// client does not invent one): match on its kind.
    pub fn code(&self) -> Option<ErrorCode> {
        self.code
    }

    /// The path the operation was about, if known.
    pub fn path(&self) -> Option<&str> {
        self.path.as_deref()
    }

    /// What went wrong, in words, if the error says more than its kind or code: the message
    /// without its kind or code and without the path (`path must start with '/'`).
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
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
                Some(
                    ErrorCode::ConnectionLoss
                        | ErrorCode::OperationTimeout
                        | ErrorCode::SessionMoved
                        | ErrorCode::RequestTimeout
                        | ErrorCode::ThrottledOp
                )
            ),
            _ => false,
        }
    }

    /// Whether the session is gone: the client lost it ([`ErrorKind::SessionExpired`]), or a
    /// server answered `SessionExpired` (kind [`ErrorKind::Server`]). Either way its
    /// ephemeral nodes and watches are gone; what a recipe does is the same.
    pub fn is_session_expired(&self) -> bool {
        self.kind == ErrorKind::SessionExpired || self.code == Some(ErrorCode::SessionExpired)
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

/// The session core's own ways of making its errors (not part of the API).
impl Error {
    /// An error code the server answered with.
    pub(crate) fn server(code: ErrorCode) -> Error {
        Error::bare(ErrorKind::Server, Some(code))
    }

    /// The connection dropped with the request in flight.
    pub(crate) fn connection_loss() -> Error {
        Error::bare(ErrorKind::ConnectionLoss, None)
    }

    /// The session was lost.
    pub(crate) fn session_expired() -> Error {
        Error::bare(ErrorKind::SessionExpired, None)
    }

    /// Authentication failed.
    pub(crate) fn auth_failed() -> Error {
        Error::bare(ErrorKind::AuthFailed, None)
    }

    /// A malformed frame from the server.
    pub(crate) fn protocol(detail: impl fmt::Display) -> Error {
        Error::new(ErrorKind::Protocol, detail.to_string())
    }

    /// The client was closed.
    pub(crate) fn closed() -> Error {
        Error::new(ErrorKind::Closed, "the client is closed")
    }

    /// Attaches a cause shared by several errors (every request a dropped connection failed).
    pub(crate) fn with_shared_cause(
        mut self,
        cause: Arc<dyn std::error::Error + Send + Sync>,
    ) -> Error {
        self.cause = Some(cause);
        self
    }
}

impl From<ErrorCode> for Error {
    /// The error a server answered with `code` (kind [`ErrorKind::Server`], `code()` is
    /// `Some(code)`), for a recipe that passes a server's answer on or stands in for one
    /// (`Error::from(ErrorCode::NodeExists).with_path(path)`).
    fn from(code: ErrorCode) -> Error {
        Error::server(code)
    }
}

impl From<DecodeError> for Error {
    /// A frame that does not decode: kind [`ErrorKind::Protocol`], the decoder's error as
    /// `source()`.
    fn from(e: DecodeError) -> Error {
        Error::protocol("malformed server frame").with_source(e)
    }
}

impl fmt::Display for Error {
    /// `NoNode: /a/b` (a server's answer: its code), `invalid input: path must start with
    /// '/': a` (a local failure: its kind), then the detail and the path. The cause is not
    /// printed: `source()` returns it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(code) => write!(f, "{code}")?,
            None => write!(f, "{}", self.kind)?,
        }
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
        d.field("kind", &self.kind);
        if let Some(code) = &self.code {
            d.field("code", code);
        }
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
            .with_source(io);
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

    /// A local failure says its kind and has no code; a server's answer says its code.
    #[test]
    fn local_failures_have_a_kind_and_no_code() {
        let e = Error::new(ErrorKind::InvalidInput, "path must start with '/'").with_path("a");
        assert_eq!((e.kind(), e.code()), (ErrorKind::InvalidInput, None));
        assert_eq!(e.to_string(), "invalid input: path must start with '/': a");
        assert_eq!(e.detail(), Some("path must start with '/'"));
        assert_eq!(e.path(), Some("a"));

        assert_eq!(Error::closed().to_string(), "closed: the client is closed");
        assert_eq!(Error::closed().code(), None);
        let lost = Error::connection_loss().with_detail("the connection to h:2181 ended");
        assert_eq!(
            lost.to_string(),
            "connection lost: the connection to h:2181 ended"
        );
        assert!(lost.is_retryable());
        assert_eq!(lost.code(), None);
        assert_eq!(Error::session_expired().to_string(), "session expired");
        assert!(Error::session_expired().is_session_expired());
        assert!(!Error::session_expired().is_retryable());
        assert_eq!(Error::new(ErrorKind::Timeout, "").to_string(), "timed out");

        let e = Error::from(ErrorCode::NoNode).with_path("/a/b");
        assert_eq!(
            (e.kind(), e.code()),
            (ErrorKind::Server, Some(ErrorCode::NoNode))
        );
        assert_eq!(e.to_string(), "NoNode: /a/b");
        assert!(Error::from(ErrorCode::SessionExpired).is_session_expired());
        assert!(Error::from(ErrorCode::SessionMoved).is_retryable());
        assert!(!Error::from(ErrorCode::NoNode).is_retryable());
        let e = Error::from(ErrorCode::NodeExists).with_detail("it kept coming back");
        assert_eq!(e.to_string(), "NodeExists: it kept coming back");
    }

    /// A server error is made from its code: `Error::new` refuses the kind loudly.
    #[test]
    #[should_panic(expected = "Error::from(ErrorCode)")]
    fn a_server_error_needs_its_code() {
        let _ = Error::new(ErrorKind::Server, "no code");
    }
}
