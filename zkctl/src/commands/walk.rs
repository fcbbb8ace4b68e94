//! Reading a whole subtree, level by level: every node of a level asked at once (getChildren2,
//! and getData and getACL when wanted), so a tree costs a few round trips per level, not one
//! per node. Shared by `export`, `diff`, `find` and `du`.

use zkrs_client::{AclEntry, Bytes, Client, ErrorCode, Stat};
use zkrs_recipes::framework::join;

use crate::commands::export_format::path_order;
use crate::failure::Failure;

/// How many nodes are read at once (each one to three requests: under the client's 1,024
/// requests in flight).
const WINDOW: usize = 300;

/// What to read of each node besides its Stat and children.
#[derive(Debug, Clone, Copy, Default)]
pub struct Want {
    /// Its data.
    pub data: bool,
    /// Its ACL.
    pub acl: bool,
    /// Leave `/zookeeper` out (the server's own node) unless it is the root.
    pub skip_system: bool,
}

/// One node as read.
#[derive(Debug, Clone)]
pub struct Node {
    /// Its absolute path.
    pub path: String,
    /// Its Stat (from getChildren2).
    pub stat: Stat,
    /// Its data, if wanted.
    pub data: Option<Bytes>,
    /// Its ACL, if wanted.
    pub acl: Option<Vec<AclEntry>>,
}

/// A subtree as read: nodes in path order (parents first).
#[derive(Debug, Default)]
pub struct Tree {
    /// The nodes, the root first.
    pub nodes: Vec<Node>,
    /// Nodes listed by their parent but gone before they were read.
    pub vanished: usize,
}

/// Reads the subtree under `root` (NoNode for the root is an error; a descendant deleted
/// meanwhile is counted in [`Tree::vanished`]).
pub async fn walk(client: &Client, root: &str, want: Want) -> Result<Tree, Failure> {
    let mut tree = Tree::default();
    let mut level = vec![root.to_string()];
    let mut depth = 0;
    while !level.is_empty() {
        let read = read_level(client, &level, want).await;
        let mut next = Vec::new();
        for (path, result) in level.into_iter().zip(read) {
            match result {
                Ok((node, children)) => {
                    for name in children {
                        let child = join(&path, &name);
                        if want.skip_system && child == "/zookeeper" {
                            continue;
                        }
                        next.push(child);
                    }
                    tree.nodes.push(node);
                }
                Err(e) if e.code() == ErrorCode::NoNode && depth > 0 => tree.vanished += 1,
                Err(e) => return Err(e.into()),
            }
        }
        level = next;
        depth += 1;
    }
    tree.nodes.sort_by(|a, b| path_order(&a.path, &b.path));
    Ok(tree)
}

/// Reads every node of a level, [`WINDOW`] at a time, each on a task of its own: a node
/// done makes room for the next at once, and only that task is polled when its reply comes
/// (a join of all futures would poll each of them on every reply).
async fn read_level(
    client: &Client,
    level: &[String],
    want: Want,
) -> Vec<zkrs_client::Result<(Node, Vec<String>)>> {
    let mut results: Vec<Option<_>> = (0..level.len()).map(|_| None).collect();
    let mut tasks = tokio::task::JoinSet::new();
    let mut next = 0;
    while next < level.len() || !tasks.is_empty() {
        while next < level.len() && tasks.len() < WINDOW {
            let (client, path, i) = (client.clone(), level[next].clone(), next);
            tasks.spawn(async move { (i, read_node(&client, &path, want).await) });
            next += 1;
        }
        match tasks.join_next().await {
            Some(Ok((i, result))) => results[i] = Some(result),
            Some(Err(e)) => std::panic::resume_unwind(e.into_panic()),
            None => break,
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("every node read"))
        .collect()
}

/// One node: its Stat and children, and its data and ACL if wanted, asked together.
async fn read_node(
    client: &Client,
    path: &str,
    want: Want,
) -> zkrs_client::Result<(Node, Vec<String>)> {
    let children = client.get_children2(path);
    let data = async {
        if want.data {
            client.get_data(path).await.map(|(d, _)| Some(d))
        } else {
            Ok(None)
        }
    };
    let acl = async {
        if want.acl {
            client.get_acl(path).await.map(|(a, _)| Some(a))
        } else {
            Ok(None)
        }
    };
    let (children, data, acl) = tokio::join!(children, data, acl);
    let children = children?;
    let stat = children.stat().copied().unwrap_or_default();
    let node = Node {
        path: path.to_string(),
        stat,
        data: data?,
        acl: acl?,
    };
    Ok((node, children.to_vec()))
}
