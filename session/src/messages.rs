//! What passes between the session core and its driver: the [`Request`]s handed in, and the
//! [`Event`]s (replies, watch events, state changes, instructions) handed out.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use zkrs_codec::{OpCode, WatcherType};

use crate::{ConnId, Error, StateChange, WatchKind, WatchedEvent, WatcherGroup, WatcherId};

/// What to do after a request succeeds, regarding watches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchOp {
    /// Register a watch (getData/exists/getChildren with a watch, addWatch).
    Register {
        /// Which kind.
        kind: WatchKind,
        /// The server path.
        path: String,
        /// Who to tell.
        watcher: WatcherId,
        /// The group whose registrations hear each notification once, if any (the
        /// client's `Watcher`): see [`WatcherGroup`].
        group: Option<WatcherGroup>,
    },
    /// A `removeWatches` request: on success, drop the local registrations too.
    Remove {
        /// The server path.
        path: String,
        /// Which kind.
        watcher_type: WatcherType,
    },
}

/// A request handed to the core: its frame (encoded with xid 0), opcode, and who to answer.
#[derive(Debug)]
pub struct Request<T> {
    /// The whole frame, length prefix included; the xid is filled in when sent.
    pub frame: BytesMut,
    /// The operation (decides how the reply body is checked).
    pub op: OpCode,
    /// Given back with the reply.
    pub token: T,
    /// Watch bookkeeping once the reply arrives.
    pub watch: Option<WatchOp>,
}

/// A successful reply: the zxid and the body (everything after the reply header), a slice of
/// the frame that arrived.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Reply {
    /// The zxid in the reply header.
    pub zxid: i64,
    /// The reply body, already checked to decode as the request's reply record.
    pub body: Bytes,
}

/// What the core tells its driver.
///
/// Not `#[non_exhaustive]`: a driver must act on every event (an instruction it dropped
/// would leave a connection open or a caller waiting), so an event added is a change the
/// driver must make, and its `match` should fail to compile until it does.
#[derive(Debug)]
pub enum Event<T> {
    /// Open a TCP connection to host number `host`, within `timeout`, known to the core as
    /// `conn`; then call [`Session::handle_connected`](crate::Session::handle_connected) or,
    /// if it cannot be opened, [`Session::handle_closed`](crate::Session::handle_closed).
    Connect {
        /// The connection's name in the inputs.
        conn: ConnId,
        /// Index into the connect string's hosts.
        host: usize,
        /// How long the attempt may take.
        timeout: Duration,
        /// A random value for ordering the addresses the host's name resolves to (every
        /// address is a candidate, tried in a shuffled order): drawn from the session's
        /// seeded generator (a stream of its own, so the other draws are unchanged), hence
        /// repeatable under a fixed [`SessionConfig::seed`](crate::SessionConfig::seed).
        shuffle: u64,
    },
    /// Close the current connection (and forget any unread bytes).
    Disconnect,
    /// Open a second connection, `conn`, to host number `host`, within `timeout`, while the
    /// current one stays in use: the session moves there without being suspended (make
    /// before break). Then call [`Session::handle_connected`](crate::Session::handle_connected)
    /// or [`Session::handle_closed`](crate::Session::handle_closed), as for
    /// [`Event::Connect`]; bytes it sends before [`Event::UseSpare`] go to
    /// [`Session::handle_read`](crate::Session::handle_read) as any others (the core then
    /// gives it up).
    ConnectSpare {
        /// The connection's name in the inputs.
        conn: ConnId,
        /// Index into the connect string's hosts.
        host: usize,
        /// How long the attempt may take.
        timeout: Duration,
        /// As [`Event::Connect`]'s.
        shuffle: u64,
    },
    /// Close the spare connection, or give up opening it: the session stays where it is.
    DropSpare,
    /// The spare connection becomes the connection: what
    /// [`Session::poll_transmit`](crate::Session::poll_transmit) holds from now on goes
    /// there. The old connection is kept, only read: its bytes (with those already read and
    /// not consumed) still go to [`Session::handle_read`](crate::Session::handle_read), and
    /// its end to [`Session::handle_closed`](crate::Session::handle_closed), under its own
    /// [`ConnId`].
    UseSpare,
    /// Close the old connection kept since [`Event::UseSpare`].
    DropRetiring,
    /// Comes after a [`Event::Disconnect`] of the connection made from the spare: the old
    /// connection kept since [`Event::UseSpare`] is the connection again, with its unread
    /// bytes (the move failed; the session stays where it was).
    RestoreRetiring,
    /// The session moved to host number `host` without being suspended (no state change
    /// is reported for it). Informational.
    Moved {
        /// Index into the connect string's hosts.
        host: usize,
    },
    /// Ask host `host` whether it is a read-write server (`isro`), then call
    /// [`Session::handle_read_write_found`](crate::Session::handle_read_write_found) if it is.
    ProbeReadWrite {
        /// Index into the connect string's hosts.
        host: usize,
    },
    /// A request finished.
    Reply {
        /// The request's token.
        token: T,
        /// The reply, or why there is none.
        result: Result<Reply, Error>,
    },
    /// A watcher fired.
    Watch {
        /// Which watcher.
        watcher: WatcherId,
        /// The event.
        event: WatchedEvent,
    },
    /// A watcher handed in with a request will hear nothing (more): the request failed, so
    /// no watch was set; or the notification that ended this one-shot registration reached
    /// its [`WatcherGroup`] through another of the group's registrations. The driver can
    /// forget it.
    WatcherUnused(WatcherId),
    /// The connection state changed.
    State(StateChange),
    /// The session is closed: nothing more will happen.
    Closed,
}
