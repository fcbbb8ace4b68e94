//! Nodes that stay: [`PersistentNode`] keeps a node of any mode in place across connection
//! and session loss, [`PersistentTtlNode`] keeps a node alive with a TTL "touch" child, and
//! [`GroupMember`] is group membership on top of them (Curator's layouts).

mod group_member;
mod persistent;
mod ttl;

pub use group_member::{GroupMember, GroupMemberBuilder};
pub use persistent::{PersistentNode, PersistentNodeBuilder, PersistentNodeEvent};
pub use ttl::{PersistentTtlNode, PersistentTtlNodeBuilder, TOUCH_NODE};
