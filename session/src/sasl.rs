//! SASL after the handshake (ZooKeeper's `sasl` requests): the core runs the exchange on
//! every new connection before anything else of the session goes out, as the Java client
//! does, and a refusal ends the client (`AuthFailed`) instead of retrying forever.
//!
//! The mechanism (DIGEST-MD5, GSSAPI, ...) is the caller's: the core only carries tokens,
//! so it stays free of cryptography and of I/O.

use std::fmt;
use std::sync::Arc;

/// One SASL exchange, on one connection: the mechanism's state machine.
pub trait SaslExchange: Send {
    /// The next token to send: first with `None` (the initial response, empty if the
    /// mechanism has none), then with each token the server sent. `Err` is a refusal on
    /// this side (a malformed challenge, a server that failed to prove itself).
    fn step(&mut self, server_token: Option<&[u8]>) -> Result<SaslStep, SaslError>;
}

/// A SASL mechanism's refusal (a malformed challenge, a server that failed to prove itself,
/// credentials that could not be loaded). The client's error for the failed authentication
/// ([`ErrorKind::AuthFailed`](crate::ErrorKind::AuthFailed)) returns it from `source()`.
#[derive(Debug, Clone)]
pub struct SaslError {
    message: String,
}

impl SaslError {
    /// A refusal that says why.
    pub fn new(message: impl Into<String>) -> SaslError {
        SaslError {
            message: message.into(),
        }
    }

    /// Why the mechanism refused.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SaslError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SaslError {}

impl From<String> for SaslError {
    fn from(message: String) -> SaslError {
        SaslError::new(message)
    }
}

impl From<&str> for SaslError {
    fn from(message: &str) -> SaslError {
        SaslError::new(message)
    }
}

/// What a [`SaslExchange`] does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaslStep {
    /// Send this token and wait for the server's answer.
    Send(Vec<u8>),
    /// Authenticated: the session may start.
    Done,
}

/// The factory of a mechanism's exchanges, given the server's host name.
type NewExchange = dyn Fn(&str) -> Box<dyn SaslExchange> + Send + Sync;

/// A SASL mechanism: makes a fresh [`SaslExchange`] for every connection.
#[derive(Clone)]
pub struct SaslMechanism {
    name: String,
    new_exchange: Arc<NewExchange>,
}

impl SaslMechanism {
    /// A mechanism called `name` (for messages) whose exchanges `new_exchange` makes.
    pub fn new(
        name: impl Into<String>,
        new_exchange: impl Fn() -> Box<dyn SaslExchange> + Send + Sync + 'static,
    ) -> SaslMechanism {
        SaslMechanism::per_server(name, move |_| new_exchange())
    }

    /// A mechanism whose exchanges depend on the server: `new_exchange` is given the host
    /// name of the server connected to, as the connect string spells it (`""` when unknown),
    /// e.g. to name its Kerberos service principal `zookeeper/<host>`.
    pub fn per_server(
        name: impl Into<String>,
        new_exchange: impl Fn(&str) -> Box<dyn SaslExchange> + Send + Sync + 'static,
    ) -> SaslMechanism {
        SaslMechanism {
            name: name.into(),
            new_exchange: Arc::new(new_exchange),
        }
    }

    /// Its name, e.g. `DIGEST-MD5`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A new exchange with the server `server`, as the session makes on each connection
    /// (public so that a mechanism can be tried on its own).
    pub fn exchange(&self, server: &str) -> Box<dyn SaslExchange> {
        (self.new_exchange)(server)
    }
}

impl fmt::Debug for SaslMechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslMechanism")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// An exchange under way on the current connection, with what the handshake said, kept
/// until the exchange ends and the session can open.
pub(crate) struct SaslInProgress {
    pub(crate) exchange: Box<dyn SaslExchange>,
    pub(crate) read_only: bool,
}
