//! What happened in a run, as lines stamped with virtual time, and a hash of all of them:
//! one seed gives one trace, byte for byte, and the hash says so in 16 hex digits.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::time::Duration;

/// How many of the last lines a trace keeps to print (the hash covers every line).
const KEEP: usize = 4000;

/// A run's trace.
#[derive(Debug, Clone)]
pub struct Trace {
    hash: u64,
    lines: u64,
    recent: VecDeque<String>,
    /// Every line, when asked for (a replay that prints the whole run).
    all: Option<Vec<String>>,
    /// Print each line on stderr as it comes (`ZKRS_SIM_ECHO=1`: to watch a run that
    /// never ends).
    echo: bool,
}

impl Default for Trace {
    fn default() -> Self {
        Trace::new(false)
    }
}

impl Trace {
    /// An empty trace; `keep_all` keeps every line rather than the last few thousand.
    pub fn new(keep_all: bool) -> Trace {
        Trace {
            hash: FNV_OFFSET,
            lines: 0,
            recent: VecDeque::new(),
            all: keep_all.then(Vec::new),
            echo: std::env::var_os("ZKRS_SIM_ECHO").is_some(),
        }
    }

    /// Adds a line at virtual time `at`.
    pub fn record(&mut self, at: Duration, what: &str) {
        self.record_args(at, format_args!("{what}"));
    }

    /// Adds a line at virtual time `at`, formatted straight into the line (the network's
    /// per-frame lines, a hundred thousand in a busy run: no string made only to be copied).
    pub(crate) fn record_args(&mut self, at: Duration, what: std::fmt::Arguments<'_>) {
        // Once the last lines are full, the oldest line's buffer takes the new one: no
        // allocation and no free per line.
        let mut line = if self.recent.len() == KEEP {
            let mut oldest = self.recent.pop_front().unwrap_or_default();
            oldest.clear();
            oldest
        } else {
            String::with_capacity(64)
        };
        // Integers, not a float: formatting an f64 was a tenth of a run's instructions; and
        // by hand, not `{:>6}.{:03}` of a u128 (the padding and the 128-bit division were a
        // tenth of a busy run's trace time).
        stamp(&mut line, at);
        let _ = write!(line, " ms {what}");
        self.hash = fnv1a(self.hash, line.as_bytes());
        self.hash = fnv1a(self.hash, b"\n");
        self.lines += 1;
        if self.echo {
            eprintln!("{line}");
        }
        if let Some(all) = &mut self.all {
            all.push(line.clone());
        }
        self.recent.push_back(line);
    }

    /// The hash of every line so far (FNV-1a, 64 bits).
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// How many lines were recorded.
    pub fn len(&self) -> u64 {
        self.lines
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// The lines kept: every one if asked for, else the last few thousand.
    pub fn lines(&self) -> Vec<String> {
        match &self.all {
            Some(all) => all.clone(),
            None => self.recent.iter().cloned().collect(),
        }
    }
}

/// Writes `at` as `{ms:>6}.{us:03}`: milliseconds right-aligned in six places, then the
/// microseconds.
fn stamp(line: &mut String, at: Duration) {
    let us = u64::try_from(at.as_micros()).unwrap_or(u64::MAX);
    let (ms, frac) = (us / 1000, us % 1000);
    let mut digits = [0u8; 20];
    let mut n = 0;
    let mut rest = ms;
    loop {
        digits[n] = b'0' + (rest % 10) as u8;
        n += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for _ in n..6 {
        line.push(' ');
    }
    for &d in digits[..n].iter().rev() {
        line.push(char::from(d));
    }
    line.push('.');
    for d in [frac / 100, frac / 10 % 10, frac % 10] {
        line.push(char::from(b'0' + d as u8));
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a: a hash whose value is fixed by its definition, so it means the same in every
/// build (the standard library's hasher does not promise that).
fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// A short digest of a byte string, for trace lines about frames.
pub(crate) fn digest(bytes: &[u8]) -> u32 {
    let h = fnv1a(FNV_OFFSET, bytes);
    (h ^ (h >> 32)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_lines_give_the_same_hash() {
        let mut a = Trace::new(false);
        let mut b = Trace::new(true);
        for t in [a.clone(), b.clone()] {
            assert_eq!(t.hash(), FNV_OFFSET);
        }
        a.record(Duration::from_millis(5), "x");
        b.record(Duration::from_millis(5), "x");
        assert_eq!(a.hash(), b.hash());
        b.record(Duration::from_millis(6), "y");
        assert_ne!(a.hash(), b.hash());
        assert_eq!(b.lines().len(), 2);
        // The stamp is `{:>6}.{:03}` of the milliseconds and the rest.
        for us in [0u64, 7, 1_000, 999_999, 123_456_789, 9_999_999_999] {
            let mut line = String::new();
            stamp(&mut line, Duration::from_micros(us));
            assert_eq!(line, format!("{:>6}.{:03}", us / 1000, us % 1000));
        }
        // FNV-1a's published value for "a".
        assert_eq!(fnv1a(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
