//! The command `lock`, `elect`, `barrier` and `member` run: started in its own process group,
//! stopped with SIGTERM then SIGKILL, and guarded by a watchdog so it never outlives zkctl.
//!
//! # Why a process group
//!
//! `sh -c 'work; more work'` forks: signalling only the shell would leave its children
//! running, without the lock. The command leads a new process group and every signal goes to
//! the whole group (`kill -s TERM -- -PGID`). The price: the command is not in the terminal's
//! foreground group, so it should not read from the terminal, and Ctrl-C reaches zkctl only,
//! which then stops the command itself.
//!
//! # Why a watchdog
//!
//! If zkctl is SIGKILLed, its session lives on until the server expires it, but nothing would
//! stop the command: it would run on while another process takes the lock. Without libc there
//! is no `prctl(PR_SET_PDEATHSIG)`, so (as in the test kit) a tiny sibling shell reads a pipe
//! whose only write end zkctl holds:
//!
//! ```text
//! sh -c 'read -r line; [ "$line" = disarm ] || kill -s KILL -- "-$1"' zkctl-watchdog <pgid>
//! ```
//!
//! When zkctl dies for any reason the kernel closes the pipe, `read` sees EOF and the group is
//! killed at once (long before the session can expire and a new holder start). When the
//! command has exited and been seen to exit, zkctl writes `disarm` and the watchdog leaves.
//!
//! Signals are sent with the `kill` builtin of `sh` (no libc crate).

use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use crate::failure::{Failure, EXIT_CANNOT_RUN};
use crate::signals::{Shutdown, Terminate};

/// A running command in its own process group.
#[derive(Debug)]
pub struct Supervised {
    child: tokio::process::Child,
    pgid: u32,
    watchdog: Option<Watchdog>,
    exit: Option<ExitStatus>,
}

impl Supervised {
    /// Starts `argv` (stdio inherited) with extra environment variables. A command that cannot
    /// be started is a [`Failure`] with exit code 127, as in shells.
    pub fn spawn(argv: &[String], env: &[(&str, &str)]) -> Result<Supervised, Failure> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| Failure::Usage("no command to run".into()))?;
        let mut command = tokio::process::Command::new(program);
        command.args(args).process_group(0);
        for (k, v) in env {
            command.env(k, v);
        }
        let child = command.spawn().map_err(|e| {
            Failure::Message(format!("cannot run '{program}': {e}"), EXIT_CANNOT_RUN)
        })?;
        let pgid = child.id().ok_or_else(|| {
            Failure::msg(format!("'{program}' exited before it could be watched"))
        })?;
        let mut supervised = Supervised {
            child,
            pgid,
            watchdog: None,
            exit: None,
        };
        // If the watchdog cannot start, `supervised` is dropped here, which kills the command:
        // better not to run it than to run it unguarded.
        supervised.watchdog = Some(
            Watchdog::spawn(pgid)
                .map_err(|e| Failure::msg(format!("cannot start the watchdog (sh): {e}")))?,
        );
        Ok(supervised)
    }

    /// The command's pid (and process group id).
    pub fn pid(&self) -> u32 {
        self.pgid
    }

    /// Waits for the command to exit. Cancel-safe.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.exit {
            return Ok(status);
        }
        let status = self.child.wait().await?;
        self.exited(status);
        Ok(status)
    }

    fn exited(&mut self, status: ExitStatus) {
        self.exit = Some(status);
        if let Some(mut w) = self.watchdog.take() {
            w.disarm();
        }
    }

    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.exit.is_none() {
            if let Some(status) = self.child.try_wait()? {
                self.exited(status);
            }
        }
        Ok(self.exit)
    }

    /// Stops the command: SIGTERM to its group, then SIGKILL after `grace` (or at once if
    /// another termination signal reaches zkctl meanwhile). Returns its exit status.
    pub async fn stop(
        &mut self,
        grace: Duration,
        shutdown: Option<&mut Shutdown>,
    ) -> io::Result<ExitStatus> {
        if let Some(status) = self.try_wait()? {
            return Ok(status);
        }
        signal_group(self.pgid, "TERM").await;
        let second_signal = async {
            match shutdown {
                Some(s) => s.recv().await,
                None => std::future::pending::<Terminate>().await,
            }
        };
        tokio::select! {
            status = self.child.wait() => {
                let status = status?;
                self.exited(status);
                return Ok(status);
            }
            _ = tokio::time::sleep(grace) => {}
            _ = second_signal => {}
        }
        // Still running (not reaped, so the group id cannot have been reused).
        signal_group(self.pgid, "KILL").await;
        self.wait().await
    }
}

impl Drop for Supervised {
    /// Only reached with the command still running on an error path: kill it rather than
    /// leave it running unguarded.
    fn drop(&mut self) {
        if matches!(self.try_wait(), Ok(None)) {
            let _ = std::process::Command::new("sh")
                .args(["-c", "kill -s KILL -- \"-$1\" 2>/dev/null", "zkctl-kill"])
                .arg(self.pgid.to_string())
                .status();
        }
    }
}

/// Sends `signal` (`TERM`, `KILL`) to a process group. Errors (the group is gone) are fine.
async fn signal_group(pgid: u32, signal: &str) {
    let _ = tokio::process::Command::new("sh")
        .args(["-c", "kill -s \"$1\" -- \"-$2\" 2>/dev/null", "zkctl-kill"])
        .arg(signal)
        .arg(pgid.to_string())
        .stdin(Stdio::null())
        .status()
        .await;
}

/// The shell convention for an exit status: the code, or 128 + N for signal N.
pub fn exit_code(status: ExitStatus) -> u8 {
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => 128u8.wrapping_add(signal as u8),
        (None, None) => 1,
    }
}

/// Kills the command's group when zkctl dies (see the module docs).
#[derive(Debug)]
struct Watchdog {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
}

impl Watchdog {
    fn spawn(pgid: u32) -> io::Result<Watchdog> {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .args([
                OsStr::new("-c"),
                OsStr::new(
                    "read -r line; [ \"$line\" = disarm ] || kill -s KILL -- \"-$1\" 2>/dev/null",
                ),
                OsStr::new("zkctl-watchdog"),
            ])
            .arg(pgid.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Its own group: Ctrl-C in the terminal must not kill the watchdog.
            .process_group(0)
            .spawn()?;
        let stdin = child.stdin.take();
        Ok(Watchdog { child, stdin })
    }

    /// Lets the watchdog exit without signalling.
    fn disarm(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"disarm\n");
        }
        // It exits at once; reap it so no zombie is left (it cannot block for long).
        let _ = self.child.wait();
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Not disarmed: the command is still running on an error path, and `Supervised`'s
        // drop kills it; closing the pipe makes the watchdog do the same.
        drop(self.stdin.take());
        let _ = self.child.try_wait();
    }
}
