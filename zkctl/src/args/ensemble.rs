//! The values of the ensemble flags: `--resume ID:PASSWORD_HEX` (a global flag) and
//! `reconfig`'s `--add`, `--remove`, `--members` and `--from-version`.

use super::command::Command;
use super::usage::{usage, UsageError};

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
