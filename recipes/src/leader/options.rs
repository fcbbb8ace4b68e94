//! What every leader recipe's builder holds ([`LeaderOptions`]) and the setters they share
//! ([`leader_builder_setters!`]), written once.

use zkrs_client::{validate_path, Client, Result};

use crate::framework::ConnectionStatePolicy;

/// Where a participant takes part, who it is and how it reads the connection's state.
#[derive(Debug, Clone)]
pub(crate) struct LeaderOptions {
    client: Client,
    /// The election's path (the latch's, the lock directory, the root, the master node).
    pub(crate) path: String,
    pub(crate) id: String,
    pub(crate) policy: ConnectionStatePolicy,
}

impl LeaderOptions {
    /// An empty id and the standard policy, as in Curator.
    pub(crate) fn new(client: &Client, path: &str) -> LeaderOptions {
        LeaderOptions {
            client: client.clone(),
            path: path.to_string(),
            id: String::new(),
            policy: ConnectionStatePolicy::Standard,
        }
    }

    /// The client, the path, the id and the policy, for the recipe's shared state, once the
    /// path is known valid (kind `InvalidInput` otherwise, before anything is sent).
    pub(crate) fn validated(self) -> Result<(Client, String, String, ConnectionStatePolicy)> {
        validate_path(&self.path)?;
        Ok((self.client, self.path, self.id, self.policy))
    }
}

/// The `id` and `policy` setters of `$builder` (whose `options` are a [`LeaderOptions`]),
/// each with the recipe's own doc: what the id is stored in, what the policy ends.
macro_rules! leader_builder_setters {
    ($builder:ident, $(#[$id_doc:meta])* id, $(#[$policy_doc:meta])* policy $(,)?) => {
        $(#[$id_doc])*
        pub fn id(mut self, id: impl Into<String>) -> $builder {
            self.options.id = id.into();
            self
        }

        $(#[$policy_doc])*
        pub fn policy(mut self, policy: $crate::framework::ConnectionStatePolicy) -> $builder {
            self.options.policy = policy;
            self
        }
    };
}
pub(crate) use leader_builder_setters;
