//! Watch notifications: `WatcherEvent` and the event types and keeper states it carries.

open_enum! {
    /// What happened (`Watcher.Event.EventType`).
    pub enum EventType {
        /// A change of connection state, not of a node.
        None = -1 => "None",
        /// The watched node was created.
        NodeCreated = 1 => "NodeCreated",
        /// The watched node was deleted.
        NodeDeleted = 2 => "NodeDeleted",
        /// The watched node's data changed.
        NodeDataChanged = 3 => "NodeDataChanged",
        /// The watched node's children changed.
        NodeChildrenChanged = 4 => "NodeChildrenChanged",
        /// A data watch was removed.
        DataWatchRemoved = 5 => "DataWatchRemoved",
        /// A child watch was removed.
        ChildWatchRemoved = 6 => "ChildWatchRemoved",
        /// A persistent watch was removed.
        PersistentWatchRemoved = 7 => "PersistentWatchRemoved",
    }
}

open_enum! {
    /// The state of the connection when an event was sent (`Watcher.Event.KeeperState`).
    pub enum KeeperState {
        /// Disconnected from the ensemble.
        Disconnected = 0 => "Disconnected",
        /// Connected and able to read and write.
        SyncConnected = 3 => "SyncConnected",
        /// Authentication failed.
        AuthFailed = 4 => "AuthFailed",
        /// Connected to a read-only server.
        ConnectedReadOnly = 5 => "ConnectedReadOnly",
        /// SASL authentication succeeded.
        SaslAuthenticated = 6 => "SaslAuthenticated",
        /// The client was closed.
        Closed = 7 => "Closed",
        /// The session expired.
        Expired = -112 => "Expired",
    }
}

int_field!(open EventType);
int_field!(open KeeperState);

record! {
    /// A watch notification (the body of a packet with xid -1).
    pub struct WatcherEvent<'a> {
        /// What happened.
        pub event_type: EventType,
        /// The connection state.
        pub state: KeeperState,
        /// The node it happened to (null for state-only events).
        pub path: Option<&'a str>,
    }
}
