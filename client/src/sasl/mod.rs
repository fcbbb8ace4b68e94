//! SASL mechanisms for [`ClientBuilder::sasl`](crate::ClientBuilder::sasl): the session core
//! runs the exchange on every connection; this module supplies DIGEST-MD5 (feature
//! `sasl-digest`).

#[cfg(feature = "sasl-digest")]
mod digest;
#[cfg(feature = "sasl-digest")]
mod md5;

pub use zkr_session::{SaslExchange, SaslMechanism, SaslStep};

/// DIGEST-MD5 with a user name and password, as the server's JAAS `Server` section holds
/// them (`user_<name>="<password>"`); the session then has the identity `sasl:<name>`.
#[cfg(feature = "sasl-digest")]
pub fn digest_md5(user: impl Into<String>, password: impl Into<String>) -> SaslMechanism {
    let (user, password) = (user.into(), password.into());
    SaslMechanism::new("DIGEST-MD5", move || {
        Box::new(digest::DigestMd5::new(
            user.clone(),
            password.clone(),
            client_nonce(),
        ))
    })
}

/// 128 random bits, hex, from the standard library's per-process random keys and the clock
/// (a fresh `RandomState` is seeded anew for each call).
#[cfg(feature = "sasl-digest")]
fn client_nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut words = [0u64; 2];
    for (i, word) in words.iter_mut().enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_usize(i);
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        *word = h.finish();
    }
    format!("{:016x}{:016x}", words[0], words[1])
}
