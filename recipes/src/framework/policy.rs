//! Which connection states a recipe treats as "you may have lost it".

use zkrs_client::ConnectionState;

/// When a lock, a lease or leadership is taken as lost, as the connection comes and goes.
///
/// The library's default stays Curator's [`Standard`](ConnectionStatePolicy::Standard), so
/// a recipe behaves as its Curator namesake unless asked otherwise; `zkctl lock` and
/// `zkctl elect` use [`SessionDeadline`](ConnectionStatePolicy::SessionDeadline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ConnectionStatePolicy {
    /// Suspended already counts as lost: a leader steps down and a lock holder stops as soon
    /// as the connection drops, before the session is known to be gone (Curator's default,
    /// `StandardConnectionStateErrorPolicy`; safe, at the price of stepping down on short
    /// blips).
    #[default]
    Standard,
    /// Only a lost session counts: leadership and locks are kept through suspensions (the
    /// session may still be alive; ephemeral nodes are still there). Curator's
    /// `SessionConnectionStateErrorPolicy`. Not safe on its own: the client calls the session
    /// lost only a session timeout after the suspension began, up to about 1.7 timeouts after
    /// the server last heard from it, so the server may have expired the session, and another
    /// process taken the lock, while this one still acts as holder.
    SessionOnly,
    /// A suspension counts as lost at the session's deadline, the earliest instant the
    /// server could expire the session, less a margin: the send time of the newest request
    /// or ping that was answered ([`Client::last_heard`](zkrs_client::Client::last_heard)),
    /// plus the negotiated session timeout, minus a tenth of that timeout (for clock-rate
    /// differences and for the holder to stop). If the same session is back first
    /// (`Reconnected`), nothing was lost; after the deadline, a `Reconnected` to the same
    /// session makes what is held valid again. A lost session counts at once.
    ///
    /// More available than [`Standard`](ConnectionStatePolicy::Standard) (a blip shorter
    /// than the deadline costs nothing) and safer than
    /// [`SessionOnly`](ConnectionStatePolicy::SessionOnly) (the holder stops before the
    /// server can expire its session). The guide's conventions chapter gives the reasoning
    /// and its one assumption (the server that answers speaks for the ensemble).
    SessionDeadline,
}

impl ConnectionStatePolicy {
    /// Whether `state` means the recipe must assume it lost what it held.
    ///
    /// Under [`SessionDeadline`](ConnectionStatePolicy::SessionDeadline), `Suspended` is
    /// answered as if its deadline had passed (true): the recipes hear of a suspension only
    /// at its deadline, and hold it back until then. The state alone cannot say whether the
    /// deadline has passed.
    pub fn is_error_state(self, state: ConnectionState) -> bool {
        match self {
            ConnectionStatePolicy::Standard | ConnectionStatePolicy::SessionDeadline => matches!(
                state,
                ConnectionState::Suspended | ConnectionState::Lost | ConnectionState::Closed
            ),
            ConnectionStatePolicy::SessionOnly => {
                matches!(state, ConnectionState::Lost | ConnectionState::Closed)
            }
        }
    }
}
