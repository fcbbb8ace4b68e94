//! The session table: ids, passwords, timeouts, and expiry in tick-sized buckets as
//! ZooKeeper's `ExpiryQueue` computes them.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::config::Randomness;
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
    passwords: Passwords,
}

/// The first session id of a server started at wall-clock `clock_ms`, as ZooKeeper's
/// `SessionTrackerImpl.initializeNextSessionId` makes it: the server id in the high byte, the
/// clock in the next five, so a server started later does not hand out the ids an earlier
/// one did (a stale client of the earlier one is told its session expired).
pub(crate) fn first_session_id(server_id: u8, clock_ms: i64) -> i64 {
    let id = (((clock_ms as u64) << 24) >> 8) as i64 | (i64::from(server_id) << 56);
    // The container owner's mark is no session's id (ZooKeeper skips it too).
    if id == crate::tree::CONTAINER_OWNER {
        id + 1
    } else {
        id
    }
}

/// Where passwords come from: the model draws no randomness of its own (see
/// [`Randomness`]).
#[derive(Debug, Clone)]
pub(crate) enum Passwords {
    Os,
    /// SplitMix64's state (`zkrs_codec::__private::splitmix64` steps it).
    Seeded(u64),
}

impl Passwords {
    pub(crate) fn new(randomness: Randomness) -> Self {
        match randomness {
            Randomness::Seeded(seed) => Passwords::Seeded(seed),
            _ => Passwords::Os,
        }
    }

    /// The next password.
    pub(crate) fn next(&mut self) -> [u8; 16] {
        let mut p = [0u8; 16];
        match self {
            Passwords::Os => os_random(&mut p),
            Passwords::Seeded(state) => {
                for chunk in p.chunks_mut(8) {
                    chunk.copy_from_slice(&zkrs_codec::__private::splitmix64(state).to_be_bytes());
                }
            }
        }
        p
    }
}

/// Fills `buf` from `/dev/urandom`; where there is none, from SipHash under the standard
/// library's random per-process keys (`RandomState`), which no client can predict either.
fn os_random(buf: &mut [u8]) {
    use std::hash::{BuildHasher, Hasher};
    use std::io::Read;
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(buf));
    if read.is_ok() {
        return;
    }
    static DRAWN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    for chunk in buf.chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(DRAWN.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let bytes = h.finish().to_be_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

/// `roundToNextInterval(now + timeout)` for ticks of `tick`.
fn expiry(tick: Duration, now: Duration, timeout_ms: i32) -> Duration {
    let tick = tick.as_millis() as u64;
    let at = now.as_millis() as u64 + timeout_ms.max(0) as u64;
    Duration::from_millis((at / tick + 1) * tick)
}

impl SessionTable {
    pub(crate) fn new(server_id: u8, clock_ms: i64, tick: Duration, r: Randomness) -> Self {
        SessionTable {
            sessions: BTreeMap::new(),
            next_id: first_session_id(server_id, clock_ms),
            tick: tick.max(Duration::from_millis(1)),
            passwords: Passwords::new(r),
        }
    }

    /// `roundToNextInterval(now + timeout)`.
    pub(crate) fn expiry(&self, now: Duration, timeout_ms: i32) -> Duration {
        expiry(self.tick, now, timeout_ms)
    }

    pub(crate) fn create(&mut self, now: Duration, timeout_ms: i32) -> (i64, [u8; 16]) {
        let id = self.next_id;
        self.next_id += 1;
        let passwd = self.passwords.next();
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
