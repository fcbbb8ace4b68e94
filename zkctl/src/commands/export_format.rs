//! The export format: one JSON object per line, one line per node, in path order.
//!
//! `{"path":"/a","mode":"persistent","acl":[{"perms":"cdrwa","scheme":"world","id":"anyone"}],
//! "encoding":"utf8","data":"text"}`. `path` is relative to the exported root (the root
//! itself is `/`); `encoding` is `utf8` when the data is valid UTF-8 (then `data` is that
//! text), else `base64` (standard alphabet, padded); `perms` are zkCli's letters, in the
//! order `cdrwa`; `mode` is `persistent`, or `container` or `ttl` (with `ttl_ms`) in files
//! written by hand (the server hides those markers from clients, so `export` never writes
//! them).

use std::cmp::Ordering;
use std::io::BufRead;

use serde::{Deserialize, Serialize};
use zkrs_client::{AclEntry, Perms};

/// How a node is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A persistent node (a persistent-sequential one too, once made).
    Persistent,
    /// A container (deleted by the server once its last child goes).
    Container,
    /// Persistent with a time to live (`ttl_ms`).
    Ttl,
}

/// How `data` holds the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// The bytes are this UTF-8 text.
    Utf8,
    /// Standard base64 with padding.
    Base64,
}

/// One ACL entry as exported.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AclRecord {
    /// zkCli's letters, `cdrwa` order.
    pub perms: String,
    /// The scheme.
    pub scheme: String,
    /// The id within the scheme.
    pub id: String,
}

/// One line of an export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// The path relative to the exported root (`/` for the root).
    pub path: String,
    /// How it is created.
    pub mode: Mode,
    /// The TTL, for mode `ttl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// The ACL, as the server returned it.
    pub acl: Vec<AclRecord>,
    /// How `data` holds the bytes.
    pub encoding: Encoding,
    /// The data.
    pub data: String,
}

impl Record {
    /// A persistent node's record.
    pub fn new(path: String, data: &[u8], acl: &[AclEntry]) -> Record {
        let (encoding, data) = match std::str::from_utf8(data) {
            Ok(text) => (Encoding::Utf8, text.to_string()),
            Err(_) => (Encoding::Base64, base64(data)),
        };
        Record {
            path,
            mode: Mode::Persistent,
            ttl_ms: None,
            acl: acl.iter().map(acl_record).collect(),
            encoding,
            data,
        }
    }

    /// The data's bytes (checked when the record is read).
    pub fn bytes(&self) -> Vec<u8> {
        match self.encoding {
            Encoding::Utf8 => self.data.clone().into_bytes(),
            Encoding::Base64 => unbase64(&self.data).unwrap_or_default(),
        }
    }

    /// The ACL as the client takes it (checked when the record is read).
    pub fn acl_entries(&self) -> Vec<AclEntry> {
        self.acl
            .iter()
            .map(|a| AclEntry::new(perms_from(&a.perms).unwrap_or(Perms(0)), &a.scheme, &a.id))
            .collect()
    }

    /// The ACL sorted, to compare as sets.
    pub fn acl_set(&self) -> Vec<AclRecord> {
        let mut acl = self.acl.clone();
        acl.sort();
        acl
    }

    /// The JSON line (without the line break).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a record always serializes")
    }

    /// A line read back, checked: a relative path, the data decodable, ACL letters known.
    pub fn from_line(line: &str) -> Result<Record, String> {
        let record: Record = serde_json::from_str(line).map_err(|e| e.to_string())?;
        if !record.path.starts_with('/')
            || (record.path.len() > 1 && record.path.ends_with('/'))
            || record.path.contains("//")
        {
            return Err(format!("bad path {:?}", record.path));
        }
        if record.encoding == Encoding::Base64 && unbase64(&record.data).is_none() {
            return Err(format!("{}: data is not base64", record.path));
        }
        for a in &record.acl {
            if perms_from(&a.perms).is_none() {
                return Err(format!(
                    "{}: bad perms {:?} (letters of cdrwa)",
                    record.path, a.perms
                ));
            }
        }
        match (record.mode, record.ttl_ms) {
            (Mode::Ttl, None | Some(0)) => {
                return Err(format!("{}: mode ttl needs ttl_ms > 0", record.path))
            }
            (Mode::Persistent | Mode::Container, Some(_)) => {
                return Err(format!("{}: ttl_ms needs mode ttl", record.path))
            }
            _ => {}
        }
        Ok(record)
    }
}

