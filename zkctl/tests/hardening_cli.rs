//! zkctl's care with what it writes and runs: `export --out` makes a file only its owner
//! reads and never follows a symlink; `--grace` follows the help's rule by default.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

mod support;
use support::*;
use support::{ok_plain as ok, run_plain as run};

/// A folder of its own, removed at drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("zkctl-hard-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn join(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mode(path: &str) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn export_out_is_private_and_never_follows_a_symlink() {
    ok(&["create", "/hard-export", "x"]);
    let dir = Scratch::new("export");

    let file = dir.join("tree.jsonl");
    ok(&["export", "/hard-export", "--out", &file]);
    assert_eq!(mode(&file), 0o600, "a new export file");

    // An existing file is truncated and made private too.
    let old = dir.join("old.jsonl");
    std::fs::write(&old, "old").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    ok(&["export", "/hard-export", "--out", &old]);
    assert_eq!(mode(&old), 0o600, "an existing export file");
    assert!(std::fs::read_to_string(&old).unwrap().contains("\"path\""));

    // A symlink is refused, and its target left alone.
    let target = dir.join("target");
    std::fs::write(&target, "keep").unwrap();
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = run(&["export", "/hard-export", "--out", &link]);
    let err = stderr(&out);
    assert_eq!(exit_code(out.status), 1, "{err}");
    assert!(err.contains("is a symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
}
