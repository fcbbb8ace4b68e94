//! User-facing knobs for the servers this crate starts.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use zkrs_codec::Secret;

use crate::error::{Error, Result};
use crate::kerberos::{KerberosRealm, KerberosSettings};
use crate::tls::{ClientAuth, ServerIdentity, TlsCertificates, TlsSettings};
use crate::versions::Distribution;

/// How to configure and start a [`TestingServer`](crate::TestingServer) or
/// every member of a [`TestingCluster`](crate::TestingCluster).
///
/// Builder style; [`Default`] gives fast test settings:
///
/// | setting | default |
/// |---|---|
/// | `tickTime` | 200 ms, so session timeouts range from 400 ms to 4 s and expiry tests run fast |
/// | session timeouts | ZooKeeper's defaults: 2 × tick to 20 × tick |
/// | extended types (TTL and container nodes' TTL variant) | on |
/// | read-only mode | off |
/// | startup timeout | 60 s |
/// | TLS port | none (see [`tls`](Self::tls)) |
///
/// ```
/// use std::time::Duration;
/// use zkrs_testkit::ServerOptions;
///
/// let options = ServerOptions::new()
///     .tick_time_ms(100)
///     .max_session_timeout_ms(10_000)
///     .config("snapCount", "1000")
///     .system_property("zookeeper.commitLogCount", "50")
///     .startup_timeout(Duration::from_secs(30));
/// assert_eq!(
///     options.session_timeout_range(),
///     (Duration::from_millis(200), Duration::from_secs(10))
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerOptions {
    pub(crate) tick_time_ms: u32,
    pub(crate) min_session_timeout_ms: Option<u32>,
    pub(crate) max_session_timeout_ms: Option<u32>,
    pub(crate) init_limit: Option<u32>,
    pub(crate) sync_limit: Option<u32>,
    pub(crate) extended_types: bool,
    pub(crate) read_only_mode: bool,
    pub(crate) config_lines: Vec<String>,
    pub(crate) system_properties: Vec<(String, String)>,
    pub(crate) jvm_args: Vec<String>,
    pub(crate) startup_timeout: Duration,
    pub(crate) classpath: Option<OsString>,
    pub(crate) version: Option<Distribution>,
    pub(crate) java: Option<PathBuf>,
    pub(crate) tls: Option<TlsSettings>,
    /// `(user, password)`: a [`Secret`], so that the options' `Debug` hides it.
    pub(crate) sasl_users: Vec<(String, Secret)>,
    pub(crate) sasl_required: bool,
    pub(crate) kerberos: Option<KerberosSettings>,
    pub(crate) reconfig: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            tick_time_ms: 200,
            min_session_timeout_ms: None,
            max_session_timeout_ms: None,
            init_limit: None,
            sync_limit: None,
            extended_types: true,
            read_only_mode: false,
            config_lines: Vec::new(),
            system_properties: Vec::new(),
            jvm_args: Vec::new(),
            startup_timeout: Duration::from_secs(60),
            classpath: None,
            version: None,
            java: None,
            tls: None,
            sasl_users: Vec::new(),
            sasl_required: false,
            kerberos: None,
            reconfig: false,
        }
    }
}

impl ServerOptions {
    /// The defaults (same as [`Default::default`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Settings for a benchmark: the server's steady state rather than a quick start-up
    /// (ZooKeeper's default tickTime of 2 s, the full JIT, a 1 GiB heap).
    pub fn benchmark() -> Self {
        Self::default()
            .tick_time_ms(2000)
            .jvm_arg("-XX:TieredStopAtLevel=4")
            .jvm_arg("-Xmx1g")
    }

    /// ZooKeeper's `tickTime` in milliseconds (default 200). It is the unit
    /// of every ZooKeeper timeout; 0 is treated as 1.
    pub fn tick_time_ms(mut self, ms: u32) -> Self {
        self.tick_time_ms = ms.max(1);
        self
    }

    /// `minSessionTimeout` in milliseconds (ZooKeeper's default: 2 × tick).
    /// Clients asking for less get this.
    pub fn min_session_timeout_ms(mut self, ms: u32) -> Self {
        self.min_session_timeout_ms = Some(ms);
        self
    }

    /// `maxSessionTimeout` in milliseconds (ZooKeeper's default: 20 × tick).
    /// Clients asking for more get this.
    pub fn max_session_timeout_ms(mut self, ms: u32) -> Self {
        self.max_session_timeout_ms = Some(ms);
        self
    }

