//! The command `lock`, `elect`, `barrier` and `member` run: guarded by a watchdog so it never
//! outlives zkctl, in the watchdog's process group, stopped with SIGTERM then SIGKILL.
//!
//! # Why a process group
//!
//! `sh -c 'work; more work'` forks: signalling only the shell would leave its children
//! running, without the lock. The command runs in a process group of its own (with the
//! watchdog) and every signal goes to the whole group (`kill -s TERM -- -PGID`). The price:
//! the command is not in the terminal's foreground group, so it should not read from the
//! terminal, and Ctrl-C reaches zkctl only, which then stops the command itself.
//!
//! # Why a watchdog, and why it starts first
//!
//! If zkctl is SIGKILLed, its session lives on until the server expires it, but nothing would
//! stop the command: it would run on while another process takes the lock. zkctl has no unsafe
//! code, so no `prctl(PR_SET_PDEATHSIG)` in the child before its exec, and no `kill(2)`; so
//! (as in the test kit) a tiny shell reads a pipe whose only write end zkctl holds:
//!
//! ```text
//! sh -c 'trap "" TERM INT HUP; read -r line; [ "$line" = disarm ] || kill -s KILL 0' zkctl-watchdog
//! ```
//!
//! When zkctl dies for any reason the kernel closes the pipe, `read` sees EOF and the shell
//! kills its own process group (`kill 0`) at once, long before the session can expire and a
//! new holder start. When the command has exited and been seen to exit, zkctl writes `disarm`
//! and the watchdog leaves.
//!
//! The watchdog is started first, as the leader of a new process group, and the command is
//! started into that group (`process_group(watchdog's pid)`): if `sh` cannot start, the command
//! is never started, so it can never run unguarded. (Started the other way round, a command
//! whose watchdog then failed to start could only be killed with `sh` too, which had just
//! failed: it ran on.) Being in the group, the watchdog also receives the group's signals: it
//! ignores TERM, INT and HUP, so zkctl's SIGTERM to the group during a stop (and a grace that
//! the command may use in full) leaves the guard in place; SIGKILL ends both, as it should.
//!
//! Signals are sent with the `kill` builtin of `sh` (a call of `kill(2)` would be unsafe code).

use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use crate::failure::{Failure, EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND};
use crate::signals::{Shutdown, Terminate};

/// A running command, in its watchdog's process group.
#[derive(Debug)]
pub struct Supervised {
    child: tokio::process::Child,
    /// The command's pid, for messages.
    pid: u32,
    /// The group's id: the watchdog's pid.
    pgid: u32,
    watchdog: Option<Watchdog>,
    exit: Option<ExitStatus>,
}

impl Supervised {
    /// Starts the watchdog, then `argv` in its process group (stdio inherited) with extra
    /// environment variables. A watchdog that cannot start is a [`Failure`] and the command is
    /// never started; a command that cannot be started is a [`Failure`] with exit code 127
    /// (not found) or 126 (not executable), as in shells.
    pub fn spawn(argv: &[String], env: &[(&str, &str)]) -> Result<Supervised, Failure> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| Failure::Usage("no command to run".into()))?;
        // The guard first: without it the command must not start at all.
        let mut watchdog = Watchdog::spawn().map_err(|e| {
            Failure::msg(format!(
                "cannot start the watchdog (sh): {e}; '{program}' was not started"
            ))
        })?;
        let pgid = watchdog.child.id();
        let mut command = tokio::process::Command::new(program);
        // The watchdog leads the group (`process_group(0)` in its own spawn), and has
        // exec'd by now (spawn returns after the exec), so the group exists.
        command.args(args).process_group(pgid as i32);
        for (k, v) in env {
            command.env(k, v);
        }
        let child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                // Nothing to guard: let the watchdog go quietly.
                watchdog.disarm();
                // As shells: 127 when there is no such program, 126 when there is one that
                // cannot be executed (permissions, a directory, not a program).
                let code = match e.kind() {
                    io::ErrorKind::NotFound => EXIT_NOT_FOUND,
                    _ => EXIT_CANNOT_EXECUTE,
                };
                return Err(Failure::Message(
                    format!("cannot run '{program}': {e}"),
                    code,
                ));
            }
        };
        // `None` only once the child has been reaped, which nothing has done yet; 0 would
        // only show in messages.
        let pid = child.id().unwrap_or_default();
        Ok(Supervised {
            child,
            pid,
            pgid,
            watchdog: Some(watchdog),
            exit: None,
        })
    }

    /// The command's pid.
    pub fn pid(&self) -> u32 {
        self.pid
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
        // Still running (not reaped, so the group cannot be gone; nor the watchdog, which
        // leads it and ignores TERM). SIGKILL ends the watchdog too: nothing is left to guard.
        signal_group(self.pgid, "KILL").await;
        self.wait().await
    }
}

