//! A `ClientBuilder` may be logged: its `Debug` never shows a credential, a SASL password
//! or the password of a session to resume.

use zkrs_client::ClientBuilder;

const PASSWORD: &str = "hunter2-zkrs";

fn assert_redacted(what: &str, debug: &str) {
    assert!(
        !debug.contains(PASSWORD),
        "{what} shows the password: {debug}"
    );
    let bytes = format!("{:?}", PASSWORD.as_bytes());
    let bytes = bytes.trim_matches(|c| c == '[' || c == ']');
    assert!(
        !debug.contains(bytes),
        "{what} shows the password's bytes: {debug}"
    );
}

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
