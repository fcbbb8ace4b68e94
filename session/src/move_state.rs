//! What the session remembers of a move to another host under way (the protocol itself is
//! in `moving.rs`).

use std::time::Instant;

/// A move under way. `Session::moving` holds it; `Session::conn` is the old connection
/// (`Open`) until the switch, the new one (`Handshaking`) after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Move {
    /// The host (new index) being moved to.
    pub(crate) to: usize,
    pub(crate) stage: MoveStage,
    /// Failed attempts so far.
    pub(crate) attempts: usize,
    /// Whether the old host is in the host list (if not, `Conn::Open`'s host is only a
    /// placeholder, and the move is tried until it works or the old connection breaks).
    pub(crate) from_listed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MoveStage {
    /// The next attempt starts at `retry_at`.
    Waiting { retry_at: Instant },
    /// The driver opens the spare connection.
    Dialing { deadline: Instant },
    /// The spare is open: the old connection's requests drain.
    Draining,
    /// The ConnectRequest went out on the spare, now the connection; the old one (on
    /// `from`) is read until the answer, while `retiring_alive`.
    Switching {
        from: usize,
        retiring_alive: bool,
        last_recv: Instant,
        last_send: Instant,
        /// Identities the old connection has (`cfg.auth[..auth_sent]`).
        auth_sent: usize,
    },
}
