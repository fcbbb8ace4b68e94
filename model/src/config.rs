//! The server's settings, with a default 3.8 server's values.

use std::time::Duration;

use crate::acl::AuthProviders;
use crate::version::ZooKeeperVersion;

/// Settings of a model server. [`Default`] is a standalone ZooKeeper 3.8.0 with the test kit's
/// settings: `tickTime` 200 ms, session timeouts 2 to 20 ticks, TTL nodes on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The ZooKeeper release to answer as (default 3.8.0, Debian's package): where 3.8 and
    /// 3.9 differ (watch modes, event zxids, create2 in multi, exists' ACL check, the
    /// version `srvr` reports), the model follows this one.
    pub zookeeper: ZooKeeperVersion,
    /// `tickTime`: the unit of session timeouts and of the expiry buckets.
    pub tick_time: Duration,
    /// `minSessionTimeout` (default 2 ticks).
    pub min_session_timeout: Option<Duration>,
    /// `maxSessionTimeout` (default 20 ticks).
    pub max_session_timeout: Option<Duration>,
    /// `zookeeper.extendedTypesEnabled`: TTL nodes.
    pub extended_types: bool,
    /// `znode.container.checkIntervalMs`: how often empty containers and expired TTL nodes
    /// are reaped (ZooKeeper's default is 60 s).
    pub container_check_interval: Duration,
    /// `znode.container.maxNeverUsedIntervalMs`: a container that never had a child is
    /// reaped after this long; `None` (ZooKeeper's default 0) keeps it.
    pub container_max_never_used: Option<Duration>,
    /// `jute.maxbuffer`: the largest request frame; a longer one closes the connection.
    pub max_frame_len: usize,
    /// Wall-clock milliseconds at time zero: `ctime`/`mtime` are this plus the model's time.
    pub epoch_ms: i64,
    /// The server id in the high byte of session ids.
    pub server_id: u8,
    /// Registered auth schemes besides `ip` and `digest`.
    pub auth_providers: AuthProviders,
    /// `zookeeper.DigestAuthenticationProvider.superDigest`: a digest id that is super user.
    pub super_digest: Option<String>,
    /// Where session passwords come from (default [`Randomness::Os`]: unguessable).
    pub randomness: Randomness,
    /// `maxClientCnxns`: connections one client address may hold; 0 is no limit (the
    /// default here, as the test kit configures its servers; ZooKeeper's own default is 60).
    /// Applied by the TCP adapter ([`crate::TcpServer`], [`crate::TcpEnsemble`]).
    pub max_client_cnxns: u32,
    /// How long a connection may take to send its `ConnectRequest` before the TCP adapter
    /// closes it (ZooKeeper's `zookeeper.nio.sessionlessCnxnTimeout`, 10 s).
    pub handshake_timeout: Duration,
}

/// The source of a server's session passwords: the model reads no randomness of its own, so
/// a simulation stays a function of its seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Randomness {
    /// The operating system's (`/dev/urandom`, else the standard library's per-process
    /// random hash keys): passwords no client can guess. What a served model needs.
    Os,
    /// A SplitMix64 stream from this seed: the same passwords on every run, for a
    /// deterministic simulation. Anyone who knows the seed knows the passwords.
    Seeded(u64),
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            zookeeper: ZooKeeperVersion::default(),
            tick_time: Duration::from_millis(200),
            min_session_timeout: None,
            max_session_timeout: None,
            extended_types: true,
            container_check_interval: Duration::from_secs(60),
            container_max_never_used: None,
            max_frame_len: 0xfffff,
            epoch_ms: 1_700_000_000_000,
            server_id: 1,
            auth_providers: AuthProviders::default(),
            super_digest: None,
            randomness: Randomness::Os,
            max_client_cnxns: 0,
            handshake_timeout: Duration::from_secs(10),
        }
    }
}

impl ServerConfig {
    /// The negotiated timeout for one asked for: clamped to `[min, max]`.
    pub fn negotiate_timeout_ms(&self, asked_ms: i32) -> i32 {
        let asked = i64::from(asked_ms);
        asked
            .max(self.min_session_timeout_ms())
            .min(self.max_session_timeout_ms())
            .clamp(0, i64::from(i32::MAX)) as i32
    }

    /// `minSessionTimeout` in milliseconds, its default (2 ticks) applied.
    pub(crate) fn min_session_timeout_ms(&self) -> i64 {
        let tick = self.tick_time.as_millis() as i64;
        self.min_session_timeout
            .map_or(2 * tick, |d| d.as_millis() as i64)
    }

    /// `maxSessionTimeout` in milliseconds, its default (20 ticks) applied.
    pub(crate) fn max_session_timeout_ms(&self) -> i64 {
        let tick = self.tick_time.as_millis() as i64;
        self.max_session_timeout
            .map_or(20 * tick, |d| d.as_millis() as i64)
    }
}
