//! Helpers shared by the client's test files.
#![allow(dead_code)] // each test file uses some of these

use std::time::Duration;

use zkrs_client::{Client, ConnectionState};
use zkrs_testkit::FaultyProxy;

/// Cuts every connection through `proxy` and waits (at most `deadline`) until `client` is
/// reconnected, on the same session.
pub async fn cut_and_reconnect(proxy: &FaultyProxy, client: &Client, deadline: Duration) {
    let session = client.session_id();
    let mut states = client.state_changes();
    proxy.cut();
    tokio::time::timeout(deadline, async {
        while let Some(change) = states.next().await {
            if change.state == ConnectionState::Reconnected {
                return;
            }
        }
        panic!("state changes ended");
    })
    .await
    .unwrap_or_else(|_| panic!("not reconnected within {deadline:?}"));
    assert_eq!(client.session_id(), session, "the same session");
}

/// The SASL mechanism's refusal behind an `AuthFailed` error (its `source()`, typed).
pub fn sasl_refusal(e: &zkrs_client::Error) -> String {
    assert_eq!(e.kind(), zkrs_client::ErrorKind::AuthFailed, "{e:?}");
    std::error::Error::source(e)
        .and_then(|c| c.downcast_ref::<zkrs_client::sasl::SaslError>())
        .unwrap_or_else(|| panic!("no SaslError behind {e:?}"))
        .message()
        .to_string()
}
