//! [`AclEntry`]: an owned ACL entry, for ACLs read from the server or built at run time.

use zkrs_codec::{Acl, Id, Perms};

/// One access-control entry with owned strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AclEntry {
    /// What is allowed.
    pub perms: Perms,
    /// The scheme (`world`, `digest`, `ip`, `auth`, ...).
    pub scheme: String,
    /// The identity within the scheme.
    pub id: String,
}

impl AclEntry {
    /// An entry from its parts.
    pub fn new(perms: Perms, scheme: impl Into<String>, id: impl Into<String>) -> AclEntry {
        AclEntry {
            perms,
            scheme: scheme.into(),
            id: id.into(),
        }
    }

    /// Everything for everyone.
    pub fn open() -> AclEntry {
        AclEntry::new(Perms::ALL, "world", "anyone")
    }

    /// The codec's borrowed form.
    pub fn as_acl(&self) -> Acl<'_> {
        Acl {
            perms: self.perms,
            id: Id {
                scheme: &self.scheme,
                id: &self.id,
            },
        }
    }
}

impl From<Acl<'_>> for AclEntry {
    fn from(acl: Acl<'_>) -> AclEntry {
        AclEntry::new(acl.perms, acl.id.scheme, acl.id.id)
    }
}
