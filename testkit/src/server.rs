//! A single standalone ZooKeeper server.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use crate::config;
use crate::error::{Error, Result};
use crate::four_letter::Mode;
use crate::instance::Instance;
use crate::locate::Installation;
use crate::options::ServerOptions;
use crate::ports::free_ports;
use crate::tempdir::TempDir;

/// How many times a start is retried when the server reports its port was
/// taken by someone else between our probe and its bind.
pub(crate) const PORT_ATTEMPTS: usize = 3;

/// A real standalone ZooKeeper server (`ZooKeeperServerMain`) on
/// `127.0.0.1`, in a fresh temporary folder, like Curator's `TestingServer`.
///
/// [`start`](Self::start) returns once the server serves; dropping the value
/// kills the JVM and deletes the folder (also when a test panics). Every
/// method takes `&self`, so a server can be shared between threads.
///
/// ```no_run
/// use std::time::Duration;
/// use zkrs_testkit::TestingServer;
///
/// let server = TestingServer::start()?;
/// let connect = server.connect_string(); // "127.0.0.1:PORT": give it to a client
///
/// server.pause()?;   // SIGSTOP: clients see a silent black hole
/// server.resume()?;
/// server.restart()?; // same port, same data: sessions survive
/// server.stop()?;    // clients see connection refused
/// # drop(connect);
/// # Ok::<(), zkrs_testkit::Error>(())
/// ```
///
/// # Orphans
///
/// If the test process is killed (SIGKILL, CI timeout), `Drop` cannot run.
/// Each JVM therefore has a tiny `sh` watchdog reading a pipe from the test
/// process; when that process dies the pipe closes and the watchdog kills the
/// JVM at once, so no server outlives its test run.
#[derive(Debug)]
pub struct TestingServer {
    // Field order matters: the instance (and its JVM) is dropped before the
    // folder it lives in.
    instance: Instance,
    secure_port: Option<u16>,
    install: Installation,
    options: ServerOptions,
    dir: TempDir,
}

impl TestingServer {
    /// Starts a server with [`ServerOptions::default`] and waits until it
    /// serves.
    ///
    /// # Errors
    ///
    /// [`Error::ServerNotFound`]/[`Error::JavaNotFound`] when ZooKeeper or
    /// java is not installed; [`Error::ServerExited`] or
    /// [`Error::NotServing`] (with the end of the server log) when it does
    /// not come up.
    pub fn start() -> Result<Self> {
        Self::start_with(ServerOptions::default())
    }

    /// The server for an example or a demo: the connect string in the environment variable
    /// `var` when it is set (no server is started), else a fresh server (returned, so it
    /// lives as long as the caller keeps it) and its connect string.
    ///
    /// ```no_run
    /// let (_server, connect) = zkrs_testkit::TestingServer::from_env_or_start("ZK_SERVER")?;
    /// println!("using ZooKeeper at {connect}");
    /// # Ok::<(), zkrs_testkit::Error>(())
    /// ```
    pub fn from_env_or_start(var: &str) -> Result<(Option<Self>, String)> {
        match std::env::var(var) {
            Ok(connect) if !connect.is_empty() => Ok((None, connect)),
            _ => {
                let server = Self::start()?;
                let connect = server.connect_string();
                Ok((Some(server), connect))
            }
        }
    }

    /// The server for a benchmark: `address` when given (no server is started), else a fresh
    /// server with [`ServerOptions::benchmark`] (returned, so it lives as long as the caller
    /// keeps it) and its connect string. Panics with a clear message when none can start:
    /// for `main` functions of benchmarks.
    pub fn given_or_started(address: Option<&str>) -> (Option<Self>, String) {
        match address {
            Some(a) => (None, a.to_string()),
            None => {
                let server = Self::start_with(ServerOptions::benchmark()).unwrap_or_else(|e| {
                    panic!(
                        "start ZooKeeper (run scripts/install-zookeeper.sh, or pass --server): {e}"
                    )
                });
                let connect = server.connect_string();
                (Some(server), connect)
            }
        }
    }

    /// Starts a server with the given options and waits until it serves.
    ///
    /// # Errors
    ///
    /// As for [`start`](Self::start); [`Error::InvalidArgument`] for options
    /// no server can run with ([`ServerOptions::kerberos`] together with
    /// [`ServerOptions::sasl_digest_user`]).
    pub fn start_with(options: ServerOptions) -> Result<Self> {
        options.check()?;
        let install = Installation::resolve(options.classpath.as_deref(), options.java.as_deref())?;
        let dir = TempDir::new().map_err(|e| Error::io("creating a temporary folder", e))?;
        let mut attempt = 1;
        loop {
            let wanted = if options.tls.is_some() { 2 } else { 1 };
            let ports = free_ports(wanted).map_err(|e| Error::io("finding a free port", e))?;
            let (port, secure_port) = (ports[0], ports.get(1).copied());
            let cfg = config::zoo_cfg(
                &options,
                &dir.path().join(config::DATA_DIR),
                port,
                secure_port,
                &[],
            );
            let instance = Instance::create(
                format!("ZooKeeper server 127.0.0.1:{port}"),
                dir.path().to_path_buf(),
                port,
                config::STANDALONE_MAIN,
                &cfg,
                None,
            )?;
            instance.spawn(&install, &options)?;
            match wait_ready(&instance, secure_port, options.startup_timeout) {
                Ok(()) => {
                    return Ok(TestingServer {
                        instance,
                        secure_port,
                        install,
                        options,
                        dir,
                    })
                }
                // Someone took the port: try another one.
                Err(_) if attempt < PORT_ATTEMPTS && instance.port_conflict() => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// `"127.0.0.1:PORT"`, the connect string for clients.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.port())
    }

    /// The client port. It stays the same across [`restart`](Self::restart).
    pub fn port(&self) -> u16 {
        self.instance.port()
    }

    /// The client address, `127.0.0.1:PORT`.
    pub fn address(&self) -> SocketAddr {
        self.instance.address()
    }

    /// The TLS port (`secureClientPort`) of a server started with
    /// [`ServerOptions::tls`], `None` otherwise. It stays the same across
    /// [`restart`](Self::restart).
    pub fn secure_port(&self) -> Option<u16> {
        self.secure_port
    }

    /// `"127.0.0.1:PORT"` for the TLS port, `None` without TLS.
    pub fn secure_connect_string(&self) -> Option<String> {
        self.secure_port.map(|port| format!("127.0.0.1:{port}"))
    }

    /// The TLS address, `127.0.0.1:PORT`, `None` without TLS.
    pub fn secure_address(&self) -> Option<SocketAddr> {
        self.secure_port
            .map(|port| SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)))
    }

