//! How a command ends when it does not succeed: one line on stderr and an exit code.

use std::fmt;
use std::io;
use std::process::ExitCode;

use zkrs_client::ErrorCode;

use crate::args::UsageError;
use crate::output::note;

/// Exit code for ZooKeeper and I/O errors.
pub const EXIT_ERROR: u8 = 1;
/// Exit code for command-line mistakes.
pub const EXIT_USAGE: u8 = 2;
/// Exit code when `--timeout` passed (`queue take`; `lock` and `barrier` report it as
/// [`EXIT_CMD_TIMEOUT`]).
pub const EXIT_LOCK_TIMEOUT: u8 = 3;
/// The lock was lost; `lock` always runs a command, so this shows as [`EXIT_CMD_LOST`].
pub const EXIT_LOCK_LOST: u8 = 4;
/// Exit code when `service pick` finds no instance to pick.
pub const EXIT_NO_INSTANCE: u8 = 5;

/// Around a command: the lock was lost (before CMD started, or while it ran: it was stopped).
/// Below timeout(1)'s codes, which zkctl's own outcomes follow.
pub const EXIT_CMD_LOST: u8 = 123;
/// Around a command: not acquired (or not all entered/left) within `--timeout`; timeout(1)'s
/// code when the time ran out.
pub const EXIT_CMD_TIMEOUT: u8 = 124;
/// Around a command: zkctl itself failed (usage, ZooKeeper, I/O); timeout(1)'s code for its
/// own failure.
pub const EXIT_CMD_FAILED: u8 = 125;
/// The command to run was found but cannot be executed (as shells say: not executable, a
/// directory, not a program).
pub const EXIT_CANNOT_EXECUTE: u8 = 126;
/// The command to run was not found (as shells say).
pub const EXIT_NOT_FOUND: u8 = 127;

/// Which codes zkctl's own outcomes take: the one place that maps them.
///
/// Around a command (`lock`, `elect`, `barrier`, `member`, `service register -- CMD`) the exit
/// code is CMD's, which may be anything: CMD exiting 3 must not read as a timeout. So there,
/// as timeout(1), `env` and shells do, zkctl's own outcomes move to codes a command rarely
/// uses: 123 lost, 124 timeout, 125 zkctl failed, 126 and 127 CMD not run. Without a command
/// the small codes stay, as scripts use them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codes {
    /// No command of the user's runs: 1 to 5.
    Own,
    /// A command runs, and its status is passed through.
    AroundCommand,
}

impl Codes {
    /// The exit code for zkctl's own outcome `code` (one of the `EXIT_*` above).
    pub fn of(self, code: u8) -> u8 {
        match (self, code) {
            (Codes::Own, code) => code,
            (Codes::AroundCommand, EXIT_LOCK_TIMEOUT) => EXIT_CMD_TIMEOUT,
            (Codes::AroundCommand, EXIT_LOCK_LOST) => EXIT_CMD_LOST,
            (Codes::AroundCommand, EXIT_CANNOT_EXECUTE | EXIT_NOT_FOUND) => code,
            (Codes::AroundCommand, _) => EXIT_CMD_FAILED,
        }
    }
}

/// Why zkctl stops with a non-zero exit code.
#[derive(Debug)]
pub enum Failure {
    /// A command-line mistake (exit 2, with a hint to `--help`).
    Usage(String),
    /// A ZooKeeper error: printed as [`ZkMessage`] says (`NoNode: /a/b`).
    Zk(zkrs_client::Error),
    /// Anything else worth a message, with its exit code.
    Message(String, u8),
    /// Exit with this code without a message: 141 for a closed stdout, as SIGPIPE would; a
    /// signal's code is never remapped ([`Codes`]).
    Silent(u8),
}

impl Failure {
    /// A message with exit code 1.
    pub fn msg(msg: impl Into<String>) -> Failure {
        Failure::Message(msg.into(), EXIT_ERROR)
    }

    /// The process exit code, as `codes` says.
    pub fn exit_code(&self, codes: Codes) -> u8 {
        match self {
            Failure::Usage(_) => codes.of(EXIT_USAGE),
            Failure::Zk(_) => codes.of(EXIT_ERROR),
            Failure::Message(_, code) => codes.of(*code),
            Failure::Silent(code) => *code,
        }
    }

    /// Prints the message (if any) and returns the exit code, as `codes` says.
    pub fn report(&self, codes: Codes) -> ExitCode {
        if crate::output_json::on() && !matches!(self, Failure::Silent(_)) {
            self.report_json(codes);
            return ExitCode::from(self.exit_code(codes));
        }
        match self {
            Failure::Usage(msg) => {
                note!("zkctl: {msg} (see zkctl --help)");
            }
            Failure::Silent(_) => {}
            other => note!("zkctl: {other}"),
        }
        ExitCode::from(self.exit_code(codes))
    }
}

impl Failure {
    /// `--output json`: the message as one JSON object on stderr,
    /// `{"error":TEXT,"code":NAME,"exit":N}` ([`crate::json_records::Error`]).
    fn report_json(&self, codes: Codes) {
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
            exit: self.exit_code(codes),
        };
        let _ = crate::output_json::line(&mut crate::output::stderr(), &record);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_codes_move_out_of_the_commands_way() {
        let around = |f: Failure| f.exit_code(Codes::AroundCommand);
        let own = |f: Failure| f.exit_code(Codes::Own);
        let timeout = || Failure::Message("timed out".into(), EXIT_LOCK_TIMEOUT);
        let lost = || Failure::Message("lost".into(), EXIT_LOCK_LOST);
        let not_found = || Failure::Message("cannot run".into(), EXIT_NOT_FOUND);
        let not_executable = || Failure::Message("cannot run".into(), EXIT_CANNOT_EXECUTE);
        assert_eq!(own(Failure::Usage("x".into())), 2);
        assert_eq!(around(Failure::Usage("x".into())), 125);
        assert_eq!(own(Failure::msg("x")), 1);
        assert_eq!(around(Failure::msg("x")), 125);
        assert_eq!((own(timeout()), around(timeout())), (3, 124));
        assert_eq!((own(lost()), around(lost())), (4, 123));
        assert_eq!(around(not_found()), 127);
        assert_eq!(around(not_executable()), 126);
        // A closed stdout is SIGPIPE's code either way.
        assert_eq!(around(Failure::Silent(141)), 141);
    }
}
