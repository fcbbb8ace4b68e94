//! [`Auth`]: the identities' progress on the connection (`add_auth` replies awaited, tokens
//! of those added while disconnected) and the SASL exchange.

use std::collections::VecDeque;

use crate::sasl::{SaslError, SaslInProgress};

pub(crate) struct Auth<T> {
    /// For each identity sent on this connection, the token to answer (if any).
    pub(crate) pending: VecDeque<Option<T>>,
    /// Tokens of `add_auth` calls made while disconnected, by index into `cfg.auth`.
    pub(crate) later: Vec<(usize, T)>,
    /// Auth replies received on this connection (the index of the next one in `cfg.auth`).
    pub(crate) replies: usize,
    /// Why SASL failed, once it has (the client then stops).
    pub(crate) failure: Option<SaslError>,
    /// The SASL exchange of this connection, between the handshake and the session's use.
    pub(crate) sasl: Option<SaslInProgress>,
}

impl<T> Auth<T> {
    pub(crate) fn new() -> Auth<T> {
        Auth {
            pending: VecDeque::new(),
            later: Vec::new(),
            replies: 0,
            failure: None,
            sasl: None,
        }
    }
}
