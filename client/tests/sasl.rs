//! SASL DIGEST-MD5 against real ZooKeeper servers configured with a JAAS `Server` section:
//! the exchange on every connection, the `sasl` identity and ACLs, a wrong password ending
//! the client with `AuthFailed`, a server without SASL, and a server that requires it.
#![cfg(feature = "sasl-digest")]

use std::future::Future;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use zkrs_client::{
    sasl, AclEntry, Client, ClientBuilder, ConnectionState, CreateMode, CreateOptions, ErrorCode,
    ErrorKind, Perms,
};
mod support;

use zkrs_testkit::{FaultyProxy, ServerOptions, TestingServer};

const DEADLINE: Duration = Duration::from_secs(20);

fn sasl_options(required: bool) -> ServerOptions {
    ServerOptions::new()
        .sasl_digest_user("alice", "alice-secret")
        .sasl_digest_user("bob", "bob-secret")
        .require_sasl(required)
}

/// A server with SASL available (not required), shared by the tests of this file.
fn server() -> &'static TestingServer {
    static SERVER: OnceLock<TestingServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        TestingServer::start_with(sasl_options(false))
            .expect("ZooKeeper (scripts/install-zookeeper.sh)")
    })
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

fn builder(cs: &str, user: &str, password: &str) -> ClientBuilder {
    ClientBuilder::new(cs)
        .session_timeout(Duration::from_secs(4))
        .connect_timeout(Duration::from_secs(4))
        .sasl(sasl::digest_md5(user, password))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_right_password_gives_the_session_its_sasl_identity() {
    let zk = server();
    let alice = within(
        "connect",
        builder(&zk.connect_string(), "alice", "alice-secret").connect(),
    )
    .await
    .unwrap();
    let me = alice.who_am_i().await;
    if support::known_since(zk, &alice, (3, 7), &me).await {
        let me = me.unwrap();
        assert!(
            me.contains(&("sasl".to_string(), "alice".to_string())),
            "{me:?}"
        );
    }
    // A node for alice only.
    let acl = [AclEntry::new(Perms::ALL, "sasl", "alice")];
    let _ = alice.delete("/sasl-alice", None).await;
    alice
        .create_with(
            "/sasl-alice",
            b"hers",
            &CreateOptions::new(CreateMode::Persistent).acl(&acl),
        )
        .await
        .unwrap();
    assert_eq!(&alice.get_data("/sasl-alice").await.unwrap().0[..], b"hers");
    // Bob (authenticated, another identity) and an anonymous session are refused.
    let bob = within(
        "bob",
        builder(&zk.connect_string(), "bob", "bob-secret").connect(),
    )
    .await
    .unwrap();
    assert_eq!(
        bob.get_data("/sasl-alice").await.unwrap_err().code(),
        Some(ErrorCode::NoAuth)
    );
    let anonymous = Client::connect(&zk.connect_string()).await.unwrap();
    assert_eq!(
        anonymous.get_data("/sasl-alice").await.unwrap_err().code(),
        Some(ErrorCode::NoAuth)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_new_connection_authenticates_again() {
    let zk = server();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let alice = within(
        "connect",
        builder(&proxy.connect_string(), "alice", "alice-secret").connect(),
    )
    .await
    .unwrap();
    support::cut_and_reconnect(&proxy, &alice, DEADLINE).await;
    let me = alice.who_am_i().await;
    if support::known_since(zk, &alice, (3, 7), &me).await {
        let me = me.unwrap();
        assert!(
            me.contains(&("sasl".to_string(), "alice".to_string())),
            "the new connection is authenticated too: {me:?}"
        );
    }
}

// Current-thread: the driver cannot run before this test yields, so the request below is
// queued before the connection exists, and waits for the SASL exchange.
#[tokio::test]
async fn a_wrong_password_ends_the_client_with_auth_failed() {
    let zk = server();
    let started = Instant::now();
    let err = within(
        "connect",
        builder(&zk.connect_string(), "alice", "not-her-password").connect(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AuthFailed, "{err}");
    let text = err.to_string();
    assert!(text.contains("DIGEST-MD5 authentication failed"), "{text}");
    assert!(!support::sasl_refusal(&err).is_empty());
    // At once, not after the connect timeout: retrying cannot fix it.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    // Through start(): the state says so, then the client is closed; requests fail.
    let client = builder(&zk.connect_string(), "alice", "wrong")
        .start()
        .unwrap();
    let mut states = client.state_changes();
    let mut pending = Box::pin(client.get_data("/"));
    // One poll sends it to the driver.
    std::future::poll_fn(|cx| {
        assert!(pending.as_mut().poll(cx).is_pending());
        std::task::Poll::Ready(())
    })
    .await;
    let seen = within("auth failed then closed", async {
        let mut seen = Vec::new();
        while let Some(change) = states.next().await {
            seen.push(change.state);
            if change.state == ConnectionState::Closed {
                return seen;
            }
        }
        seen
    })
    .await;
    assert!(
        seen.ends_with(&[ConnectionState::AuthFailed, ConnectionState::Closed]),
        "{seen:?}"
    );
    let failed = pending.await.unwrap_err();
    assert_eq!(failed.kind(), ErrorKind::AuthFailed, "{failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_sasl_is_an_auth_failure_naming_it() {
    let plain = TestingServer::start().unwrap();
    let err = within(
        "connect",
        builder(&plain.connect_string(), "alice", "alice-secret").connect(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AuthFailed, "{err}");
    let why = support::sasl_refusal(&err);
    assert!(why.contains("no DIGEST-MD5 challenge"), "{why}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_requires_sasl_refuses_anonymous_sessions() {
    let zk = TestingServer::start_with(sasl_options(true)).unwrap();
    let alice = within(
        "connect",
        builder(&zk.connect_string(), "alice", "alice-secret").connect(),
    )
    .await
    .unwrap();
    alice
        .create("/required", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    let anonymous = within("anonymous", Client::connect(&zk.connect_string())).await;
    let refused = match anonymous {
        Ok(client) => within("anonymous read", client.get_data("/required"))
            .await
            .unwrap_err(),
        Err(e) => e,
    };
    eprintln!("anonymous session on a SASL-only server: {refused}");
    assert!(
        refused.code() == Some(ErrorCode::SessionClosedRequireSaslAuth)
            || refused.kind() == ErrorKind::ConnectionLoss,
        "{refused}"
    );
}
