//! [`SessionConfig`]: the settings a driver gives the session core.

use std::time::Duration;

use zkrs_codec::Secret;

use crate::SaslMechanism;

/// How much larger than the request limit (`jute.maxbuffer`) the reply limit is by default.
///
/// A server checks the requests it takes against its `jute.maxbuffer`, never the replies it
/// sends: a getData reply carries a header and a Stat that the create storing the data did
/// not (about 40 bytes more than the largest create), a node may hold up to
/// `jute.maxbuffer.extrasize` more than `jute.maxbuffer` (3.6 and later), and a getChildren
/// listing has no bound of its own. 64 KiB covers the first two with room to spare and a
/// listing somewhat over 1 MiB; a larger one needs a larger limit.
pub const REPLY_ROOM: usize = 64 * 1024;

/// Settings of the session core. Its `Debug` prints every credential and the password of
/// [`SessionConfig::resume`] as `Secret(***)`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionConfig {
    /// Number of hosts in the connect string (the driver knows their addresses).
    pub host_count: usize,
    /// The session timeout asked of the server.
    pub session_timeout: Duration,
    /// Whether a read-only server is acceptable.
    pub can_be_read_only: bool,
    /// The largest reply accepted from the server (a frame's length, without its 4-byte
    /// prefix). A reply over it that answers the oldest pending request fails that request
    /// alone with [`ErrorKind::ReplyTooLarge`](crate::ErrorKind::ReplyTooLarge), its bytes
    /// skipped as they arrive; any other frame over it drops the connection (a lying
    /// length). Default: ZooKeeper's `jute.maxbuffer` default plus [`REPLY_ROOM`].
    pub max_reply_len: usize,
    /// Identities to add to every connection (scheme, credentials).
    pub auth: Vec<(String, Secret)>,
    /// Seed of the host shuffle and jitter.
    pub seed: u64,
    /// Path bytes per SetWatches request (the Java client uses 128 KiB).
    pub set_watches_batch_bytes: usize,
    /// First back-off after a whole round of hosts failed.
    pub backoff_base: Duration,
    /// Longest back-off.
    pub backoff_max: Duration,
    /// SASL to run on every connection before the session is used (`None`: no SASL).
    pub sasl: Option<SaslMechanism>,
    /// The hosts' names as the connect string gives them, by index: what a SASL mechanism
    /// that authenticates the server by name (Kerberos) is told. Empty: unknown.
    pub host_names: Vec<String>,
    /// A live session to reattach to, `(session id, password)`, instead of asking for a new
    /// one (the Java client's constructor with a session id and password). If the server
    /// says it expired (or the password is wrong), the state becomes `Lost`, and the next
    /// connection asks for a new session.
    pub resume: Option<(i64, Secret)>,
}

impl SessionConfig {
    /// Defaults for `host_count` hosts and a session timeout.
    pub fn new(host_count: usize, session_timeout: Duration) -> SessionConfig {
        SessionConfig {
            host_count,
            session_timeout,
            can_be_read_only: false,
            max_reply_len: zkrs_codec::DEFAULT_MAX_FRAME_LEN + REPLY_ROOM,
            auth: Vec::new(),
            seed: 1,
            set_watches_batch_bytes: 128 * 1024,
            backoff_base: Duration::from_millis(50),
            backoff_max: Duration::from_secs(1),
            sasl: None,
            host_names: Vec::new(),
            resume: None,
        }
    }
}
