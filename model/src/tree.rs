//! The data tree: znodes with their data, ACL and Stat as ZooKeeper's `DataTree` keeps them,
//! and the indexes it keeps beside them (ephemerals per session, containers, TTL nodes).
//! The rules deciding whether a change is allowed live in `write.rs`; this file only stores.

use std::collections::{BTreeMap, BTreeSet};

use zkrs_codec::{AclEntry, Stat};

use crate::path::{name_of, parent_of};

/// `ephemeralOwner` of a container node (`EphemeralType.CONTAINER_EPHEMERAL_OWNER`).
pub const CONTAINER_OWNER: i64 = i64::MIN;
/// High byte of the `ephemeralOwner` of a TTL node; the TTL is in the low 40 bits.
const EXTENDED_MASK: i64 = 0xff00_0000_0000_0000_u64 as i64;
/// The largest TTL ZooKeeper accepts, in milliseconds.
pub const MAX_TTL_MS: i64 = 0x00ff_ffff_ffff;

/// What kind of node an `ephemeralOwner` says it is (`EphemeralType.get`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerKind {
    /// A plain persistent node.
    Persistent,
    /// An ephemeral node of a session.
    Ephemeral,
    /// A container.
    Container,
    /// A TTL node, with its TTL in milliseconds.
    Ttl(i64),
}

impl OwnerKind {
    /// Classifies an `ephemeralOwner`.
    pub fn of(owner: i64, extended_types: bool) -> Self {
        if owner == CONTAINER_OWNER {
            OwnerKind::Container
        } else if extended_types && owner & EXTENDED_MASK == EXTENDED_MASK {
            OwnerKind::Ttl(owner & MAX_TTL_MS)
        } else if owner == 0 {
            OwnerKind::Persistent
        } else {
            OwnerKind::Ephemeral
        }
    }

    /// The `ephemeralOwner` of a TTL node.
    pub fn ttl_owner(ttl: i64) -> i64 {
        EXTENDED_MASK | ttl
    }
}

/// A znode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Its data: `None` for null data (a client sent a null buffer, length -1), which a
    /// read gives back as null, apart from empty data (length 0); both report `dataLength` 0.
    pub data: Option<Vec<u8>>,
    /// Its ACL (never empty for nodes clients create).
    pub acl: Vec<AclEntry>,
    /// Its persisted Stat fields (`StatPersisted`); `numChildren` and `dataLength` are derived.
    pub stat: Stat,
    /// Names of its children.
    pub children: BTreeSet<String>,
}

impl Node {
    /// A node as `DataTree.createStat` makes it: every zxid the creating one, versions 0.
    pub fn new(
        data: Option<Vec<u8>>,
        acl: Vec<AclEntry>,
        zxid: i64,
        time: i64,
        owner: i64,
    ) -> Self {
        Node {
            data,
            acl,
            stat: Stat {
                czxid: zxid,
                mzxid: zxid,
                ctime: time,
                mtime: time,
                version: 0,
                cversion: 0,
                aversion: 0,
                ephemeral_owner: owner,
                data_length: 0,
                num_children: 0,
                pzxid: zxid,
            },
            children: BTreeSet::new(),
        }
    }

    /// The Stat a client sees (`DataNode.copyStat`), which is not the stored one: the stored
    /// cversion counts creates of children (the sequence suffix uses it), the reported one
    /// counts creates and deletes (`2 * creates - children`); containers and TTL nodes report
    /// an ephemeralOwner of 0.
    pub fn stat(&self) -> Stat {
        let children = self.children.len() as i32;
        let owner = self.stat.ephemeral_owner;
        let special = owner == CONTAINER_OWNER || owner & EXTENDED_MASK == EXTENDED_MASK;
        Stat {
            data_length: self.data.as_ref().map_or(0, |d| d.len() as i32),
            num_children: children,
            cversion: self.stat.cversion.wrapping_mul(2).wrapping_sub(children),
            ephemeral_owner: if special { 0 } else { owner },
            ..self.stat
        }
    }
}

/// The tree and its indexes.
#[derive(Debug, Clone)]
pub struct DataTree {
    nodes: BTreeMap<String, Node>,
    ephemerals: BTreeMap<i64, BTreeSet<String>>,
    containers: BTreeSet<String>,
    ttls: BTreeSet<String>,
    extended_types: bool,
    /// The zxid of the last transaction applied.
    pub last_zxid: i64,
    /// While a multi runs: what its changes replaced, to put back if one of its operations
    /// fails ([`DataTree::begin_undo`]).
    undo: Option<Vec<Undo>>,
}

/// What one change of a multi replaced: the entry as it was before (`None`: absent).
#[derive(Debug, Clone)]
enum Undo {
    Node(String, Option<Node>),
    Ephemerals(i64, Option<BTreeSet<String>>),
    Container(String, bool),
    Ttl(String, bool),
}

