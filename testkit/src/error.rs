//! The crate's error type.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while starting, controlling or stopping a
/// ZooKeeper server.
///
/// The [`Display`](fmt::Display) output is meant to be read by a person
/// looking at a failed test: it says what went wrong, which server it was, and
/// for startup problems it includes the last lines of the server's log.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The ZooKeeper server classes are not where we looked for them.
    ///
    /// `path` is the classpath entry that does not exist (by default
    /// `/usr/share/java/zookeeper.jar`).
    ServerNotFound {
        /// The missing jar or directory.
        path: PathBuf,
    },
    /// No usable `java` binary was found.
    JavaNotFound {
        /// The binary that was looked for (`ZKR_JAVA`, `$JAVA_HOME/bin/java` or
        /// `java` on the `PATH`).
        java: PathBuf,
    },
    /// An I/O operation failed (creating files, spawning processes...).
    Io {
        /// What was being done, e.g. "writing /tmp/.../zoo.cfg".
        context: String,
        /// The underlying error.
        source: io::Error,
    },
    /// The server process ended while we were waiting for it to serve.
    ServerExited {
        /// Which server, e.g. "ZooKeeper server 127.0.0.1:2181".
        server: String,
        /// How the process ended (exit code or signal).
        status: String,
        /// The server's log file.
        log_path: PathBuf,
        /// The last lines of the log file.
        log_tail: String,
    },
    /// The server did not start serving within the deadline.
    NotServing {
        /// Which server, e.g. "ZooKeeper server 127.0.0.1:2181".
        server: String,
        /// How long we waited.
        timeout: Duration,
        /// What the server last answered to `srvr` (or why it did not answer).
        last_answer: String,
        /// The server's log file.
        log_path: PathBuf,
        /// The last lines of the log file.
        log_tail: String,
    },
    /// No ensemble member reported `Mode: leader` within the deadline.
    NoLeader {
        /// How long we waited.
        timeout: Duration,
        /// One line per member with its last known state.
        members: String,
    },
    /// The operation needs a running server, but it is stopped.
    NotRunning {
        /// Which server.
        server: String,
    },
    /// A Java program beside the tests could not be set up: a jar or `javac` missing, or the
    /// sources did not compile (the message says which, with javac's output).
    JavaSetup {
        /// What was missing or failed.
        message: String,
    },
    /// A ZooKeeper or Curator version was chosen (`ZKRS_TEST_ZOOKEEPER`, `ZKRS_TEST_CURATOR`,
    /// [`ServerOptions::version`](crate::ServerOptions::version)) that the jar cache does not
    /// hold: the kit fetches nothing itself.
    NotFetched {
        /// What is missing, e.g. "zookeeper 3.7.2".
        what: String,
        /// The cache folder that would hold it.
        folder: PathBuf,
        /// The command that fetches it.
        command: String,
    },
    /// An argument was out of range (for example an ensemble of 0 servers).
    InvalidArgument {
        /// What was wrong.
        message: String,
    },
}

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The path of the server log, if this error is about a particular server.
    ///
    /// When a `start` fails, the server's temporary folder (log included) is
    /// deleted before the error reaches you; that is why the error message
    /// quotes the end of the log.
    pub fn log_path(&self) -> Option<&std::path::Path> {
        match self {
            Error::ServerExited { log_path, .. } | Error::NotServing { log_path, .. } => {
                Some(log_path)
            }
            _ => None,
        }
    }
}

fn write_tail(f: &mut fmt::Formatter<'_>, log_path: &std::path::Path, tail: &str) -> fmt::Result {
    if tail.trim().is_empty() {
        write!(f, "; log {} is empty", log_path.display())
    } else {
        write!(
            f,
            "; last lines of {}:\n{}",
            log_path.display(),
            tail.trim_end()
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ServerNotFound { path } => write!(
                f,
                "ZooKeeper server not found at {}: run scripts/install-zookeeper.sh \
                 (apt-get install zookeeper) or set ZKR_ZOOKEEPER_CLASSPATH",
                path.display()
            ),
            Error::JavaNotFound { java } => write!(
                f,
                "java not found ({}): run scripts/install-zookeeper.sh \
                 (apt-get install default-jre-headless) or set ZKR_JAVA",
                java.display()
            ),
            Error::Io { context, source } => write!(f, "{context}: {source}"),
            Error::ServerExited {
                server,
                status,
                log_path,
                log_tail,
            } => {
                write!(f, "{server} exited during startup ({status})")?;
                write_tail(f, log_path, log_tail)
            }
            Error::NotServing {
                server,
                timeout,
                last_answer,
                log_path,
                log_tail,
            } => {
                write!(
                    f,
                    "{server} was not serving within {timeout:?} (last srvr answer: {})",
                    last_answer.trim()
                )?;
                write_tail(f, log_path, log_tail)
            }
            Error::NoLeader { timeout, members } => write!(
                f,
                "no ensemble member became leader within {timeout:?}:\n{}",
                members.trim_end()
            ),
            Error::NotRunning { server } => write!(f, "{server} is not running"),
            Error::JavaSetup { message } => write!(
                f,
                "Java programs for the tests: {message} (scripts/install-zookeeper.sh installs a \
                 JDK and Curator's jars)"
            ),
            Error::NotFetched {
                what,
                folder,
                command,
            } => write!(
                f,
                "{what} is not in the jar cache ({} has no complete copy): run `{command}` \
                 (scripts/install-zookeeper.sh fetches the default versions)",
                folder.display()
            ),
            Error::InvalidArgument { message } => write!(f, "invalid argument: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_not_found_message_says_how_to_install() {
        let e = Error::ServerNotFound {
            path: "/usr/share/java/zookeeper.jar".into(),
        };
        assert_eq!(
            e.to_string(),
            "ZooKeeper server not found at /usr/share/java/zookeeper.jar: run \
             scripts/install-zookeeper.sh (apt-get install zookeeper) or set \
             ZKR_ZOOKEEPER_CLASSPATH"
        );
    }

    #[test]
    fn startup_errors_include_the_log_tail() {
        let e = Error::ServerExited {
            server: "ZooKeeper server 127.0.0.1:1".into(),
            status: "exit status: 2".into(),
            log_path: "/tmp/x/zookeeper.log".into(),
            log_tail: "line a\nline b\n".into(),
        };
        let s = e.to_string();
        assert!(s.contains("exit status: 2"), "{s}");
        assert!(s.ends_with("/tmp/x/zookeeper.log:\nline a\nline b"), "{s}");
    }
}
