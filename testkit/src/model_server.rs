//! The switch `ZKRS_TEST_SERVER=model`: [`TestingServer`](crate::TestingServer) serves the
//! in-process ZooKeeper model (`zkrs-model`) instead of starting a JVM.
//!
//! The model runs on its own thread with its own single-threaded tokio runtime (tests build
//! their own runtimes, and `TestingServer::start` is synchronous), on a free port of
//! 127.0.0.1. What the model cannot do (kill, pause, TLS, SASL, reconfig, four-letter words,
//! files on disk, another ZooKeeper build) fails with an error or a panic naming the switch,
//! never silently does something else.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc as std_mpsc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tokio::sync::mpsc;
use zkrs_model::{ServerConfig, TcpServer};

use crate::error::{Error, Result};
use crate::options::ServerOptions;

/// The environment variable of the switch.
pub(crate) const SWITCH: &str = "ZKRS_TEST_SERVER";

/// Whether `ZKRS_TEST_SERVER=model` is set.
pub(crate) fn selected() -> bool {
    std::env::var(SWITCH).is_ok_and(|v| v == "model")
}

/// The error for something the model cannot do.
pub(crate) fn unsupported(what: &str) -> Error {
    Error::InvalidArgument {
        message: format!(
            "{what} is not supported with {SWITCH}=model (the in-process ZooKeeper model has \
             no JVM); run this test without the switch"
        ),
    }
}

/// The panic for an accessor that cannot return an error.
pub(crate) fn unsupported_panic(what: &str) -> ! {
    panic!("{}", unsupported(what))
}

/// The model's settings for `options`, or which option it cannot honour.
pub(crate) fn model_config(options: &ServerOptions) -> Result<ServerConfig> {
    let refuse = |what: &str| Err(unsupported(what));
    if options.tls.is_some() {
        return refuse("ServerOptions::tls (TLS)");
    }
    if !options.sasl_users.is_empty() || options.sasl_required {
        return refuse("SASL (ServerOptions::sasl_digest_user/require_sasl)");
    }
    if options.kerberos.is_some() {
        return refuse("ServerOptions::kerberos");
    }
    if options.reconfig {
        return refuse("ServerOptions::reconfig");
    }
    if options.read_only_mode {
        return refuse("ServerOptions::read_only_mode");
    }
    if options.classpath.is_some() || options.java.is_some() || !options.jvm_args.is_empty() {
        return refuse("choosing a JVM or ZooKeeper build (classpath/java/jvm_arg)");
    }
    let mut config = ServerConfig::default();
    config.tick_time = options.tick_time();
    let (min, max) = options.session_timeout_range();
    config.min_session_timeout = Some(min);
    config.max_session_timeout = Some(max);
    config.extended_types = options.extended_types;
    for (key, value) in &options.system_properties {
        let ms = || value.parse::<u64>().map(Duration::from_millis).ok();
        match (key.as_str(), ms()) {
            ("znode.container.checkIntervalMs", Some(d)) => config.container_check_interval = d,
            ("znode.container.maxNeverUsedIntervalMs", Some(d)) => {
                config.container_max_never_used = (!d.is_zero()).then_some(d);
            }
            ("zookeeper.extendedTypesEnabled", _) => config.extended_types = value == "true",
            _ => return refuse(&format!("the system property {key}={value}")),
        }
    }
    if let Some(line) = options.config_lines.first() {
        return refuse(&format!("the zoo.cfg line {line:?}"));
    }
    Ok(config)
}

enum Command {
    Stop(std_mpsc::Sender<()>),
    Restart(std_mpsc::Sender<io::Result<()>>),
}

/// A [`TcpServer`] on its own thread and runtime. Dropping it stops the server and joins
/// the thread.
#[derive(Debug)]
pub(crate) struct ModelHandle {
    addr: SocketAddr,
    commands: Option<mpsc::UnboundedSender<Command>>,
    serving: AtomicBool,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Command::Stop(_) => "Stop",
            Command::Restart(_) => "Restart",
        })
    }
}

