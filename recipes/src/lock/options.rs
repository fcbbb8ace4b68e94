//! What every lock builder holds ([`LockOptions`]) and the setters they share
//! ([`lock_builder_setters!`]), written once.

use zkrs_client::Client;

use crate::framework::ConnectionStatePolicy;

/// Where a lock lives, what its nodes hold and how its holders read the connection's state.
#[derive(Debug, Clone)]
pub(crate) struct LockOptions {
    pub(crate) client: Client,
    /// The lock directory.
    pub(crate) path: String,
    /// Stored in each of its nodes.
    pub(crate) data: Vec<u8>,
    pub(crate) policy: ConnectionStatePolicy,
}

impl LockOptions {
    /// Empty node data and the standard policy, as in Curator.
    pub(crate) fn new(client: &Client, path: &str) -> LockOptions {
        LockOptions {
            client: client.clone(),
            path: path.to_string(),
            data: Vec::new(),
            policy: ConnectionStatePolicy::Standard,
        }
    }
}

/// The `data` and `policy` setters of `$builder` (whose `options` are a [`LockOptions`]),
/// each with the recipe's own doc: which nodes hold the data, what follows the policy.
macro_rules! lock_builder_setters {
    ($builder:ident, $(#[$data_doc:meta])* data, $(#[$policy_doc:meta])* policy $(,)?) => {
        $(#[$data_doc])*
        pub fn data(mut self, data: impl Into<Vec<u8>>) -> $builder {
            self.options.data = data.into();
            self
        }

        $(#[$policy_doc])*
        pub fn policy(mut self, policy: $crate::framework::ConnectionStatePolicy) -> $builder {
            self.options.policy = policy;
            self
        }
    };
}
pub(crate) use lock_builder_setters;
