//! `--output json`: whether it is on, and how a record becomes one line.
//!
//! Every command writes JSON lines: one object per line, with the fields of README's table
//! (the records are in [`crate::json_records`]); serde_json writes them (no hand-written
//! escaping). A command that lists things writes one object per thing (`ls`: one per child),
//! so `jq`, `while read` and `head` work line by line as with the text. A failure is still one
//! line on stderr: with json, the object `{"error":TEXT,"code":NAME,"exit":N}`.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::args::OutputFormat;

/// Set once, before the command runs (read by every place that prints).
static JSON: AtomicBool = AtomicBool::new(false);

/// Chooses the format for the rest of the process.
pub fn set(format: OutputFormat) {
    JSON.store(format == OutputFormat::Json, Ordering::Relaxed);
}

/// Whether `--output json` was given.
pub fn on() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// Writes `record` as one JSON line.
pub fn line(out: &mut impl Write, record: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, record).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Writes `record` as one JSON line on stdout and flushes it (as [`crate::output::say`]).
pub fn say(record: &impl Serialize) -> io::Result<()> {
    let mut out = crate::output::stdout();
    line(&mut out, record)?;
    out.flush()
}

/// Whether a usage error should be printed as JSON: the command line could not be parsed,
/// so this looks for `--output json` (or `--output=json`) among the words given.
pub fn asked_in(argv: &[String]) -> bool {
    let mut json = false;
    let mut words = argv.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            break; // the command to run (`lock`, `elect`, ...) has its own flags
        }
        let value = if word == "--output" {
            words.next().map(String::as_str)
        } else {
            word.strip_prefix("--output=")
        };
        if let Some(value) = value {
            json = value == "json";
        }
    }
    json
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_output_flag_counts() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert!(asked_in(&words("--output json ls")));
        assert!(asked_in(&words("ls --output=json")));
        assert!(!asked_in(&words("ls --output text")));
        assert!(!asked_in(&words("get json")));
        assert!(!asked_in(&words("--output=json ls --output text")));
        assert!(!asked_in(&words("lock /l -- cmd --output json")));
    }
}
