//! Create modes (`CreateMode`) and permissions (`ZooDefs.Perms`).

use std::ops::{BitOr, BitOrAssign};

closed_enum! {
    /// How a node is created: its lifetime and whether a sequence number is appended.
    pub enum CreateMode as "create mode" {
        /// Lives until deleted.
        Persistent = 0 => "PERSISTENT",
        /// Deleted when the creating session ends.
        Ephemeral = 1 => "EPHEMERAL",
        /// Persistent, with a 10-digit sequence number appended to the name.
        PersistentSequential = 2 => "PERSISTENT_SEQUENTIAL",
        /// Ephemeral, with a 10-digit sequence number appended to the name.
        EphemeralSequential = 3 => "EPHEMERAL_SEQUENTIAL",
        /// Deleted by the server once its last child is gone.
        Container = 4 => "CONTAINER",
        /// Persistent, deleted when unmodified and childless for its TTL.
        PersistentWithTtl = 5 => "PERSISTENT_WITH_TTL",
        /// Sequential form of [`CreateMode::PersistentWithTtl`].
        PersistentSequentialWithTtl = 6 => "PERSISTENT_SEQUENTIAL_WITH_TTL",
    }
}

impl CreateMode {
    /// Whether the server appends a sequence number.
    pub fn is_sequential(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentSequential
                | CreateMode::EphemeralSequential
                | CreateMode::PersistentSequentialWithTtl
        )
    }

    /// Whether the node ends with the session.
    pub fn is_ephemeral(self) -> bool {
        matches!(
            self,
            CreateMode::Ephemeral | CreateMode::EphemeralSequential
        )
    }

    /// Whether the mode needs a TTL (and the `createTTL` opcode).
    pub fn is_ttl(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentWithTtl | CreateMode::PersistentSequentialWithTtl
        )
    }

    /// Whether the node is a container (created with the `createContainer` opcode).
    pub fn is_container(self) -> bool {
        self == CreateMode::Container
    }
}

/// A set of permissions of an ACL entry (`ZooDefs.Perms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Perms(pub i32);

impl Perms {
    /// Read data and list children.
    pub const READ: Perms = Perms(1);
    /// Set data.
    pub const WRITE: Perms = Perms(2);
    /// Create children.
    pub const CREATE: Perms = Perms(4);
    /// Delete children.
    pub const DELETE: Perms = Perms(8);
    /// Set ACLs.
    pub const ADMIN: Perms = Perms(16);
    /// Everything.
    pub const ALL: Perms = Perms(31);

    /// The wire value.
    pub const fn code(self) -> i32 {
        self.0
    }

    /// From the wire value (bits this crate does not know are kept).
    pub const fn from_code(code: i32) -> Self {
        Perms(code)
    }

    /// Whether every permission of `other` is in `self`.
    pub fn contains(self, other: Perms) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitOr for Perms {
    type Output = Perms;
    fn bitor(self, rhs: Perms) -> Perms {
        Perms(self.0 | rhs.0)
    }
}

impl BitOrAssign for Perms {
    fn bitor_assign(&mut self, rhs: Perms) {
        self.0 |= rhs.0
    }
}

int_field!(closed CreateMode);
int_field!(open Perms);
