//! Where the client's hosts come from: names resolved again at every connection attempt
//! (an unresolvable one skipped, with its reason kept for the connect error), and a
//! pluggable `HostProvider` asked at every attempt. Against a real ZooKeeper 3.8 server
//! from the test kit, behind `FaultyProxy`s; every wait has a deadline.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::block_in_place;
use zkrs_client::*;
use zkrs_testkit::FaultyProxy;

mod support;

const DEADLINE: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    support::within_deadline(DEADLINE, what, f).await
}

/// A port nobody listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unresolvable_name_beside_a_good_host_still_connects() {
    let server = support::server();
    // Several clients, so that both orders of the two hosts are drawn.
    for name in ["nonexistent.invalid", "localhost"] {
        for _ in 0..6 {
            let connect_string = format!("{name}:2181,127.0.0.1:{}", server.port());
            let client = within(
                "connecting",
                ClientBuilder::new(&connect_string)
                    .session_timeout(Duration::from_secs(4))
                    .connect(),
            )
            .await
            .unwrap_or_else(|e| panic!("{connect_string}: {e}"));
            client.exists("/").await.unwrap();
            client.close().await.unwrap();
        }
    }
}

#[tokio::test]
async fn the_connect_error_names_each_hosts_reason() {
    let port = closed_port();
    let connect_string = format!("nonexistent.invalid:2181,127.0.0.1:{port}");
    let e = within(
        "connecting to nothing",
        ClientBuilder::new(&connect_string)
            .session_timeout(Duration::from_secs(2))
            .connect(),
    )
    .await
    .expect_err("no host can be reached");
    let message = e.to_string();
    println!("{message}");
    assert_eq!(e.kind(), ErrorKind::ConnectionLoss, "{message}");
    for expected in [
        "no server reachable: ",
        "nonexistent.invalid:2181: failed to resolve nonexistent.invalid: ",
        &format!("127.0.0.1:{port}: "),
    ] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }
    assert!(message.to_lowercase().contains("refused"), "{message}");
}

/// A provider whose answer the test changes.
#[derive(Clone, Default)]
struct Movable(Arc<Mutex<Vec<String>>>);

impl Movable {
    fn set(&self, hosts: &[String]) {
        *self.0.lock().unwrap() = hosts.to_vec();
    }
}

impl HostProvider for Movable {
    fn hosts(&self) -> HostsFuture<'_> {
        Box::pin(async move { Ok(self.0.lock().unwrap().clone()) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_provider_moves_the_client_with_its_session() {
    let server = support::server();
    let a = FaultyProxy::start(server.address()).unwrap();
    let b = FaultyProxy::start(server.address()).unwrap();
    let provider = Movable::default();
    provider.set(&[a.connect_string()]);
    // The connect string's host is never used: the provider is asked before the first
    // attempt too.
    let client = within(
        "connecting",
        ClientBuilder::new(format!("127.0.0.1:{}", closed_port()))
            .session_timeout(Duration::from_secs(6))
            .host_provider(provider.clone())
            .connect(),
    )
    .await
    .unwrap();
    let session = client.session_id();
    client
        .create("/owned", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    assert_eq!(a.open_connections(), 1);
    let mut states = client.state_changes();

    // The member moves: the provider says B, and A goes away.
    provider.set(&[b.connect_string()]);
    block_in_place(|| drop(a));
    within("reconnecting through B", async {
        while let Some(change) = states.next().await {
            assert_ne!(change.state, ConnectionState::Lost, "the session was lost");
            if change.state == ConnectionState::Reconnected {
                return;
            }
        }
    })
    .await;
    assert_eq!(client.session_id(), session, "the same session");
    assert_eq!(b.open_connections(), 1);
    let stat = client
        .exists("/owned")
        .await
        .unwrap()
        .expect("the ephemeral node");
    assert_eq!(stat.ephemeral_owner, session);
    client.close().await.unwrap();
}

#[tokio::test]
async fn a_failing_or_empty_provider_is_named_in_the_connect_error() {
    for (provider, expected) in [
        (
            Box::new(Vec::new) as Box<dyn Fn() -> Vec<String> + Send + Sync>,
            "the host provider returned no host",
        ),
        (
            Box::new(|| vec!["h:notaport".to_string()]),
            "the host provider returned a bad host \"h:notaport\": bad port",
        ),
    ] {
        let port = closed_port();
        let e = within(
            "connecting",
            ClientBuilder::new(format!("127.0.0.1:{port}"))
                .session_timeout(Duration::from_secs(1))
                .host_provider(provider)
                .connect(),
        )
        .await
        .expect_err("nothing to connect to");
        let message = e.to_string();
        assert!(message.contains(expected), "{message}");
        // The connect string's host is still tried.
        assert!(
            message.contains(&format!("127.0.0.1:{port}: ")),
            "{message}"
        );
    }
}

#[tokio::test]
async fn a_provider_and_the_ensemble_tracker_exclude_each_other() {
    let e = ClientBuilder::new("127.0.0.1:2181")
        .host_provider(Vec::new)
        .follow_ensemble(true)
        .start()
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    assert!(e.to_string().contains("cannot be combined"), "{e}");
}
