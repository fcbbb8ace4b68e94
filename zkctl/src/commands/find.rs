//! `find PATH [--name GLOB] [--data REGEX]`: the paths of the matching nodes.

use std::io::Write;

use zkrs_client::Client;

use crate::commands::walk::{walk, Want};
use crate::failure::{Failure, Outcome};

/// Whether `name` matches `glob`: `*` any run of characters (none too), `?` exactly one,
/// anything else itself.
pub fn glob_matches(glob: &str, name: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut gi, mut ni) = (0, 0);
    // Where the last `*` was, and the name position it matched up to: backtrack there.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if gi < g.len() && (g[gi] == '?' || (g[gi] != '*' && g[gi] == n[ni])) {
            gi += 1;
            ni += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some((gi, ni));
            gi += 1;
        } else if let Some((sg, sn)) = star {
            gi = sg + 1;
            ni = sn + 1;
            star = Some((sg, sn + 1));
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

/// The last part of a path (`` for `/`).
fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or("")
}

/// Prints the matching paths in path order.
pub async fn run(client: &Client, path: &str, name: Option<&str>, data: Option<&str>) -> Outcome {
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
    let mut out = std::io::stdout().lock();
    for node in &tree.nodes {
        if let Some(glob) = name {
            if !glob_matches(glob, name_of(&node.path)) {
                continue;
            }
        }
        if let Some(re) = &regex {
            let bytes = node.data.as_deref().unwrap_or_default();
            if !re.is_match(&String::from_utf8_lossy(bytes)) {
                continue;
            }
        }
        writeln!(out, "{}", node.path)?;
    }
    out.flush()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::glob_matches;

    #[test]
    fn globs() {
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
            assert!(glob_matches(g, n), "{g} {n}");
        }
        for (g, n) in [
            ("a", "ab"),
            ("?", ""),
            ("a?c", "ac"),
            ("*d", "abc"),
            ("a*b", "abc"),
            ("", "a"),
        ] {
            assert!(!glob_matches(g, n), "{g} {n}");
        }
    }
}
