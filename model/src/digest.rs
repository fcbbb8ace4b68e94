//! The `digest` scheme's ids (`user:base64(sha1("user:password"))`): SHA-1 from RustCrypto's
//! `sha1`, Base64 from `base64` (the standard alphabet with padding, as ZooKeeper's
//! `DigestAuthenticationProvider` writes it), checked below against known vectors.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use sha1::{Digest as _, Sha1};

/// SHA-1 of `data` (FIPS 180-4).
pub(crate) fn sha1(data: &[u8]) -> [u8; 20] {
    Sha1::digest(data).into()
}

/// Standard Base64 with padding.
pub(crate) fn base64(data: &[u8]) -> String {
    STANDARD.encode(data)
}

/// The id ZooKeeper's `DigestAuthenticationProvider.generateDigest` makes of `user:password`:
/// the text before the first `:`, a `:`, and the Base64 SHA-1 of the whole credential.
pub fn digest_id(credentials: &str) -> String {
    let user = credentials.split(':').next().unwrap_or("");
    format!("{user}:{}", base64(&sha1(credentials.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FIPS 180-2's examples (appendix A), as hex.
    #[test]
    fn sha1_fips_180_examples() {
        let hex = |d: [u8; 20]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(sha1(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        assert_eq!(
            hex(sha1(&vec![b'a'; 1_000_000])),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
    }

    /// RFC 4648's test vectors (section 10).
    #[test]
    fn base64_rfc_4648_vectors() {
        for (data, text) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(data.as_bytes()), text, "{data:?}");
        }
    }

    #[test]
    fn matches_known_vectors() {
        assert_eq!(base64(&sha1(b"abc")), "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=");
        assert_eq!(base64(&sha1(b"")), "2jmj7l5rSw0yVb/vlWAYkK/YBwk=");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        // ZooKeeper's documented example: super:test.
        assert_eq!(
            digest_id("super:test"),
            "super:D/InIHSb7yEEbrWz8b9l71RjZJU="
        );
    }
}