/// Reads an export: every non-empty line a record (`name` for messages: `name:LINE: why`).
pub fn read(input: impl BufRead, name: &str) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    for (n, line) in input.lines().enumerate() {
        let line = line.map_err(|e| format!("{name}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let record = Record::from_line(&line).map_err(|e| format!("{name}:{}: {e}", n + 1))?;
        records.push(record);
    }
    Ok(records)
}

/// Path order: by components, so a parent comes right before its subtree (`/a`, `/a/b`,
/// `/a-b`; plain byte order would put `/a-b` between them).
pub fn path_order(a: &str, b: &str) -> Ordering {
    a.split('/')
        .filter(|c| !c.is_empty())
        .cmp(b.split('/').filter(|c| !c.is_empty()))
}

/// The path below `root` as exported: `/` for the root itself.
pub fn relative(root: &str, path: &str) -> String {
    if root == "/" || path == root {
        if path == root {
            "/".to_string()
        } else {
            path.to_string()
        }
    } else {
        path[root.len()..].to_string()
    }
}

/// Where a relative path goes under `at`.
pub fn under(at: &str, rel: &str) -> String {
    match (at, rel) {
        (at, "/") => at.to_string(),
        ("/", rel) => rel.to_string(),
        (at, rel) => format!("{at}{rel}"),
    }
}

fn acl_record(a: &AclEntry) -> AclRecord {
    AclRecord {
        perms: perms_letters(a.perms),
        scheme: a.scheme.clone(),
        id: a.id.clone(),
    }
}

const LETTERS: [(char, Perms); 5] = [
    ('c', Perms::CREATE),
    ('d', Perms::DELETE),
    ('r', Perms::READ),
    ('w', Perms::WRITE),
    ('a', Perms::ADMIN),
];

/// zkCli's letters for a permission set, `cdrwa` order.
pub fn perms_letters(p: Perms) -> String {
    LETTERS
        .iter()
        .filter(|(_, bit)| p.contains(*bit))
        .map(|(c, _)| *c)
        .collect()
}

/// The permission set for letters of `cdrwa` (any order); `None` for another letter.
pub fn perms_from(letters: &str) -> Option<Perms> {
    let mut p = Perms(0);
    for ch in letters.chars() {
        p |= LETTERS.iter().find(|(c, _)| *c == ch)?.1;
    }
    Some(p)
}

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes [`base64()`]'s output; `None` for anything else (no line breaks, canonical padding
/// required).
pub fn unbase64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for (raw, text) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"\xff\x00\xfe", "/wD+"),
        ] {
            assert_eq!(base64(raw), text);
            assert_eq!(unbase64(text).as_deref(), Some(raw));
        }
        assert_eq!(unbase64("Zg="), None);
        assert_eq!(unbase64("Z==="), None);
        assert_eq!(unbase64("Zg==Zg=="), None);
        assert_eq!(unbase64("Zm9*"), None);
    }

    #[test]
    fn perms_letters_round_trip() {
        assert_eq!(perms_letters(Perms::ALL), "cdrwa");
        assert_eq!(perms_letters(Perms::READ | Perms::ADMIN), "ra");
        assert_eq!(perms_from("ar"), Some(Perms::READ | Perms::ADMIN));
        assert_eq!(perms_from("rx"), None);
    }

    #[test]
    fn paths() {
        assert_eq!(path_order("/a/b", "/a-b"), Ordering::Less);
        assert_eq!(path_order("/", "/a"), Ordering::Less);
        assert_eq!(relative("/", "/"), "/");
        assert_eq!(relative("/", "/a"), "/a");
        assert_eq!(relative("/x", "/x"), "/");
        assert_eq!(relative("/x", "/x/a"), "/a");
        assert_eq!(under("/", "/"), "/");
        assert_eq!(under("/c", "/"), "/c");
        assert_eq!(under("/c", "/a"), "/c/a");
        assert_eq!(under("/", "/a"), "/a");
    }

    #[test]
    fn records_round_trip_and_refuse_bad_lines() {
        let r = Record::new("/a".into(), b"\xffx", &[AclEntry::open()]);
        assert_eq!(
            r.to_line(),
            r#"{"path":"/a","mode":"persistent","acl":[{"perms":"cdrwa","scheme":"world","id":"anyone"}],"encoding":"base64","data":"/3g="}"#
        );
        assert_eq!(Record::from_line(&r.to_line()).unwrap(), r);
        assert!(Record::from_line("{").is_err());
        assert!(Record::from_line(
            r#"{"path":"a","mode":"persistent","acl":[],"encoding":"utf8","data":""}"#
        )
        .is_err());
        assert!(Record::from_line(
            r#"{"path":"/a","mode":"ttl","acl":[],"encoding":"utf8","data":""}"#
        )
        .is_err());
    }
}