    /// The options the server was started with.
    pub fn options(&self) -> &ServerOptions {
        &self.options
    }

    /// The server's temporary folder (config, log, data), deleted on drop.
    pub fn temp_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The ZooKeeper `dataDir` (snapshots and transaction logs).
    pub fn data_dir(&self) -> PathBuf {
        self.instance.data_dir()
    }

    /// The server log (ZooKeeper's log output plus anything the JVM printed).
    /// Kept across restarts; deleted on drop with the folder.
    pub fn log_path(&self) -> PathBuf {
        self.instance.log_path()
    }

    /// The JVM's pid, `None` when stopped.
    pub fn pid(&self) -> Option<u32> {
        self.instance.pid()
    }

    /// Whether the JVM is alive (a paused server is).
    pub fn is_running(&self) -> bool {
        self.instance.is_running()
    }

    /// Whether the server is paused by [`pause`](Self::pause).
    pub fn is_paused(&self) -> bool {
        self.instance.is_paused()
    }

    /// The mode `srvr` reports ([`Mode::Standalone`] when serving), `None`
    /// when stopped, paused or not answering within a second.
    pub fn mode(&self) -> Option<Mode> {
        self.instance.mode(Duration::from_secs(1))
    }

    /// Waits until the server serves (`srvr` reports a mode, and with TLS
    /// the TLS port listens), at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] if stopped, [`Error::ServerExited`] if the JVM
    /// died, [`Error::NotServing`] on timeout (a paused server never serves).
    pub fn wait_serving(&self, timeout: Duration) -> Result<()> {
        wait_ready(&self.instance, self.secure_port, timeout)
    }

    /// Stops the server gracefully (SIGTERM, then SIGKILL after 10 s) and
    /// waits for the JVM to exit. Clients then get "connection refused".
    /// No-op if already stopped. Data is kept for [`restart`](Self::restart).
    ///
    /// # Errors
    ///
    /// If signalling or waiting fails.
    pub fn stop(&self) -> Result<()> {
        self.instance.stop()
    }

    /// Kills the server abruptly (SIGKILL), like a crash. No-op if stopped.
    ///
    /// # Errors
    ///
    /// If signalling or waiting fails.
    pub fn kill(&self) -> Result<()> {
        self.instance.kill()
    }

    /// Stops the server if it is running, then starts it again on the same
    /// port with the same data, and waits until it serves. Sessions survive
    /// if the restart is shorter than their timeout.
    ///
    /// # Errors
    ///
    /// As for [`start`](Self::start). If another process took the port
    /// meanwhile, this retries a few times, then fails.
    pub fn restart(&self) -> Result<()> {
        self.instance.stop()?;
        let mut attempt = 1;
        loop {
            self.instance.spawn(&self.install, &self.options)?;
            match wait_ready(
                &self.instance,
                self.secure_port,
                self.options.startup_timeout,
            ) {
                Ok(()) => return Ok(()),
                Err(_) if attempt < PORT_ATTEMPTS && self.instance.port_conflict() => {
                    // The port cannot change: wait for it to be released.
                    attempt += 1;
                    thread::sleep(Duration::from_millis(500));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Freezes the JVM with SIGSTOP. Its sockets stay open, so clients
    /// connect and send, but get no answer: a silent network partition.
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] if stopped.
    pub fn pause(&self) -> Result<()> {
        self.instance.pause()
    }

    /// Thaws a paused JVM (SIGCONT).
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] if stopped.
    pub fn resume(&self) -> Result<()> {
        self.instance.resume()
    }
}

/// Waits, within one `timeout`, until `instance` serves (`srvr` on the plain
/// port) and, when it has one, its TLS port listens (bound after the server
/// starts serving on the plain port).
pub(crate) fn wait_ready(
    instance: &Instance,
    secure_port: Option<u16>,
    timeout: Duration,
) -> Result<()> {
    let deadline = std::time::Instant::now() + timeout;
    instance.wait_serving(timeout)?;
    match secure_port {
        Some(port) => instance.wait_listening(
            port,
            deadline.saturating_duration_since(std::time::Instant::now()),
        ),
        None => Ok(()),
    }
}
