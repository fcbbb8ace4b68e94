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
