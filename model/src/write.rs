//! The write operations, checked in the order ZooKeeper's `PrepRequestProcessor` checks them
//! (so the same request gets the same error code) and applied as its `DataTree` applies them.
//! Each returns the changes the watch tables must hear about, in ZooKeeper's order.

use zkrs_codec::{Acl, AclEntry, CreateMode, ErrorCode, List, OpCode, Stat};

use crate::acl::{self, AuthId, AuthProviders};
use crate::path::{is_valid, parent_of};
use crate::tree::{DataTree, Node, OwnerKind, CONTAINER_OWNER, MAX_TTL_MS};

/// Whether the model serves `op` from a client as a write transaction (multi included):
/// [`OpCode::is_write`], but for reconfig (the model runs no dynamic reconfiguration) and
/// deleteContainer (a server sends it only to itself). Those two are answered UNIMPLEMENTED,
/// as every operation the model does not serve.
pub(crate) fn served_write(op: OpCode) -> bool {
    op.is_write() && !matches!(op, OpCode::Reconfig | OpCode::DeleteContainer)
}

/// Who writes, when, and under which transaction id.
pub(crate) struct WriteContext<'a> {
    pub session: i64,
    pub auth: &'a [AuthId],
    pub providers: &'a AuthProviders,
    pub zxid: i64,
    pub time: i64,
}

/// A change the watch tables must hear about, with the ACLs its events are checked against
/// when delivered (the node's, and its parent's for `NodeChildrenChanged`), taken when the
/// change happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// `NodeCreated` on the path, `NodeChildrenChanged` on its parent.
    Created(String, Vec<AclEntry>, Vec<AclEntry>),
    /// `NodeDeleted` on the path (data, then child watches), `NodeChildrenChanged` on its
    /// parent.
    Deleted(String, Vec<AclEntry>, Vec<AclEntry>),
    /// `NodeDataChanged` on the path.
    DataChanged(String, Vec<AclEntry>),
}

/// Removes a node and records its deletion.
fn remove_recorded(tree: &mut DataTree, path: &str, zxid: i64, changes: &mut Vec<Change>) {
    let parent_acl = parent_of(path)
        .and_then(|p| tree.get(p))
        .map(|n| n.acl.clone())
        .unwrap_or_default();
    if let Some(node) = tree.remove(path, zxid) {
        changes.push(Change::Deleted(path.to_owned(), node.acl, parent_acl));
    }
}

/// A create request, whatever its opcode (`flags` raw: an unknown mode is `BadArguments`).
pub(crate) struct Create<'a> {
    pub op: OpCode,
    pub path: &'a str,
    pub data: Option<&'a [u8]>,
    pub acl: List<'a, Acl<'a>>,
    pub flags: i32,
    pub ttl: i64,
}

/// The parent of a path as `validatePathForCreate` / `getParentPathAndValidate` take it.
fn parent_checked(path: &str) -> Result<&str, ErrorCode> {
    match parent_of(path) {
        Some(parent) if !path.contains('\0') => Ok(parent),
        _ => Err(ErrorCode::BadArguments),
    }
}

fn node<'t>(tree: &'t DataTree, path: &str) -> Result<&'t Node, ErrorCode> {
    tree.get(path).ok_or(ErrorCode::NoNode)
}

fn check_version(current: i32, expected: i32) -> Result<i32, ErrorCode> {
    if expected != -1 && expected != current {
        return Err(ErrorCode::BadVersion);
    }
    Ok(current.wrapping_add(1))
}

/// `create`, `create2`, `createContainer`, `createTTL`: the created path and its Stat.
pub(crate) fn create(
    tree: &mut DataTree,
    cx: &WriteContext<'_>,
    req: &Create<'_>,
    changes: &mut Vec<Change>,
) -> Result<(String, Stat), ErrorCode> {
    let mode = CreateMode::from_code(req.flags).ok_or(ErrorCode::BadArguments)?;
    // validateCreateRequest
    if mode.is_ttl() && !tree.extended_types() {
        return Err(ErrorCode::Unimplemented);
    }
    let ttl_ok = if mode.is_ttl() {
        req.ttl > 0 && req.ttl <= MAX_TTL_MS
    } else {
        req.ttl < 0
    };
    if !ttl_ok {
        return Err(ErrorCode::BadArguments);
    }
    let parent_path = parent_checked(req.path)?;
    let acl = acl::fixup(cx.providers, cx.auth, &req.acl)?;
    let parent = node(tree, parent_path)?;
    acl::check(&parent.acl, 4, cx.auth)?;
    let mut path = req.path.to_owned();
    if mode.is_sequential() {
        path.push_str(&format!("{:010}", parent.stat.cversion));
    }
    if !is_valid(&path) {
        return Err(ErrorCode::BadArguments);
    }
    if tree.get(&path).is_some() {
        return Err(ErrorCode::NodeExists);
    }
    if OwnerKind::of(parent.stat.ephemeral_owner, tree.extended_types()) == OwnerKind::Ephemeral {
        return Err(ErrorCode::NoChildrenForEphemerals);
    }
    let new_cversion = parent.stat.cversion.wrapping_add(1);
    // The transaction's kind follows the opcode, not the flags (CreateContainerTxn,
    // CreateTTLTxn, CreateTxn with its ephemeral bit).
    let owner = match req.op {
        OpCode::CreateContainer => CONTAINER_OWNER,
        OpCode::CreateTtl => {
            if req.ttl <= 0 || req.ttl > MAX_TTL_MS {
                return Err(ErrorCode::BadArguments);
            }
            OwnerKind::ttl_owner(req.ttl)
        }
        _ if mode.is_ephemeral() => cx.session,
        _ => 0,
    };
    // Null data stays null (`DataTree.createNode` keeps the request's `byte[]` as it came).
    let data = req.data.map(<[u8]>::to_vec);
    let node = Node::new(data, acl, cx.zxid, cx.time, owner);
    let stat = node.stat();
    let node_acl = node.acl.clone();
    let parent_acl = parent.acl.clone();
    tree.insert(&path, node, new_cversion);
    changes.push(Change::Created(path.clone(), node_acl, parent_acl));
    Ok((path, stat))
}

