//! One JVM child process, its orphan watchdog, and signals.
//!
//! # Why a watchdog
//!
//! `Drop` kills the JVM when a test ends or panics, but not when the test
//! process itself is SIGKILLed (a CI timeout, `kill -9`, an aborting
//! double panic): the JVM would be re-parented to init and live on forever,
//! holding its ports. Without libc we cannot use `prctl(PR_SET_PDEATHSIG)`,
//! so every JVM gets a sibling watchdog:
//!
//! ```text
//! sh -c 'read -r line; [ "$line" = disarm ] || kill -9 "$1"' zkrs-testkit-watchdog <jvm pid>
//! ```
//!
//! Its stdin is a pipe whose only write end is held by this process (Rust
//! opens pipes close-on-exec, so no other child inherits it). When this
//! process dies, for any reason, the kernel closes that end, `read` sees
//! EOF and the watchdog SIGKILLs the JVM within milliseconds: no polling,
//! and no `$PPID` race. When we end the JVM ourselves we write `disarm`
//! first, so the watchdog exits without signalling.
//!
//! The JVM is our direct child, not the watchdog's: `pause`/`resume`/`kill`
//! target its real pid, and we `wait` for it ourselves.
//!
//! # Pid reuse
//!
//! A pid may be recycled once its process has been reaped (`wait`ed for).
//! We therefore never signal the JVM after reaping it, and we disarm the
//! watchdog as soon as we observe the JVM's exit (or before reaping it), so
//! the watchdog never kills a recycled pid either.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::stopped;

/// How long `terminate` waits after SIGTERM before using SIGKILL.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(10);

/// How long `pause` waits for every thread to stop after SIGSTOP.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// A running (or exited but not yet observed) JVM.
#[derive(Debug)]
pub(crate) struct JvmProcess {
    child: Child,
    watchdog: Option<Watchdog>,
    paused: bool,
    exit: Option<ExitStatus>,
}

impl JvmProcess {
    /// Spawns `command` (stdin from /dev/null) and its watchdog.
    pub(crate) fn spawn(mut command: Command) -> io::Result<JvmProcess> {
        let child = command.stdin(Stdio::null()).spawn()?;
        let mut process = JvmProcess {
            child,
            watchdog: None,
            paused: false,
            exit: None,
        };
        // If the watchdog cannot start, `process` is dropped here, which
        // kills the JVM: better no server than an unguarded one.
        process.watchdog = Some(Watchdog::spawn(process.child.id())?);
        Ok(process)
    }

    /// The JVM's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the JVM is currently stopped with SIGSTOP by [`pause`](Self::pause).
    pub(crate) fn is_paused(&self) -> bool {
        self.paused
    }

    /// The exit status if the JVM has ended (reaping it), `None` if it runs.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.exit.is_none() {
            if let Some(status) = self.child.try_wait()? {
                self.exit = Some(status);
                self.paused = false;
                self.disarm_watchdog();
            }
        }
        Ok(self.exit)
    }

    /// Whether the JVM is still alive (paused counts as alive).
    pub(crate) fn is_alive(&mut self) -> bool {
        matches!(self.try_wait(), Ok(None))
    }

    /// Freezes the JVM with SIGSTOP: its sockets stay open but nothing
    /// answers, like a machine that dropped off the network. Returns once
    /// every thread has stopped (the signal is only queued by `kill`; on a
    /// busy machine a thread may answer a request after it), at most
    /// [`STOP_WAIT`] later.
    pub(crate) fn pause(&mut self) -> io::Result<()> {
        self.signal("STOP")?;
        // Stopped or not yet, it is on its way: resume and kill must CONT it.
        self.paused = true;
        stopped::wait_all_stopped(self.pid(), STOP_WAIT)
    }

    /// Thaws the JVM with SIGCONT.
    pub(crate) fn resume(&mut self) -> io::Result<()> {
        self.signal("CONT")?;
        self.paused = false;
        Ok(())
    }

    /// SIGTERM (ZooKeeper shuts down cleanly), wait up to `grace`, then
    /// SIGKILL. Returns the exit status.
    pub(crate) fn terminate(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        if let Some(status) = self.try_wait()? {
            return Ok(status);
        }
        if let Err(e) = self.signal("TERM") {
            // It may have exited on its own in the meantime: fine.
            return match self.try_wait()? {
                Some(status) => Ok(status),
                None => Err(e),
            };
        }
        if self.paused {
            // A stopped process only acts on SIGTERM once continued.
            self.signal("CONT")?;
            self.paused = false;
        }
        // The JVM is on its way out: if we die now it exits anyway.
        self.disarm_watchdog();
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            thread::sleep(Duration::from_millis(20));
        }
        self.kill()
    }

    /// SIGKILL and reap. Returns the exit status.
    pub(crate) fn kill(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.try_wait()? {
            return Ok(status);
        }
        // SIGKILL works on stopped processes too; SIGCONT is only sent so
        // that nothing is left stopped should the kill fail.
        if self.paused {
            let _ = self.signal("CONT");
            self.paused = false;
        }
        self.child.kill()?;
        // Disarm before reaping: until `wait` returns, the pid cannot be
        // reused, so the watchdog cannot hit another process.
        self.disarm_watchdog();
        let status = self.child.wait()?;
        self.exit = Some(status);
        Ok(status)
    }

    /// Sends a signal by name through the shell's `kill` builtin (std has
    /// no `kill(2)` wrapper except SIGKILL, and we take no dependencies).
    /// Only called while the JVM is unreaped, so the pid is still ours.
    fn signal(&mut self, signal: &str) -> io::Result<()> {
        if self.try_wait()?.is_some() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("process {} has already exited", self.pid()),
            ));
        }
        let status = Command::new("sh")
            .args(["-c", "kill -s \"$1\" \"$2\"", "zkrs-testkit-kill"])
            .arg(signal)
            .arg(self.pid().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "kill -s {signal} {} failed ({status})",
                self.pid()
            )))
        }
    }

    fn disarm_watchdog(&mut self) {
        if let Some(watchdog) = self.watchdog.take() {
            watchdog.disarm();
        }
    }
}

