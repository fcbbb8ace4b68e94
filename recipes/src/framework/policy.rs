//! Which connection states a recipe treats as "you may have lost it".

use zkrs_client::ConnectionState;

/// Curator's connection-state error policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ConnectionStatePolicy {
    /// Suspended already counts as lost: a leader steps down and a lock holder stops as soon
    /// as the connection drops, before the session is known to be gone (Curator's default;
    /// safe, at the price of stepping down on short blips).
    #[default]
    Standard,
    /// Only a lost session counts: leadership and locks are kept through suspensions (the
    /// session may still be alive; ephemeral nodes are still there).
    SessionOnly,
}

impl ConnectionStatePolicy {
    /// Whether `state` means the recipe must assume it lost what it held.
    pub fn is_error_state(self, state: ConnectionState) -> bool {
        match self {
            ConnectionStatePolicy::Standard => matches!(
                state,
                ConnectionState::Suspended | ConnectionState::Lost | ConnectionState::Closed
            ),
            ConnectionStatePolicy::SessionOnly => {
                matches!(state, ConnectionState::Lost | ConnectionState::Closed)
            }
        }
    }
}
