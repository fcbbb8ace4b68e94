//! Reading and setting ACLs: `getACL`, `setACL`, and `whoAmI`.

use crate::acl::{Acl, ClientInfo};
use crate::common_types::*;

/// `GetACLRequest {path}`.
pub type GetAclRequest<'a> = PathRecord<'a>;

record! {
    /// `GetACLResponse`.
    pub struct GetAclResponse<'a> {
        /// The node's ACL.
        pub acl: List<'a, Acl<'a>>,
        /// The node's metadata.
        pub stat: Stat,
    }
}

record! {
    /// `SetACLRequest`.
    pub struct SetAclRequest<'a> {
        /// The node.
        pub path: &'a str,
        /// The new ACL.
        pub acl: List<'a, Acl<'a>>,
        /// The ACL version (`aversion`) it must have, or -1 for any.
        pub version: i32,
    }
}

/// `SetACLResponse {stat}`.
pub type SetAclResponse = StatResponse;

record! {
    /// `WhoAmIResponse`: the identities the session is authenticated as.
    pub struct WhoAmIResponse<'a> {
        /// The identities.
        pub client_info: List<'a, ClientInfo<'a>>,
    }
}
