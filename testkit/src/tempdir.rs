//! A self-deleting temporary directory (std only, no `tempfile` crate).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh directory under [`std::env::temp_dir`], removed with everything in
/// it when dropped.
///
/// The name is `zkrs-testkit-<pid>-<nanos>-<counter>`: the pid and the
/// counter make it unique within the machine and the process, the
/// nanoseconds guard against pid reuse by an earlier, crashed run.
///
/// ```
/// let dir = zkrs_testkit::TempDir::new()?;
/// std::fs::write(dir.path().join("hello"), "hi")?;
/// let path = dir.path().to_path_buf();
/// drop(dir);
/// assert!(!path.exists());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates a new, empty directory.
    ///
    /// # Errors
    ///
    /// When the directory cannot be created.
    pub fn new() -> io::Result<Self> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        static SWEEP: std::sync::Once = std::sync::Once::new();
        let base = std::env::temp_dir();
        SWEEP.call_once(|| sweep_dead(&base));
        loop {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("zkrs-testkit-{}-{nanos}-{n}", std::process::id()));
            // `create_dir` (not `create_dir_all`) fails if it already exists,
            // so we never share a directory with someone else.
            match fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("creating {}: {e}", path.display()),
                    ))
                }
            }
        }
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Removes the directories of test processes that are gone. A process killed outright
/// (SIGKILL, a CI timeout) never runs `Drop`; its servers are stopped by their watchdogs, but
/// their folders stay. The pid in the name tells whose a folder is; a live pid (even a reused
/// one) keeps its folders, so nothing in use is ever removed.
fn sweep_dead(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("zkrs-testkit-")) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a failure here must not turn into a panic during
        // unwinding (that would abort the test process).
        let _ = fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_of_dead_processes_are_swept_and_live_ones_kept() {
        let base = TempDir::new().unwrap();
        // Linux pids stay below 2^22: this one never runs.
        let dead = base.path().join("zkrs-testkit-999999999-1-0");
        let live = base
            .path()
            .join(format!("zkrs-testkit-{}-1-0", std::process::id()));
        let other = base.path().join("unrelated-999999999");
        for d in [&dead, &live, &other] {
            fs::create_dir(d).unwrap();
        }
        sweep_dead(base.path());
        assert!(!dead.exists(), "a dead process's folder stayed");
        assert!(
            live.exists() && other.exists(),
            "a folder in use was removed"
        );
    }

    #[test]
    fn directories_are_distinct_and_removed() {
        let a = TempDir::new().unwrap();
        let b = TempDir::new().unwrap();
        assert_ne!(a.path(), b.path());
        fs::create_dir_all(a.path().join("x/y")).unwrap();
        fs::write(a.path().join("x/y/z"), "z").unwrap();
        let pa = a.path().to_path_buf();
        drop(a);
        assert!(!pa.exists());
        assert!(b.path().is_dir());
    }
}
