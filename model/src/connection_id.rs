//! The name of one client connection to the model.

/// One client connection (ZooKeeper's `ServerCnxn`). Watches belong to connections, as in
/// ZooKeeper: they go when the connection goes, and the client re-registers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(pub u64);
