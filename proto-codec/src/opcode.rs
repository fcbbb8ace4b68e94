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
        self.row().since
    }

    /// Whether a server runs the operation as a transaction of the tree: it goes through the
    /// leader, takes a zxid of its own (a failed one too) and is ordered with every other
    /// write. True for create, create2, createContainer, createTTL, delete, deleteContainer,
    /// setData, setACL, check, multi and reconfig: the operations ZooKeeper's
    /// `CommitProcessor` always commits.
    ///
    /// `check` changes nothing, but is a transaction all the same (its version test is
    /// ordered with the writes); this client sends it only inside a multi. `reconfig` writes
    /// `/zookeeper/config`. createSession and closeSession are transactions too, of global
    /// sessions only; they change sessions rather than nodes and are not counted here.
    ///
    /// ```
    /// use zkrs_codec::OpCode;
    /// assert!(OpCode::SetData.is_write());
    /// assert!(OpCode::Check.is_write());
    /// assert!(!OpCode::GetData.is_write());
    /// assert!(!OpCode::Sync.is_write());
    /// ```
    pub const fn is_write(self) -> bool {
        self.row().write
    }

    /// Whether the request's record starts with a path (a Jute string): the node it acts
    /// on, the root of the watches it adds, checks or removes, or getEphemerals' prefix. In
    /// a request frame that string's length is at bytes 12..16, after the frame's length,
    /// the xid and the opcode.
    ///
    /// Not for deleteContainer, whose body (a server makes it for itself) is the path's bare
    /// bytes with no length before them.
    ///
    /// ```
    /// use zkrs_codec::OpCode;
    /// assert!(OpCode::GetData.request_starts_with_path());
    /// assert!(OpCode::AddWatch.request_starts_with_path());
    /// assert!(!OpCode::Multi.request_starts_with_path());
    /// ```
    pub const fn request_starts_with_path(self) -> bool {
        self.row().path_first
    }

    /// The record the body of a successful reply holds. A failed request's reply has no
    /// body, whatever the operation.
    ///
    /// ```
    /// use zkrs_codec::{OpCode, ReplyRecord};
    /// assert_eq!(OpCode::Exists.reply_record(), ReplyRecord::Stat);
    /// assert_eq!(OpCode::Reconfig.reply_record(), ReplyRecord::GetData);
    /// assert_eq!(OpCode::Delete.reply_record(), ReplyRecord::Empty);
    /// ```
    pub const fn reply_record(self) -> ReplyRecord {
        self.row().reply
    }

    /// Whether the body of a successful reply ends with the node's Stat (68 bytes): see
    /// [`ReplyRecord::ends_with_stat`].
    ///
    /// ```
    /// use zkrs_codec::OpCode;
    /// assert!(OpCode::SetData.reply_ends_with_stat());
    /// assert!(!OpCode::GetChildren.reply_ends_with_stat());
    /// ```
    pub const fn reply_ends_with_stat(self) -> bool {
        self.reply_record().ends_with_stat()
    }

    /// The table every fact above reads: one row per opcode (is a write, request starts
    /// with a path, reply record, first server line), and no wildcard, so a new opcode does
    /// not build until its row is written.
    const fn row(self) -> Row {
        use ReplyRecord as R;
        const V3_6: Option<(u32, u32)> = Some((3, 6));
        const V3_7: Option<(u32, u32)> = Some((3, 7));
        match self {
            OpCode::Notification => Row::new(NOT_WRITE, NO_PATH, R::Empty),
            OpCode::Create => Row::new(WRITE, PATH, R::Create),
            OpCode::Delete => Row::new(WRITE, PATH, R::Empty),
            OpCode::Exists => Row::new(NOT_WRITE, PATH, R::Stat),
            OpCode::GetData => Row::new(NOT_WRITE, PATH, R::GetData),
            OpCode::SetData => Row::new(WRITE, PATH, R::Stat),
            OpCode::GetAcl => Row::new(NOT_WRITE, PATH, R::GetAcl),
            OpCode::SetAcl => Row::new(WRITE, PATH, R::Stat),
            OpCode::GetChildren => Row::new(NOT_WRITE, PATH, R::GetChildren),
            OpCode::Sync => Row::new(NOT_WRITE, PATH, R::Sync),
            OpCode::Ping => Row::new(NOT_WRITE, NO_PATH, R::Empty),
            OpCode::GetChildren2 => Row::new(NOT_WRITE, PATH, R::GetChildren2),
            // Inside a multi, the only place this client sends it, a check's result has no
            // body. ZooKeeper answers a lone one with a SetDataResponse around a Stat the
            // check's transaction never sets (null): nothing to read there either.
            OpCode::Check => Row::new(WRITE, PATH, R::Empty),
            OpCode::Multi => Row::new(WRITE, NO_PATH, R::Multi),
            OpCode::Create2 => Row::new(WRITE, PATH, R::Create2),
            OpCode::Reconfig => Row::new(WRITE, NO_PATH, R::GetData),
            OpCode::CheckWatches => Row::new(NOT_WRITE, PATH, R::Empty),
            OpCode::RemoveWatches => Row::new(NOT_WRITE, PATH, R::Empty),
            OpCode::CreateContainer => Row::new(WRITE, PATH, R::Create2),
            OpCode::DeleteContainer => Row::new(WRITE, NO_PATH, R::Empty),
            OpCode::CreateTtl => Row::new(WRITE, PATH, R::Create2),
            OpCode::MultiRead => Row::new(NOT_WRITE, NO_PATH, R::Multi).since(V3_6),
            OpCode::Auth => Row::new(NOT_WRITE, NO_PATH, R::Empty),
            OpCode::SetWatches => Row::new(NOT_WRITE, NO_PATH, R::Empty),
            OpCode::Sasl => Row::new(NOT_WRITE, NO_PATH, R::SetSasl),
            OpCode::GetEphemerals => Row::new(NOT_WRITE, PATH, R::GetEphemerals).since(V3_6),
            OpCode::GetAllChildrenNumber => {
                Row::new(NOT_WRITE, PATH, R::GetAllChildrenNumber).since(V3_6)
            }
            OpCode::SetWatches2 => Row::new(NOT_WRITE, NO_PATH, R::Empty).since(V3_6),
            OpCode::AddWatch => Row::new(NOT_WRITE, PATH, R::Error).since(V3_6),
            OpCode::WhoAmI => Row::new(NOT_WRITE, NO_PATH, R::WhoAmI).since(V3_7),
            // Answered with a ConnectResponse, outside the request/reply framing.
            OpCode::CreateSession => Row::new(NOT_WRITE, NO_PATH, R::Empty),
            OpCode::CloseSession => Row::new(NOT_WRITE, NO_PATH, R::Empty),
            // The type of a failed operation's result inside a multi reply, not a request.
            OpCode::Error => Row::new(NOT_WRITE, NO_PATH, R::Empty),
        }
    }
}

