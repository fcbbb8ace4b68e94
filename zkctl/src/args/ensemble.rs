//! `reconfig`'s arguments and flags (`--add`, `--remove`, `--members`, `--from-version`) and
//! the change they make.

use clap::Args;

use super::usage::{usage, UsageError};

/// `reconfig --from-version V`: hex, with or without `0x`, as `zkctl config` prints it.
pub fn from_version(v: &str) -> Result<i64, String> {
    let hex = v.strip_prefix("0x").unwrap_or(v);
    u64::from_str_radix(hex, 16)
        .map(|n| n as i64)
        .map_err(|_| "not a version in hex (as `zkctl config` prints it)".into())
}

/// `reconfig`'s arguments and flags.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct ReconfigArgs {
    /// A member to add (repeatable)
    #[arg(long, value_name = "SPEC", value_delimiter = ',')]
    pub add: Vec<String>,
    /// A member id to remove (repeatable)
    #[arg(long, value_name = "ID", value_delimiter = ',')]
    pub remove: Vec<String>,
    /// Bulk: a member of the new configuration (repeatable)
    #[arg(long, value_name = "SPEC", value_delimiter = ',',
          conflicts_with_all = ["add", "remove"])]
    pub members: Vec<String>,
    /// Only if the configuration is version V (hex, as `config` prints it)
    #[arg(long, value_name = "V", value_parser = from_version)]
    pub from_version: Option<i64>,
}

/// A membership change as `reconfig`'s flags give it: the lists trimmed, empty items dropped,
/// ids read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Member lines to add (incremental).
    pub add: Vec<String>,
    /// Member ids to remove (incremental).
    pub remove: Vec<u64>,
    /// The whole new membership (bulk); empty for an incremental change.
    pub members: Vec<String>,
}

impl ReconfigArgs {
    /// The change: clap has split the list flags at commas and checked that one kind of
    /// change is given.
    pub fn change(&self) -> Result<Change, UsageError> {
        let list = |items: &[String]| -> Vec<String> {
            items
                .iter()
                .map(|v| v.trim())
                .filter(|v| !v.is_empty())
                .map(str::to_string)
                .collect()
        };
        let remove = list(&self.remove)
            .iter()
            .map(|id| match id.parse::<u64>() {
                Ok(n) => Ok(n),
                Err(_) => usage(format!("--remove needs a member id (a number), not '{id}'")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Change {
            add: list(&self.add),
            remove,
            members: list(&self.members),
        })
    }
}
