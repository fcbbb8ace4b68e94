//! Whether a process has really stopped after SIGSTOP, read from `/proc`.
//!
//! `kill` only queues SIGSTOP: each thread of the target stops itself when it next runs
//! kernel code (its signal check), so on a busy machine a thread may still be waiting for a
//! CPU, and then answer a request, well after `kill` returned. `/proc/PID/stat` shows only
//! the main thread, which in a JVM mostly sleeps in `pthread_join` while other threads
//! serve; so every thread's state is read, from `/proc/PID/task/*/stat`.

use std::io;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

/// How often the thread states are read while waiting.
const POLL: Duration = Duration::from_millis(2);

/// Waits until no thread of `pid` can run (every one stopped, or exiting), at most
/// `timeout`. Without `/proc` (not Linux) nothing can be read, and it returns at once.
pub(crate) fn wait_all_stopped(pid: u32, timeout: Duration) -> io::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        match all_stopped(pid) {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound && !Path::new("/proc/self").exists() => {
                return Ok(());
            }
            Err(e) => return Err(e),
        }
        if Instant::now() >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("process {pid} had threads still running {timeout:?} after SIGSTOP"),
            ));
        }
        thread::sleep(POLL);
    }
}

/// Whether every thread of `pid` is stopped (`T`, or `t` under a tracer) or exiting (`Z`,
/// `X`).
pub(crate) fn all_stopped(pid: u32) -> io::Result<bool> {
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let stat = match std::fs::read_to_string(task?.path().join("stat")) {
            Ok(stat) => stat,
            // A thread that ended between the listing and the read.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if !matches!(state(&stat), Some('T' | 't' | 'Z' | 'X')) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The state letter of a `stat` line: the field after the command name, which is in
/// parentheses and may itself hold spaces and parentheses (hence the last `)`).
fn state(stat: &str) -> Option<char> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.trim_start().chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_follows_the_last_parenthesis() {
        assert_eq!(state("42 (java) S 1 42"), Some('S'));
        assert_eq!(state("42 (a) (b) T 1 42"), Some('T'));
        assert_eq!(state("42 (half"), None);
    }

    #[test]
    fn this_process_is_running() {
        assert!(!all_stopped(std::process::id()).unwrap());
    }
}
