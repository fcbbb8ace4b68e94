//! [`MoveLinks`]: the connections a move to another host holds besides the current one
//! (`zkrs_session`'s `moving.rs`: make before break).

use bytes::BytesMut;

use super::link::{ConnectFuture, Link};

#[derive(Default)]
pub(super) struct MoveLinks {
    /// The second connection, before the switch, and its attempt.
    pub(super) spare: Option<Link>,
    pub(super) spare_connecting: Option<ConnectFuture>,
    /// The host the spare connects to, for the logs.
    pub(super) spare_host: usize,
    /// The old connection after the switch (only read), and its unread bytes.
    pub(super) retiring: Option<Link>,
    pub(super) retiring_buf: BytesMut,
}
