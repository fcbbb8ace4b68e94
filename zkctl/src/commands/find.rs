//! `find PATH [--name GLOB] [--data REGEX]`: the paths of the matching nodes.

use std::io::Write;

use zkrs_client::Client;

use crate::commands::walk::{walk, Want};
use crate::failure::{Failure, Outcome};

/// The last part of a path (`` for `/`).
fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or("")
}

/// Prints the matching paths in path order.
pub async fn run(client: &Client, path: &str, name: Option<&str>, data: Option<&str>) -> Outcome {
    let glob = match name {
        Some(g) => Some(
            glob::Pattern::new(g)
                .map_err(|e| Failure::Usage(format!("bad --name GLOB {g:?}: {e}")))?,
        ),
        None => None,
    };
    let regex = match data {
        Some(re) => Some(
            regex_lite::Regex::new(re)
                .map_err(|e| Failure::Usage(format!("bad --data REGEX {re:?}: {e}")))?,
        ),
        None => None,
    };
    let want = Want {
        data: regex.is_some(),
        ..Want::default()
    };
    let tree = walk(client, path, want).await?;
    let mut out = crate::output::stdout();
    for node in &tree.nodes {
        if let Some(glob) = &glob {
            if !glob.matches(name_of(&node.path)) {
                continue;
            }
        }
        if let Some(re) = &regex {
            let bytes = node.data.as_deref().unwrap_or_default();
            if !re.is_match(&String::from_utf8_lossy(bytes)) {
                continue;
            }
        }
        if crate::output_json::on() {
            let record = crate::json_records::PathOnly { path: &node.path };
            crate::output_json::line(&mut out, &record)?;
        } else {
            writeln!(out, "{}", node.path)?;
        }
    }
    out.flush()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    /// What `--name` promises (the `glob` crate's patterns): `*` any run, `?` one character.
    #[test]
    fn globs() {
        let matches = |g: &str, n: &str| glob::Pattern::new(g).unwrap().matches(n);
        for (g, n) in [
            ("*", ""),
            ("*", "abc"),
            ("a*", "abc"),
            ("*c", "abc"),
            ("a?c", "abc"),
            ("*b*", "abc"),
            ("a*b*c", "aXbYbZc"),
            ("job-*", "job-0000000001"),
            ("**", "x"),
            ("é?", "éa"),
        ] {
            assert!(matches(g, n), "{g} {n}");
        }
        for (g, n) in [
            ("a", "ab"),
            ("?", ""),
            ("a?c", "ac"),
            ("*d", "abc"),
            ("a*b", "abc"),
            ("", "a"),
        ] {
            assert!(!matches(g, n), "{g} {n}");
        }
        assert!(glob::Pattern::new("[").is_err());
    }
}
