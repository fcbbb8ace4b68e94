//! Reading and writing a node's data: `getData`, `setData`.

use crate::common_types::*;

/// `GetDataRequest {path, watch}`.
pub type GetDataRequest<'a> = PathWatchRequest<'a>;

record! {
    /// `GetDataResponse`: the data (borrowed from the frame) and the Stat. Also the reply of
    /// `reconfig`, whose data is the new configuration.
    pub struct GetDataResponse<'a> {
        /// The data; `None` when the node was created with null data.
        pub data: Option<&'a [u8]>,
        /// The node's metadata.
        pub stat: Stat,
    }
}

record! {
    /// `SetDataRequest`.
    pub struct SetDataRequest<'a> {
        /// The node.
        pub path: &'a str,
        /// The new data.
        pub data: Option<&'a [u8]>,
        /// The version it must have, or -1 for any.
        pub version: i32,
    }
}

/// `SetDataResponse {stat}`.
pub type SetDataResponse = StatResponse;