impl Drop for JvmProcess {
    fn drop(&mut self) {
        // Never panic here: this runs while tests unwind.
        let _ = self.kill();
        self.disarm_watchdog();
    }
}

/// The `sh` process that kills the JVM if this process dies (see the module
/// documentation).
#[derive(Debug)]
struct Watchdog {
    child: Child,
    stdin: Option<ChildStdin>,
}

const WATCHDOG_SCRIPT: &str = "read -r line; [ \"$line\" = disarm ] || kill -9 \"$1\" 2>/dev/null";

impl Watchdog {
    fn spawn(jvm_pid: u32) -> io::Result<Watchdog> {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG_SCRIPT)
            .arg("zkrs-testkit-watchdog") // $0, shows up in `ps`
            .arg(OsStr::new(&jvm_pid.to_string()))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take();
        Ok(Watchdog { child, stdin })
    }

    /// Tells the watchdog to exit without killing, and reaps it.
    fn disarm(mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"disarm\n");
            // Dropping `stdin` closes the pipe.
        }
        // The shell exits right after reading the line; don't hang forever
        // if something is badly wrong.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return;
                }
                Ok(None) => thread::sleep(Duration::from_millis(5)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sleeper() -> JvmProcess {
        let mut cmd = Command::new("sleep");
        cmd.arg("60");
        JvmProcess::spawn(cmd).unwrap()
    }

    #[test]
    fn terminate_ends_the_process() {
        let mut p = sleeper();
        assert!(p.is_alive());
        let status = p.terminate(Duration::from_secs(5)).unwrap();
        assert!(!status.success());
        assert!(!p.is_alive());
        assert!(p.watchdog.is_none());
    }

    #[test]
    fn pause_resume_and_kill() {
        let mut p = sleeper();
        p.pause().unwrap();
        assert!(p.is_paused());
        assert!(p.is_alive());
        p.resume().unwrap();
        p.pause().unwrap();
        p.kill().unwrap();
        assert!(!p.is_alive());
        assert!(!p.is_paused());
        assert!(p.pause().is_err());
    }

    /// A process that never sleeps: on a busy machine it often waits for a
    /// CPU when SIGSTOP is queued, and only stops once it gets one.
    fn spinner() -> JvmProcess {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "while :; do :; done"]);
        JvmProcess::spawn(cmd).unwrap()
    }

    #[test]
    fn pause_returns_once_every_thread_is_stopped() {
        let mut p = spinner();
        for round in 0..20 {
            p.pause().unwrap();
            assert!(
                stopped::all_stopped(p.pid()).unwrap(),
                "round {round}: a thread still runs after pause"
            );
            p.resume().unwrap();
        }
        p.kill().unwrap();
    }

    #[test]
    fn closing_the_pipe_fires_the_watchdog() {
        let mut p = sleeper();
        // Simulate our own death: close the write end without disarming.
        let mut watchdog = p.watchdog.take().unwrap();
        drop(watchdog.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while p.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "watchdog did not kill the child");
            thread::sleep(Duration::from_millis(10));
        }
        watchdog.child.wait().unwrap();
    }
}