/// `delete`.
pub(crate) fn delete(
    tree: &mut DataTree,
    cx: &WriteContext<'_>,
    path: &str,
    version: i32,
    changes: &mut Vec<Change>,
) -> Result<(), ErrorCode> {
    // isSpecialPath: "/", "/zookeeper", its quota and config nodes.
    if matches!(
        path,
        "/" | "/zookeeper" | "/zookeeper/quota" | "/zookeeper/config"
    ) {
        return Err(ErrorCode::BadArguments);
    }
    let parent_path = parent_checked(path)?;
    acl::check(&node(tree, parent_path)?.acl, 8, cx.auth)?;
    let target = node(tree, path)?;
    check_version(target.stat.version, version)?;
    if !target.children.is_empty() {
        return Err(ErrorCode::NotEmpty);
    }
    remove_recorded(tree, path, cx.zxid, changes);
    Ok(())
}

/// `setData`: the new Stat.
pub(crate) fn set_data(
    tree: &mut DataTree,
    cx: &WriteContext<'_>,
    path: &str,
    data: Option<&[u8]>,
    version: i32,
    changes: &mut Vec<Change>,
) -> Result<Stat, ErrorCode> {
    if !is_valid(path) {
        return Err(ErrorCode::BadArguments);
    }
    let target = node(tree, path)?;
    acl::check(&target.acl, 2, cx.auth)?;
    let new_version = check_version(target.stat.version, version)?;
    let target = tree.get_mut(path).ok_or(ErrorCode::NoNode)?;
    // Null data stays null, as `DataTree.setData` stores it.
    target.data = data.map(<[u8]>::to_vec);
    target.stat.version = new_version;
    target.stat.mzxid = cx.zxid;
    target.stat.mtime = cx.time;
    let stat = target.stat();
    changes.push(Change::DataChanged(path.to_owned(), target.acl.clone()));
    Ok(stat)
}

/// `setACL`: the new Stat (no watch fires).
pub(crate) fn set_acl(
    tree: &mut DataTree,
    cx: &WriteContext<'_>,
    path: &str,
    acl: &List<'_, Acl<'_>>,
    version: i32,
) -> Result<Stat, ErrorCode> {
    if !is_valid(path) {
        return Err(ErrorCode::BadArguments);
    }
    let acl = acl::fixup(cx.providers, cx.auth, acl)?;
    let target = node(tree, path)?;
    acl::check(&target.acl, 16, cx.auth)?;
    let new_version = check_version(target.stat.aversion, version)?;
    let target = tree.get_mut(path).ok_or(ErrorCode::NoNode)?;
    target.acl = acl;
    target.stat.aversion = new_version;
    Ok(target.stat())
}

/// `check` (in a multi, or on its own).
pub(crate) fn check(
    tree: &DataTree,
    cx: &WriteContext<'_>,
    path: &str,
    version: i32,
) -> Result<(), ErrorCode> {
    if !is_valid(path) {
        return Err(ErrorCode::BadArguments);
    }
    let target = node(tree, path)?;
    acl::check(&target.acl, 1, cx.auth)?;
    check_version(target.stat.version, version).map(|_| ())
}

/// Deletes a session's ephemerals (`killSession`), in path order (ZooKeeper walks a hash set:
/// its order is arbitrary).
pub(crate) fn kill_session(
    tree: &mut DataTree,
    session: i64,
    zxid: i64,
    changes: &mut Vec<Change>,
) {
    let paths: Vec<String> = tree.ephemerals(session).map(str::to_owned).collect();
    for path in paths {
        remove_recorded(tree, &path, zxid, changes);
    }
}

/// `deleteContainer`, as the container manager sends it: only empty containers and TTL nodes.
pub(crate) fn delete_container(
    tree: &mut DataTree,
    path: &str,
    zxid: i64,
    changes: &mut Vec<Change>,
) -> Result<(), ErrorCode> {
    parent_checked(path)?;
    let target = node(tree, path)?;
    if !target.children.is_empty() {
        return Err(ErrorCode::NotEmpty);
    }
    if OwnerKind::of(target.stat.ephemeral_owner, tree.extended_types()) == OwnerKind::Ephemeral {
        return Err(ErrorCode::BadVersion);
    }
    remove_recorded(tree, path, zxid, changes);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writes_the_model_serves() {
        let served: Vec<OpCode> = OpCode::ALL
            .iter()
            .copied()
            .filter(|&op| served_write(op))
            .collect();
        assert_eq!(
            served,
            [
                OpCode::Create,
                OpCode::Delete,
                OpCode::SetData,
                OpCode::SetAcl,
                OpCode::Check,
                OpCode::Multi,
                OpCode::Create2,
                OpCode::CreateContainer,
                OpCode::CreateTtl,
            ]
        );
    }
}
