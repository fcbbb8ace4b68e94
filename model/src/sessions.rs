//! The session table: ids, passwords, timeouts, and expiry in tick-sized buckets as
//! ZooKeeper's `ExpiryQueue` computes them.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::connection_id::ConnectionId;

/// One live session.
#[derive(Debug, Clone)]
pub(crate) struct SessionEntry {
    pub timeout_ms: i32,
    pub passwd: [u8; 16],
    pub expires_at: Duration,
    pub connection: Option<ConnectionId>,
}

/// Every live session.
#[derive(Debug, Clone)]
pub(crate) struct SessionTable {
    pub sessions: BTreeMap<i64, SessionEntry>,
    next_id: i64,
    tick: Duration,
}

/// splitmix64: a fixed mixing of the session id, so a password is stable and unguessable
/// enough for tests (no randomness: the model is deterministic).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `roundToNextInterval(now + timeout)` for ticks of `tick`.
fn expiry(tick: Duration, now: Duration, timeout_ms: i32) -> Duration {
    let tick = tick.as_millis() as u64;
    let at = now.as_millis() as u64 + timeout_ms.max(0) as u64;
    Duration::from_millis((at / tick + 1) * tick)
}

impl SessionTable {
    pub(crate) fn new(server_id: u8, tick: Duration) -> Self {
        SessionTable {
            sessions: BTreeMap::new(),
            next_id: (i64::from(server_id) << 56) | 0x0001_0000_0000,
            tick: tick.max(Duration::from_millis(1)),
        }
    }

    /// `roundToNextInterval(now + timeout)`.
    pub(crate) fn expiry(&self, now: Duration, timeout_ms: i32) -> Duration {
        expiry(self.tick, now, timeout_ms)
    }

    pub(crate) fn create(&mut self, now: Duration, timeout_ms: i32) -> (i64, [u8; 16]) {
        let id = self.next_id;
        self.next_id += 1;
        let passwd = Self::password(id);
        let expires_at = self.expiry(now, timeout_ms);
        self.sessions.insert(
            id,
            SessionEntry {
                timeout_ms,
                passwd,
                expires_at,
                connection: None,
            },
        );
        (id, passwd)
    }

    /// Every session's expiry counted from `now`, as if each had been added now (a member
    /// that takes a replica's sessions instead of replaying the log that made them).
    /// Every session as if none were connected here (the copy a restarted member takes:
    /// its connections are gone).
    pub(crate) fn forget_connections(&mut self) {
        for entry in self.sessions.values_mut() {
            entry.connection = None;
        }
    }

    pub(crate) fn added_again_at(&mut self, now: Duration) {
        let tick = self.tick;
        for entry in self.sessions.values_mut() {
            entry.expires_at = expiry(tick, now, entry.timeout_ms);
        }
    }

    /// Adds a session the ensemble created (a member applying createSession).
    pub(crate) fn insert(&mut self, id: i64, passwd: [u8; 16], timeout_ms: i32, now: Duration) {
        let expires_at = self.expiry(now, timeout_ms);
        self.sessions.insert(
            id,
            SessionEntry {
                timeout_ms,
                passwd,
                expires_at,
                connection: None,
            },
        );
        self.next_id = self.next_id.max(id + 1);
    }

    /// The password of a session id (a fixed mixing of the id: deterministic).
    pub(crate) fn password(id: i64) -> [u8; 16] {
        let a = mix(id as u64);
        let b = mix(a);
        let mut p = [0u8; 16];
        p[..8].copy_from_slice(&a.to_be_bytes());
        p[8..].copy_from_slice(&b.to_be_bytes());
        p
    }

    /// Moves the session's expiry to `now + timeout` (rounded up to the next tick).
    pub(crate) fn touch(&mut self, id: i64, now: Duration) {
        let Some(timeout) = self.sessions.get(&id).map(|s| s.timeout_ms) else {
            return;
        };
        let at = self.expiry(now, timeout);
        if let Some(s) = self.sessions.get_mut(&id) {
            s.expires_at = at;
        }
    }

    /// The sessions whose time is up at `now`.
    pub(crate) fn expired(&self, now: Duration) -> Vec<i64> {
        self.sessions
            .iter()
            .filter(|(_, s)| s.expires_at <= now)
            .map(|(id, _)| *id)
            .collect()
    }

    /// The earliest expiry.
    pub(crate) fn next_expiry(&self) -> Option<Duration> {
        self.sessions.values().map(|s| s.expires_at).min()
    }
}
