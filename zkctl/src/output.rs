//! How things are printed: Stats, times, tree lines, watch events, bench figures.

use std::fmt::Write as _;
use std::io::{self, Write as _};

use zkrs_client::{Stat, WatchedEvent};

/// Prints a line on stdout, reporting errors (a closed pipe) instead of panicking as
/// `println!` would.
pub fn say(line: impl std::fmt::Display) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()
}

/// The data as text when it is UTF-8 without line breaks (`\n`, `\r`), else `0x` and
/// lower-case hex, so every node stays on one line.
pub fn printable(data: &[u8]) -> String {
    match std::str::from_utf8(data) {
        Ok(text) if !text.contains(['\n', '\r']) => text.to_string(),
        _ => {
            let mut hex = String::with_capacity(2 + 2 * data.len());
            hex.push_str("0x");
            for byte in data {
                let _ = write!(hex, "{byte:02x}");
            }
            hex
        }
    }
}

/// A Stat as zkCli.sh prints it, one `name = value` line per field.
pub fn stat(s: &Stat) -> String {
    let mut out = String::new();
    let mut line = |name: &str, value: String| {
        let _ = writeln!(out, "{name} = {value}");
    };
    line("cZxid", format!("{:#x}", s.czxid));
    line("ctime", time(s.ctime));
    line("mZxid", format!("{:#x}", s.mzxid));
    line("mtime", time(s.mtime));
    line("pZxid", format!("{:#x}", s.pzxid));
    line("cversion", s.cversion.to_string());
    line("dataVersion", s.version.to_string());
    line("aclVersion", s.aversion.to_string());
    line("ephemeralOwner", format!("{:#x}", s.ephemeral_owner));
    line("dataLength", s.data_length.to_string());
    line("numChildren", s.num_children.to_string());
    out
}

/// Milliseconds since the epoch as an ISO 8601 UTC time (`2024-05-01T12:00:00.123Z`).
pub fn time(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a (year, month, day) date: Howard Hinnant's `civil_from_days`,
/// so no date crate is needed for one line of `stat`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// One watch event: `NodeDataChanged /a/b` (session events: `None state=Expired`).
pub fn event(e: &WatchedEvent) -> String {
    if e.is_session_event() {
        format!("{:?} state={:?}", e.event_type, e.state)
    } else {
        format!("{:?} {}", e.event_type, e.path)
    }
}

/// The prefix of a tree line: `├── `/`└── ` under `│   `/`    ` for each open ancestor.
pub fn tree_prefix(open_ancestors: &[bool], last: bool) -> String {
    let mut out = String::new();
    for open in open_ancestors {
        out.push_str(if *open { "│   " } else { "    " });
    }
    out.push_str(if last { "└── " } else { "├── " });
    out
}

/// A bench figure: `name value unit`.
pub fn figure(name: &str, value: impl std::fmt::Display, unit: &str) -> String {
    format!("{name} {value} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(time(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(time(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(time(1_700_000_000_000), "2023-11-14T22:13:20.000Z");
        assert_eq!(time(-1), "1969-12-31T23:59:59.999Z");
    }

    #[test]
    fn tree_prefixes() {
        assert_eq!(tree_prefix(&[], false), "├── ");
        assert_eq!(tree_prefix(&[true, false], true), "│       └── ");
    }
}
