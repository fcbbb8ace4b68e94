//! Error codes (`KeeperException.Code`).

open_enum! {
    /// The `err` of a reply header. Unknown codes are kept as [`ErrorCode::Unknown`].
    pub enum ErrorCode {
        /// Success.
        Ok = 0 => "Ok",
        /// A system or server-side error.
        SystemError = -1 => "SystemError",
        /// A runtime inconsistency was found.
        RuntimeInconsistency = -2 => "RuntimeInconsistency",
        /// A data inconsistency was found.
        DataInconsistency = -3 => "DataInconsistency",
        /// The connection to the server was lost.
        ConnectionLoss = -4 => "ConnectionLoss",
        /// Error while marshalling or unmarshalling data.
        MarshallingError = -5 => "MarshallingError",
        /// The operation is not implemented.
        Unimplemented = -6 => "Unimplemented",
        /// The operation timed out.
        OperationTimeout = -7 => "OperationTimeout",
        /// Invalid arguments.
        BadArguments = -8 => "BadArguments",
        /// The session is not known to the server.
        UnknownSession = -12 => "UnknownSession",
        /// No quorum of the new configuration is connected and up to date.
        NewConfigNoQuorum = -13 => "NewConfigNoQuorum",
        /// Another reconfiguration is in progress.
        ReconfigInProgress = -14 => "ReconfigInProgress",
        /// API errors (generic).
        ApiError = -100 => "ApiError",
        /// The node does not exist.
        NoNode = -101 => "NoNode",
        /// Not authenticated for this operation.
        NoAuth = -102 => "NoAuth",
        /// The version does not match.
        BadVersion = -103 => "BadVersion",
        /// Ephemeral nodes may not have children.
        NoChildrenForEphemerals = -108 => "NoChildrenForEphemerals",
        /// The node already exists.
        NodeExists = -110 => "NodeExists",
        /// The node has children.
        NotEmpty = -111 => "NotEmpty",
        /// The session has expired.
        SessionExpired = -112 => "SessionExpired",
        /// Invalid callback.
        InvalidCallback = -113 => "InvalidCallback",
        /// Invalid ACL.
        InvalidAcl = -114 => "InvalidACL",
        /// Authentication failed.
        AuthFailed = -115 => "AuthFailed",
        /// The session moved to another server.
        SessionMoved = -118 => "SessionMoved",
        /// A write was sent to a read-only server.
        NotReadOnly = -119 => "NotReadOnly",
        /// An ephemeral create on a local session.
        EphemeralOnLocalSession = -120 => "EphemeralOnLocalSession",
        /// No such watcher to remove.
        NoWatcher = -121 => "NoWatcher",
        /// The request timed out waiting on the server.
        RequestTimeout = -122 => "RequestTimeout",
        /// Reconfiguration is disabled.
        ReconfigDisabled = -123 => "ReconfigDisabled",
        /// The session was closed because SASL authentication is required.
        SessionClosedRequireSaslAuth = -124 => "SessionClosedRequireSaslAuth",
        /// A quota was exceeded.
        QuotaExceeded = -125 => "QuotaExceeded",
        /// The server throttled the operation.
        ThrottledOp = -127 => "ThrottledOp",
    }
}

impl ErrorCode {
    /// Whether this is [`ErrorCode::Ok`].
    pub fn is_ok(self) -> bool {
        self == ErrorCode::Ok
    }
}

int_field!(open ErrorCode);
