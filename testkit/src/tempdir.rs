//! A self-deleting temporary directory: the `tempfile` crate's, named after this process so
//! that the folders of test processes killed outright can be swept.

use std::fs;
use std::io;
use std::path::Path;

/// Every folder's name starts with this, then `<pid>-`.
const PREFIX: &str = "zkrs-testkit-";

/// A fresh directory under [`std::env::temp_dir`], removed with everything in
/// it when dropped.
///
/// The name is `zkrs-testkit-<pid>-<random>`: the pid tells [`TempDir::new`]'s sweep whose
/// folder it is; `tempfile` draws the random part and creates the folder only if no other
/// has its name, so it is never shared, even with a folder an earlier, crashed run left
/// under a reused pid.
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
    // A wrapper, not `tempfile::TempDir` itself: the first one of a process sweeps the
    // folders of dead ones (`sweep_dead`), which `tempfile` has no notion of, and the test
    // kit's API stays its own. Dropping it removes the folder, errors ignored (a panic
    // during unwinding would abort the test process).
    inner: tempfile::TempDir,
}

impl TempDir {
    /// Creates a new, empty directory.
    ///
    /// # Errors
    ///
    /// When the directory cannot be created.
    pub fn new() -> io::Result<Self> {
        static SWEEP: std::sync::Once = std::sync::Once::new();
        let base = std::env::temp_dir();
        SWEEP.call_once(|| sweep_dead(&base));
        let inner = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .tempdir_in(&base)?;
        Ok(TempDir { inner })
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        self.inner.path()
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
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
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

    #[test]
    fn a_name_carries_this_process_id_where_the_sweep_reads_it() {
        let dir = TempDir::new().unwrap();
        let name = dir.path().file_name().unwrap().to_str().unwrap();
        let rest = name.strip_prefix(PREFIX).unwrap();
        assert_eq!(
            rest.split('-').next().and_then(|p| p.parse::<u32>().ok()),
            Some(std::process::id()),
            "{name}"
        );
        assert_eq!(dir.path().parent(), Some(std::env::temp_dir().as_path()));
    }
}
