//! [`KnownBugs`]: the core's known bugs that the fuzz target looks past, so that the fuzzer
//! finds others.

/// Known bugs of the core that [`session`](super::session) looks past, so that the fuzzer can
/// find others ([`session_strict`](super::session_strict) tolerates none). Each has an
/// `#[ignore]`d test in `session/tests/session_core.rs` and a reproducer in
/// `session/tests/session_fuzz_seeds.rs`; set its flag to `false` here once it is fixed.
#[derive(Debug, Clone, Copy)]
pub struct KnownBugs {
    /// `add_auth` with a token while not connected, then `close()`: the token is never
    /// answered (`finish_close` does not drain `pending_auth_later`).
    pub add_auth_token_leak: bool,
    /// `handle_read_write_found` emits two `Connect` events (the next host's, then the
    /// read-write host's); during `close()` it emits `Connect` after `Closed`.
    pub read_write_found: bool,
    /// A server that grants session id 0: once disconnected, `poll_timeout` stays in the past.
    pub session_id_zero_spin: bool,
    /// A closeSession request handed to `submit`, answered while `close()` is under way:
    /// `handle_frame` finishes the close and drops that request's token unanswered.
    pub submitted_close_session_token_leak: bool,
}

/// The known bugs [`session`](super::session) tolerates today.
pub const KNOWN_BUGS: KnownBugs = KnownBugs {
    add_auth_token_leak: false,
    read_write_found: false,
    session_id_zero_spin: false,
    submitted_close_session_token_leak: false,
};

/// None: what [`super::session_strict`] tolerates.
pub(super) const STRICT: KnownBugs = KnownBugs {
    add_auth_token_leak: false,
    read_write_found: false,
    session_id_zero_spin: false,
    submitted_close_session_token_leak: false,
};