    /// Ensemble `initLimit`, in ticks: how long a follower may take to
    /// connect and sync to a leader. Default: 10 s worth of ticks (at least
    /// 10), generous because JVMs start slowly on a busy machine.
    pub fn init_limit(mut self, ticks: u32) -> Self {
        self.init_limit = Some(ticks.max(1));
        self
    }

    /// Ensemble `syncLimit`, in ticks: how far a follower may lag (and how
    /// long a silent, e.g. paused, peer goes unnoticed). Default: 2 s worth of
    /// ticks (at least 5).
    pub fn sync_limit(mut self, ticks: u32) -> Self {
        self.sync_limit = Some(ticks.max(1));
        self
    }

    /// Enables extended node types (TTL nodes) with the JVM system property
    /// `zookeeper.extendedTypesEnabled=true`. Default: on.
    pub fn extended_types(mut self, enabled: bool) -> Self {
        self.extended_types = enabled;
        self
    }

    /// Lets a member that lost its quorum keep serving read-only sessions
    /// (`-Dreadonlymode.enabled=true`). Default: off.
    pub fn read_only_mode(mut self, enabled: bool) -> Self {
        self.read_only_mode = enabled;
        self
    }

    /// Appends `key=value` to `zoo.cfg`. Extra lines come after the generated
    /// ones, and ZooKeeper keeps the last value of a key, so this can override
    /// anything this crate writes.
    pub fn config(self, key: &str, value: impl std::fmt::Display) -> Self {
        self.config_line(format!("{key}={value}"))
    }

    /// Appends a raw line to `zoo.cfg` (see [`config`](Self::config)).
    pub fn config_line(mut self, line: impl Into<String>) -> Self {
        self.config_lines.push(line.into());
        self
    }

    /// Passes `-Dkey=value` to the server JVM, after the crate's own
    /// properties (so it overrides them).
    pub fn system_property(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.system_properties.push((key.into(), value.into()));
        self
    }

    /// Passes a raw argument to the JVM (e.g. `-Xmx512m`), after the crate's
    /// defaults (`-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
    /// -Xshare:auto -XX:-UsePerfData`).
    pub fn jvm_arg(mut self, arg: impl Into<String>) -> Self {
        self.jvm_args.push(arg.into());
        self
    }

