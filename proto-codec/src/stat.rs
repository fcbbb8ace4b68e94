//! `Stat`: a node's metadata.

record! {
    /// The metadata of a znode (`org.apache.zookeeper.data.Stat`).
    #[derive(Default)]
    pub struct Stat {
        /// The zxid of the change that created the node.
        pub czxid: i64,
        /// The zxid of the change that last modified the node's data.
        pub mzxid: i64,
        /// Creation time, milliseconds since the epoch.
        pub ctime: i64,
        /// Last modification time, milliseconds since the epoch.
        pub mtime: i64,
        /// Number of changes to the data.
        pub version: i32,
        /// Number of changes to the children.
        pub cversion: i32,
        /// Number of changes to the ACL.
        pub aversion: i32,
        /// Session id of the owner if the node is ephemeral, else 0.
        pub ephemeral_owner: i64,
        /// Length of the data.
        pub data_length: i32,
        /// Number of children.
        pub num_children: i32,
        /// The zxid of the change that last modified the children.
        pub pzxid: i64,
    }
}
