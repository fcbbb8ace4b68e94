//! [`ConnectionFailure`]: why a connection (or a connection attempt) ended, told to every
//! request that was in flight and kept as the session's last failure.

use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::SaslError;

/// Why the last connection, or connection attempt, ended
/// ([`Session::last_connection_failure`](crate::Session::last_connection_failure)).
///
/// Its `Display` is the core's words for it, with every cause: `could not connect:
/// Connection refused`, `no handshake reply from the server within 2000 ms of connecting`,
/// `the server sent a malformed frame: ...`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ConnectionFailure {
    /// The TCP connection could not be opened; with the I/O error when the driver told one.
    CouldNotConnect(Option<Arc<std::io::Error>>),
    /// No TCP connection within the attempt's time (its share of the session timeout).
    ConnectTimeout(Duration),
    /// Connected, but no handshake reply from the server within the attempt's time.
    HandshakeTimeout(Duration),
    /// No SASL reply from the server within the read timeout.
    SaslTimeout(Duration),
    /// Nothing from the server within the read timeout.
    ReadTimeout(Duration),
    /// The connection failed with this I/O error.
    Io(Arc<std::io::Error>),
    /// The server sent bytes that make no sense.
    MalformedFrame(Arc<Error>),
    /// The server answered a ping sent after request `xid` but not that request: it was lost
    /// on the way, so the connection was dropped rather than left waiting.
    LostRequest {
        /// The lost request's xid.
        xid: i32,
    },
    /// The server says the session expired.
    SessionExpired,
    /// The server refused to resume session `session_id`: it has expired, or its password
    /// is wrong.
    ResumeRefused {
        /// The session presented.
        session_id: i64,
    },
    /// The session timed out (disconnected for longer than the session timeout) during the
    /// handshake, which was dropped so that the next one asks for a new session.
    ExpiredDuringHandshake,
    /// Left a read-only server for a read-write one.
    LeftReadOnly,
    /// The host list changed and this client moves to another host (see
    /// [`Session::update_hosts`](crate::Session::update_hosts)).
    HostsChanged,
    /// A move to another host (see [`Session::update_hosts`](crate::Session::update_hosts))
    /// was given up: that host is a read-only server, and the session stays on the
    /// read-write one it was on.
    MoveToReadOnly,
    /// SASL authentication failed (the client then stops).
    AuthFailed {
        /// The mechanism's name (`SASL` when none was configured).
        mechanism: String,
        /// The mechanism's refusal, or the server's.
        cause: SaslError,
    },
    /// The connection was lost, for no reason the core knows.
    ConnectionLost,
}

impl ConnectionFailure {
    /// The words without the cause: the detail of the errors of the requests in flight.
    fn detail(&self) -> String {
        match self {
            ConnectionFailure::CouldNotConnect(_) => "could not connect".into(),
            ConnectionFailure::ConnectTimeout(t) => {
                format!("could not connect within {} ms", t.as_millis())
            }
            ConnectionFailure::HandshakeTimeout(t) => format!(
                "no handshake reply from the server within {} ms of connecting",
                t.as_millis()
            ),
            ConnectionFailure::SaslTimeout(t) => {
                format!("no SASL reply from the server within {} ms", t.as_millis())
            }
            ConnectionFailure::ReadTimeout(t) => format!(
                "no reply from the server within the read timeout ({} ms)",
                t.as_millis()
            ),
            ConnectionFailure::Io(_) => "the connection failed".into(),
            ConnectionFailure::MalformedFrame(_) => "the server sent a malformed frame".into(),
            ConnectionFailure::LostRequest { xid } => format!(
                "the server answered a ping sent after request xid {xid} but not that \
                 request: it was lost on the way, so the connection is dropped rather \
                 than left waiting"
            ),
            ConnectionFailure::SessionExpired => "the server says the session expired".into(),
            ConnectionFailure::ResumeRefused { session_id } => format!(
                "the server refused to resume session {session_id:#x}: it has expired, or \
                 its password is wrong"
            ),
            ConnectionFailure::ExpiredDuringHandshake => {
                "the session timed out during the handshake".into()
            }
            ConnectionFailure::LeftReadOnly => {
                "left a read-only server for a read-write one".into()
            }
            ConnectionFailure::HostsChanged => {
                "the host list changed: moving to another host to even the load".into()
            }
            ConnectionFailure::MoveToReadOnly => {
                "the host moved to is a read-only server: the session stays where it was".into()
            }
            ConnectionFailure::AuthFailed { mechanism, .. } => {
                format!("{mechanism} authentication failed")
            }
            ConnectionFailure::ConnectionLost => "the connection was lost".into(),
        }
    }

    /// What caused it (the I/O error, the malformed frame's error), shared by every request
    /// that failed because of it: their errors' `source()`.
    fn shared_cause(&self) -> Option<Arc<dyn std::error::Error + Send + Sync>> {
        match self {
            ConnectionFailure::CouldNotConnect(Some(e)) | ConnectionFailure::Io(e) => {
                Some(e.clone())
            }
            ConnectionFailure::MalformedFrame(e) => Some(e.clone()),
            _ => None,
        }
    }

    /// The error of a request in flight when the connection went this way.
    pub(crate) fn error(&self) -> Error {
        let error = Error::connection_loss().with_detail(self.detail());
        match self.shared_cause() {
            Some(cause) => error.with_shared_cause(cause),
            None => error,
        }
    }
}

impl std::fmt::Display for ConnectionFailure {
    /// The core's words, with every cause: `the connection failed: Connection reset ...`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail())?;
        if let ConnectionFailure::AuthFailed { cause, .. } = self {
            return write!(f, ": {cause}");
        }
        let shared = self.shared_cause();
        let mut cause = shared
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static));
        while let Some(c) = cause {
            write!(f, ": {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}
