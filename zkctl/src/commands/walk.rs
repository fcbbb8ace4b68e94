//! Reading a whole subtree, level by level, with as few requests as the server allows:
//! ZooKeeper's cost is per request, so for each level
//! 1. one getACL per node (or exists, when the ACL is not wanted): its Stat, and its ACL;
//! 2. the children of the nodes that have some (the Stat says), many nodes per multiRead;
//! 3. the data of the nodes that have some, if wanted, many per multiRead, batched by the
//!    sizes the Stats give.
//!
//! Every step keeps many requests in flight. A leaf with no data costs one request. Shared by
//! `export`, `diff`, `find` and `du`.

use std::future::Future;

use zkrs_client::{AclEntry, Bytes, Client, ErrorCode, Op, OpResult, Stat};
use zkrs_recipes::framework::join;

use crate::commands::export_format::path_order;
use crate::failure::Failure;

/// How many single-node requests are in flight at once (the client allows 1,024).
pub const WINDOW: usize = 512;
/// How many multiReads are in flight at once.
const BATCH_WINDOW: usize = 8;
/// The reply bytes one multiRead is planned for (half of ZooKeeper's default 1 MiB
/// `jute.maxbuffer`, which bounds every frame).
const BATCH_BYTES: usize = 512 * 1024;
/// The most reads in one multiRead.
const BATCH_OPS: usize = 1000;
/// What a child's name is counted as in a reply, before it is known (a name of 250 bytes).
const CHILD_NAME_BYTES: usize = 256;

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
    /// Its Stat.
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
        let heads = windowed(level.len(), WINDOW, |i| {
            let (client, path) = (client.clone(), level[i].clone());
            async move {
                if want.acl {
                    client.get_acl(&path).await.map(|(a, s)| Some((s, Some(a))))
                } else if depth == 0 {
                    // The root: its NoNode as an error naming it.
                    let c = client.get_children2(&path).await?;
                    Ok(Some((c.stat().copied().unwrap_or_default(), None)))
                } else {
                    client.exists(&path).await.map(|s| s.map(|s| (s, None)))
                }
            }
        })
        .await;
        let mut nodes = Vec::with_capacity(level.len());
        for (path, head) in level.into_iter().zip(heads) {
            match head {
                Ok(Some((stat, acl))) => nodes.push(Some(Node {
                    path,
                    stat,
                    data: None,
                    acl,
                })),
                Ok(None) if depth == 0 => return Err(Failure::msg(format!("NoNode: {path}"))),
                Err(e) if e.code() != Some(ErrorCode::NoNode) || depth == 0 => return Err(e.into()),
                Ok(None) | Err(_) => tree.vanished += 1,
            }
        }
        let mut next = Vec::new();
        let with_children: Vec<(usize, usize)> = weights(&nodes, |s| {
            (s.num_children > 0).then(|| s.num_children as usize * CHILD_NAME_BYTES)
        });
        for (i, result) in read_batched(client, &nodes, &with_children, false).await? {
            match result {
                OpResult::GetChildren(mut names) => {
                    names.sort_unstable();
                    let path = &nodes[i].as_ref().expect("read").path;
                    for name in names {
                        let child = join(path, &name);
                        if !(want.skip_system && child == "/zookeeper") {
                            next.push(child);
                        }
                    }
                }
                _ => vanish(&mut nodes[i], &mut tree.vanished, depth)?,
            }
        }
        if want.data {
            let with_data = weights(&nodes, |s| {
                (s.data_length > 0).then_some(s.data_length as usize + 128)
            });
            for (i, result) in read_batched(client, &nodes, &with_data, true).await? {
                match result {
                    OpResult::GetData { data, stat } => {
                        let node = nodes[i].as_mut().expect("read");
                        node.data = Some(data);
                        node.stat = stat;
                    }
                    _ => vanish(&mut nodes[i], &mut tree.vanished, depth)?,
                }
            }
        }
        tree.nodes.extend(nodes.into_iter().flatten());
        level = next;
        depth += 1;
    }
    tree.nodes.sort_by(|a, b| path_order(&a.path, &b.path));
    Ok(tree)
}