impl DataTree {
    /// A fresh tree as a 3.8 server starts: `/`, `/zookeeper`, `/zookeeper/quota` and
    /// `/zookeeper/config` (readable by anyone, aversion -1 as `addConfigNode` leaves it).
    pub fn new(extended_types: bool) -> Self {
        // `DataTree` makes its system nodes with `new byte[0]`: empty, not null.
        let blank = |acl: Vec<AclEntry>| Node {
            data: Some(Vec::new()),
            acl,
            stat: Stat::default(),
            children: BTreeSet::new(),
        };
        let mut tree = DataTree {
            nodes: BTreeMap::new(),
            ephemerals: BTreeMap::new(),
            containers: BTreeSet::new(),
            ttls: BTreeSet::new(),
            extended_types,
            last_zxid: 0,
            undo: None,
        };
        let mut root = blank(vec![AclEntry::open()]);
        root.children.insert("zookeeper".into());
        let mut zookeeper = blank(vec![AclEntry::open()]);
        zookeeper
            .children
            .extend(["quota".to_owned(), "config".to_owned()]);
        let mut config = blank(vec![AclEntry::read_only()]);
        config.stat.aversion = -1;
        tree.nodes.insert("/".into(), root);
        tree.nodes.insert("/zookeeper".into(), zookeeper);
        tree.nodes
            .insert("/zookeeper/quota".into(), blank(vec![AclEntry::open()]));
        tree.nodes.insert("/zookeeper/config".into(), config);
        tree
    }

    /// Whether TTL nodes are enabled (`zookeeper.extendedTypesEnabled`).
    pub fn extended_types(&self) -> bool {
        self.extended_types
    }

    /// The node at `path`. As in ZooKeeper, `""` is the root too (the parent of `/a`).
    pub fn get(&self, path: &str) -> Option<&Node> {
        self.nodes.get(if path.is_empty() { "/" } else { path })
    }

    pub(crate) fn get_mut(&mut self, path: &str) -> Option<&mut Node> {
        let path = if path.is_empty() { "/" } else { path };
        self.keep_node(path);
        self.nodes.get_mut(path)
    }

    /// From now until [`DataTree::commit`] or [`DataTree::undo`], every change keeps what it
    /// replaced: a multi that fails puts back only what it touched, where a copy of the
    /// whole tree per multi was a tenth of a busy simulated run.
    pub(crate) fn begin_undo(&mut self) {
        self.undo = Some(Vec::new());
    }

    /// The changes since [`DataTree::begin_undo`] stay.
    pub(crate) fn commit(&mut self) {
        self.undo = None;
    }

    /// The changes since [`DataTree::begin_undo`] are undone, latest first, so each entry
    /// ends as it was before the first of them (`last_zxid` is the caller's).
    pub(crate) fn undo(&mut self) {
        for undo in self.undo.take().unwrap_or_default().into_iter().rev() {
            match undo {
                Undo::Node(path, Some(node)) => {
                    self.nodes.insert(path, node);
                }
                Undo::Node(path, None) => {
                    self.nodes.remove(&path);
                }
                Undo::Ephemerals(owner, Some(set)) => {
                    self.ephemerals.insert(owner, set);
                }
                Undo::Ephemerals(owner, None) => {
                    self.ephemerals.remove(&owner);
                }
                Undo::Container(path, had) => set_member(&mut self.containers, path, had),
                Undo::Ttl(path, had) => set_member(&mut self.ttls, path, had),
            }
        }
    }

    /// Keeps the node at `path` as it is, if a multi runs (before a change to it).
    fn keep_node(&mut self, path: &str) {
        if let Some(undo) = &mut self.undo {
            undo.push(Undo::Node(path.to_owned(), self.nodes.get(path).cloned()));
        }
    }

    /// Keeps the indexes' entries for the node at `path` of `owner`, if a multi runs.
    fn keep_indexes(&mut self, path: &str, owner: i64) {
        if let Some(undo) = &mut self.undo {
            undo.push(match OwnerKind::of(owner, self.extended_types) {
                OwnerKind::Container => {
                    Undo::Container(path.to_owned(), self.containers.contains(path))
                }
                OwnerKind::Ttl(_) => Undo::Ttl(path.to_owned(), self.ttls.contains(path)),
                OwnerKind::Ephemeral => {
                    Undo::Ephemerals(owner, self.ephemerals.get(&owner).cloned())
                }
                OwnerKind::Persistent => return,
            });
        }
    }

