//! Access control: `Id` and `ACL`.

use crate::create_mode::Perms;

record! {
    /// An identity: a scheme (`world`, `digest`, `ip`, `auth`, `sasl`, `x509`) and an id in it.
    pub struct Id<'a> {
        /// The authentication scheme.
        pub scheme: &'a str,
        /// The identity within the scheme.
        pub id: &'a str,
    }
}

record! {
    /// One access-control entry: who may do what.
    pub struct Acl<'a> {
        /// What is allowed.
        pub perms: Perms,
        /// To whom.
        pub id: Id<'a>,
    }
}

impl Acl<'static> {
    /// Everything for everyone (`ZooDefs.Ids.OPEN_ACL_UNSAFE`).
    pub const OPEN_ACL_UNSAFE: &'static [Acl<'static>] = &[Acl {
        perms: Perms::ALL,
        id: Id::ANYONE,
    }];
    /// Everything for the identities the session authenticated with
    /// (`ZooDefs.Ids.CREATOR_ALL_ACL`).
    pub const CREATOR_ALL_ACL: &'static [Acl<'static>] = &[Acl {
        perms: Perms::ALL,
        id: Id::AUTH,
    }];
    /// Read for everyone (`ZooDefs.Ids.READ_ACL_UNSAFE`).
    pub const READ_ACL_UNSAFE: &'static [Acl<'static>] = &[Acl {
        perms: Perms::READ,
        id: Id::ANYONE,
    }];
}

impl Id<'static> {
    /// `world:anyone`.
    pub const ANYONE: Id<'static> = Id {
        scheme: "world",
        id: "anyone",
    };
    /// `auth:` (the identities of the session).
    pub const AUTH: Id<'static> = Id {
        scheme: "auth",
        id: "",
    };
}

record! {
    /// An identity the session is authenticated as (`ClientInfo`, from `whoAmI`).
    pub struct ClientInfo<'a> {
        /// The authentication scheme.
        pub auth_scheme: &'a str,
        /// The user within the scheme.
        pub user: &'a str,
    }
}

/// One access-control entry with owned strings: the ACL type of the client's API
/// (`CreateOptions`, `get_acl`, `set_acl`, `Op::create`) and of the model's nodes. [`Acl`] is
/// its borrowed form on the wire ([`as_acl`](Self::as_acl), `From<Acl>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AclEntry {
    /// What is allowed.
    pub perms: Perms,
    /// The scheme (`world`, `digest`, `ip`, `auth`, `sasl`, `x509`).
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

    /// Everything for everyone: `world:anyone` with every permission (the one entry of
    /// `ZooDefs.Ids.OPEN_ACL_UNSAFE`).
    pub fn open() -> AclEntry {
        AclEntry::new(Perms::ALL, "world", "anyone")
    }

    /// Everything for the identities the session authenticated with: `auth:` with every
    /// permission (the one entry of `ZooDefs.Ids.CREATOR_ALL_ACL`).
    pub fn creator_all() -> AclEntry {
        AclEntry::new(Perms::ALL, "auth", "")
    }

    /// Read for everyone: `world:anyone` with [`Perms::READ`] (the one entry of
    /// `ZooDefs.Ids.READ_ACL_UNSAFE`).
    pub fn read_only() -> AclEntry {
        AclEntry::new(Perms::READ, "world", "anyone")
    }

    /// The borrowed form, for encoding.
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
