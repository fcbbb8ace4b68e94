//! A `ClientBuilder` may be logged: its `Debug` never shows a credential, a SASL password
//! or the password of a session to resume.

use zkrs_client::ClientBuilder;

#[path = "../../proto-codec/tests/support/redaction.rs"]
mod redaction;
use redaction::{assert_redacted, PASSWORD};

#[test]
fn builder_debug_hides_credentials_and_the_session_password() {
    let builder = ClientBuilder::new("127.0.0.1:2181")
        .auth("digest", format!("user:{PASSWORD}"))
        .resume(0x1234, PASSWORD.as_bytes().to_vec());
    #[cfg(feature = "sasl-digest")]
    let builder = builder.sasl(zkrs_client::sasl::digest_md5("ops", PASSWORD));
    let debug = format!("{builder:?}");
    assert_redacted("ClientBuilder", &debug);
    assert_redacted("ClientBuilder", &format!("{builder:#?}"));
    assert!(debug.contains("digest"), "the scheme still shows: {debug}");
}
