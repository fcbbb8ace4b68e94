//! [`ClientBuilder`]: connect string, timeouts, identities, read-only mode, TLS.

use crate::error::{ErrorExt, ErrorKind};
use std::time::Duration;
use zkrs_codec::Secret;

use crate::client::Client;
use crate::connect::{SessionToResume, Settings};
use crate::error::{Error, Result};
use crate::session::ConnectionState;

/// Settings for a [`Client`]; [`ClientBuilder::connect`] starts it.
///
/// ```no_run
/// # async fn demo() -> zkrs_client::Result<()> {
/// use std::time::Duration;
/// let client = zkrs_client::ClientBuilder::new("127.0.0.1:2181,127.0.0.1:2182/app")
///     .session_timeout(Duration::from_secs(10))
///     .auth("digest", "user:secret")
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `connect`"]
pub struct ClientBuilder {
    pub(crate) settings: Settings,
}

impl ClientBuilder {
    /// A builder for `connect_string` (`host:port,host:port/chroot`).
    pub fn new(connect_string: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            settings: Settings {
                connect_string: connect_string.into(),
                session_timeout: Duration::from_secs(10),
                connect_timeout: None,
                can_be_read_only: false,
                auth: Vec::new(),
                max_frame_len: zkrs_codec::DEFAULT_MAX_FRAME_LEN,
                max_reply_len: None,
                sasl: None,
                resume: None,
                host_provider: None,
                follow_ensemble: false,
                max_in_flight: crate::in_flight::DEFAULT_MAX_IN_FLIGHT,
                dialer: None,
                recorder: None,
                #[cfg(feature = "metrics")]
                metrics_label: None,
                #[cfg(feature = "tls")]
                tls: None,
            },
        }
    }

    /// At most `max` requests in flight (sent, or queued to be sent, and not yet answered);
    /// past it, a request waits for an answer to free a place before it is handed to the
    /// connection. The wait is asynchronous and cancel-safe: a request dropped while it
    /// waits was never sent. A request keeps its place until its answer arrives even if its
    /// caller stopped waiting, so a flood of abandoned requests cannot grow memory either.
    ///
    /// Default [`DEFAULT_MAX_IN_FLIGHT`](crate::DEFAULT_MAX_IN_FLIGHT) (1,024), which costs
    /// nothing measurable at 256 in flight (README, "Backpressure"). `usize::MAX` removes
    /// the bound (memory then grows with what callers send faster than the server
    /// answers); 0 is taken as 1.
    ///
    /// ```no_run
    /// # async fn demo() -> zkrs_client::Result<()> {
    /// let client = zkrs_client::Client::builder("127.0.0.1:2181")
    ///     .max_in_flight(4096)
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn max_in_flight(mut self, max: usize) -> ClientBuilder {
        self.settings.max_in_flight = max;
        self
    }

    /// The `client` label of this client's metrics in the `metrics` facade (feature
    /// `metrics`; default `zkrs-1`, `zkrs-2`, ... in the order clients start). The names
    /// reported are listed in README ("Metrics").
    #[cfg(feature = "metrics")]
    #[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
    pub fn metrics_label(mut self, label: impl Into<String>) -> ClientBuilder {
        self.settings.metrics_label = Some(label.into());
        self
    }

    /// Authenticates every connection with SASL before the session is used (the Java
    /// client's order: nothing else goes out until the exchange ends). A refusal (wrong
    /// password, a server without SASL) is final: the state becomes
    /// [`ConnectionState::AuthFailed`], requests fail with `AuthFailed`, the client closes,
    /// and [`ClientBuilder::connect`] returns the reason. See
    /// `sasl::digest_md5` (feature `sasl-digest`).
    ///
    /// ```no_run
    /// # #[cfg(feature = "sasl-digest")]
    /// # async fn f() -> zkrs_client::Result<()> {
    /// let password = std::fs::read_to_string("/etc/zk/password").unwrap_or_default();
    /// let client = zkrs_client::ClientBuilder::new("zk1:2181")
    ///     .sasl(zkrs_client::sasl::digest_md5("alice", password.trim_end()))
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn sasl(mut self, mechanism: crate::sasl::SaslMechanism) -> ClientBuilder {
        self.settings.sasl = Some(mechanism);
        self
    }

    /// Connects with TLS (feature `tls`), to every host of the connect string: their ports
    /// must be the servers' `secureClientPort`. See [`TlsOptions`](crate::TlsOptions) for
    /// what is trusted and checked, and for the files read again when they change. A failed
    /// handshake (unknown CA, wrong name, expired or revoked certificate, a client
    /// certificate required and missing) counts as a failed connection attempt: the client
    /// tries the next host and keeps trying. [`ClientBuilder::connect`]'s error names it and
    /// has it as its source, a [`TlsError`](crate::TlsError) with a matchable
    /// [`kind`](crate::TlsError::kind).
    #[cfg(feature = "tls")]
    pub fn tls(mut self, options: crate::tls::TlsOptions) -> ClientBuilder {
        self.settings.tls = Some(options);
        self
    }

    /// Reattaches to a live session, made by another client (another process, say), instead
    /// of starting a new one: its id ([`Client::session_id`]) and password
    /// ([`Client::session_password`]), as the Java client's constructor takes them. The
    /// session keeps its ephemeral nodes (and so its locks and leadership) and its
    /// identities on the server; this client's own settings (auth, watches) are its own.
    ///
    /// If the session expired in the meantime, or the password is wrong (ZooKeeper answers
    /// both alike), [`ClientBuilder::connect`] fails at once with `SessionExpired` and says
    /// so (`the server refused to resume session 0x...: it has expired, or its password is
    /// wrong`). A client made with [`ClientBuilder::start`] reports
    /// [`ConnectionState::Lost`] instead and goes on with a new session, as after any
    /// session loss.
    ///
    /// ```no_run
    /// # async fn demo(id: i64, password: Vec<u8>) -> zkrs_client::Result<()> {
    /// let client = zkrs_client::ClientBuilder::new("zk1:2181").resume(id, password).connect().await?;
    /// # Ok(()) }
    /// ```
    pub fn resume(mut self, session_id: i64, password: impl Into<Secret>) -> ClientBuilder {
        self.settings.resume = Some(SessionToResume {
            id: session_id,
            password: password.into(),
        });
        self
    }

    /// Where the hosts come from, asked at every connection attempt (see [`HostProvider`]
    /// for an example). The connect string still gives the chroot, and the hosts used
    /// when the provider fails. Cannot be combined with
    /// [`ClientBuilder::follow_ensemble`] (two sources of hosts would undo each other).
    ///
    /// [`HostProvider`]: crate::HostProvider
    pub fn host_provider(mut self, provider: impl crate::HostProvider) -> ClientBuilder {
        self.settings.host_provider = Some(crate::host_provider::SharedProvider(
            std::sync::Arc::new(provider),
        ));
        self
    }

    /// Follows the ensemble's membership (Curator's `EnsembleTracker`): the client watches
    /// `/zookeeper/config` ([`Client::get_config_and_watch`]), again after every change and
    /// every new connection, and gives the members' client addresses to
    /// [`Client::update_hosts`], keeping its chroot. So a client follows a rolling
    /// replacement of every member (new hosts, new ports) with its session, as long as one
    /// of its hosts is up at each step. The first reading only completes the host list (the
    /// client stays on its member: nothing in flight is cut); each later change of the
    /// configuration rebalances as `update_hosts` does (ZOOKEEPER-1355). Members without a
    /// client address in the configuration leave the list unchanged.
    /// Default off (Curator's is on). Cannot be combined with
    /// [`ClientBuilder::host_provider`].
    ///
    /// ```no_run
    /// # async fn demo() -> zkrs_client::Result<()> {
    /// let client = zkrs_client::ClientBuilder::new("zk1:2181,zk2:2181,zk3:2181/app")
    ///     .follow_ensemble(true)
    ///     .connect()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn follow_ensemble(mut self, follow: bool) -> ClientBuilder {
        self.settings.follow_ensemble = follow;
        self
    }

    /// The session timeout to ask for (the server bounds it: by default between 2 and 20
    /// ticks). Default 10 s.
    pub fn session_timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.settings.session_timeout = timeout;
        self
    }

    /// How long [`ClientBuilder::connect`] waits for the first session. Default: the session
    /// timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.settings.connect_timeout = Some(timeout);
        self
    }

    /// Accept read-only servers (a partitioned member in read-only mode): reads work, writes
    /// fail with `NotReadOnly`, and the client keeps looking for a read-write server.
    pub fn can_be_read_only(mut self, allowed: bool) -> ClientBuilder {
        self.settings.can_be_read_only = allowed;
        self
    }

    /// An identity added to the session on every connection (e.g. `digest`, `user:password`).
    /// The credentials are kept as a [`Secret`]: the builder's `Debug` does not show them.
    pub fn auth(
        mut self,
        scheme: impl Into<String>,
        credentials: impl Into<Secret>,
    ) -> ClientBuilder {
        self.settings.auth.push((scheme.into(), credentials.into()));
        self
    }

    /// The largest request sent to the server (`jute.maxbuffer`; default 1,048,575 bytes,
    /// the server's default): a larger one is refused before it is sent, with kind
    /// `InvalidInput`. Set it to the server's `jute.maxbuffer`, which refuses a larger request
    /// by closing the connection. Unless [`ClientBuilder::max_reply_len`] is set, the reply
    /// limit follows it, 64 KiB higher.
    pub fn max_frame_len(mut self, bytes: usize) -> ClientBuilder {
        self.settings.max_frame_len = bytes;
        self
    }

    /// The largest reply accepted from the server (a frame's length without its 4-byte
    /// prefix). Default: [`ClientBuilder::max_frame_len`] plus 64 KiB, 1,114,111 bytes.
    ///
    /// A reply over it fails its request alone, with
    /// [`ErrorKind::ReplyTooLarge`] (the message names the reply's size and the limit; not
    /// retryable): its bytes are skipped as they arrive, never kept, and the connection, the
    /// session and every other request go on. A server checks only the requests it takes
    /// against its `jute.maxbuffer`, not the replies it sends: a getData reply is a header and
    /// a Stat (about 40 bytes) larger than the create that stored the data, and a getChildren
    /// listing has no bound at all. So to read everything a server with `jute.maxbuffer = N`
    /// lets clients write, set this to at least `N` plus 64 KiB (the default does that for
    /// `N` = [`ClientBuilder::max_frame_len`]); a listing of many children can need more.
    pub fn max_reply_len(mut self, bytes: usize) -> ClientBuilder {
        self.settings.max_reply_len = Some(bytes);
        self
    }

    /// Starts the client's task (on the current tokio runtime) and waits until the first
    /// session is established, or fails after the connect timeout with an error naming the
    /// hosts and why the last attempt failed (`could not connect: Connection refused`, `no
    /// handshake reply ...`, `the server sent a malformed frame (...)`).
    pub async fn connect(self) -> Result<Client> {
        let (client, shared) = crate::connect::start_shared(&self.settings)?;
        let wait = self
            .settings
            .connect_timeout
            .unwrap_or(self.settings.session_timeout);
        let mut states = client.state_changes();
        let established = async {
            loop {
                if client.state().is_connected() {
                    return Ok(());
                }
                match states.next().await {
                    Some(change) if change.state.is_connected() => return Ok(()),
                    Some(change) if change.state == ConnectionState::AuthFailed => {
                        let cause = shared
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .diagnosis
                            .auth_failure()
                            .cloned();
                        let mechanism = self.settings.sasl.as_ref().map_or("SASL", |m| m.name());
                        let error = Error::new(
                            ErrorKind::AuthFailed,
                            format!("{mechanism} authentication failed"),
                        );
                        return Err(match cause {
                            Some(cause) => error.with_source(cause),
                            None => error,
                        });
                    }
                    // The session to resume is gone: no new one in its place.
                    Some(change)
                        if change.state == ConnectionState::Lost
                            && self.settings.resume.is_some() =>
                    {
                        let why = shared
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .diagnosis
                            .last_failure()
                            .map_or_else(
                                || "the session to resume has expired".into(),
                                ToString::to_string,
                            );
                        client.close_in_background();
                        return Err(Error::new(ErrorKind::SessionExpired, why));
                    }
                    Some(change) if change.state == ConnectionState::Closed => {
                        return Err(Error::closed())
                    }
                    Some(_) => {}
                    None => return Err(Error::closed()),
                }
            }
        };
        match tokio::time::timeout(wait, established).await {
            Ok(Ok(())) => Ok(client),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                let (report, tls_failure) = {
                    let shared = shared.lock().unwrap_or_else(|e| e.into_inner());
                    #[cfg(feature = "tls")]
                    let tls_failure = shared.diagnosis.tls_failure().cloned();
                    #[cfg(not(feature = "tls"))]
                    let tls_failure = None::<std::convert::Infallible>;
                    (shared.diagnosis.report(crate::clock::now()), tls_failure)
                };
                client.close_in_background();
                let mut detail = format!(
                    "no ZooKeeper server reachable at {} within {} ms",
                    self.settings.connect_string,
                    wait.as_millis()
                );
                if let Some(report) = report {
                    detail.push_str(&format!(" ({report})"));
                }
                let error = Error::new(ErrorKind::ConnectionLoss, detail);
                // A TLS refusal is the cause to match (`TlsError::find`).
                Err(match tls_failure {
                    Some(tls) => error.with_source(tls),
                    None => error,
                })
            }
        }
    }

    /// Starts the client's task without waiting for a session: requests wait in a queue
    /// until one is established.
    pub fn start(&self) -> Result<Client> {
        crate::connect::start(&self.settings)
    }
}

impl Client {
    /// Connects with default settings (10 s session timeout) and waits for the session.
    pub async fn connect(connect_string: &str) -> Result<Client> {
        ClientBuilder::new(connect_string).connect().await
    }

    /// A builder for more settings.
    pub fn builder(connect_string: &str) -> ClientBuilder {
        ClientBuilder::new(connect_string)
    }
}
