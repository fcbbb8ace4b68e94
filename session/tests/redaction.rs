//! The session's settings and state never print a credential or the session password:
//! a driver may log its `SessionConfig`.

use std::time::Duration;

use zkrs_session::SessionConfig;

#[path = "../../proto-codec/tests/support/redaction.rs"]
mod redaction;
use redaction::{assert_redacted, PASSWORD};

#[test]
fn session_config_debug_hides_credentials_and_the_session_password() {
    let mut cfg = SessionConfig::new(1, Duration::from_secs(10));
    cfg.auth.push((
        "digest".into(),
        format!("user:{PASSWORD}").into_bytes().into(),
    ));
    cfg.resume = Some((0x1234, PASSWORD.as_bytes().to_vec().into()));
    let debug = format!("{cfg:?}");
    assert_redacted("SessionConfig", &debug);
    assert_redacted("SessionConfig", &format!("{cfg:#?}"));
    assert!(debug.contains("digest"), "the scheme still shows: {debug}");
    assert!(
        debug.contains("4660"),
        "the session id still shows: {debug}"
    );
}
