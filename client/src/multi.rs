//! Owned operations and results for `multi` (atomic writes) and `multi_read`.

use bytes::Bytes;
use zkrs_codec::{Acl, AclEntry, CreateMode, Stat};

/// One operation of a transaction ([`crate::Client::multi`]) or of a batch of reads
/// ([`crate::Client::multi_read`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Op {
    /// Create a node (open ACL unless `acl` is set). `stat` asks for the new node's Stat
    /// (the create2 form).
    Create {
        /// The node.
        path: String,
        /// Its data.
        data: Vec<u8>,
        /// Its mode (not a TTL mode: use the client's create for those).
        mode: CreateMode,
        /// Its ACL; empty means open.
        acl: Vec<AclEntry>,
        /// Whether the result carries the Stat.
        stat: bool,
    },
    /// Delete a node, if it has `version` (`None`: any).
    Delete {
        /// The node.
        path: String,
        /// Expected version.
        version: Option<i32>,
    },
    /// Set data, if the node has `version`.
    SetData {
        /// The node.
        path: String,
        /// New data.
        data: Vec<u8>,
        /// Expected version.
        version: Option<i32>,
    },
    /// Fail the transaction unless the node has `version`.
    Check {
        /// The node.
        path: String,
        /// Expected version.
        version: Option<i32>,
    },
    /// Read data (multi_read only).
    GetData {
        /// The node.
        path: String,
    },
    /// List children (multi_read only).
    GetChildren {
        /// The node.
        path: String,
    },
}

impl Op {
    /// A create with the open ACL.
    pub fn create(path: impl Into<String>, data: impl Into<Vec<u8>>, mode: CreateMode) -> Op {
        Op::Create {
            path: path.into(),
            data: data.into(),
            mode,
            acl: Vec::new(),
            stat: false,
        }
    }

    /// A delete of any version.
    pub fn delete(path: impl Into<String>, version: Option<i32>) -> Op {
        Op::Delete {
            path: path.into(),
            version,
        }
    }

    /// A setData.
    pub fn set_data(path: impl Into<String>, data: impl Into<Vec<u8>>, version: Option<i32>) -> Op {
        Op::SetData {
            path: path.into(),
            data: data.into(),
            version,
        }
    }

    /// A version check.
    pub fn check(path: impl Into<String>, version: i32) -> Op {
        Op::Check {
            path: path.into(),
            version: Some(version),
        }
    }

    /// A read of data.
    pub fn get_data(path: impl Into<String>) -> Op {
        Op::GetData { path: path.into() }
    }

    /// A listing of children.
    pub fn get_children(path: impl Into<String>) -> Op {
        Op::GetChildren { path: path.into() }
    }

    /// This operation with its data gzipped now, as Curator's `transaction().create()
    /// .compressed()` and `.setData().compressed()` store it (see
    /// [`compression`](crate::compression)); an operation without data (delete, check, a
    /// read) is returned as it is.
    ///
    /// ```
    /// use zkrs_client::{CreateMode, Op};
    /// let ops = [
    ///     Op::create("/app/a", b"first".to_vec(), CreateMode::Persistent).compressed(),
    ///     Op::set_data("/app/b", b"second".to_vec(), None).compressed(),
    /// ];
    /// # let _ = ops;
    /// ```
    #[cfg(feature = "compression")]
    pub fn compressed(mut self) -> Op {
        if let Op::Create { data, .. } | Op::SetData { data, .. } = &mut self {
            *data = crate::compression::compress(data);
        }
        self
    }

    /// The path the operation is about.
    pub fn path(&self) -> &str {
        match self {
            Op::Create { path, .. }
            | Op::Delete { path, .. }
            | Op::SetData { path, .. }
            | Op::Check { path, .. }
            | Op::GetData { path }
            | Op::GetChildren { path } => path,
        }
    }

    pub(crate) fn acl_list<'a>(acl: &'a [AclEntry], store: &'a mut Vec<Acl<'a>>) -> &'a [Acl<'a>] {
        if acl.is_empty() {
            return Acl::OPEN_ACL_UNSAFE;
        }
        store.extend(acl.iter().map(AclEntry::as_acl));
        store
    }
}

/// The result of one operation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpResult {
    /// Created at `path` (with the sequence suffix); `stat` if asked for.
    Create {
        /// The created path.
        path: String,
        /// The new node's Stat (create2 form only).
        stat: Option<Stat>,
    },
    /// Deleted.
    Delete,
    /// Data set: the new Stat.
    SetData(Stat),
    /// Version matched.
    Check,
    /// Data read.
    GetData {
        /// The data.
        data: Bytes,
        /// The node's Stat.
        stat: Stat,
    },
    /// Children listed.
    GetChildren(Vec<String>),
    /// This read failed (multi_read only: a failed transaction is an `Err`).
    Error(crate::ErrorCode),
}
