//! The flags of changing ensembles: `--resume ID:PASSWORD_HEX` and `--follow-ensemble` (global flags) and
//! `reconfig`'s `--add`, `--remove`, `--members` and `--from-version`.

use super::{usage, Command, UsageError};

/// `--resume ID:PASSWORD_HEX`: the id as `0x`-hex (as zkctl and ZooKeeper print it) or
/// decimal, the password as hex (16 bytes from ZooKeeper).
pub fn resume(value: &str) -> Result<(i64, Vec<u8>), String> {
    let bad = || Err("not SESSION_ID:PASSWORD_HEX (e.g. 0x100000a2b3c0001:0a1b...)".to_string());
    let Some((id, password)) = value.split_once(':') else {
        return bad();
    };
    let id = match id.strip_prefix("0x").or_else(|| id.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok().map(|v| v as i64),
        None => id.parse::<i64>().ok(),
    };
    let (Some(id), Some(password)) = (id, hex_bytes(password)) else {
        return bad();
    };
    if id == 0 || password.is_empty() {
        return bad();
    }
    Ok((id, password))
}

/// Bytes from hex (even length, either case).
fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 || !hex.is_ascii() {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
        .collect()
}

/// `reconfig --from-version V`: hex, with or without `0x`, as `zkctl config` prints it.
pub fn from_version(v: &str) -> Result<i64, String> {
    let hex = v.strip_prefix("0x").unwrap_or(v);
    u64::from_str_radix(hex, 16)
        .map(|n| n as i64)
        .map_err(|_| "not a version in hex (as `zkctl config` prints it)".into())
}

/// `reconfig`: clap has split the list flags at commas and checked that one kind of change
/// is given; the items are trimmed here, empty ones dropped, and ids read.
pub fn reconfig(
    add: Vec<String>,
    remove: Vec<String>,
    members: Vec<String>,
    from_version: Option<i64>,
) -> Result<Command, UsageError> {
    let list = |items: Vec<String>| -> Vec<String> {
        items
            .iter()
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .collect()
    };
    let remove = list(remove)
        .iter()
        .map(|id| match id.parse::<u64>() {
            Ok(n) => Ok(n),
            Err(_) => usage(format!("--remove needs a member id (a number), not '{id}'")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Command::Reconfig {
        add: list(add),
        remove,
        members: list(members),
        from_version,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{parse, Action, Globals};
    use super::*;

    fn parsed(line: &str) -> Result<Action, UsageError> {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        parse(&args, None)
    }

    fn run(line: &str) -> (Globals, Command) {
        match parsed(line).unwrap() {
            Action::Run(g, c) => (*g, c),
            other => panic!("{other:?}"),
        }
    }

    fn error(line: &str) -> String {
        parsed(line).unwrap_err().0
    }

    #[test]
    fn follow_ensemble_is_a_global_switch() {
        assert!(run("--follow-ensemble ls /").0.follow_ensemble);
        assert!(run("ls / --follow-ensemble").0.follow_ensemble);
        assert!(!run("ls /").0.follow_ensemble);
        assert!(error("--follow-ensemble=yes ls /").contains("follow-ensemble"));
    }

    #[test]
    fn resume_takes_an_id_and_a_hex_password() {
        let (g, _) = run("--resume 0x10a:00ff10 ls /");
        assert_eq!(g.resume, Some((0x10a, vec![0, 0xff, 0x10])));
        let (g, _) = run("ls / --resume=266:AB");
        assert_eq!(g.resume, Some((266, vec![0xab])));
        assert_eq!(run("ls /").0.resume, None);
        for bad in [
            "0x10a", "0x10a:0", "0x10a:zz", "x:00", "0:00", "0x1:", "0x1:é1",
        ] {
            let e = error(&format!("--resume {bad} ls /"));
            assert!(
                e.contains("for '--resume <ID:PASSWORD_HEX>': not SESSION_ID:PASSWORD_HEX"),
                "{bad}: {e}"
            );
        }
        assert!(error("--resume 0x1:00 bench get").contains("one session"));
    }

    #[test]
    fn reconfig_flags() {
        let (_, c) = run(
            "reconfig --add server.4=h:1:2;3 --add=server.5=h:4:5;6,server.6=h:7:8 \
             --remove 1,2 --remove 3 --from-version 10000000a",
        );
        assert_eq!(
            c,
            Command::Reconfig {
                add: vec![
                    "server.4=h:1:2;3".into(),
                    "server.5=h:4:5;6".into(),
                    "server.6=h:7:8".into()
                ],
                remove: vec![1, 2, 3],
                members: vec![],
                from_version: Some(0x1_0000_000a),
            }
        );
        let (_, c) = run("reconfig --members server.1=h:1:2 --members server.2=h:3:4");
        assert!(matches!(c, Command::Reconfig { members, .. } if members.len() == 2));
        assert_eq!(run("config").1, Command::Config);
        for (line, expected) in [
            (
                "reconfig",
                "not provided: <--add <SPEC>|--remove <ID>|--members <SPEC>>",
            ),
            (
                "reconfig --members a --add b",
                "'--members <SPEC>' cannot be used with '--add <SPEC>'",
            ),
            ("reconfig --remove x", "--remove needs a member id"),
            (
                "reconfig --remove 1 --from-version g",
                "not a version in hex",
            ),
            ("config extra", "unexpected argument 'extra'"),
        ] {
            let e = error(line);
            assert!(e.contains(expected), "{line}: {e}");
        }
    }
}
