//! Creating nodes: `create`, `create2`, `createContainer` and `createTTL`.

use crate::acl::Acl;
use crate::common_types::*;

record! {
    /// `CreateRequest`, sent with the opcodes create, create2 and createContainer.
    pub struct CreateRequest<'a> {
        /// The node to create (the prefix, for sequential modes).
        pub path: &'a str,
        /// Its data (`None` is sent as a null buffer).
        pub data: Option<&'a [u8]>,
        /// Its ACL.
        pub acl: List<'a, Acl<'a>>,
        /// Its mode.
        pub mode: CreateMode,
    }
}

record! {
    /// `CreateTTLRequest`, sent with the opcode createTTL.
    pub struct CreateTtlRequest<'a> {
        /// The node to create.
        pub path: &'a str,
        /// Its data.
        pub data: Option<&'a [u8]>,
        /// Its ACL.
        pub acl: List<'a, Acl<'a>>,
        /// A TTL mode.
        pub mode: CreateMode,
        /// Time to live in milliseconds.
        pub ttl_ms: i64,
    }
}

/// `CreateResponse {path}`: the created path (with its sequence suffix).
pub type CreateResponse<'a> = PathRecord<'a>;

record! {
    /// `Create2Response`: the created path and the new node's Stat.
    pub struct Create2Response<'a> {
        /// The created path.
        pub path: &'a str,
        /// The new node's metadata.
        pub stat: Stat,
    }
}
