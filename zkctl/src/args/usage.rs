//! A command-line mistake: one line, exit code 2.

/// A command-line mistake: printed as one line with a hint to `--help`; exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A usage error; the values it quotes are shown with their control characters escaped, so
/// it stays one line (`zkctl counter /c add "$(printf '1\n2')"`).
pub fn usage<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(printable(&msg.into())))
}

/// `s` with control characters escaped (`\n`, `\u{19}`).
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}
