//! MD5 (RFC 1321), for DIGEST-MD5 only, from RustCrypto's `md-5` (the maintained MD5 of the
//! Rust ecosystem), checked here against the RFC's test suite. Not for anything that
//! needs a secure hash: MD5 is broken for collisions.

use ::md5::{Digest, Md5};

/// The MD5 digest of `data`.
pub(crate) fn md5(data: &[u8]) -> [u8; 16] {
    Md5::digest(data).into()
}

/// Lower-case hexadecimal, as DIGEST-MD5 writes digests.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 1321, appendix A.5.
    #[test]
    fn rfc_1321_test_suite() {
        let suite = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            (
                "abcdefghijklmnopqrstuvwxyz",
                "c3fcd3d76192e4007dfb496cca67e13b",
            ),
            (
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                "d174ab98d277d9f5a5611c2c9f419d9f",
            ),
            (
                "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ];
        for (input, digest) in suite {
            assert_eq!(hex(&md5(input.as_bytes())), digest, "MD5({input:?})");
        }
    }

    /// Lengths around the padding boundary (55, 56, 63, 64, 65 bytes) agree with the
    /// digests of `md5sum` for the same bytes.
    #[test]
    fn padding_boundaries() {
        let cases = [
            (55, "ef1772b6dff9a122358552954ad0df65"),
            (56, "3b0c8ac703f828b04c6c197006d17218"),
            (63, "b06521f39153d618550606be297466d5"),
            (64, "014842d480b571495a4a0363793f7367"),
            (65, "c743a45e0d2e6a95cb859adae0248435"),
        ];
        for (len, digest) in cases {
            assert_eq!(hex(&md5(&vec![b'a'; len])), digest, "MD5('a' x {len})");
        }
    }
}
