//! The KDC process: `krb5kdc` started on the realm's port, waited for until it listens
//! (alone) there, and the end of its log for errors.

use std::ffi::OsStr;
use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use super::conf_files::{KDC_LOG, KDC_PID, REALM};
use super::tools::{Env, Tools};
use crate::error::{Error, Result};
use crate::listen::{listens, tcp_listeners};
use crate::process::JvmProcess;

/// How long [`KerberosRealm::start`] waits for the KDC to listen.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);

/// How many log lines startup errors quote.
const LOG_TAIL_LINES: usize = 20;

/// How a KDC start ended, short of an error.
pub(super) enum Started {
    /// It listens, alone, on its port.
    Serving(JvmProcess),
    /// It listens, but so does someone else (`SO_REUSEPORT`).
    PortShared(JvmProcess),
}

/// Starts `krb5kdc -n` and waits until it accepts TCP connections.
pub(super) fn start_kdc(tools: &Tools, dir: &Path, port: u16, env: Env<'_>) -> Result<Started> {
    let log_path = dir.join(KDC_LOG);
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| Error::io(format!("opening {}", log_path.display()), e))?;
    let log_err = log
        .try_clone()
        .map_err(|e| Error::io(format!("opening {}", log_path.display()), e))?;
    let pid_file = dir.join(KDC_PID);
    let args: [&OsStr; 4] = ["-n".as_ref(), "-r".as_ref(), REALM.as_ref(), "-P".as_ref()];
    let mut command = tools.command(&tools.krb5kdc, &args, env);
    command
        .arg(&pid_file)
        .current_dir(dir)
        .stdout(log)
        .stderr(log_err);
    let mut kdc = JvmProcess::spawn(command)
        .map_err(|e| Error::io(format!("starting {}", tools.krb5kdc.display()), e))?;
    let name = format!("Kerberos KDC 127.0.0.1:{port}");
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    let mut last = String::from("not listening yet");
    loop {
        match kdc.try_wait() {
            Ok(None) => {}
            Ok(Some(status)) => {
                return Err(Error::ServerExited {
                    server: name,
                    status: status.to_string(),
                    log_tail: log_tail(&log_path),
                    log_path,
                })
            }
            Err(e) => return Err(Error::io(format!("waiting for {name}"), e)),
        }
        // Our own listening socket first (a TCP probe alone could reach
        // another process that took the port), then a real connection.
        let own = listens(kdc.pid(), port);
        if own != Some(false) {
            let attempt = deadline
                .saturating_duration_since(Instant::now())
                .clamp(Duration::from_millis(1), Duration::from_secs(1));
            match TcpStream::connect_timeout(&address, attempt) {
                Ok(_) => {
                    return Ok(match tcp_listeners(port) {
                        Some(n) if n > 1 => Started::PortShared(kdc),
                        _ => Started::Serving(kdc),
                    })
                }
                Err(e) => last = e.to_string(),
            }
        }
        if Instant::now() >= deadline {
            return Err(Error::io(
                format!(
                    "{name} did not accept TCP connections within {STARTUP_TIMEOUT:?} \
                     ({last}); last lines of {}:\n{}",
                    log_path.display(),
                    log_tail(&log_path)
                ),
                io::Error::from(io::ErrorKind::TimedOut),
            ));
        }
        thread::sleep(
            deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(10)),
        );
    }
}

/// The last [`LOG_TAIL_LINES`] lines of a log file.
pub(super) fn log_tail(path: &Path) -> String {
    let mut bytes = Vec::new();
    if let Ok(mut file) = fs::File::open(path) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if file
            .seek(SeekFrom::Start(len.saturating_sub(64 * 1024)))
            .is_ok()
        {
            let _ = file.read_to_end(&mut bytes);
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
}
