//! The records that carry a password print it redacted: `{:?}` of a handshake or an auth
//! packet may reach a log.

use zkrs_codec::{AuthPacket, ConnectRequest, ConnectResponse};

#[path = "support/redaction.rs"]
mod redaction;
use redaction::{assert_redacted, PASSWORD};

#[test]
fn connect_request_debug_hides_the_password() {
    let request = ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout_ms: 10_000,
        session_id: 0x1234,
        passwd: PASSWORD.as_bytes(),
    };
    let debug = format!("{request:?}");
    assert_redacted("ConnectRequest", &debug);
    assert!(
        debug.contains("4660"),
        "the other fields still show: {debug}"
    );
}

#[test]
fn connect_response_debug_hides_the_password() {
    let response = ConnectResponse {
        protocol_version: 0,
        timeout_ms: 10_000,
        session_id: 0x1234,
        passwd: PASSWORD.as_bytes(),
    };
    assert_redacted("ConnectResponse", &format!("{response:?}"));
    assert_redacted("ConnectResponse", &format!("{response:#?}"));
}

#[test]
fn auth_packet_debug_hides_the_credentials() {
    let credentials = format!("user:{PASSWORD}");
    let packet = AuthPacket {
        auth_type: 0,
        scheme: "digest",
        auth: credentials.as_bytes(),
    };
    let debug = format!("{packet:?}");
    assert_redacted("AuthPacket", &debug);
    assert!(debug.contains("digest"), "the scheme still shows: {debug}");
}
