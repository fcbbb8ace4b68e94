//! What a cache holds: [`ChildData`].

use zkrs_client::{Bytes, Stat};

/// One cached node: its path, Stat and (if the cache keeps data) its data.
///
/// The data is a copy owned by the cache, not a slice of the reply frame it came in: a
/// long-lived cache of small values would otherwise pin whole read buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildData {
    /// The full path, as the client sees it (chroot removed).
    pub path: String,
    /// The node's Stat when it was last read.
    pub stat: Stat,
    /// The node's data, or `None` when the cache was told not to keep data.
    pub data: Option<Bytes>,
}

impl ChildData {
    /// The last segment of the path.
    pub fn name(&self) -> &str {
        crate::framework::node_name(&self.path)
    }

    /// The data, or an empty slice when the cache does not keep data.
    pub fn bytes(&self) -> &[u8] {
        self.data.as_deref().unwrap_or_default()
    }
}
