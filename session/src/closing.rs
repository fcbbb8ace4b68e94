//! [`Closing`]: a `close()` under way: its caller, its deadline, the closeSession it sent,
//! and the callers of `close()` who came later.

use std::time::Instant;

pub(crate) struct Closing<T> {
    /// The first caller's token and when the close gives up waiting for the server.
    pub(crate) under_way: Option<(Option<T>, Instant)>,
    /// The xid of the closeSession that `close()` sent.
    pub(crate) xid: Option<i32>,
    /// Callers of `close()` while one was under way, answered when it finishes.
    pub(crate) extra_tokens: Vec<T>,
}

impl<T> Closing<T> {
    pub(crate) fn new() -> Closing<T> {
        Closing {
            under_way: None,
            xid: None,
            extra_tokens: Vec::new(),
        }
    }
}
