//! Access control as ZooKeeper 3.8 applies it: the `fixupACL` rules for ACLs a client sends,
//! `checkACL` for each operation, and the auth providers a default server registers.

use zkrs_codec::{Acl, AclEntry, ErrorCode, List};

/// An identity: scheme and id (`org.apache.zookeeper.data.Id`), owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AuthId {
    /// The scheme: `world`, `ip`, `digest`, `sasl`, `x509`, `super`.
    pub scheme: String,
    /// The id within the scheme.
    pub id: String,
}

impl AuthId {
    /// An id from its two parts.
    pub fn new(scheme: &str, id: &str) -> Self {
        AuthId {
            scheme: scheme.to_owned(),
            id: id.to_owned(),
        }
    }
}

/// Which auth schemes the server knows (`ProviderRegistry`). A default 3.8 server registers
/// `ip` and `digest` only; `sasl` and `x509` come with configuration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuthProviders {
    /// `sasl` is registered (a server configured with a SASL provider).
    pub sasl: bool,
    /// `x509` is registered (a server with a TLS port and the X509 provider).
    pub x509: bool,
}

impl AuthProviders {
    fn knows(&self, scheme: &str) -> bool {
        match scheme {
            "ip" | "digest" => true,
            "sasl" => self.sasl,
            "x509" => self.x509,
            _ => false,
        }
    }

    /// Whether ids of this scheme can stand for the creator in an `auth` ACL
    /// (`isAuthenticated`: every provider but `ip`).
    fn is_authenticated(&self, scheme: &str) -> bool {
        self.knows(scheme) && scheme != "ip"
    }

    fn is_valid(&self, scheme: &str, id: &str) -> bool {
        match scheme {
            "ip" => ip_acl(id).is_some(),
            "digest" => java_split_len(id, ':') == 2,
            "sasl" | "x509" => self.knows(scheme),
            _ => false,
        }
    }

    /// The user name `whoAmI` reports for an id (`getUserName`).
    pub(crate) fn user_name(&self, id: &AuthId) -> String {
        match id.scheme.as_str() {
            "digest" => id.id.split(':').next().unwrap_or("").to_owned(),
            s if self.knows(s) || s == "super" => id.id.clone(),
            _ => String::new(),
        }
    }
}

/// The number of parts Java's `String.split(sep)` gives (trailing empty parts dropped; an
/// empty string is one part).
fn java_split_len(s: &str, sep: char) -> usize {
    if s.is_empty() {
        return 1;
    }
    let parts: Vec<&str> = s.split(sep).collect();
    let trailing_empty = parts.iter().rev().take_while(|p| p.is_empty()).count();
    parts.len() - trailing_empty
}

/// An IPv4 address as `IPAuthenticationProvider.v4addr2Bytes` reads it: four parts, each
/// read by `Integer.parseInt` (so a sign and leading zeros are fine: `127.000.0.01`), 0-255.
fn ipv4(addr: &str) -> Option<u32> {
    let parts: Vec<&str> = addr.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut out = 0u32;
    for part in parts {
        let v: i32 = part.parse().ok()?;
        out = out << 8 | u32::from(u8::try_from(v).ok()?);
    }
    Some(out)
}

/// An `ip` ACL expression: an IPv4 address and a prefix length.
fn ip_acl(expr: &str) -> Option<(u32, u32)> {
    let (addr, bits) = match expr.split_once('/') {
        Some((a, b)) => (a, Some(b)),
        None => (expr, None),
    };
    let addr = ipv4(addr)?;
    let bits = match bits {
        Some(b) => {
            let n: i32 = b.parse().ok()?;
            if !(0..=32).contains(&n) {
                return None;
            }
            n as u32
        }
        None => 32,
    };
    Some((addr, bits))
}

fn ip_matches(client: &str, expr: &str) -> bool {
    let (Some((net, bits)), Some(client)) = (ip_acl(expr), ipv4(client)) else {
        return false;
    };
    let mask = if bits == 0 {
        0
    } else {
        u32::MAX << (32 - bits)
    };
    client & mask == net & mask
}

