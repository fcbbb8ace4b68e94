//! One configured ZooKeeper server (standalone or ensemble member): its
//! directory, files and, while running, its JVM. Shared by
//! [`TestingServer`](crate::TestingServer) and
//! [`TestingCluster`](crate::TestingCluster).

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use crate::config;
use crate::error::{Error, Result};
use crate::four_letter::{four_letter_word, Mode};
use crate::listen::listens;
use crate::locate::Installation;
use crate::options::ServerOptions;
use crate::process::{JvmProcess, STOP_GRACE};
use crate::versions::ServerVersion;

/// How many log lines startup errors quote.
const LOG_TAIL_LINES: usize = 20;

/// What ZooKeeper logs when a port is taken (a `java.net.BindException`).
const PORT_IN_USE: &str = "Address already in use";

#[derive(Debug)]
struct State {
    process: Option<JvmProcess>,
    /// Size of the log when the current process was spawned, so that we can
    /// look at this run's messages only.
    log_offset: u64,
}

#[derive(Debug)]
pub(crate) struct Instance {
    /// "ZooKeeper server 127.0.0.1:2181", "ensemble member 1 (...)": used in
    /// error messages.
    name: String,
    dir: PathBuf,
    client_port: u16,
    main_class: &'static str,
    state: Mutex<State>,
}

