//! Every error a caller of the client can meet, matched by its kind (never by its text), and
//! its cause reachable through `source()` without being repeated in the message. SASL's
//! `AuthFailed` is checked in `sasl.rs` and `sasl_kerberos.rs`, malformed frames
//! (`Protocol`) in `hostile_server.rs`; the recipes' kinds in the recipes' `error_kinds.rs`.

use std::time::Duration;

use zkrs_client::{Client, CreateMode, ErrorCode, ErrorKind};
use zkrs_testkit::TestingServer;

mod support;

const DEADLINE: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    support::within_deadline(DEADLINE, what, f).await
}

#[tokio::test]
async fn server_answers_and_refused_input_and_closed_clients() {
    let zk = TestingServer::start().unwrap();
    let client = within("connect", Client::connect(&zk.connect_string()))
        .await
        .unwrap();

    let e = client.get_data("/missing").await.unwrap_err();
    assert_eq!(
        (e.kind(), e.code()),
        (ErrorKind::Server, Some(ErrorCode::NoNode))
    );
    assert_eq!(e.path(), Some("/missing"));
    assert!(!e.is_retryable());

    client
        .create("/a", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let e = client
        .create("/a", b"", CreateMode::Persistent)
        .await
        .unwrap_err();
    assert_eq!(
        (e.kind(), e.code()),
        (ErrorKind::Server, Some(ErrorCode::NodeExists))
    );

    // Refused before sending: a bad path, data over the packet limit.
    let e = client.get_data("no-slash").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e:?}");
    let e = client
        .create("/big", &vec![0u8; 2 << 20], CreateMode::Persistent)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e:?}");
    assert!(client.exists("/big").await.unwrap().is_none());

    client.close().await.unwrap();
    let e = client.get_data("/a").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Closed, "{e:?}");
    assert!(!e.is_retryable());
}

#[tokio::test]
async fn no_server_is_a_connection_loss_with_its_cause_in_source() {
    // A port nothing listens on: every attempt is refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = Client::builder(&format!("127.0.0.1:{port}"))
        .connect_timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectionLoss, "{e:?}");
    assert!(e.is_retryable());
}

#[tokio::test]
async fn a_session_that_cannot_be_resumed_is_session_expired() {
    let zk = TestingServer::start().unwrap();
    let e = within(
        "resume",
        Client::builder(&zk.connect_string())
            .resume(0x7a6b_7273_0000_0001, vec![7; 16])
            .connect(),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::SessionExpired, "{e:?}");
    assert!(e.is_session_expired());
}
