//! The check every crate's redaction test makes (included by path from the session's and the
//! client's tests too): a `Debug` output holds the known password neither as text nor as
//! the bytes `{:?}` of a slice would print.

/// The password the redaction tests set.
pub const PASSWORD: &str = "hunter2-zkrs";

/// Fails naming `what` when `debug` shows [`PASSWORD`].
pub fn assert_redacted(what: &str, debug: &str) {
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
