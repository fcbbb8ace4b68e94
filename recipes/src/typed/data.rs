//! [`TypedData`]: a node's value as read (or written), with its path and Stat.

use zkrs_client::Stat;

/// One node's value with its path and Stat, as Curator's `ZNode<T>` (and its `Versioned<T>`:
/// the version is `stat.version`, what [`TypedNode::set`](super::TypedNode::set) and
/// [`TypedNode::delete`](super::TypedNode::delete) take to write only over what was read).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TypedData<T> {
    /// The node's path, as the client sees it (chroot removed).
    pub path: String,
    /// The node's Stat when the value was read or written.
    pub stat: Stat,
    /// The value.
    pub value: T,
}

impl<T> TypedData<T> {
    pub(crate) fn new(path: impl Into<String>, stat: Stat, value: T) -> TypedData<T> {
        TypedData {
            path: path.into(),
            stat,
            value,
        }
    }

    /// The data version the value was read or written at (`stat.version`).
    pub fn version(&self) -> i32 {
        self.stat.version
    }
}