    /// How long `start`/`restart` wait for a server to serve (default 60 s).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = timeout;
        self
    }

    /// Runs this ZooKeeper (a version from the jar cache, or Debian's) instead of the one
    /// `ZKRS_TEST_ZOOKEEPER` chooses or the default, for a test that needs two versions at
    /// once. `scripts/fetch-jars.sh zookeeper VERSION` fetches a version into the cache.
    ///
    /// ```no_run
    /// use zkrs_testkit::{Distribution, ServerOptions, TestingServer};
    /// let old = TestingServer::start_with(ServerOptions::new().version("3.5.10".parse()?))?;
    /// let new = TestingServer::start_with(ServerOptions::new().version(Distribution::Debian))?;
    /// # Ok::<(), zkrs_testkit::Error>(())
    /// ```
    pub fn version(mut self, version: Distribution) -> Self {
        self.version = Some(version);
        self
    }

    /// Uses this java classpath for the server instead of a version (see
    /// [`Installation`](crate::Installation)).
    pub fn classpath(mut self, classpath: impl Into<OsString>) -> Self {
        self.classpath = Some(classpath.into());
        self
    }

    /// Uses this `java` binary instead of `ZKR_JAVA`, `$JAVA_HOME/bin/java`
    /// or `java` on the `PATH`.
    pub fn java(mut self, java: impl Into<PathBuf>) -> Self {
        self.java = Some(java.into());
        self
    }

    /// Serves TLS too: the server keeps its plain client port (where this
    /// crate checks that it serves) and gets a second one,
    /// `secureClientPort`, on another free port of `127.0.0.1`
    /// ([`TestingServer::secure_port`](crate::TestingServer::secure_port),
    /// [`TestingCluster::member_secure_port`](crate::TestingCluster::member_secure_port)).
    ///
    /// On that port the server presents
    /// [`server_cert_pem`](TlsCertificates::server_cert_pem) (names
    /// `localhost`, `127.0.0.1`, `zookeeper.test`), trusts client
    /// certificates signed by [`ca_pem`](TlsCertificates::ca_pem), asks for
    /// them as `client_auth` says, and gives a client with an accepted
    /// certificate the identity `x509:<subject>`
    /// ([`client_subject`](TlsCertificates::client_subject)). It speaks what
    /// ZooKeeper 3.8 offers by default: TLS 1.2 only, ECDHE with AES-GCM or
    /// AES-CBC. The options keep a clone of `certs`, so the files live as long
    /// as the options and the servers started with them.
    ///
    /// The `zoo.cfg` lines (all through ZooKeeper's own configuration
    /// parser, which turns the `ssl.*` and `authProvider.*` keys into the
    /// `zookeeper.`-prefixed system properties the server reads):
    ///
    /// ```text
    /// secureClientPort=PORT
    /// secureClientPortAddress=127.0.0.1
    /// serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
    /// ssl.keyStore.location=<certs>/server-keystore.pem
    /// ssl.keyStore.type=PEM
    /// ssl.trustStore.location=<certs>/ca.pem
    /// ssl.trustStore.type=PEM
    /// ssl.clientAuth=none|want|need
    /// authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider
    /// ```
    ///
    /// Later [`config`](Self::config) lines override them. TLS 1.3 takes
    /// three (ZooKeeper's default cipher list holds TLS 1.2 suites only):
    ///
    /// ```
    /// # use zkrs_testkit::ServerOptions;
    /// let tls13 = ServerOptions::new()
    ///     .config("ssl.protocol", "TLSv1.3")
    ///     .config("ssl.enabledProtocols", "TLSv1.3,TLSv1.2")
    ///     .config("ssl.ciphersuites", "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,\
    ///         TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384");
    /// ```
    ///
    /// The plain port is served by Netty too (ZooKeeper has one connection
    /// factory setting for both ports).
    ///
    /// ```no_run
    /// use zkrs_testkit::{ClientAuth, ServerOptions, TestingServer, TlsCertificates};
    ///
    /// let certs = TlsCertificates::generate()?;
    /// let server = TestingServer::start_with(ServerOptions::new().tls(&certs, ClientAuth::None))?;
    /// assert!(server.secure_port().is_some());
    /// # Ok::<(), zkrs_testkit::Error>(())
    /// ```
    pub fn tls(self, certs: &TlsCertificates, client_auth: ClientAuth) -> Self {
        self.with_tls(certs, ServerIdentity::Valid, client_auth)
    }

    /// Adds a SASL DIGEST-MD5 user (repeatable): the server gets a JAAS `Server` section
    /// with `user_<user>="<password>"` (written into its folder) and the SASL
    /// authentication provider, so sessions that authenticate have the identity
    /// `sasl:<user>`. SASL stays optional for clients unless [`ServerOptions::require_sasl`].
    ///
    /// ```no_run
    /// use zkrs_testkit::{ServerOptions, TestingServer};
    /// let server = TestingServer::start_with(
    ///     ServerOptions::new().sasl_digest_user("alice", "alice-secret"),
    /// )?;
    /// # Ok::<(), zkrs_testkit::Error>(())
    /// ```
    pub fn sasl_digest_user(mut self, user: &str, password: &str) -> Self {
        self.sasl_users
            .push((user.to_string(), Secret::from(password)));
        self
    }

    /// Whether sessions must authenticate with SASL (`sessionRequireClientSASLAuth`): the
    /// server closes the others with `SessionClosedRequireSaslAuth`. Needs a
    /// [`ServerOptions::sasl_digest_user`] or [`ServerOptions::kerberos`] (without either
    /// it has no effect).
    pub fn require_sasl(mut self, required: bool) -> Self {
        self.sasl_required = required;
        self
    }

    /// Authenticates SASL clients with Kerberos (GSSAPI) in `realm`: the server logs in
    /// as `service_principal` (e.g. `zookeeper/localhost`; `@ZKR.TEST` is appended unless
    /// it names a realm) with the keys in `service_keytab` (from
    /// [`KerberosRealm::add_principal_with_keytab`]), and a client that authenticates as
    /// `alice@ZKR.TEST` (or `alice/<host>@ZKR.TEST`) gets the identity `sasl:alice`. SASL
    /// stays optional for clients unless [`ServerOptions::require_sasl`].
    ///
    /// The server accepts tickets for exactly that service principal: a client must ask
    /// for `zookeeper/localhost` to reach a server started with it, whatever address it
    /// connects to (`127.0.0.1` too: Java's client turns `127.0.0.1` back into
    /// `localhost`). A client that names the service after the address it
    /// dials without canonicalizing it wants `zookeeper/127.0.0.1`: give that principal to
    /// the server instead.
    ///
    /// The server's JAAS file (written into its folder) gets
    ///
    /// ```text
    /// Server {
    ///   com.sun.security.auth.module.Krb5LoginModule required
    ///   useKeyTab=true
    ///   keyTab="<service_keytab>"
    ///   storeKey=true
    ///   useTicketCache=false
    ///   principal="zookeeper/localhost@ZKR.TEST";
    /// };
    /// ```
    ///
    /// its JVM `-Djava.security.auth.login.config=<that file>`,
    /// `-Djava.security.krb5.conf=<realm's krb5.conf>` and
    /// `-Dsun.security.krb5.debug=false`, and `zoo.cfg`
    ///
    /// ```text
    /// authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider
    /// kerberos.removeHostFromPrincipal=true
    /// kerberos.removeRealmFromPrincipal=true
    /// ```
    ///
    /// The options keep paths and names only: the realm must outlive the servers
    /// (a server logs in to the KDC when it starts). A server offers one SASL mechanism,
    /// so this cannot be combined with [`ServerOptions::sasl_digest_user`]: starting a
    /// server with both fails with [`Error::InvalidArgument`].
    ///
    /// ```no_run
    /// use zkrs_testkit::{KerberosRealm, ServerOptions, TestingServer};
    ///
    /// let realm = KerberosRealm::start()?;
    /// let keytab = realm.add_principal_with_keytab("zookeeper/localhost")?;
    /// let server = TestingServer::start_with(
    ///     ServerOptions::new()
    ///         .kerberos(&realm, &keytab, "zookeeper/localhost")
    ///         .require_sasl(true),
    /// )?;
    /// # drop(server);
    /// # Ok::<(), zkrs_testkit::Error>(())
    /// ```
    pub fn kerberos(
        mut self,
        realm: &KerberosRealm,
        service_keytab: &Path,
        service_principal: &str,
    ) -> Self {
        self.kerberos = Some(KerberosSettings {
            krb5_conf: realm.krb5_conf().to_path_buf(),
            keytab: service_keytab.to_path_buf(),
            principal: realm.full_principal(service_principal),
        });
        self
    }

    /// The service principal given to [`kerberos`](Self::kerberos), with its realm
    /// (`zookeeper/localhost@ZKR.TEST`), `None` without Kerberos.
    pub fn kerberos_principal(&self) -> Option<&str> {
        self.kerberos.as_ref().map(|k| k.principal.as_str())
    }

    /// Makes an ensemble reconfigurable (ZooKeeper 3.5+'s dynamic reconfiguration), as the
    /// admin guide sets one up: `reconfigEnabled=true`, `standaloneEnabled=false`, and the
    /// members in a dynamic configuration file (`zoo.cfg.dynamic`, one
    /// `server.N=127.0.0.1:QUORUM:ELECTION:participant;127.0.0.1:CLIENT` line each, no
    /// `clientPort` in `zoo.cfg`), which the servers rewrite as the membership changes. ACLs
    /// stay on: `reconfig` needs the superuser [`SUPERUSER`](crate::SUPERUSER) (digest
    /// `super:zkr-superuser`, given to the JVMs as
    /// `zookeeper.DigestAuthenticationProvider.superDigest`), so a session without it gets
    /// `NoAuth`. See [`TestingCluster::add_member`](crate::TestingCluster::add_member).
    /// Default: off. Only for ensembles: a [`TestingServer`](crate::TestingServer) ignores
    /// it.
    ///
    /// ```no_run
    /// use zkrs_testkit::{ServerOptions, TestingCluster};
    /// let mut cluster = TestingCluster::start_with(3, ServerOptions::new().reconfig(true))?;
    /// let added = cluster.add_member()?; // serving, not voting yet
    /// let line = cluster.member_spec(added); // for reconfig's joining list
    /// # drop(line);
    /// # Ok::<(), zkrs_testkit::Error>(())
    /// ```
    pub fn reconfig(mut self, enabled: bool) -> Self {
        self.reconfig = enabled;
        self
    }

    /// Whether [`reconfig`](Self::reconfig) is on.
    pub fn is_reconfigurable(&self) -> bool {
        self.reconfig
    }

    /// Refuses combinations a server cannot run with.
    pub(crate) fn check(&self) -> Result<()> {
        if self.kerberos.is_some() && !self.sasl_users.is_empty() {
            return Err(Error::InvalidArgument {
                message: "ServerOptions::kerberos and ServerOptions::sasl_digest_user cannot \
                          be combined: a ZooKeeper server offers one SASL mechanism (GSSAPI \
                          when its JAAS Server section logs in with Kerberos, DIGEST-MD5 \
                          otherwise)"
                    .to_string(),
            });
        }
        Ok(())
    }

    /// Like [`tls`](Self::tls), but the server presents
    /// [`expired_server_cert_pem`](TlsCertificates::expired_server_cert_pem)
    /// (same CA and names, valid only in the year 2000), which clients must
    /// refuse. The server itself does not mind and starts normally.
    pub fn tls_expired(self, certs: &TlsCertificates, client_auth: ClientAuth) -> Self {
        self.with_tls(certs, ServerIdentity::Expired, client_auth)
    }

    /// Like [`tls`](Self::tls), but the server presents
    /// [`revoked_server_cert_pem`](TlsCertificates::revoked_server_cert_pem)
    /// (same CA and names, valid, listed in
    /// [`crl_pem`](TlsCertificates::crl_pem)), which clients checking the CRL
    /// must refuse; clients that do not check it accept it.
    pub fn tls_revoked(self, certs: &TlsCertificates, client_auth: ClientAuth) -> Self {
        self.with_tls(certs, ServerIdentity::Revoked, client_auth)
    }

    fn with_tls(
        mut self,
        certs: &TlsCertificates,
        identity: ServerIdentity,
        client_auth: ClientAuth,
    ) -> Self {
        self.tls = Some(TlsSettings {
            certs: certs.clone(),
            identity,
            client_auth,
        });
        self
    }

    /// The certificates given to [`tls`](Self::tls),
    /// [`tls_expired`](Self::tls_expired) or [`tls_revoked`](Self::tls_revoked)
    /// (or the last [`TestingServer::restart_with_tls`](crate::TestingServer::restart_with_tls)),
    /// `None` without TLS.
    pub fn tls_certificates(&self) -> Option<&TlsCertificates> {
        self.tls.as_ref().map(|t| &t.certs)
    }

    /// The client authentication given to [`tls`](Self::tls),
    /// [`tls_expired`](Self::tls_expired) or [`tls_revoked`](Self::tls_revoked),
    /// `None` without TLS.
    pub fn tls_client_auth(&self) -> Option<ClientAuth> {
        self.tls.as_ref().map(|t| t.client_auth)
    }

    /// The tick as a [`Duration`].
    pub fn tick_time(&self) -> Duration {
        Duration::from_millis(self.tick_time_ms.into())
    }

    /// The (min, max) session timeouts the server will negotiate, taking
    /// ZooKeeper's defaults (2 and 20 ticks) into account.
    pub fn session_timeout_range(&self) -> (Duration, Duration) {
        let tick = u64::from(self.tick_time_ms);
        let min = self.min_session_timeout_ms.map_or(2 * tick, u64::from);
        let max = self.max_session_timeout_ms.map_or(20 * tick, u64::from);
        (Duration::from_millis(min), Duration::from_millis(max))
    }

    /// Effective `initLimit` in ticks.
    pub(crate) fn effective_init_limit(&self) -> u32 {
        self.init_limit
            .unwrap_or_else(|| 10_000u32.div_ceil(self.tick_time_ms).max(10))
    }

    /// Effective `syncLimit` in ticks.
    pub(crate) fn effective_sync_limit(&self) -> u32 {
        self.sync_limit
            .unwrap_or_else(|| 2_000u32.div_ceil(self.tick_time_ms).max(5))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_fast() {
        let o = ServerOptions::default();
        assert_eq!(o.tick_time(), Duration::from_millis(200));
        assert_eq!(
            o.session_timeout_range(),
            (Duration::from_millis(400), Duration::from_millis(4000))
        );
        assert!(o.extended_types);
        assert!(!o.read_only_mode);
        assert_eq!(o.startup_timeout, Duration::from_secs(60));
        assert_eq!(o.effective_init_limit(), 50);
        assert_eq!(o.effective_sync_limit(), 10);
        assert_eq!(o.tls_client_auth(), None);
        assert!(o.tls_certificates().is_none());
    }

    #[test]
    fn limits_follow_the_tick() {
        let o = ServerOptions::new().tick_time_ms(2000);
        assert_eq!(o.effective_init_limit(), 10);
        assert_eq!(o.effective_sync_limit(), 5);
        let o = o.init_limit(3).sync_limit(2);
        assert_eq!((o.effective_init_limit(), o.effective_sync_limit()), (3, 2));
    }

    #[test]
    fn debug_hides_the_sasl_passwords() {
        let o = ServerOptions::new().sasl_digest_user("alice", "hunter2-zkrs");
        let shown = format!("{o:?}");
        assert!(!shown.contains("hunter2-zkrs"), "{shown}");
        assert!(shown.contains("alice"), "{shown}");
    }
}
