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
use crate::model_server::{self, ModelHandle};
use crate::options::ServerOptions;
use crate::ports::free_ports;
use crate::tempdir::TempDir;
use crate::tls::TlsCertificates;
use crate::versions::ServerVersion;

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
/// # Without Java: `ZKRS_TEST_SERVER=model`
///
/// With the environment variable `ZKRS_TEST_SERVER=model`, [`start`](Self::start) and
/// [`start_with`](Self::start_with) serve the in-process ZooKeeper model (`zkrs-model`) on a
/// free port instead of starting a JVM, on a thread of its own. The tick and session timeouts
/// are honoured, and so are [`stop`](Self::stop) and [`restart`](Self::restart) (same port,
/// same tree and sessions). What only a JVM can do ([`kill`](Self::kill),
/// [`pause`](Self::pause), TLS, SASL, reconfig, zoo.cfg lines, the data folder and the log)
/// fails with an error, or for accessors a panic, naming the switch.
///
/// # Orphans
///
/// If the test process is killed (SIGKILL, CI timeout), `Drop` cannot run.
/// Each JVM therefore has a tiny `sh` watchdog reading a pipe from the test
/// process; when that process dies the pipe closes and the watchdog kills the
/// JVM at once, so no server outlives its test run.
#[derive(Debug)]
pub struct TestingServer {
    kind: Kind,
    options: ServerOptions,
}

#[derive(Debug)]
enum Kind {
    Jvm(Jvm),
    /// `ZKRS_TEST_SERVER=model`.
    Model(ModelHandle),
}

