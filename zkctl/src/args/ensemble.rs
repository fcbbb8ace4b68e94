//! The values of the ensemble flags: `reconfig`'s `--add`, `--remove`, `--members` and `--from-version`.

use super::command::Command;
use super::usage::{usage, UsageError};

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
