//! SASL mechanisms for [`ClientBuilder::sasl`](crate::ClientBuilder::sasl): the session core
//! runs the exchange on every connection; this module supplies DIGEST-MD5 (feature
//! `sasl-digest`) and Kerberos through the system's GSS-API library (feature
//! `sasl-gssapi`: links MIT krb5's `libgssapi_krb5`; Debian's `libkrb5-dev` to build).

#[cfg(feature = "sasl-digest")]
mod digest;
#[cfg(feature = "sasl-gssapi")]
#[allow(unsafe_code)]
mod gss;
#[cfg(feature = "sasl-gssapi")]
mod gssapi;
#[cfg(feature = "sasl-gssapi")]
pub use gssapi::{gssapi, Kerberos, DEFAULT_SERVICE};
#[cfg(feature = "sasl-digest")]
mod md5;

#[cfg(feature = "sasl-digest")]
use zkrs_codec::Secret;
pub use zkrs_session::{SaslError, SaslExchange, SaslMechanism, SaslStep};

/// DIGEST-MD5 with a user name and password, as the server's JAAS `Server` section holds
/// them (`user_<name>="<password>"`); the session then has the identity `sasl:<name>`.
#[cfg(feature = "sasl-digest")]
pub fn digest_md5(user: impl Into<String>, password: impl Into<Secret>) -> SaslMechanism {
    let (user, password) = (user.into(), password.into());
    SaslMechanism::new("DIGEST-MD5", move || {
        Box::new(digest::DigestMd5::new(
            user.clone(),
            password.clone(),
            client_nonce(),
        ))
    })
}

/// 128 random bits, hex.
#[cfg(feature = "sasl-digest")]
fn client_nonce() -> String {
    use crate::random::nonce_bits;
    format!("{:016x}{:016x}", nonce_bits(), nonce_bits())
}