/// The record the body of a successful reply holds, by the operation it answers
/// ([`OpCode::reply_record`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
// A later server may answer a new operation with a record of its own.
#[non_exhaustive]
pub enum ReplyRecord {
    /// No body: delete, check, checkWatches, removeWatches, setWatches, setWatches2, ping,
    /// auth, closeSession; and the codes that are not requests a client sends and reads
    /// the answer of (notification, error, createSession, deleteContainer).
    Empty,
    /// `CreateResponse {path}` ([`CreateResponse`](crate::CreateResponse)): create.
    Create,
    /// `Create2Response {path, stat}` ([`Create2Response`](crate::Create2Response)): create2,
    /// createContainer, createTTL.
    Create2,
    /// `{stat}` ([`StatResponse`](crate::StatResponse)): exists, setData, setACL.
    Stat,
    /// `GetDataResponse {data, stat}` ([`GetDataResponse`](crate::GetDataResponse)):
    /// getData, and reconfig (the new configuration and `/zookeeper/config`'s Stat).
    GetData,
    /// `GetACLResponse {acl, stat}` ([`GetAclResponse`](crate::GetAclResponse)): getACL.
    GetAcl,
    /// `GetChildrenResponse {children}` ([`GetChildrenResponse`](crate::GetChildrenResponse)):
    /// getChildren.
    GetChildren,
    /// `GetChildren2Response {children, stat}`
    /// ([`GetChildren2Response`](crate::GetChildren2Response)): getChildren2.
    GetChildren2,
    /// `SyncResponse {path}` ([`SyncResponse`](crate::SyncResponse)): sync.
    Sync,
    /// `MultiResponse` ([`MultiResponse`](crate::MultiResponse)): multi, multiRead.
    Multi,
    /// `GetEphemeralsResponse {ephemerals}`
    /// ([`GetEphemeralsResponse`](crate::GetEphemeralsResponse)): getEphemerals.
    GetEphemerals,
    /// `GetAllChildrenNumberResponse {totalNumber}`
    /// ([`GetAllChildrenNumberResponse`](crate::GetAllChildrenNumberResponse)):
    /// getAllChildrenNumber.
    GetAllChildrenNumber,
    /// `WhoAmIResponse {clientInfo}` ([`WhoAmIResponse`](crate::WhoAmIResponse)): whoAmI.
    WhoAmI,
    /// `SetSASLResponse {token}` ([`SetSaslResponse`](crate::SetSaslResponse)): sasl.
    SetSasl,
    /// `ErrorResponse {err}` ([`ErrorResponse`](crate::ErrorResponse)): addWatch, whose
    /// `err` is always 0 (a failure is in the reply header, with no body).
    Error,
}

impl ReplyRecord {
    /// Whether the record ends with a Stat (68 bytes): create2's, the `{stat}` replies,
    /// getData's, getACL's and getChildren2's.
    pub const fn ends_with_stat(self) -> bool {
        matches!(
            self,
            ReplyRecord::Create2
                | ReplyRecord::Stat
                | ReplyRecord::GetData
                | ReplyRecord::GetAcl
                | ReplyRecord::GetChildren2
        )
    }
}

// The columns of the table ([`OpCode::row`]) that are yes or no, named.
const WRITE: bool = true;
const NOT_WRITE: bool = false;
const PATH: bool = true;
const NO_PATH: bool = false;

/// One opcode's facts, for the methods of [`OpCode`] to read.
#[derive(Clone, Copy)]
struct Row {
    write: bool,
    path_first: bool,
    reply: ReplyRecord,
    since: Option<(u32, u32)>,
}

impl Row {
    const fn new(write: bool, path_first: bool, reply: ReplyRecord) -> Row {
        Row {
            write,
            path_first,
            reply,
            since: None,
        }
    }

    const fn since(self, since: Option<(u32, u32)>) -> Row {
        Row { since, ..self }
    }
}

#[cfg(test)]
#[path = "opcode_tests.rs"]
mod tests;
