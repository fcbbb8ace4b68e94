//! How a command ends when it does not succeed: one line on stderr and an exit code.

use std::fmt;
use std::io;
use std::process::ExitCode;

use crate::args::UsageError;

/// Exit code for ZooKeeper and I/O errors.
pub const EXIT_ERROR: u8 = 1;
/// Exit code for command-line mistakes.
pub const EXIT_USAGE: u8 = 2;
/// Exit code when `lock --timeout` passed without the lock.
pub const EXIT_LOCK_TIMEOUT: u8 = 3;
/// Exit code when the lock was lost while the command ran.
pub const EXIT_LOCK_LOST: u8 = 4;
/// Exit code when `service pick` finds no instance to pick.
pub const EXIT_NO_INSTANCE: u8 = 5;
/// Exit code when the command to run cannot be started (as shells do).
pub const EXIT_CANNOT_RUN: u8 = 127;

/// Why zkctl stops with a non-zero exit code.
#[derive(Debug)]
pub enum Failure {
    /// A command-line mistake (exit 2, with a hint to `--help`).
    Usage(String),
    /// A ZooKeeper error: its Display names the code and the path (`NoNode: /a/b`).
    Zk(zkrs_client::Error),
    /// Anything else worth a message, with its exit code.
    Message(String, u8),
    /// Exit with this code without a message (e.g. the child's exit code, or a signal's).
    Silent(u8),
}

impl Failure {
    /// A message with exit code 1.
    pub fn msg(msg: impl Into<String>) -> Failure {
        Failure::Message(msg.into(), EXIT_ERROR)
    }

    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => EXIT_USAGE,
            Failure::Zk(_) => EXIT_ERROR,
            Failure::Message(_, code) | Failure::Silent(code) => *code,
        }
    }

    /// Prints the message (if any) and returns the exit code.
    pub fn report(&self) -> ExitCode {
        if crate::output_json::on() && !matches!(self, Failure::Silent(_)) {
            self.report_json();
            return ExitCode::from(self.exit_code());
        }
        match self {
            Failure::Usage(msg) => {
                eprintln!("zkctl: {msg} (see zkctl --help)");
            }
            Failure::Silent(_) => {}
            other => eprintln!("zkctl: {other}"),
        }
        ExitCode::from(self.exit_code())
    }
}

impl Failure {
    /// `--output json`: the message as one JSON object on stderr,
    /// `{"error":TEXT,"code":NAME,"exit":N}` ([`crate::json_records::Error`]).
    fn report_json(&self) {
        let text = match self {
            Failure::Usage(msg) => format!("{msg} (see zkctl --help)"),
            other => other.to_string(),
        };
        let code = match self {
            Failure::Usage(_) => Some("usage"),
            Failure::Zk(e) => Some(e.code().name()),
            _ => None,
        };
        let record = crate::json_records::Error {
            error: &text,
            code,
            exit: self.exit_code(),
        };
        let _ = crate::output_json::line(&mut io::stderr().lock(), &record);
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(msg) | Failure::Message(msg, _) => f.write_str(msg),
            // The error's causes (the I/O error, the SASL refusal) come through `source()`.
            Failure::Zk(e) => {
                write!(f, "{e}")?;
                let mut cause = std::error::Error::source(e);
                while let Some(c) = cause {
                    write!(f, ": {c}")?;
                    cause = c.source();
                }
                Ok(())
            }
            Failure::Silent(code) => write!(f, "exit {code}"),
        }
    }
}

impl From<zkrs_client::Error> for Failure {
    fn from(e: zkrs_client::Error) -> Failure {
        Failure::Zk(e)
    }
}

impl From<UsageError> for Failure {
    fn from(e: UsageError) -> Failure {
        Failure::Usage(e.0)
    }
}

impl From<io::Error> for Failure {
    /// A closed stdout (`zkctl ls / | head -1`) ends quietly, as with SIGPIPE (141).
    fn from(e: io::Error) -> Failure {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::Silent(141)
        } else {
            Failure::msg(format!("I/O error: {e}"))
        }
    }
}

/// The result of a command: `Ok(code)` is the exit code (0, or the child's).
pub type Outcome = Result<u8, Failure>;
