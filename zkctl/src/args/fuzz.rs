//! The body of the `zkctl_args` fuzz target: the command-line parser (clap's
//! `try_get_matches_from`, then zkctl's conversion) on arbitrary argument vectors. Compiled
//! into the fuzz crate (which includes `args/` by path) and into zkctl's unit tests, which
//! replay the committed seeds.

use super::{parse, Action};

/// Input: arguments separated by NUL bytes (read as UTF-8, lossily); an odd first byte also
/// sets `$ZK_SERVER`. The parser must never panic, every refusal must be one line that says
/// something, and what it accepts must be whole (help and version texts are not empty).
pub fn parse_any(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let argv: Vec<String> = if text.is_empty() {
        Vec::new()
    } else {
        text.split('\0').map(str::to_string).collect()
    };
    let env = data
        .first()
        .filter(|b| *b & 1 == 1)
        .map(|_| "env:2181".to_string());
    match parse(&argv, env) {
        Ok(Action::Print(text)) => assert!(!text.trim().is_empty(), "{argv:?}"),
        Ok(Action::Completions(_)) => {}
        Ok(Action::Run(globals, _)) => {
            assert!(!globals.server.is_empty(), "{argv:?}");
            assert!(!globals.session_timeout.is_zero(), "{argv:?}");
        }
        Err(e) => {
            assert!(!e.0.trim().is_empty(), "an empty usage error for {argv:?}");
            assert!(
                !e.0.contains('\n'),
                "a usage error of several lines for {argv:?}: {e}"
            );
        }
    }
}

// The stable replay of the committed inputs, shared with the other fuzz targets' crates.
#[cfg(test)]
#[path = "../../../fuzz/replay.rs"]
mod replay;

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed seeds and minimized corpus (`fuzz/seeds/zkctl_args/*`,
    /// `fuzz/corpus/zkctl_args/*`) replayed on stable.
    #[test]
    fn seeds() {
        let count = super::replay::replay("zkctl_args", parse_any);
        assert!(count >= 5, "{count} seeds");
    }
}
