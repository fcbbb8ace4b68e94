//! A connection of the driver's: its attempt's outcome ([`Attempted`]), and once open, the
//! socket with the core's name for it ([`Link`]).

use std::future::Future;
use std::io;
use std::pin::Pin;

use crate::session::ConnId;
use crate::transport::Transport;

pub(super) type ConnectFuture = Pin<Box<dyn Future<Output = Attempted> + Send>>;

/// What a connection attempt's future ends with.
pub(super) enum Attempted {
    /// Connection `conn` (the core's name for it), or why there is none.
    Connected(ConnId, io::Result<Transport>),
    /// The host provider's answer, asked before connecting.
    Hosts(Result<Vec<(String, u16)>, String>),
}

/// A connection the core named, and its socket.
pub(super) struct Link {
    pub(super) conn: ConnId,
    pub(super) transport: Transport,
}
