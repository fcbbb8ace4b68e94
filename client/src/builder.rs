//! [`ClientBuilder`]: connect string, timeouts, identities, read-only mode.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::client::{Client, Inner};
use crate::connect_string::ConnectString;
use crate::driver::{Driver, Shared};
use crate::error::{Error, Result};
use crate::session::{ConnectionState, Session, SessionConfig, StateChange};

/// Settings for a [`Client`]; [`ClientBuilder::connect`] starts it.
///
/// ```no_run
/// # async fn demo() -> zkr_client::Result<()> {
/// use std::time::Duration;
/// let client = zkr_client::ClientBuilder::new("127.0.0.1:2181,127.0.0.1:2182/app")
///     .session_timeout(Duration::from_secs(10))
///     .auth("digest", "user:secret")
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    connect_string: String,
    session_timeout: Duration,
    connect_timeout: Option<Duration>,
    can_be_read_only: bool,
    auth: Vec<(String, Vec<u8>)>,
    max_frame_len: usize,
}

impl ClientBuilder {
    /// A builder for `connect_string` (`host:port,host:port/chroot`).
    pub fn new(connect_string: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            connect_string: connect_string.into(),
            session_timeout: Duration::from_secs(10),
            connect_timeout: None,
            can_be_read_only: false,
            auth: Vec::new(),
            max_frame_len: zkr_codec::DEFAULT_MAX_FRAME_LEN,
        }
    }

    /// The session timeout to ask for (the server bounds it: by default between 2 and 20
    /// ticks). Default 10 s.
    pub fn session_timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.session_timeout = timeout;
        self
    }

    /// How long [`ClientBuilder::connect`] waits for the first session. Default: the session
    /// timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> ClientBuilder {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Accept read-only servers (a partitioned member in read-only mode): reads work, writes
    /// fail with `NotReadOnly`, and the client keeps looking for a read-write server.
    pub fn can_be_read_only(mut self, allowed: bool) -> ClientBuilder {
        self.can_be_read_only = allowed;
        self
    }

    /// An identity added to the session on every connection (e.g. `digest`, `user:password`).
    pub fn auth(
        mut self,
        scheme: impl Into<String>,
        credentials: impl Into<Vec<u8>>,
    ) -> ClientBuilder {
        self.auth.push((scheme.into(), credentials.into()));
        self
    }

    /// The largest frame accepted from, and sent to, the server (`jute.maxbuffer`; default
    /// 1,048,575 bytes like the server's).
    pub fn max_frame_len(mut self, bytes: usize) -> ClientBuilder {
        self.max_frame_len = bytes;
        self
    }

    /// Starts the client's task (on the current tokio runtime) and waits until the first
    /// session is established, or fails after the connect timeout with an error naming the
    /// hosts.
    pub async fn connect(self) -> Result<Client> {
        let client = self.start()?;
        let wait = self.connect_timeout.unwrap_or(self.session_timeout);
        let mut states = client.state_changes();
        let established = async {
            loop {
                if client.state().is_connected() {
                    return Ok(());
                }
                match states.next().await {
                    Some(change) if change.state.is_connected() => return Ok(()),
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
                client.close_in_background();
                Err(Error::connection_loss().with_detail(format!(
                    "no ZooKeeper server reachable at {} within {} ms",
                    self.connect_string,
                    wait.as_millis()
                )))
            }
        }
    }

    /// Starts the client's task without waiting for a session: requests wait in a queue
    /// until one is established.
    pub fn start(&self) -> Result<Client> {
        let cs = ConnectString::parse(&self.connect_string)?;
        if self.session_timeout.is_zero() {
            return Err(Error::invalid("the session timeout must be positive"));
        }
        let mut cfg = SessionConfig::new(cs.hosts.len(), self.session_timeout);
        cfg.can_be_read_only = self.can_be_read_only;
        cfg.auth = self.auth.clone();
        cfg.max_frame_len = self.max_frame_len;
        cfg.seed = random_seed();
        let session = Session::new(cfg, Instant::now());
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Mutex::new(Shared {
            current: StateChange {
                state: ConnectionState::Connecting,
                session_id: 0,
            },
            negotiated_timeout: self.session_timeout,
            subscribers: Vec::new(),
        }));
        let driver = Driver::new(session, cs.hosts, cs.chroot.clone(), rx, shared.clone());
        tokio::spawn(driver.run());
        Ok(Client::from_inner(Inner {
            commands: tx,
            chroot: cs.chroot,
            max_frame_len: self.max_frame_len,
            next_watcher: AtomicU64::new(1),
            shared,
        }))
    }
}

/// A seed for the host shuffle, from the standard library's per-process random keys.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}
