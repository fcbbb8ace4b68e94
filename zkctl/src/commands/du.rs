//! `du PATH`: data bytes and node counts under each child, largest first, then the total.

use std::collections::HashMap;
use std::io::Write;

use zkrs_client::Client;
use zkrs_recipes::framework::join;

use crate::commands::export_format::relative;
use crate::commands::walk::{walk, Want};
use crate::failure::Outcome;

/// One `BYTES<TAB>NODES<TAB>PATH` line per child of `path`, sorted by bytes, then nodes
/// (descending), then path; the last line `path`'s totals (itself included). Text output
/// starts with a header line naming the columns; JSON records name their fields.
pub async fn run(client: &Client, path: &str) -> Outcome {
    let tree = walk(client, path, Want::default()).await?;
    let mut per_child: HashMap<String, (u64, u64)> = HashMap::new();
    let (mut bytes, mut nodes) = (0u64, 0u64);
    for node in &tree.nodes {
        let len = node.stat.data_length.max(0) as u64;
        bytes += len;
        nodes += 1;
        let rel = relative(path, &node.path);
        // `/child/...`: the child of PATH this node is under (none for PATH itself).
        let Some(child) = rel.split('/').nth(1).filter(|c| !c.is_empty()) else {
            continue;
        };
        let entry = per_child.entry(child.to_string()).or_default();
        entry.0 += len;
        entry.1 += 1;
    }
    let mut rows: Vec<(u64, u64, String)> = per_child
        .into_iter()
        .map(|(name, (b, n))| (b, n, join(path, &name)))
        .collect();
    rows.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut out = crate::output::stdout();
    let total = (bytes, nodes, path.to_string());
    if !crate::output_json::on() {
        writeln!(out, "BYTES\tNODES\tPATH")?;
    }
    for (bytes, nodes, path) in rows.iter().chain(std::iter::once(&total)) {
        if crate::output_json::on() {
            let record = crate::json_records::Usage {
                path,
                bytes: *bytes,
                nodes: *nodes,
            };
            crate::output_json::line(&mut out, &record)?;
        } else {
            writeln!(out, "{bytes}\t{nodes}\t{path}")?;
        }
    }
    out.flush()?;
    Ok(0)
}