impl Drop for Supervised {
    /// Only reached with the command still running on an error path: kill it rather than
    /// leave it running unguarded. The group first (the command's own children too); then
    /// the command itself directly, which needs no `sh`, in case that kill could not run;
    /// then the watchdog's drop closes its pipe, and it kills the group as well.
    fn drop(&mut self) {
        if matches!(self.try_wait(), Ok(None)) {
            let _ = std::process::Command::new("sh")
                .args(["-c", "kill -s KILL -- \"-$1\" 2>/dev/null", "zkctl-kill"])
                .arg(self.pgid.to_string())
                .status();
            let _ = self.child.start_kill();
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

/// Kills its process group, the command's, when zkctl dies (see the module docs).
#[derive(Debug)]
struct Watchdog {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
}

/// The watchdog's script: ignore the signals zkctl sends the group to stop the command, wait
/// for `disarm` or the end of the pipe, and on the end kill the whole group (itself included).
const WATCHDOG: &str =
    "trap '' TERM INT HUP; read -r line; [ \"$line\" = disarm ] || kill -s KILL 0";

impl Watchdog {
    fn spawn() -> io::Result<Watchdog> {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .args([
                OsStr::new("-c"),
                OsStr::new(WATCHDOG),
                OsStr::new("zkctl-watchdog"),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // A new group it leads, for the command to join: not the terminal's foreground
            // group, so Ctrl-C reaches zkctl only.
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

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Instant;

    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// Waits (10 ms polls, 10 s deadline) for the command to have written its file.
    fn wait_for_file(path: &Path) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !path.exists() {
            assert!(
                Instant::now() < deadline,
                "{} never appeared",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("zkctl-child-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn argv(script: &str) -> Vec<String> {
        ["sh", "-c", script].map(String::from).to_vec()
    }

    #[test]
    fn stop_after_the_grace_returns_the_commands_status() {
        // The command ignores SIGTERM; the stop's SIGKILL (which ends the watchdog too) is
        // reported as the command's status, not the watchdog's.
        let dir = scratch("stop");
        let ready = dir.join("ready");
        runtime().block_on(async {
            let script = "trap '' TERM; : > \"$READY\"; exec sleep 30";
            let mut cmd =
                Supervised::spawn(&argv(script), &[("READY", ready.to_str().unwrap())]).unwrap();
            wait_for_file(&ready);
            let status = cmd.stop(Duration::from_millis(100), None).await.unwrap();
            assert_eq!(status.signal(), Some(9), "{status:?}");
            assert_eq!(exit_code(status), 137);
        });
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_watchdog_kills_the_group_when_its_pipe_closes() {
        // What happens when zkctl dies: the pipe's write end closes.
        let dir = scratch("pipe");
        let ready = dir.join("ready");
        runtime().block_on(async {
            let script = ": > \"$READY\"; exec sleep 30";
            let mut cmd =
                Supervised::spawn(&argv(script), &[("READY", ready.to_str().unwrap())]).unwrap();
            wait_for_file(&ready);
            drop(cmd.watchdog.take());
            let status = tokio::time::timeout(Duration::from_secs(10), cmd.wait())
                .await
                .expect("the watchdog killed the command")
                .unwrap();
            assert_eq!(status.signal(), Some(9), "{status:?}");
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}