/// A node found gone by a later read: counted, unless it is the root.
fn vanish(node: &mut Option<Node>, vanished: &mut usize, depth: usize) -> Result<(), Failure> {
    let gone = node.take().expect("read");
    if depth == 0 {
        return Err(Failure::msg(format!("NoNode: {}", gone.path)));
    }
    *vanished += 1;
    Ok(())
}

/// `(index, reply bytes planned)` of the nodes still there that need a read.
fn weights(nodes: &[Option<Node>], weight: impl Fn(&Stat) -> Option<usize>) -> Vec<(usize, usize)> {
    nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| Some((i, weight(&n.as_ref()?.stat)?)))
        .collect()
}

/// Reads the children (or, with `data`, the data) of `items`, grouped into multiReads of at
/// most [`BATCH_BYTES`] planned and [`BATCH_OPS`] reads; a node planned bigger than a batch
/// is read alone. Results by node index; a NoNode is an [`OpResult::Error`].
async fn read_batched(
    client: &Client,
    nodes: &[Option<Node>],
    items: &[(usize, usize)],
    data: bool,
) -> Result<Vec<(usize, OpResult)>, Failure> {
    let mut batches: Vec<Vec<usize>> = Vec::new();
    let mut bytes = 0;
    for &(i, weight) in items {
        let full = batches
            .last()
            .is_none_or(|b| b.len() >= BATCH_OPS || bytes + weight > BATCH_BYTES);
        if full {
            batches.push(Vec::new());
            bytes = 0;
        }
        batches.last_mut().expect("pushed").push(i);
        bytes += weight;
    }
    let path = |i: usize| nodes[i].as_ref().expect("read").path.clone();
    let replies = windowed(batches.len(), BATCH_WINDOW, |b| {
        let client = client.clone();
        let paths: Vec<String> = batches[b].iter().map(|&i| path(i)).collect();
        async move { read_batch(&client, paths, data).await }
    })
    .await;
    let mut out = Vec::with_capacity(items.len());
    for (batch, reply) in batches.iter().zip(replies) {
        out.extend(batch.iter().copied().zip(reply?));
    }
    Ok(out)
}

/// One batch: a multiRead, or a plain read for a batch of one (no multi around a node that
/// may fill a frame by itself).
async fn read_batch(
    client: &Client,
    paths: Vec<String>,
    data: bool,
) -> zkrs_client::Result<Vec<OpResult>> {
    let missing = |e: zkrs_client::Error| match e.code() {
        Some(ErrorCode::NoNode) => Ok(OpResult::Error(ErrorCode::NoNode)),
        _ => Err(e),
    };
    if let [path] = paths.as_slice() {
        let result = if data {
            client
                .get_data(path)
                .await
                .map(|(data, stat)| OpResult::GetData { data, stat })
        } else {
            client
                .get_children(path)
                .await
                .map(|c| OpResult::GetChildren(c.to_vec()))
        };
        return Ok(vec![result.or_else(missing)?]);
    }
    let ops: Vec<Op> = paths
        .into_iter()
        .map(|path| {
            if data {
                Op::GetData { path }
            } else {
                Op::GetChildren { path }
            }
        })
        .collect();
    client.multi_read(&ops).await
}

/// Runs `make(0..n)` on tasks, at most `window` at a time (a task done makes room for the
/// next at once, and only that task is polled when its reply comes); results in order.
pub async fn windowed<T, F>(n: usize, window: usize, make: impl Fn(usize) -> F) -> Vec<T>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let mut results: Vec<Option<T>> = (0..n).map(|_| None).collect();
    let mut tasks = tokio::task::JoinSet::new();
    let mut next = 0;
    while next < n || !tasks.is_empty() {
        while next < n && tasks.len() < window {
            let i = next;
            let job = make(i);
            tasks.spawn(async move { (i, job.await) });
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
        .map(|r| r.expect("every task ran"))
        .collect()
}
