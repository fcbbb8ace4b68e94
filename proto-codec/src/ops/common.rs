//! Layouts shared by several operations.

use crate::error_code::ErrorCode;
use crate::stat::Stat;

record! {
    /// A record holding one path: `SyncRequest`, `SyncResponse`, `GetACLRequest`,
    /// `GetAllChildrenNumberRequest`, `GetEphemeralsRequest` (a path prefix),
    /// `CreateResponse`.
    pub struct PathRecord<'a> {
        /// The path.
        pub path: &'a str,
    }
}

record! {
    /// A read of one node that may leave a watch: `ExistsRequest`, `GetDataRequest`,
    /// `GetChildrenRequest`, `GetChildren2Request`.
    pub struct PathWatchRequest<'a> {
        /// The node.
        pub path: &'a str,
        /// Whether to leave a one-shot watch on it.
        pub watch: bool,
    }
}

record! {
    /// A conditional operation on one node: `DeleteRequest`, `CheckVersionRequest`.
    pub struct PathVersionRequest<'a> {
        /// The node.
        pub path: &'a str,
        /// The version it must have, or -1 for any.
        pub version: i32,
    }
}

record! {
    /// A reply holding only a Stat: `ExistsResponse`, `SetDataResponse`, `SetACLResponse`.
    pub struct StatResponse {
        /// The node's metadata.
        pub stat: Stat,
    }
}

record! {
    /// `ErrorResponse`: an error result inside a multi reply, and addWatch's reply (`err` 0).
    pub struct ErrorResponse {
        /// The error.
        pub err: ErrorCode,
    }
}

/// `SyncRequest {path}`.
pub type SyncRequest<'a> = PathRecord<'a>;
/// `SyncResponse {path}`.
pub type SyncResponse<'a> = PathRecord<'a>;
/// `ExistsRequest {path, watch}`.
pub type ExistsRequest<'a> = PathWatchRequest<'a>;
/// `ExistsResponse {stat}`.
pub type ExistsResponse = StatResponse;
/// `DeleteRequest {path, version}`.
pub type DeleteRequest<'a> = PathVersionRequest<'a>;
/// `CheckVersionRequest {path, version}`.
pub type CheckVersionRequest<'a> = PathVersionRequest<'a>;
