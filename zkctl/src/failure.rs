//! How a command ends when it does not succeed: one line on stderr and an exit code.

use std::fmt;
use std::io;
use std::process::ExitCode;

use zkrs_client::ErrorCode;

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
    /// A ZooKeeper error: printed as [`ZkMessage`] says (`NoNode: /a/b`).
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
            Failure::Zk(e) => Some(java_code(e).name()),
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
                write!(f, "{}", ZkMessage(e))?;
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

/// The ZooKeeper code zkctl names an error by, as the Java CLI does: the server's code, or for
/// a local failure the code the Java client reports for it (`BadArguments` for input refused
/// before sending, `ConnectionLoss` for a lost connection or a closed client, ...). The
/// client's [`zkrs_client::Error::code`] is the server's alone; this is zkctl's wording.
pub fn java_code(e: &zkrs_client::Error) -> ErrorCode {
    zkrs_client::__private::java_code(e)
}

/// A ZooKeeper error as zkctl prints it: the code ([`java_code`]), then the error's detail and
/// path (`NoNode: /a/b`, `BadArguments: path must start with '/': a`). Its causes are not
/// included (`source()`).
pub struct ZkMessage<'a>(pub &'a zkrs_client::Error);

impl fmt::Display for ZkMessage<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", java_code(self.0))?;
        for part in [self.0.detail(), self.0.path()].into_iter().flatten() {
            write!(f, ": {part}")?;
        }
        Ok(())
    }
}

/// An error's message without its code (`MarshallingError: `): for a line that says what was
/// wrong with a node, where the code adds nothing. The code alone when there is nothing else.
pub fn without_code(e: &zkrs_client::Error) -> String {
    match (e.detail(), e.path()) {
        (Some(detail), Some(path)) => format!("{detail}: {path}"),
        (Some(only), None) | (None, Some(only)) => only.to_string(),
        (None, None) => java_code(e).to_string(),
    }
}

/// The result of a command: `Ok(code)` is the exit code (0, or the child's).
pub type Outcome = Result<u8, Failure>;
