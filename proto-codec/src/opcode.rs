//! Operation codes (`ZooDefs.OpCode`) and the special xids.

closed_enum! {
    /// The `type` of a request header: which operation a request is.
    pub enum OpCode as "opcode" {
        /// A watch notification (only ever in the header of a server-initiated packet).
        Notification = 0 => "notification",
        /// `create`.
        Create = 1 => "create",
        /// `delete`.
        Delete = 2 => "delete",
        /// `exists`.
        Exists = 3 => "exists",
        /// `getData`.
        GetData = 4 => "getData",
        /// `setData`.
        SetData = 5 => "setData",
        /// `getACL`.
        GetAcl = 6 => "getACL",
        /// `setACL`.
        SetAcl = 7 => "setACL",
        /// `getChildren`.
        GetChildren = 8 => "getChildren",
        /// `sync`.
        Sync = 9 => "sync",
        /// A ping (keep-alive).
        Ping = 11 => "ping",
        /// `getChildren2`: children and the parent's Stat.
        GetChildren2 = 12 => "getChildren2",
        /// `check` (version check inside a multi).
        Check = 13 => "check",
        /// `multi`: an atomic transaction of writes.
        Multi = 14 => "multi",
        /// `create2`: create returning the Stat.
        Create2 = 15 => "create2",
        /// `reconfig`.
        Reconfig = 16 => "reconfig",
        /// `checkWatches`.
        CheckWatches = 17 => "checkWatches",
        /// `removeWatches`.
        RemoveWatches = 18 => "removeWatches",
        /// `createContainer`.
        CreateContainer = 19 => "createContainer",
        /// `deleteContainer` (server-internal).
        DeleteContainer = 20 => "deleteContainer",
        /// `createTTL`.
        CreateTtl = 21 => "createTTL",
        /// `multiRead`: several reads in one round trip.
        MultiRead = 22 => "multiRead",
        /// Authentication packet.
        Auth = 100 => "auth",
        /// `setWatches`: re-register watches after a reconnect.
        SetWatches = 101 => "setWatches",
        /// SASL packet.
        Sasl = 102 => "sasl",
        /// `getEphemerals`.
        GetEphemerals = 103 => "getEphemerals",
        /// `getAllChildrenNumber`.
        GetAllChildrenNumber = 104 => "getAllChildrenNumber",
        /// `setWatches2`: like setWatches, with persistent watches.
        SetWatches2 = 105 => "setWatches2",
        /// `addWatch`: a persistent or persistent recursive watch.
        AddWatch = 106 => "addWatch",
        /// `whoAmI`.
        WhoAmI = 107 => "whoAmI",
        /// Session creation (server-internal).
        CreateSession = -10 => "createSession",
        /// Closing the session.
        CloseSession = -11 => "closeSession",
        /// The type of an error result inside a multi reply.
        Error = -1 => "error",
    }
}

int_field!(closed OpCode);

/// The xids with a fixed meaning. Ordinary requests use 1..=i32::MAX, wrapping back to 1.
pub mod xid {
    /// A watch notification from the server.
    pub const NOTIFICATION: i32 = -1;
    /// A ping and its reply.
    pub const PING: i32 = -2;
    /// An authentication packet and its reply.
    pub const AUTH: i32 = -4;
    /// SetWatches / SetWatches2 and their replies.
    pub const SET_WATCHES: i32 = -8;
}

impl OpCode {
    /// The first ZooKeeper release line whose servers know this operation, `(3, 6)` for 3.6.0,
    /// or `None` for what every server this crate speaks to (3.5 on) knows. An older server
    /// answers such a request `UNIMPLEMENTED` and closes the connection.
    ///
    /// ```
    /// use zkrs_codec::OpCode;
    /// assert_eq!(OpCode::AddWatch.server_since(), Some((3, 6)));
    /// assert_eq!(OpCode::WhoAmI.server_since(), Some((3, 7)));
    /// assert_eq!(OpCode::GetData.server_since(), None);
    /// ```
    pub const fn server_since(self) -> Option<(u32, u32)> {
        match self {
            OpCode::MultiRead
            | OpCode::GetEphemerals
            | OpCode::GetAllChildrenNumber
            | OpCode::SetWatches2
            | OpCode::AddWatch => Some((3, 6)),
            OpCode::WhoAmI => Some((3, 7)),
            _ => None,
        }
    }
}
