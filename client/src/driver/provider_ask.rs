//! [`ProviderAsk`]: the host provider, asked for the hosts before each connection attempt,
//! and the attempt that waits for its answer.

use std::time::Duration;

use crate::host_provider::SharedProvider;
use crate::session::ConnId;

pub(super) struct ProviderAsk {
    /// Asked before every connection attempt, if set.
    pub(super) shared: Option<SharedProvider>,
    /// The attempt that waits for the provider's answer: its connection, timeout and
    /// shuffle.
    pub(super) pending: Option<(ConnId, Duration, u64)>,
    /// The provider's list was just taken (and moved the client): the next attempt uses it
    /// without asking again.
    pub(super) fresh: bool,
}

impl ProviderAsk {
    pub(super) fn new(shared: Option<SharedProvider>) -> ProviderAsk {
        ProviderAsk {
            shared,
            pending: None,
            fresh: false,
        }
    }
}
