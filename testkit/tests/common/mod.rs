//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test file uses a different subset

use std::fs;
use std::thread;
use std::time::{Duration, Instant};

/// Whether a process exists and is not a zombie. Zombies count as gone: once
/// our child is killed the container's init may not reap it promptly.
pub fn pid_alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // Format: "pid (comm) S ...": the state follows the last ')'.
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some('Z') | Some('X') | None)
        }
        Err(_) => false,
    }
}

/// Polls `condition` every 20 ms until it holds; panics after `timeout`.
pub fn eventually(timeout: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// The process's command line, arguments separated by spaces.
pub fn cmdline(pid: u32) -> String {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
        .unwrap_or_default()
}