#[derive(Debug)]
struct Jvm {
    // Field order matters: the instance (and its JVM) is dropped before the
    // folder it lives in.
    instance: Instance,
    secure_port: Option<u16>,
    install: Installation,
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
        if model_server::selected() {
            let model = ModelHandle::start(&options)?;
            return Ok(TestingServer {
                kind: Kind::Model(model),
                options,
            });
        }
        let install = Installation::select(
            options.classpath.as_deref(),
            options.version.as_ref(),
            options.java.as_deref(),
        )?;
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
                        kind: Kind::Jvm(Jvm {
                            instance,
                            secure_port,
                            install,
                            dir,
                        }),
                        options,
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
        self.address().port()
    }

    /// The client address, `127.0.0.1:PORT`.
    pub fn address(&self) -> SocketAddr {
        match &self.kind {
            Kind::Jvm(jvm) => jvm.instance.address(),
            Kind::Model(model) => model.address(),
        }
    }

    /// The JVM's parts, or the error naming the switch for `what`.
    fn jvm(&self, what: &str) -> Result<&Jvm> {
        match &self.kind {
            Kind::Jvm(jvm) => Ok(jvm),
            Kind::Model(_) => Err(model_server::unsupported(what)),
        }
    }

    /// The JVM's parts, or the panic naming the switch for `what` (accessors that return no
    /// `Result`).
    fn jvm_only(&self, what: &str) -> &Jvm {
        match &self.kind {
            Kind::Jvm(jvm) => jvm,
            Kind::Model(_) => model_server::unsupported_panic(what),
        }
    }

    /// The TLS port (`secureClientPort`) of a server started with
    /// [`ServerOptions::tls`], `None` otherwise. It stays the same across
    /// [`restart`](Self::restart).
    pub fn secure_port(&self) -> Option<u16> {
        match &self.kind {
            Kind::Jvm(jvm) => jvm.secure_port,
            // Started without TLS: `start_with` refuses TLS with the switch.
            Kind::Model(_) => None,
        }
    }

    /// `"127.0.0.1:PORT"` for the TLS port, `None` without TLS.
    pub fn secure_connect_string(&self) -> Option<String> {
        self.secure_port().map(|port| format!("127.0.0.1:{port}"))
    }

    /// The TLS address, `127.0.0.1:PORT`, `None` without TLS.
    pub fn secure_address(&self) -> Option<SocketAddr> {
        self.secure_port()
            .map(|port| SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)))
    }

    /// The options the server was started with.
    pub fn options(&self) -> &ServerOptions {
        &self.options
    }

    /// The server's temporary folder (config, log, data), deleted on drop.
    pub fn temp_dir(&self) -> &Path {
        self.jvm_only("TestingServer::temp_dir").dir.path()
    }

    /// The ZooKeeper `dataDir` (snapshots and transaction logs).
    pub fn data_dir(&self) -> PathBuf {
        self.jvm_only("TestingServer::data_dir").instance.data_dir()
    }

    /// The server log (ZooKeeper's log output plus anything the JVM printed).
    /// Kept across restarts; deleted on drop with the folder.
    pub fn log_path(&self) -> PathBuf {
        self.jvm_only("TestingServer::log_path").instance.log_path()
    }

    /// The JVM's pid, `None` when stopped.
    pub fn pid(&self) -> Option<u32> {
        self.jvm_only("TestingServer::pid").instance.pid()
    }

    /// Whether the JVM is alive (a paused server is).
    pub fn is_running(&self) -> bool {
        match &self.kind {
            Kind::Jvm(jvm) => jvm.instance.is_running(),
            Kind::Model(model) => model.is_serving(),
        }
    }

    /// Whether the server is paused by [`pause`](Self::pause).
    pub fn is_paused(&self) -> bool {
        match &self.kind {
            Kind::Jvm(jvm) => jvm.instance.is_paused(),
            // The model cannot be paused.
            Kind::Model(_) => false,
        }
    }

    /// The mode `srvr` reports ([`Mode::Standalone`] when serving), `None`
    /// when stopped, paused or not answering within a second.
    pub fn mode(&self) -> Option<Mode> {
        match &self.kind {
            Kind::Jvm(jvm) => jvm.instance.mode(Duration::from_secs(1)),
            // The model is a standalone server; it answers no four-letter word.
            Kind::Model(model) => model.is_serving().then_some(Mode::Standalone),
        }
    }

    /// The version the server reports (`srvr`), for tests whose expectations differ by
    /// version; the model reports the 3.8.0 it models.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the server does not answer within 5 s (stopped, paused).
    pub fn version(&self) -> Result<ServerVersion> {
        match &self.kind {
            Kind::Jvm(jvm) => jvm.instance.version(Duration::from_secs(5)),
            Kind::Model(_) => Ok(ServerVersion::new(3, 8, 0)),
        }
    }

    /// Waits until the server serves (`srvr` reports a mode, and with TLS
    /// the TLS port listens), at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] if stopped, [`Error::ServerExited`] if the JVM
    /// died, [`Error::NotServing`] on timeout (a paused server never serves).
    pub fn wait_serving(&self, timeout: Duration) -> Result<()> {
        match &self.kind {
            Kind::Jvm(jvm) => wait_ready(&jvm.instance, jvm.secure_port, timeout),
            Kind::Model(model) if model.is_serving() => Ok(()),
            Kind::Model(model) => Err(model.not_running()),
        }
    }

    /// Stops the server gracefully (SIGTERM, then SIGKILL after 10 s) and
    /// waits for the JVM to exit. Clients then get "connection refused".
    /// No-op if already stopped. Data is kept for [`restart`](Self::restart).
    ///
    /// # Errors
    ///
    /// If signalling or waiting fails.
    pub fn stop(&self) -> Result<()> {
        match &self.kind {
            Kind::Jvm(jvm) => jvm.instance.stop(),
            Kind::Model(model) => model.stop(),
        }
    }

    /// Kills the server abruptly (SIGKILL), like a crash. No-op if stopped.
    ///
    /// # Errors
    ///
    /// If signalling or waiting fails.
    pub fn kill(&self) -> Result<()> {
        self.jvm("TestingServer::kill")?.instance.kill()
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
        let jvm = match &self.kind {
            Kind::Jvm(jvm) => jvm,
            Kind::Model(model) => return model.restart(),
        };
        jvm.instance.stop()?;
        let mut attempt = 1;
        loop {
            jvm.instance.spawn(&jvm.install, &self.options)?;
            match wait_ready(&jvm.instance, jvm.secure_port, self.options.startup_timeout) {
                Ok(()) => return Ok(()),
                Err(_) if attempt < PORT_ATTEMPTS && jvm.instance.port_conflict() => {
                    // The port cannot change: wait for it to be released.
                    attempt += 1;
                    thread::sleep(Duration::from_millis(500));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Restarts the server as [`restart`](Self::restart) does (same ports,
    /// same data: sessions survive a restart shorter than their timeout), now
    /// presenting and trusting `certs` instead of the set it had: a rotation
    /// of the server's certificate and CA. Afterwards clients must trust
    /// `certs.ca_pem()` and, when the server asks for one, present a
    /// certificate of `certs`. The client authentication, and which of the
    /// set's server certificates is presented (valid, expired, revoked), stay.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a server started without TLS; else as
    /// for [`restart`](Self::restart).
    pub fn restart_with_tls(&mut self, certs: &TlsCertificates) -> Result<()> {
        self.jvm("TestingServer::restart_with_tls")?;
        let Some(tls) = &mut self.options.tls else {
            return Err(Error::InvalidArgument {
                message: "restart_with_tls: the server was started without TLS".to_string(),
            });
        };
        tls.certs = certs.clone();
        let jvm = self.jvm("TestingServer::restart_with_tls")?;
        jvm.instance.stop()?;
        let cfg = config::zoo_cfg(
            &self.options,
            &jvm.instance.data_dir(),
            jvm.instance.port(),
            jvm.secure_port,
            &[],
        );
        jvm.instance.rewrite_config(&cfg)?;
        self.restart()
    }

    /// Freezes the JVM with SIGSTOP. Its sockets stay open, so clients
    /// connect and send, but get no answer: a silent network partition.
    /// Returns once every thread of the JVM has stopped (SIGSTOP takes
    /// effect when each thread next runs, which on a busy machine can be
    /// late), so nothing is answered after it returns.
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] if stopped; [`Error::Io`] if a thread still
    /// runs 10 s after the signal (the JVM stays marked paused).
    pub fn pause(&self) -> Result<()> {
        self.jvm("TestingServer::pause")?.instance.pause()
    }

    /// Thaws a paused JVM (SIGCONT).
    ///
    /// # Errors
    ///
    /// [`Error::NotRunning`] if stopped.
    pub fn resume(&self) -> Result<()> {
        self.jvm("TestingServer::resume")?.instance.resume()
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
