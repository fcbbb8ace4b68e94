//! A subtree as `export` writes it, read from ZooKeeper or from an export file (shared by
//! `export`, `import` and `diff`).

use std::io::BufReader;

use zkrs_client::Client;

use crate::commands::export_format::{self, relative, Record};
use crate::commands::walk::{walk, Node, Want};
use crate::failure::Failure;

/// The records `export` writes for the subtree under `root`, in path order, and how many
/// ephemeral nodes were left out (`/zookeeper` is left out too, unless it is `root`).
pub async fn records(client: &Client, root: &str) -> Result<(Vec<Record>, usize), Failure> {
    let want = Want {
        data: true,
        acl: true,
        skip_system: true,
    };
    let tree = walk(client, root, want).await?;
    check_redacted(&tree.nodes)?;
    let mut ephemerals = 0;
    let mut records = Vec::with_capacity(tree.nodes.len());
    for node in tree.nodes {
        if node.stat.ephemeral_owner != 0 {
            ephemerals += 1;
            continue;
        }
        let data = node.data.unwrap_or_default();
        let acl = node.acl.unwrap_or_default();
        records.push(Record::new(relative(root, &node.path), &data, &acl));
    }
    Ok((records, ephemerals))
}

/// Refuses ACLs the server redacted: without ADMIN on a node, getACL answers `digest`
/// entries as `user:x` (ZooKeeper 3.6+), and restoring those would lock the user out.
fn check_redacted(nodes: &[Node]) -> Result<(), Failure> {
    let redacted = |n: &&Node| {
        n.acl.iter().flatten().any(|a| {
            a.scheme == "digest" && a.id.split_once(':').is_some_and(|(_, hash)| hash == "x")
        })
    };
    let count = nodes.iter().filter(redacted).count();
    match nodes.iter().find(redacted) {
        None => Ok(()),
        Some(first) => Err(Failure::msg(format!(
            "{}: the server hid a digest ACL's hash (this session lacks ADMIN there; {count} \
             node{} so): read as an identity with ADMIN, e.g. --auth digest:super:PASSWORD",
            first.path,
            if count == 1 { "" } else { "s" }
        ))),
    }
}

/// Says on stderr how many ephemeral nodes were left out, if any.
pub fn report_ephemerals(what: &str, count: usize) {
    if count > 0 {
        let s = if count == 1 { "" } else { "s" };
        eprintln!(
            "zkctl: {what}: skipped {count} ephemeral node{s} (they live with their sessions)"
        );
    }
}

/// Reads an export file (`-`: stdin); a bad line is a one-line error naming it.
pub fn read_file(file: &str) -> Result<Vec<Record>, Failure> {
    let result = if file == "-" {
        export_format::read(std::io::stdin().lock(), "stdin")
    } else {
        let f = std::fs::File::open(file)
            .map_err(|e| Failure::msg(format!("cannot read {file}: {e}")))?;
        export_format::read(BufReader::new(f), file)
    };
    result.map_err(Failure::msg)
}
