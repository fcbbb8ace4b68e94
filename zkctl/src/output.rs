//! How things are printed: Stats, times, tree lines, watch events, bench figures; and what
//! reaches a terminal.
//!
//! # Control characters on a terminal
//!
//! Much of what zkctl prints is chosen by whoever wrote to ZooKeeper (node data, child names,
//! a server's four-letter reply): a node holding `ESC [ 2 J` would clear the user's screen,
//! and other sequences can retitle the window or rewrite what was printed before. So every
//! byte zkctl writes goes through [`stdout`] or [`stderr`] (messages, [`note!`]): when that
//! stream is a terminal, [`escape_controls`] shows C0 controls but `\n` and `\t`, DEL, and
//! the C1 controls of UTF-8 text (U+0080 to U+009F) as `\u001b` (`\u` and four lower-case
//! hex digits: JSON's escape, so a `--output json` line stays valid JSON). When it is not a
//! terminal (a pipe, a file) the bytes are written unchanged: scripts get the exact data.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write as _};
use std::sync::OnceLock;

use zkrs_client::{Stat, WatchedEvent};

/// Prints a line on stdout, reporting errors (a closed pipe) instead of panicking as
/// `println!` would.
pub fn say(line: impl std::fmt::Display) -> io::Result<()> {
    let mut out = stdout();
    writeln!(out, "{line}")?;
    out.flush()
}

/// `eprintln!` through [`stderr`]: a message may carry server strings (a node's name, an
/// error's detail), escaped on a terminal. Errors writing it are ignored (nowhere to report
/// them), where `eprintln!` would panic.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut err = $crate::output::stderr();
        let _ = writeln!(err, $($arg)*);
        let _ = err.flush();
    }};
}
pub(crate) use note;

/// Stdout, escaping control characters if it is a terminal (see the module docs).
pub fn stdout() -> Shown<io::StdoutLock<'static>> {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    let escape = *TERMINAL.get_or_init(|| io::stdout().is_terminal());
    Shown::new(io::stdout().lock(), escape)
}

/// Stderr, escaping control characters if it is a terminal (see the module docs).
pub fn stderr() -> Shown<io::StderrLock<'static>> {
    static TERMINAL: OnceLock<bool> = OnceLock::new();
    let escape = *TERMINAL.get_or_init(|| io::stderr().is_terminal());
    Shown::new(io::stderr().lock(), escape)
}

/// `bytes` as a terminal should show them: C0 controls other than `\n` and `\t`, DEL, and
/// U+0080 to U+009F (C1, as UTF-8 `C2 80` to `C2 9F`) written `\u001b`; every other byte as
/// it is (UTF-8 text unchanged, and bytes that are not UTF-8 too, which terminals show as
/// U+FFFD rather than obey). Borrowed when there is nothing to escape.
pub fn escape_controls(bytes: &[u8]) -> Cow<'_, [u8]> {
    let control = |i: usize| match bytes[i] {
        b'\n' | b'\t' => None,
        c @ (0x00..=0x1f | 0x7f) => Some((u32::from(c), 1)),
        0xc2 => match bytes.get(i + 1) {
            Some(&c @ 0x80..=0x9f) => Some((u32::from(c), 2)),
            _ => None,
        },
        _ => None,
    };
    let Some(first) = (0..bytes.len()).find(|&i| control(i).is_some()) else {
        return Cow::Borrowed(bytes);
    };
    let mut out = Vec::with_capacity(bytes.len() + 8);
    out.extend_from_slice(&bytes[..first]);
    let mut i = first;
    while i < bytes.len() {
        match control(i) {
            Some((code, len)) => {
                let _ = write!(out, "\\u{code:04x}");
                i += len;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    Cow::Owned(out)
}

/// A stream that escapes control characters ([`escape_controls`]) when `escape`, and passes
/// bytes through unchanged otherwise.
pub struct Shown<W: io::Write> {
    inner: W,
    escape: bool,
    /// A `C2` that ended the last write: with the next write's first byte it may be a C1
    /// control (a `BufWriter` above cuts writes anywhere).
    held: Option<u8>,
}

impl<W: io::Write> Shown<W> {
    /// `inner`, escaped when `escape` (whether it is a terminal).
    pub fn new(inner: W, escape: bool) -> Shown<W> {
        Shown {
            inner,
            escape,
            held: None,
        }
    }

    /// Writes zkctl's own control sequence as it is (`top`'s redraw).
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.release()?;
        self.inner.write_all(bytes)
    }

    fn release(&mut self) -> io::Result<()> {
        match self.held.take() {
            Some(byte) => self.inner.write_all(&[byte]),
            None => Ok(()),
        }
    }
}

impl<W: io::Write> io::Write for Shown<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.escape {
            return self.inner.write(buf);
        }
        let joined;
        let mut bytes = match self.held.take() {
            Some(byte) => {
                joined = [&[byte], buf].concat();
                &joined[..]
            }
            None => buf,
        };
        if let Some((&0xc2, rest)) = bytes.split_last() {
            self.held = Some(0xc2);
            bytes = rest;
        }
        self.inner.write_all(&escape_controls(bytes))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.release()?;
        self.inner.flush()
    }
}

impl<W: io::Write> Drop for Shown<W> {
    fn drop(&mut self) {
        let _ = self.release();
    }
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
    fn controls_are_escaped_for_a_terminal() {
        let shown = |b: &[u8]| String::from_utf8(escape_controls(b).into_owned()).unwrap();
        assert_eq!(shown(b"\x1b[2J"), "\\u001b[2J");
        assert_eq!(
            shown(b"a\tb\nc\rd\x00\x07\x7f"),
            "a\tb\nc\\u000dd\\u0000\\u0007\\u007f"
        );
        // C1 as UTF-8 (U+009B, the one-byte CSI); U+00A0 and other text unchanged.
        assert_eq!(shown("x\u{9b}31m\u{85}".as_bytes()), "x\\u009b31m\\u0085");
        assert_eq!(
            shown("é ü \u{a0} ├── 日本".as_bytes()),
            "é ü \u{a0} ├── 日本"
        );
        assert!(matches!(escape_controls(b"plain text\n"), Cow::Borrowed(_)));
        // Not UTF-8: a lone 0x9b is not a C1 character of UTF-8 text; left as it is.
        assert_eq!(escape_controls(b"\x9b\xff"), Cow::Borrowed(b"\x9b\xff"));
    }

    #[test]
    fn a_c1_control_cut_between_writes_is_still_escaped() {
        let mut out = Shown::new(Vec::new(), true);
        out.write_all(b"a\xc2").unwrap();
        out.write_all(b"\x9bb\xc2").unwrap();
        out.write_all(b"\xa0\xc2").unwrap();
        out.flush().unwrap();
        assert_eq!(out.inner, b"a\\u009bb\xc2\xa0\xc2");
        // Not a terminal: every byte as it came.
        let mut out = Shown::new(Vec::new(), false);
        out.write_all(b"\x1b[2J\xc2").unwrap();
        out.write_all(b"\x9b").unwrap();
        assert_eq!(out.inner, b"\x1b[2J\xc2\x9b");
    }

    #[test]
    fn tree_prefixes() {
        assert_eq!(tree_prefix(&[], false), "├── ");
        assert_eq!(tree_prefix(&[true, false], true), "│       └── ");
    }
}
