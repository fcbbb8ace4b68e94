//! ACL entries as zkCli.sh writes them: `scheme:id:perms`, perms from `crwda`
//! (`world:anyone:crdwa`, `digest:user:base64hash:rw`, `ip:10.0.0.0/8:r`, `auth::cdrwa`).
//!
//! The id is everything between the first and the last colon, as in zkCli.sh's `AclParser`,
//! so a digest id keeps its own colon. Unlike zkCli.sh (which skips an entry it cannot read
//! and ignores a letter it does not know, with a warning), a malformed entry is refused.

/// Read data and list children (`r`).
pub const READ: i32 = 1;
/// Set data (`w`).
pub const WRITE: i32 = 2;
/// Create children (`c`).
pub const CREATE: i32 = 4;
/// Delete children (`d`).
pub const DELETE: i32 = 8;
/// Set the ACL (`a`).
pub const ADMIN: i32 = 16;

/// The letters in the order zkCli.sh prints them (`getPermString`).
const LETTERS: [(char, i32); 5] = [
    ('c', CREATE),
    ('d', DELETE),
    ('r', READ),
    ('w', WRITE),
    ('a', ADMIN),
];

/// One ACL entry: `scheme:id:perms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclSpec {
    /// The scheme (`world`, `digest`, `ip`, `auth`, `sasl`, `x509`, ...).
    pub scheme: String,
    /// The identity within the scheme (may be empty, as in `auth::cdrwa`).
    pub id: String,
    /// The permission bits.
    pub perms: i32,
}

impl AclSpec {
    /// Parses one `scheme:id:perms` entry.
    pub fn parse(s: &str) -> Result<AclSpec, String> {
        let (Some(first), Some(last)) = (s.find(':'), s.rfind(':')) else {
            return Err(format!(
                "'{s}' is not scheme:id:perms (e.g. world:anyone:cdrwa)"
            ));
        };
        if first == last {
            return Err(format!(
                "'{s}' is not scheme:id:perms (e.g. world:anyone:cdrwa)"
            ));
        }
        let scheme = &s[..first];
        if scheme.is_empty() {
            return Err(format!("'{s}' has no scheme (scheme:id:perms)"));
        }
        Ok(AclSpec {
            scheme: scheme.to_string(),
            id: s[first + 1..last].to_string(),
            perms: perms(&s[last + 1..])?,
        })
    }
}

impl std::fmt::Display for AclSpec {
    /// `scheme:id:perms`, the form [`AclSpec::parse`] reads.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.scheme, self.id, perm_string(self.perms))
    }
}

/// Permission letters (`crwda`, any order, each at most meaningful once) to bits.
pub fn perms(letters: &str) -> Result<i32, String> {
    let mut bits = 0;
    for c in letters.chars() {
        match LETTERS.iter().find(|(l, _)| *l == c) {
            Some((_, bit)) => bits |= bit,
            None => {
                return Err(format!(
                    "unknown permission '{c}' in '{letters}' (permissions are letters of crwda)"
                ))
            }
        }
    }
    Ok(bits)
}

/// Bits to letters, in zkCli.sh's order `cdrwa` (bits it does not know are left out).
pub fn perm_string(bits: i32) -> String {
    LETTERS
        .iter()
        .filter(|(_, bit)| bits & bit != 0)
        .map(|(l, _)| *l)
        .collect()
}

/// An `ACL` argument: one entry, or several separated by commas (zkCli.sh's form).
pub fn acl_list(s: &str) -> Result<Vec<AclSpec>, String> {
    s.split(',').map(AclSpec::parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_as_zkcli_reads_them() {
        let a = AclSpec::parse("digest:bob:X/8a+b=:rw").unwrap();
        assert_eq!(
            (a.scheme.as_str(), a.id.as_str()),
            ("digest", "bob:X/8a+b=")
        );
        assert_eq!(a.perms, READ | WRITE);
        assert_eq!(AclSpec::parse("auth::cdrwa").unwrap().id, "");
        assert_eq!(AclSpec::parse("world:anyone:").unwrap().perms, 0);
        assert_eq!(a.to_string(), "digest:bob:X/8a+b=:rw");
        assert_eq!(perm_string(31), "cdrwa");
        assert_eq!(
            acl_list("world:anyone:r,ip:127.0.0.1:cdrwa").unwrap().len(),
            2
        );
    }

    #[test]
    fn malformed_entries_are_refused() {
        assert!(AclSpec::parse("world").is_err());
        assert!(AclSpec::parse("world:anyone").is_err());
        assert!(AclSpec::parse(":anyone:r").is_err());
        assert!(AclSpec::parse("world:anyone:rx").is_err());
        assert!(acl_list("world:anyone:r,").is_err());
    }
}
