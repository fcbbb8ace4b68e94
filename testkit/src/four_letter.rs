//! ZooKeeper "four letter word" admin commands (`srvr`, `stat`, `conf`...).

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Sends a four letter word (`srvr`, `ruok`, `conf`, `mntr`...) to a
/// ZooKeeper server and returns its whole answer.
///
/// The servers started by this crate allow every command
/// (`4lw.commands.whitelist=*`).
///
/// `timeout` bounds the whole exchange (connect, send, read until the server
/// closes the connection). A paused server ([`TestingServer::pause`]) still
/// accepts the TCP connection (the kernel does that) but never answers, so
/// this returns an [`io::ErrorKind::TimedOut`] error.
///
/// ```no_run
/// use std::time::Duration;
/// let server = zkrs_testkit::TestingServer::start()?;
/// let answer = zkrs_testkit::four_letter_word(server.address(), "srvr", Duration::from_secs(2))?;
/// assert!(answer.contains("Mode: standalone"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// Connection refused (nothing listening), timeouts, or other I/O errors;
/// [`io::ErrorKind::Unsupported`] with `ZKRS_TEST_SERVER=model` (the model answers no
/// four-letter word).
///
/// [`TestingServer::pause`]: crate::TestingServer::pause
pub fn four_letter_word(addr: SocketAddr, cmd: &str, timeout: Duration) -> io::Result<String> {
    if crate::model_server::selected() {
        // The model answers no four-letter word: say so rather than return an empty answer.
        let what = format!("the four-letter word {cmd:?}");
        let message = crate::model_server::unsupported(&what).to_string();
        return Err(io::Error::new(io::ErrorKind::Unsupported, message));
    }
    let deadline = Instant::now() + timeout;
    let remaining = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| timed_out(addr, cmd, timeout))
    };
    let mut stream = TcpStream::connect_timeout(&addr, remaining()?)?;
    stream.set_write_timeout(Some(remaining()?))?;
    stream.write_all(cmd.as_bytes())?;
    // Half-close like ZooKeeper's own FourLetterWordMain (and `nc`) do; the
    // server answers, then closes, which ends our read loop.
    let _ = stream.shutdown(Shutdown::Write);
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        stream.set_read_timeout(Some(remaining()?))?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // Read timeouts surface as WouldBlock on Unix: report TimedOut.
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::TimedOut =>
            {
                return Err(timed_out(addr, cmd, timeout))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

fn timed_out(addr: SocketAddr, cmd: &str, timeout: Duration) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("no answer to {cmd:?} from {addr} within {timeout:?}"),
    )
}

/// The role a server reports in the `Mode:` line of its `srvr` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A standalone (single, non-replicated) server.
    Standalone,
    /// The ensemble's leader.
    Leader,
    /// An ensemble follower.
    Follower,
    /// An ensemble observer.
    Observer,
    /// A partitioned member serving reads only (`readonlymode.enabled`).
    ReadOnly,
}

impl Mode {
    /// Extracts the mode from a `srvr` (or `stat`) answer.
    ///
    /// Returns `None` when the answer has no `Zookeeper version` line or no
    /// known `Mode:` line, e.g. "This ZooKeeper instance is not currently
    /// serving requests", which a server says while it has no quorum.
    ///
    /// ```
    /// use zkrs_testkit::Mode;
    /// let answer = "Zookeeper version: 3.8.0\nMode: follower\nNode count: 5\n";
    /// assert_eq!(Mode::from_srvr(answer), Some(Mode::Follower));
    /// let no_quorum = "This ZooKeeper instance is not currently serving requests";
    /// assert_eq!(Mode::from_srvr(no_quorum), None);
    /// ```
    pub fn from_srvr(answer: &str) -> Option<Mode> {
        if !answer.contains("Zookeeper version") {
            return None;
        }
        answer
            .lines()
            .find_map(|line| match line.strip_prefix("Mode:")?.trim() {
                "standalone" => Some(Mode::Standalone),
                "leader" => Some(Mode::Leader),
                "follower" => Some(Mode::Follower),
                "observer" => Some(Mode::Observer),
                "read-only" => Some(Mode::ReadOnly),
                _ => None,
            })
    }

    /// Whether a server in this mode accepts ordinary read-write sessions.
    pub fn is_serving(self) -> bool {
        !matches!(self, Mode::ReadOnly)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Standalone => "standalone",
            Mode::Leader => "leader",
            Mode::Follower => "follower",
            Mode::Observer => "observer",
            Mode::ReadOnly => "read-only",
        })
    }
}

/// Asks a server for its [`Mode`] with `srvr`.
///
/// `Ok(None)` means the server answered but is not serving (no quorum yet,
/// still loading...).
///
/// # Errors
///
/// As for [`four_letter_word`].
pub fn server_mode(addr: SocketAddr, timeout: Duration) -> io::Result<Option<Mode>> {
    four_letter_word(addr, "srvr", timeout).map(|answer| Mode::from_srvr(&answer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, TcpListener};
    use std::thread;

    #[test]
    fn parses_modes() {
        let srvr = |m: &str| {
            format!("Zookeeper version: 3.8.0-x\nLatency min/avg/max: 0/0.0/0\nMode: {m}\n")
        };
        assert_eq!(Mode::from_srvr(&srvr("leader")), Some(Mode::Leader));
        assert_eq!(Mode::from_srvr(&srvr("standalone")), Some(Mode::Standalone));
        assert_eq!(Mode::from_srvr(&srvr("read-only")), Some(Mode::ReadOnly));
        assert_eq!(Mode::from_srvr(&srvr("bogus")), None);
        assert_eq!(Mode::from_srvr("Mode: leader\n"), None);
        assert!(!Mode::ReadOnly.is_serving());
        assert!(Mode::Follower.is_serving());
    }

    #[test]
    fn reads_until_the_server_closes() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let server = thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut cmd = [0u8; 4];
            s.read_exact(&mut cmd).unwrap();
            assert_eq!(&cmd, b"ruok");
            s.write_all(b"imok").unwrap();
        });
        let answer = four_letter_word(addr, "ruok", Duration::from_secs(5)).unwrap();
        assert_eq!(answer, "imok");
        server.join().unwrap();
    }

    #[test]
    fn silent_servers_time_out() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let start = Instant::now();
        let err = four_letter_word(addr, "srvr", Duration::from_millis(300)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err}");
        assert!(start.elapsed() < Duration::from_secs(5));
        drop(listener);
    }
}