impl ModelHandle {
    /// Starts the model with `options` on a free port.
    pub(crate) fn start(options: &ServerOptions) -> Result<Self> {
        let config = model_config(options)?;
        let (ready_tx, ready_rx) = std_mpsc::channel();
        let (commands, mut rx) = mpsc::unbounded_channel::<Command>();
        let thread = thread::Builder::new()
            .name("zkrs-model-server".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let mut server = match TcpServer::start_on(0, config).await {
                        Ok(server) => server,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(server.addr()));
                    while let Some(command) = rx.recv().await {
                        match command {
                            Command::Stop(done) => {
                                server.stop().await;
                                let _ = done.send(());
                            }
                            Command::Restart(done) => {
                                let _ = done.send(server.restart().await);
                            }
                        }
                    }
                });
            })
            .map_err(|e| Error::io("spawning the model server's thread", e))?;
        let addr = match ready_rx.recv() {
            Ok(Ok(addr)) => addr,
            Ok(Err(e)) => return Err(Error::io("starting the ZooKeeper model", e)),
            Err(_) => {
                let _ = thread.join();
                return Err(Error::io(
                    "starting the ZooKeeper model",
                    io::Error::other("its thread ended"),
                ));
            }
        };
        Ok(ModelHandle {
            addr,
            commands: Some(commands),
            serving: AtomicBool::new(true),
            thread: Some(thread),
        })
    }

    pub(crate) fn address(&self) -> SocketAddr {
        self.addr
    }

    pub(crate) fn is_serving(&self) -> bool {
        self.serving.load(Ordering::SeqCst)
    }

    fn send(&self, command: Command) -> Result<()> {
        self.commands
            .as_ref()
            .and_then(|c| c.send(command).ok())
            .ok_or_else(|| {
                Error::io(
                    "controlling the ZooKeeper model",
                    io::Error::other("its thread ended"),
                )
            })
    }

    /// Closes every connection and the listener; the state is kept.
    pub(crate) fn stop(&self) -> Result<()> {
        let (tx, rx) = std_mpsc::channel();
        self.send(Command::Stop(tx))?;
        rx.recv().map_err(|_| {
            Error::io(
                "stopping the ZooKeeper model",
                io::Error::other("no answer"),
            )
        })?;
        self.serving.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// Listens again on the same port with the same state.
    pub(crate) fn restart(&self) -> Result<()> {
        let (tx, rx) = std_mpsc::channel();
        self.send(Command::Restart(tx))?;
        let answer = rx
            .recv()
            .unwrap_or_else(|_| Err(io::Error::other("no answer")));
        self.serving.store(answer.is_ok(), Ordering::SeqCst);
        answer.map_err(|e| {
            Error::io(
                format!("restarting the ZooKeeper model on {}", self.addr),
                e,
            )
        })
    }

    /// The error for a stopped server.
    pub(crate) fn not_running(&self) -> Error {
        Error::NotRunning {
            server: format!("ZooKeeper model 127.0.0.1:{}", self.addr.port()),
        }
    }
}

impl Drop for ModelHandle {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop; the runtime's drop closes every socket.
        self.commands = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honours_the_settings_it_has() {
        let config = model_config(
            &ServerOptions::new()
                .tick_time_ms(100)
                .max_session_timeout_ms(10_000)
                .system_property("znode.container.checkIntervalMs", "500"),
        )
        .unwrap();
        assert_eq!(config.tick_time, Duration::from_millis(100));
        assert_eq!(config.min_session_timeout, Some(Duration::from_millis(200)));
        assert_eq!(config.max_session_timeout, Some(Duration::from_secs(10)));
        assert_eq!(config.container_check_interval, Duration::from_millis(500));
    }

    #[test]
    fn refuses_what_it_cannot_do_naming_the_switch() {
        for options in [
            ServerOptions::new().reconfig(true),
            ServerOptions::new().sasl_digest_user("u", "p"),
            ServerOptions::new().config("localSessionsEnabled", "true"),
            ServerOptions::new().jvm_arg("-Xmx64m"),
        ] {
            let e = model_config(&options).unwrap_err().to_string();
            assert!(
                e.contains("not supported with ZKRS_TEST_SERVER=model"),
                "{e}"
            );
        }
    }

    #[test]
    fn stops_and_restarts_on_the_same_port() {
        let handle = ModelHandle::start(&ServerOptions::new()).unwrap();
        let addr = handle.address();
        assert!(std::net::TcpStream::connect(addr).is_ok());
        handle.stop().unwrap();
        assert!(!handle.is_serving());
        assert!(std::net::TcpStream::connect(addr).is_err());
        handle.restart().unwrap();
        assert!(handle.is_serving());
        assert!(std::net::TcpStream::connect(addr).is_ok());
    }
}
