//! Random version-4 UUIDs for protected node names, from the standard library alone.

use std::fmt;

/// A random (version 4) UUID, written in the canonical dashed 36-character form Curator uses
/// in protected names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Uuid([u8; 16]);

impl Uuid {
    /// A new random UUID.
    ///
    /// The bits come from the client's randomness seam (the standard library's per-process
    /// random hash keys mixed with the time, or a simulation's seeded stream): unique enough
    /// for node names without a random-number crate.
    pub fn new_v4() -> Uuid {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&zkrs_client::__private::random_u64().to_be_bytes());
        bytes[8..].copy_from_slice(&zkrs_client::__private::random_u64().to_be_bytes());
        bytes[6] = (bytes[6] & 0x0f) | 0x40; // version 4
        bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
        Uuid(bytes)
    }
}

impl Uuid {
    /// The canonical text (`8-4-4-4-12` lowercase hex digits) in a stack buffer: protected
    /// names are made on every lock acquire, so this allocates nothing.
    pub fn to_ascii(&self) -> [u8; 36] {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = [b'-'; 36];
        let mut at = 0;
        for (i, b) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                at += 1; // the dash already there
            }
            out[at] = HEX[(b >> 4) as usize];
            out[at + 1] = HEX[(b & 0xf) as usize];
            at += 2;
        }
        out
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.to_ascii();
        // Hex digits and dashes: always ASCII.
        f.write_str(std::str::from_utf8(&text).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_and_unique() {
        let a = Uuid::new_v4().to_string();
        assert_eq!(a.len(), 36);
        assert_eq!(a.as_bytes()[14], b'4');
        assert!(matches!(a.as_bytes()[19], b'8' | b'9' | b'a' | b'b'));
        let set: std::collections::HashSet<String> =
            (0..10_000).map(|_| Uuid::new_v4().to_string()).collect();
        assert_eq!(set.len(), 10_000);
    }
}
