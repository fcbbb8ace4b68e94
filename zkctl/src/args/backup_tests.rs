//! Parsing `export`, `import`, `diff`, `find` and `du` (apart from tests.rs, to keep the
//! merges of the two small).

use super::backup::{BackupSub, Existing};
use super::{parse, Action, Command};

fn command(args: &[&str]) -> Result<BackupSub, String> {
    let argv: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match parse(&argv, None).map_err(|e| e.0)? {
        Action::Run(_, Command::Backup(b)) => Ok(b),
        other => panic!("not a backup command: {other:?}"),
    }
}

#[test]
fn parses_the_backup_commands() {
    assert_eq!(
        command(&["export", "/app", "--out", "a.jsonl"]),
        Ok(BackupSub::Export {
            path: "/app".into(),
            out: Some("a.jsonl".into())
        })
    );
    assert_eq!(
        command(&["import", "-", "--existing", "skip", "--dry-run"]),
        Ok(BackupSub::Import {
            file: "-".into(),
            at: "/".into(),
            existing: Existing::Skip,
            dry_run: true
        })
    );
    assert_eq!(
        command(&["find", "/", "--name", "job-*", "--data", "x+"]),
        Ok(BackupSub::Find {
            path: "/".into(),
            name: Some("job-*".into()),
            data: Some("x+".into())
        })
    );
    assert_eq!(
        command(&["du", "/a", "--server", "h:1"]),
        Ok(BackupSub::Du { path: "/a".into() })
    );
    let missing = command(&["diff", "/a"]).unwrap_err();
    assert!(missing.contains("<RIGHT>"), "{missing}");
    let bad = command(&["import", "f", "--existing", "maybe"]).unwrap_err();
    assert!(bad.contains("invalid value 'maybe'"), "{bad}");
}
