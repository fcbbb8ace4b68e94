//! A subtree as `export` writes it, read from ZooKeeper or from an export file (shared by
//! `export`, `import` and `diff`).

use std::io::BufReader;

use zkrs_client::Client;

use crate::commands::export_format::{self, relative, Record};
use crate::commands::walk::{walk, Node, Want};
use crate::failure::Failure;
use crate::output::note;

/// The nodes `export` writes for the subtree under `root`, in path order, and how many
/// ephemeral nodes were left out (`/zookeeper` is left out too, unless it is `root`). Turn
/// each into its line with [`record`].
pub async fn persistent_nodes(client: &Client, root: &str) -> Result<(Vec<Node>, usize), Failure> {
    let want = Want {
        data: true,
        acl: true,
        skip_system: true,
    };
    let mut nodes = walk(client, root, want).await?.nodes;
    let all = nodes.len();
    nodes.retain(|n| n.stat.ephemeral_owner == 0);
    check_redacted(&nodes)?;
    let ephemerals = all - nodes.len();
    Ok((nodes, ephemerals))
}

/// A node's record, its path relative to `root`.
pub fn record(root: &str, node: Node) -> Record {
    let data = node.data.unwrap_or_default();
    let acl = node.acl.unwrap_or_default();
    Record::new(relative(root, &node.path), &data, &acl)
}

/// The records `export` writes for the subtree under `root` (see [`persistent_nodes`]).
pub async fn records(client: &Client, root: &str) -> Result<(Vec<Record>, usize), Failure> {
    let (nodes, ephemerals) = persistent_nodes(client, root).await?;
    let records = nodes.into_iter().map(|n| record(root, n)).collect();
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
             node{} so): read as an identity with ADMIN, e.g. --auth-file FILE holding \
             digest:super:PASSWORD",
            first.path,
            if count == 1 { "" } else { "s" }
        ))),
    }
}

/// Says on stderr how many ephemeral nodes were left out, if any.
pub fn report_ephemerals(what: &str, count: usize) {
    if count > 0 {
        let s = if count == 1 { "" } else { "s" };
        note!("zkctl: {what}: skipped {count} ephemeral node{s} (they live with their sessions)");
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