impl Instance {
    /// Writes `zoo.cfg` (from `zoo_cfg`), the logging configuration, the
    /// data directory and, for ensemble members, `myid` into `dir` (created
    /// if needed). Nothing is started.
    pub(crate) fn create(
        name: String,
        dir: PathBuf,
        client_port: u16,
        main_class: &'static str,
        zoo_cfg: &str,
        myid: Option<usize>,
    ) -> Result<Instance> {
        let data_dir = dir.join(config::DATA_DIR);
        create_dir(&data_dir)?;
        write(&dir.join(config::ZOO_CFG), zoo_cfg)?;
        write(&dir.join(config::LOG4J_PROPERTIES), config::LOG4J_CONFIG)?;
        write(&dir.join(config::LOGBACK_XML), config::LOGBACK_CONFIG)?;
        if let Some(id) = myid {
            write(&data_dir.join("myid"), &format!("{id}\n"))?;
        }
        Ok(Instance {
            name,
            dir,
            client_port,
            main_class,
            state: Mutex::new(State {
                process: None,
                log_offset: 0,
            }),
        })
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Replaces `zoo.cfg`, read at the next [`spawn`](Self::spawn).
    pub(crate) fn rewrite_config(&self, zoo_cfg: &str) -> Result<()> {
        write(&self.dir.join(config::ZOO_CFG), zoo_cfg)
    }

    pub(crate) fn data_dir(&self) -> PathBuf {
        self.dir.join(config::DATA_DIR)
    }

    pub(crate) fn log_path(&self) -> PathBuf {
        self.dir.join(config::LOG_FILE)
    }

    pub(crate) fn port(&self) -> u16 {
        self.client_port
    }

    pub(crate) fn address(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.client_port))
    }

    /// Locks the state, ignoring poisoning: a panic in another thread must
    /// not stop us from cleaning up.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts the JVM if it is not running; does not wait for it to serve.
    pub(crate) fn spawn(&self, install: &Installation, options: &ServerOptions) -> Result<()> {
        let mut state = self.state();
        if let Some(process) = state.process.as_mut() {
            if process.is_alive() {
                return Ok(());
            }
        }
        let log_path = self.log_path();
        // Append: the log of earlier runs stays (restart tests want it), and
        // we remember where this run starts.
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| Error::io(format!("opening {}", log_path.display()), e))?;
        let log_offset = log
            .metadata()
            .map_err(|e| Error::io(format!("reading {}", log_path.display()), e))?
            .len();
        let log_err = log
            .try_clone()
            .map_err(|e| Error::io(format!("opening {}", log_path.display()), e))?;

        if let Some(jaas) = config::jaas_config(options) {
            write(&self.dir.join(config::JAAS_FILE), &jaas)?;
        }
        let mut command = Command::new(install.java());
        command
            .args(config::jvm_args(options, &self.dir))
            .arg("-cp")
            .arg(install.classpath())
            .arg(self.main_class)
            .arg(self.dir.join(config::ZOO_CFG))
            // hs_err_pid files and other droppings go to our folder.
            .current_dir(&self.dir)
            .stdout(log)
            .stderr(log_err);
        let process = JvmProcess::spawn(command).map_err(|e| {
            Error::io(
                format!("starting {} with {}", self.name, install.java().display()),
                e,
            )
        })?;
        state.process = Some(process);
        state.log_offset = log_offset;
        Ok(())
    }

    /// Polls `srvr` until the server reports a serving [`Mode`], the process
    /// exits, or `timeout` passes.
    pub(crate) fn wait_serving(&self, timeout: Duration) -> Result<Mode> {
        let deadline = Instant::now() + timeout;
        let mut last_answer = String::from("none yet");
        loop {
            // Check the process first: a server that died will never answer,
            // and its log says why.
            {
                let mut state = self.state();
                match state.process.as_mut() {
                    None => {
                        return Err(Error::NotRunning {
                            server: self.name.clone(),
                        })
                    }
                    Some(process) => match process.try_wait() {
                        Ok(None) => {}
                        Ok(Some(status)) => {
                            return Err(Error::ServerExited {
                                server: self.name.clone(),
                                status: status.to_string(),
                                log_path: self.log_path(),
                                log_tail: self.log_tail(),
                            })
                        }
                        Err(e) => return Err(Error::io(format!("waiting for {}", self.name), e)),
                    },
                }
            }
            let now = Instant::now();
            let remaining = deadline.saturating_duration_since(now);
            let attempt = remaining.min(Duration::from_secs(1));
            if !attempt.is_zero() {
                match four_letter_word(self.address(), "srvr", attempt) {
                    Ok(answer) => match Mode::from_srvr(&answer) {
                        Some(mode) if mode.is_serving() => return Ok(mode),
                        Some(mode) => last_answer = format!("Mode: {mode}"),
                        None => last_answer = answer.lines().next().unwrap_or("").to_owned(),
                    },
                    Err(e) => last_answer = e.to_string(),
                }
            }
            if Instant::now() >= deadline {
                return Err(Error::NotServing {
                    server: self.name.clone(),
                    timeout,
                    last_answer,
                    log_path: self.log_path(),
                    log_tail: self.log_tail(),
                });
            }
            // Connection refused comes back at once while the JVM boots:
            // don't spin on a shared CPU.
            let pause = deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(50));
            thread::sleep(pause);
        }
    }

    /// The mode reported by `srvr`, `None` if stopped, paused, not serving or
    /// not answering within `timeout`.
    pub(crate) fn mode(&self, timeout: Duration) -> Option<Mode> {
        if !self.is_running() || self.is_paused() {
            return None;
        }
        four_letter_word(self.address(), "srvr", timeout)
            .ok()
            .and_then(|answer| Mode::from_srvr(&answer))
    }

    /// The version `srvr` reports.
    pub(crate) fn version(&self, timeout: Duration) -> Result<ServerVersion> {
        let answer = four_letter_word(self.address(), "srvr", timeout)
            .map_err(|e| Error::io(format!("asking {} for its version", self.name), e))?;
        ServerVersion::from_srvr(&answer).ok_or_else(|| Error::InvalidArgument {
            message: format!(
                "{} answered srvr without a version: {}",
                self.name,
                answer.lines().next().unwrap_or("")
            ),
        })
    }

    /// A one-line description of the state, for error messages.
    pub(crate) fn describe(&self) -> String {
        let status = if !self.is_running() {
            "stopped".to_owned()
        } else if self.is_paused() {
            "paused".to_owned()
        } else {
            match four_letter_word(self.address(), "srvr", Duration::from_millis(500)) {
                Ok(answer) => match Mode::from_srvr(&answer) {
                    Some(mode) => format!("Mode: {mode}"),
                    None => answer.lines().next().unwrap_or("").to_owned(),
                },
                Err(e) => e.to_string(),
            }
        };
        format!(
            "{}: {status} (log: {})",
            self.name,
            self.log_path().display()
        )
    }

    /// Whether the JVM is alive (a paused one is).
    pub(crate) fn is_running(&self) -> bool {
        self.state()
            .process
            .as_mut()
            .is_some_and(JvmProcess::is_alive)
    }

    pub(crate) fn is_paused(&self) -> bool {
        self.state()
            .process
            .as_ref()
            .is_some_and(JvmProcess::is_paused)
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        let mut state = self.state();
        let process = state.process.as_mut()?;
        process.is_alive().then(|| process.pid())
    }

    /// SIGTERM, wait (bounded), forget the process. No-op if not running.
    pub(crate) fn stop(&self) -> Result<()> {
        let process = self.state().process.take();
        if let Some(mut process) = process {
            process
                .terminate(STOP_GRACE)
                .map_err(|e| Error::io(format!("stopping {}", self.name), e))?;
        }
        Ok(())
    }

    /// SIGKILL, reap, forget the process. No-op if not running.
    pub(crate) fn kill(&self) -> Result<()> {
        let process = self.state().process.take();
        if let Some(mut process) = process {
            process
                .kill()
                .map_err(|e| Error::io(format!("killing {}", self.name), e))?;
        }
        Ok(())
    }

    pub(crate) fn pause(&self) -> Result<()> {
        self.with_live_process(|p| p.pause(), "pausing")
    }

    pub(crate) fn resume(&self) -> Result<()> {
        self.with_live_process(|p| p.resume(), "resuming")
    }

    fn with_live_process(
        &self,
        f: impl FnOnce(&mut JvmProcess) -> std::io::Result<()>,
        what: &str,
    ) -> Result<()> {
        let mut state = self.state();
        let live = state
            .process
            .as_mut()
            .and_then(|p| p.is_alive().then_some(p));
        match live {
            Some(process) => f(process).map_err(|e| Error::io(format!("{what} {}", self.name), e)),
            None => Err(Error::NotRunning {
                server: self.name.clone(),
            }),
        }
    }

    /// Whether this run's log says a port was taken (another process got it
    /// between our probe and the server's bind): worth retrying.
    pub(crate) fn port_conflict(&self) -> bool {
        let offset = self.state().log_offset;
        read_from(&self.log_path(), offset).contains(PORT_IN_USE)
    }

    /// The last [`LOG_TAIL_LINES`] lines of the log.
    pub(crate) fn log_tail(&self) -> String {
        let path = self.log_path();
        // Lines are short; 64 KiB is plenty for 20 of them.
        let len = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let text = read_from(&path, len.saturating_sub(64 * 1024));
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
    }

    /// Waits until this instance's JVM listens on `port` of `127.0.0.1`, at most `timeout`
    /// (a standalone server binds its TLS port only after it serves on the plain one).
    ///
    /// # Errors
    ///
    /// [`Error::ServerExited`] (through the instance) if the JVM dies,
    /// [`Error::NotRunning`] if it is stopped, [`Error::NotServing`] on timeout.
    pub(crate) fn wait_listening(&self, port: u16, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut last = String::from("not listening yet");
        loop {
            let Some(pid) = self.pid() else {
                // Stopped, or died: let the instance say which (and quote the log).
                return self.wait_serving(Duration::ZERO).map(drop);
            };
            match listens(pid, port) {
                Some(true) => return Ok(()),
                Some(false) => {}
                None => {
                    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
                    let attempt = deadline
                        .saturating_duration_since(Instant::now())
                        .clamp(Duration::from_millis(1), Duration::from_secs(1));
                    match TcpStream::connect_timeout(&addr, attempt) {
                        Ok(_) => return Ok(()),
                        Err(e) => last = e.to_string(),
                    }
                }
            }
            if Instant::now() >= deadline {
                return Err(Error::NotServing {
                    server: format!("TLS port 127.0.0.1:{port} (secureClientPort)"),
                    timeout,
                    last_answer: last,
                    log_path: self.log_path(),
                    log_tail: self.log_tail(),
                });
            }
            thread::sleep(
                deadline
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(20)),
            );
        }
    }
}

fn read_from(path: &Path, offset: u64) -> String {
    let mut bytes = Vec::new();
    if let Ok(mut file) = File::open(path) {
        if file.seek(SeekFrom::Start(offset)).is_ok() {
            let _ = file.read_to_end(&mut bytes);
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn create_dir(path: &Path) -> Result<()> {
    fs::create_dir_all(path).map_err(|e| Error::io(format!("creating {}", path.display()), e))
}

fn write(path: &Path, contents: &str) -> Result<()> {
    fs::write(path, contents).map_err(|e| Error::io(format!("writing {}", path.display()), e))
}
