//! Helpers shared by the client's test files.
#![allow(dead_code)] // each test file uses some of these

use std::time::Duration;

use zkrs_client::{Client, ConnectionState, ErrorCode};
use zkrs_testkit::{FaultyProxy, TestingServer};

/// Runs `f`, failing the test if it takes longer than `deadline`.
pub async fn within_deadline<F: std::future::Future>(
    deadline: Duration,
    what: &str,
    f: F,
) -> F::Output {
    tokio::time::timeout(deadline, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: not done within {deadline:?}"))
}

/// A server from the test kit (its blocking start in `block_in_place`).
pub fn server() -> TestingServer {
    tokio::task::block_in_place(TestingServer::start)
        .expect("start ZooKeeper (run scripts/install-zookeeper.sh)")
}

/// Whether `zk` knows the operations ZooKeeper `major.minor` brought (`addWatch` 3.6,
/// `whoAmI` 3.7, ...). When it does not, `result`, that operation's, must be the error that
/// says so, naming the version: a test checks its server's side of the change either way
/// (scripts/test-versions.sh runs the suites on 3.5 to 3.9). An older server closes the
/// connection after that answer (its `UnimplementedRequestProcessor`), so a request sent
/// next would be lost with it: this waits until `client` has its session on a new one.
pub async fn known_since<T: std::fmt::Debug>(
    zk: &TestingServer,
    client: &Client,
    (major, minor): (u32, u32),
    result: &zkrs_client::Result<T>,
) -> bool {
    let version = zk.version().expect("the server's version");
    if version.at_least(major, minor) {
        return true;
    }
    let e = result.as_ref().expect_err(&format!(
        "ZooKeeper {version} answered an operation of {major}.{minor}"
    ));
    assert_eq!(e.code(), Some(ErrorCode::Unimplemented), "{e:?}");
    let says = format!("needs ZooKeeper {major}.{minor} or later");
    assert!(e.to_string().contains(&says), "{e} does not say {says:?}");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        match client.exists("/").await {
            Ok(_) => return false,
            Err(e) if e.is_retryable() && tokio::time::Instant::now() < deadline => {}
            Err(e) => panic!("no session again after the old server's close: {e}"),
        }
    }
}

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
