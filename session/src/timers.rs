//! [`Timers`]: the connection's clocks, in one table: when it last heard and wrote, how long
//! it may stay silent, when to ping and to probe for a read-write server.

use std::time::{Duration, Instant};

pub(crate) struct Timers {
    /// When the last reply (a pong included) arrived: the read timeout counts from here.
    pub(crate) last_recv: Instant,
    /// When the last frame went out: the ping interval counts from here.
    pub(crate) last_send: Instant,
    pub(crate) read_timeout: Duration,
    pub(crate) ping_interval: Duration,
    /// Since when no session is in use (the expiry counts from here).
    pub(crate) disconnected_since: Option<Instant>,
    /// The time the current connection attempt was given (`lifecycle::attempt_timeout`).
    pub(crate) attempt_timeout: Duration,
    /// While on a read-only server: when to look for a read-write one, and the interval.
    pub(crate) rw_probe: Option<(Instant, Duration)>,
}

impl Timers {
    /// Before any connection: the timeouts are the requested session timeout's.
    pub(crate) fn new(now: Instant, session_timeout: Duration) -> Timers {
        Timers {
            last_recv: now,
            last_send: now,
            read_timeout: session_timeout,
            ping_interval: session_timeout,
            disconnected_since: None,
            attempt_timeout: Duration::ZERO,
            rw_probe: None,
        }
    }

    /// The next deadline of an open connection: its read timeout, its ping, its probe.
    pub(crate) fn open_deadline(&self) -> Instant {
        let mut next =
            (self.last_recv + self.read_timeout).min(self.last_send + self.ping_interval);
        if let Some((probe_at, _)) = self.rw_probe {
            next = next.min(probe_at);
        }
        next
    }
}
