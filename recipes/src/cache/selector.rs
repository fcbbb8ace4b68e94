//! [`TreeCacheSelector`]: which parts of a subtree a cache descends into and keeps.

/// Chooses what a [`TreeCache`](super::TreeCache) (or a
/// [`CuratorCache`](super::CuratorCache) that fell back to one) descends into and caches, as
/// Curator's `TreeCacheSelector`. Both methods get full paths; both default to yes.
///
/// ```
/// use zkrs_recipes::cache::TreeCacheSelector;
///
/// /// Caches everything but the (large) `/app/logs` subtree.
/// struct SkipLogs;
/// impl TreeCacheSelector for SkipLogs {
///     fn accept_child(&self, path: &str) -> bool {
///         path != "/app/logs"
///     }
/// }
/// ```
pub trait TreeCacheSelector: Send + Sync + 'static {
    /// Whether to list (and watch) the children of `path`.
    fn traverse_children(&self, _path: &str) -> bool {
        true
    }

    /// Whether to cache the child at `path` (a child not accepted is not descended into).
    fn accept_child(&self, _path: &str) -> bool {
        true
    }
}

/// The selector that takes every node.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllNodes;

impl TreeCacheSelector for AllNodes {}
