//! Listing children: `getChildren`, `getChildren2`, `getAllChildrenNumber`, `getEphemerals`.

use crate::common_types::*;

/// `GetChildrenRequest {path, watch}`.
pub type GetChildrenRequest<'a> = PathWatchRequest<'a>;
/// `GetChildren2Request {path, watch}`.
pub type GetChildren2Request<'a> = PathWatchRequest<'a>;

record! {
    /// `GetChildrenResponse`: the child names, borrowed from the frame.
    pub struct GetChildrenResponse<'a> {
        /// Names of the children (not full paths), in the server's order.
        pub children: List<'a, &'a str>,
    }
}

record! {
    /// `GetChildren2Response`: the child names and the parent's Stat.
    pub struct GetChildren2Response<'a> {
        /// Names of the children (not full paths), in the server's order.
        pub children: List<'a, &'a str>,
        /// The parent's metadata.
        pub stat: Stat,
    }
}

/// `GetAllChildrenNumberRequest {path}`.
pub type GetAllChildrenNumberRequest<'a> = PathRecord<'a>;

record! {
    /// `GetAllChildrenNumberResponse`: the number of descendants.
    pub struct GetAllChildrenNumberResponse {
        /// Number of nodes below the path (not counting the path).
        pub total_number: i32,
    }
}

/// `GetEphemeralsRequest {prefixPath}`.
pub type GetEphemeralsRequest<'a> = PathRecord<'a>;

record! {
    /// `GetEphemeralsResponse`: full paths of the session's ephemeral nodes.
    pub struct GetEphemeralsResponse<'a> {
        /// Full paths.
        pub ephemerals: List<'a, &'a str>,
    }
}
