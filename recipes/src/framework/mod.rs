//! The framework layer under every recipe: retries (the one back-off every retry loop
//! sleeps with), paths and parents, protected creates,
//! guaranteed deletes, namespaces, and the connection-state policy.

mod connection;
mod deadline;
mod delete;
mod fencing;
mod namespace;
mod paths;
mod policy;
mod protected;
mod retry;
mod uuid;
mod wait;

pub use connection::wait_connected;
pub(crate) use deadline::{lost_in, lost_now, PolicyChanges};
pub use delete::{delete_for_sure, delete_until_gone, guaranteed_delete, DeleteOnDrop};
pub use fencing::FencingToken;
pub use namespace::connect_with_namespace;
pub use paths::{create_parents, join, join_all, node_name, parent, ParentMode};
pub use policy::ConnectionStatePolicy;
pub(crate) use protected::list_in_doubt;
pub use protected::{
    create_protected, find_protected, guaranteed_delete_protected, ProtectedName, PROTECTED_PREFIX,
};
pub(crate) use retry::Backoff;
pub use retry::RetryPolicy;
pub use uuid::Uuid;
pub(crate) use wait::{recover, wait_or_recover, watch_or_state, Wake, Watched};
/// The fan-out of event streams every recipe tells its events through (from `zkrs-client`).
pub(crate) use zkrs_client::__private::Listeners;
