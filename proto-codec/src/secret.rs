//! [`Secret`]: bytes that must never be printed (a password, credentials), and the
//! redaction every `Debug` of a secret prints.

use std::fmt;

/// What the `Debug` of a secret prints in its place, whatever it holds: not even its
/// length, which would tell a 16-byte session password from a user's password.
pub(crate) const REDACTED: &str = "Secret(***)";

/// Bytes that must not reach a log: a session password, `digest` credentials, a SASL
/// password. Its `Debug` prints `Secret(***)` and it has no `Display`, so a settings
/// struct that holds one can derive `Debug` and be logged; the bytes are read with
/// [`Secret::expose`], whose name marks the places that do.
///
/// Comparing two secrets takes the same time wherever they differ (for equal lengths), and
/// dropping one overwrites its bytes (best effort: a copy made before it was wrapped, or by
/// the caller of [`Secret::expose`], is not reached).
///
/// ```
/// use zkrs_codec::Secret;
/// let password = Secret::from("hunter2");
/// assert_eq!(format!("{password:?}"), "Secret(***)");
/// assert_eq!(password.expose(), b"hunter2");
/// ```
#[derive(Clone, Default)]
pub struct Secret(Vec<u8>);

impl Secret {
    /// A secret holding `bytes`.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Secret {
        Secret(bytes.into())
    }

    /// The bytes, for the one place that sends or checks them.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    /// Whether it holds no byte (e.g. no session yet).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Secret) -> bool {
        // No early exit at the first differing byte: the time says nothing of where.
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

impl Eq for Secret {}

impl Drop for Secret {
    fn drop(&mut self) {
        self.0.fill(0);
        // Keeps the compiler from dropping the writes as dead stores.
        std::hint::black_box(&mut self.0);
    }
}

impl From<Vec<u8>> for Secret {
    fn from(bytes: Vec<u8>) -> Secret {
        Secret(bytes)
    }
}

impl From<&[u8]> for Secret {
    fn from(bytes: &[u8]) -> Secret {
        Secret(bytes.to_vec())
    }
}

impl<const N: usize> From<&[u8; N]> for Secret {
    fn from(bytes: &[u8; N]) -> Secret {
        Secret(bytes.to_vec())
    }
}

impl From<&Vec<u8>> for Secret {
    fn from(bytes: &Vec<u8>) -> Secret {
        Secret(bytes.clone())
    }
}

impl From<String> for Secret {
    fn from(text: String) -> Secret {
        Secret(text.into_bytes())
    }
}

impl From<&str> for Secret {
    fn from(text: &str) -> Secret {
        Secret(text.as_bytes().to_vec())
    }
}

impl From<&String> for Secret {
    fn from(text: &String) -> Secret {
        Secret(text.as_bytes().to_vec())
    }
}

/// A `Debug` field that prints [`REDACTED`]: for the borrowed wire records, whose secret is
/// a slice of the frame rather than a [`Secret`].
pub(crate) struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn debug_is_fixed_and_equality_compares_the_bytes() {
        let a = Secret::from("hunter2-zkrs");
        assert_eq!(format!("{a:?}"), "Secret(***)");
        assert_eq!(format!("{a:#?}"), "Secret(***)");
        assert_eq!(format!("{:?}", Secret::default()), "Secret(***)");
        assert_eq!(a, Secret::new(b"hunter2-zkrs".to_vec()));
        assert_ne!(a, Secret::from("hunter2-zkrt"));
        assert_ne!(a, Secret::from("hunter2"));
        assert!(Secret::default().is_empty());
    }
}