    /// Every node's path, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.nodes.keys().map(String::as_str)
    }

    /// Number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always false: the root is there.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Paths of the ephemerals a session owns.
    pub fn ephemerals(&self, session: i64) -> impl Iterator<Item = &str> {
        self.ephemerals
            .get(&session)
            .into_iter()
            .flat_map(|s| s.iter().map(String::as_str))
    }

    /// Number of ephemeral nodes (`zk_ephemerals_count`).
    pub(crate) fn ephemeral_count(&self) -> usize {
        self.ephemerals.values().map(BTreeSet::len).sum()
    }

    /// `DataTree.approximateDataSize`: every node's path length plus data length.
    pub(crate) fn approximate_data_size(&self) -> usize {
        self.nodes
            .iter()
            .map(|(p, n)| p.len() + n.data.as_ref().map_or(0, Vec::len))
            .sum()
    }

    /// Paths of container nodes.
    pub fn containers(&self) -> impl Iterator<Item = &str> {
        self.containers.iter().map(String::as_str)
    }

    /// Paths of TTL nodes.
    pub fn ttl_nodes(&self) -> impl Iterator<Item = &str> {
        self.ttls.iter().map(String::as_str)
    }

    /// `getAllChildrenNumber`: nodes below `path` (for `/`, every node but the root, the
    /// `/zookeeper` nodes included, as `nodes.size() - 2` counts them).
    pub fn descendants(&self, path: &str) -> usize {
        if path == "/" {
            return self.nodes.len() - 1;
        }
        let prefix = format!("{path}/");
        self.nodes
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .count()
    }

    /// Inserts a new node under its (existing) parent, updating the parent's children, and
    /// its cversion and pzxid when `parent_cversion` is larger (`createNode`).
    pub(crate) fn insert(&mut self, path: &str, node: Node, parent_cversion: i32) {
        let parent_path = parent_of(path).unwrap_or("");
        let zxid = node.stat.czxid;
        if let Some(parent) = self.get_mut(parent_path) {
            if parent_cversion > parent.stat.cversion {
                parent.stat.cversion = parent_cversion;
                parent.stat.pzxid = zxid;
            }
            parent.children.insert(name_of(path).to_owned());
        }
        self.keep_node(path);
        self.keep_indexes(path, node.stat.ephemeral_owner);
        match OwnerKind::of(node.stat.ephemeral_owner, self.extended_types) {
            OwnerKind::Container => {
                self.containers.insert(path.to_owned());
            }
            OwnerKind::Ttl(_) => {
                self.ttls.insert(path.to_owned());
            }
            OwnerKind::Ephemeral => {
                self.ephemerals
                    .entry(node.stat.ephemeral_owner)
                    .or_default()
                    .insert(path.to_owned());
            }
            OwnerKind::Persistent => {}
        }
        self.nodes.insert(path.to_owned(), node);
    }

    /// Removes a node (`deleteNode`): the parent's pzxid moves to `zxid`, its cversion stays.
    pub(crate) fn remove(&mut self, path: &str, zxid: i64) -> Option<Node> {
        let parent_path = parent_of(path).unwrap_or("");
        if let Some(parent) = self.get_mut(parent_path) {
            parent.children.remove(name_of(path));
            if zxid > parent.stat.pzxid {
                parent.stat.pzxid = zxid;
            }
        }
        self.keep_node(path);
        let node = self.nodes.remove(path)?;
        let owner = node.stat.ephemeral_owner;
        self.keep_indexes(path, owner);
        match OwnerKind::of(owner, self.extended_types) {
            OwnerKind::Container => {
                self.containers.remove(path);
            }
            OwnerKind::Ttl(_) => {
                self.ttls.remove(path);
            }
            OwnerKind::Ephemeral => {
                if let Some(set) = self.ephemerals.get_mut(&owner) {
                    set.remove(path);
                    if set.is_empty() {
                        self.ephemerals.remove(&owner);
                    }
                }
            }
            OwnerKind::Persistent => {}
        }
        Some(node)
    }
}

/// Puts `path` in `set` or takes it out.
fn set_member(set: &mut BTreeSet<String>, path: String, member: bool) {
    if member {
        set.insert(path);
    } else {
        set.remove(&path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(owner: i64) -> Node {
        Node::new(Some(b"x".to_vec()), vec![AclEntry::open()], 5, 7, owner)
    }

    /// A multi that fails leaves the tree as it was: nodes, parents' children and stats, and
    /// the ephemeral and container indexes.
    #[test]
    fn undo_puts_back_what_the_changes_replaced() {
        let mut tree = DataTree::new(true);
        tree.insert("/a", node(0), 1);
        tree.insert("/a/e", node(42), 1);
        tree.insert("/c", node(CONTAINER_OWNER), 2);
        let before = format!("{tree:?}");
        tree.begin_undo();
        tree.insert("/a/f", node(42), 2);
        tree.insert("/a/g", node(43), 3);
        tree.remove("/a/e", 9);
        tree.remove("/c", 9);
        tree.get_mut("/a").unwrap().data = Some(b"changed".to_vec());
        tree.insert("/a/e", node(0), 4);
        assert_ne!(format!("{tree:?}"), before);
        tree.undo();
        assert_eq!(format!("{tree:?}"), before);
        // Committed changes stay, and nothing is kept once committed.
        tree.begin_undo();
        tree.remove("/a/e", 10);
        tree.commit();
        tree.insert("/b", node(0), 3);
        tree.undo();
        assert!(tree.get("/a/e").is_none() && tree.get("/b").is_some());
    }
}
