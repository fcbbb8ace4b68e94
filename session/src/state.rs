//! Connection states as users and recipes see them, named as Curator names them.

/// The state of the client's connection and session.
///
/// Transitions: `Connected` (first session) → `Suspended` (connection lost, session may live)
/// → `Reconnected` (same session back, or a new one after `Lost`) or `Lost` (session gone:
/// expired on the server, or disconnected for longer than the session timeout) → ... and
/// finally `Closed`. `ReadOnly` replaces `Connected`/`Reconnected` when the server is a
/// read-only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConnectionState {
    /// Not connected yet: the first session is being established.
    Connecting,
    /// The first session is established.
    Connected,
    /// The connection dropped; the session may still be alive. Under Curator's standard
    /// policy a recipe must assume it lost its lock or leadership.
    Suspended,
    /// Connected again (to the same session, or to a new one after [`ConnectionState::Lost`]).
    Reconnected,
    /// The session is gone: its ephemeral nodes and watches are gone with it.
    Lost,
    /// Connected to a read-only server: reads work, writes fail with `NotReadOnly`.
    ReadOnly,
    /// SASL authentication failed (wrong credentials, a server that refuses the mechanism
    /// or cannot prove itself): the client stops, and every request fails with
    /// `AuthFailed`. `Closed` follows.
    AuthFailed,
    /// The client was closed.
    Closed,
}

impl ConnectionState {
    /// Whether requests can be sent now.
    pub fn is_connected(self) -> bool {
        matches!(
            self,
            ConnectionState::Connected | ConnectionState::Reconnected | ConnectionState::ReadOnly
        )
    }
}

/// A state transition and the session it concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateChange {
    /// The new state.
    pub state: ConnectionState,
    /// The session id after the transition (0 when there is none).
    pub session_id: i64,
}