/// `fixupACL`: the ACL a create or setACL stores, or `InvalidACL`. Duplicates go, `auth`
/// expands to the session's authenticated ids, every other id must be valid for a known
/// scheme.
pub(crate) fn fixup(
    providers: &AuthProviders,
    auth: &[AuthId],
    acl: &List<'_, Acl<'_>>,
) -> Result<Vec<AclEntry>, ErrorCode> {
    let mut unique: Vec<AclEntry> = Vec::new();
    for a in acl.iter() {
        let entry = AclEntry::from(a);
        if !unique.contains(&entry) {
            unique.push(entry);
        }
    }
    if unique.is_empty() {
        return Err(ErrorCode::InvalidAcl);
    }
    let mut out = Vec::new();
    for a in unique {
        if a.scheme == "world" && a.id == "anyone" {
            out.push(a);
        } else if a.scheme == "auth" {
            let mut any = false;
            for id in auth {
                if providers.is_authenticated(&id.scheme) {
                    any = true;
                    out.push(AclEntry::new(a.perms, &id.scheme, &id.id));
                }
            }
            if !any {
                return Err(ErrorCode::InvalidAcl);
            }
        } else if providers.is_valid(&a.scheme, &a.id) {
            out.push(a);
        } else {
            return Err(ErrorCode::InvalidAcl);
        }
    }
    Ok(out)
}

/// `checkACL`: whether `auth` holds one of `perm`'s bits on a node with `acl`.
pub(crate) fn check(acl: &[AclEntry], perm: i32, auth: &[AuthId]) -> Result<(), ErrorCode> {
    if acl.is_empty() || auth.iter().any(|id| id.scheme == "super") {
        return Ok(());
    }
    for a in acl {
        if a.perms.code() & perm == 0 {
            continue;
        }
        if a.scheme == "world" && a.id == "anyone" {
            return Ok(());
        }
        for id in auth.iter().filter(|id| id.scheme == a.scheme) {
            let matched = match id.scheme.as_str() {
                "ip" => ip_matches(&id.id, &a.id),
                _ => id.id == a.id,
            };
            if matched {
                return Ok(());
            }
        }
    }
    Err(ErrorCode::NoAuth)
}

/// Java's `String.hashCode` (over UTF-16 code units).
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The jute-generated `Id.hashCode`.
fn java_id_hash(id: &AuthId) -> i32 {
    let mut h = 17i32;
    h = h
        .wrapping_mul(37)
        .wrapping_add(java_string_hash(&id.scheme));
    h.wrapping_mul(37).wrapping_add(java_string_hash(&id.id))
}

/// A connection's identities in the order ZooKeeper lists them: its `authInfo` is a set over a
/// `ConcurrentHashMap`, listed bucket by bucket (`spread(hash) & (table - 1)`), entries of a
/// bucket in insertion order. `ids` is in insertion order. (The table is 16 buckets until a
/// thirteenth id; past that this order is an approximation.)
pub(crate) fn java_set_order(ids: &[AuthId]) -> Vec<AuthId> {
    let table = (ids.len() * 4 / 3 + 1).next_power_of_two().max(16) as u32;
    let mut keyed: Vec<(u32, usize, &AuthId)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let h = java_id_hash(id) as u32;
            let spread = (h ^ (h >> 16)) & 0x7fff_ffff;
            (spread & (table - 1), i, id)
        })
        .collect();
    keyed.sort();
    keyed.into_iter().map(|(_, _, id)| id.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_split_counts() {
        assert_eq!(java_split_len("a:b", ':'), 2);
        assert_eq!(java_split_len("a:", ':'), 1);
        assert_eq!(java_split_len(":b", ':'), 2);
        assert_eq!(java_split_len("a:b:c", ':'), 3);
        assert_eq!(java_split_len("", ':'), 1);
        assert_eq!(java_split_len("::", ':'), 0);
    }

    #[test]
    fn ip_ranges() {
        assert!(ip_matches("127.0.0.1", "127.0.0.1"));
        assert!(ip_matches("10.1.2.3", "10.0.0.0/8"));
        assert!(!ip_matches("11.1.2.3", "10.0.0.0/8"));
        assert!(ip_acl("10.0.0.0/33").is_none());
        // Integer.parseInt's reading of each part: leading zeros and a sign are fine.
        assert!(ip_matches("127.0.0.1", "127.000.0.01"));
        assert!(ip_matches("127.0.0.1", "+127.0.0.1/+8"));
        assert!(ip_acl("127.0.0").is_none());
        assert!(ip_acl("127.0.0.256").is_none());
        assert!(ip_acl("127.0.0.1.").is_none());
    }
}
