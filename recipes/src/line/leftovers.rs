//! What a way out (an error, a timeout, a dropped future) leaves to delete: our node, or,
//! while a create's outcome is unknown, whatever carries our protected prefix.

use zkrs_client::Client;

use crate::framework::{guaranteed_delete, guaranteed_delete_protected, ProtectedName};

/// Deletes what an abandoned attempt left behind when dropped, whatever the way out: a
/// line's runner and the semaphore's lease node.
pub(crate) struct Leftovers<'a> {
    pub(crate) client: &'a Client,
    pub(crate) dir: &'a str,
    pub(crate) protected: &'a ProtectedName,
    /// Our node, once known.
    pub(crate) node: Option<String>,
    /// A create was sent and its outcome is unknown.
    pub(crate) in_doubt: bool,
}

impl Drop for Leftovers<'_> {
    fn drop(&mut self) {
        if let Some(node) = self.node.take() {
            guaranteed_delete(self.client, node);
        } else if self.in_doubt {
            guaranteed_delete_protected(
                self.client,
                self.dir.to_string(),
                self.protected.prefix().to_string(),
            );
        }
    }
}
