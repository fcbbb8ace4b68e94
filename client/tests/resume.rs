//! Sessions that outlive a client, against a real ZooKeeper server from the test kit: a
//! client detaches (no closeSession), another resumes its session by id and password and
//! finds its ephemeral node untouched; a wrong password and an expired session fail at
//! once, with the reason.
//!
//! Every wait has a deadline; the test kit's blocking calls run in `block_in_place`.

use std::time::{Duration, Instant};

use zkrs_client::*;

const DEADLINE: Duration = Duration::from_secs(20);

mod support;

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    support::within_deadline(DEADLINE, what, f).await
}

async fn connect(connect_string: &str, session_timeout: Duration) -> Client {
    within(
        "connecting",
        Client::builder(connect_string)
            .session_timeout(session_timeout)
            .connect(),
    )
    .await
    .unwrap()
}

/// A client that made `/owned` (ephemeral) and detached: its session id and password.
async fn detached_owner(connect_string: &str, session_timeout: Duration) -> (i64, Secret) {
    let first = connect(connect_string, session_timeout).await;
    first
        .create("/owned", b"mine", CreateMode::Ephemeral)
        .await
        .unwrap();
    let (id, password) = (first.session_id(), first.session_password());
    assert_ne!(id, 0);
    assert_eq!(
        password.expose().len(),
        16,
        "ZooKeeper's passwords are 16 bytes"
    );
    within("detaching", first.detach()).await;
    assert_eq!(first.state(), ConnectionState::Closed);
    let err = first.get_data("/owned").await.unwrap_err();
    assert!(err.is_closed(), "{err}");
    (id, password)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_client_resumes_the_session_with_its_ephemeral_node() {
    let server = support::server();
    let connect_string = server.connect_string();
    let (id, password) = detached_owner(&connect_string, Duration::from_secs(4)).await;

    // The session outlived its client: the node is still there, owned by it.
    let observer = connect(&connect_string, Duration::from_secs(4)).await;
    let stat = observer
        .exists("/owned")
        .await
        .unwrap()
        .expect("/owned kept");
    assert_eq!(stat.ephemeral_owner, id);

    let second = within(
        "resuming",
        Client::builder(&connect_string)
            .session_timeout(Duration::from_secs(4))
            .resume(id, password.clone())
            .connect(),
    )
    .await
    .unwrap();
    assert_eq!(second.session_id(), id);
    assert_eq!(second.session_password(), password);
    assert_eq!(second.state(), ConnectionState::Connected);
    let (data, stat) = second.get_data("/owned").await.unwrap();
    assert_eq!((&data[..], stat.ephemeral_owner), (&b"mine"[..], id));
    let ephemerals = second.get_ephemerals("/").await;
    if support::known_since(&server, &second, (3, 6), &ephemerals).await {
        assert_eq!(ephemerals.unwrap(), ["/owned"]);
    }

    // It is the session: closing it deletes the node.
    let (_, gone) = observer.exists_and_watch("/owned").await.unwrap();
    second.close().await.unwrap();
    let event = within("the node to go with the session", gone).await;
    assert_eq!(event.event_type, EventType::NodeDeleted);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_fails_at_once_and_leaves_the_session_alone() {
    let server = support::server();
    let connect_string = server.connect_string();
    let owner = connect(&connect_string, Duration::from_secs(4)).await;
    owner
        .create("/owned", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    let owner_id = owner.session_id();
    let mut wrong = owner.session_password().expose().to_vec();
    wrong[0] ^= 1;
    let connect_timeout = Duration::from_secs(10);
    let started = Instant::now();
    let err = Client::builder(&connect_string)
        .connect_timeout(connect_timeout)
        .resume(owner.session_id(), wrong)
        .connect()
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert!(err.is_session_expired(), "{err}");
    let expected = format!(
        "the server refused to resume session {:#x}: it has expired, or its password is wrong",
        owner.session_id()
    );
    assert!(err.to_string().contains(&expected), "{err}");
    assert!(took < connect_timeout / 2, "took {took:?}");
    // The session itself lives on. ZooKeeper closes the session's connection before it
    // checks the password, so the owner may have to reconnect, to the same session.
    let mut states = owner.state_changes();
    within("the owner to be connected", async {
        while !owner.state().is_connected() {
            states.next().await;
        }
    })
    .await;
    assert_eq!(owner.session_id(), owner_id);
    let stat = owner.exists("/owned").await.unwrap().expect("/owned kept");
    assert_eq!(stat.ephemeral_owner, owner_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_fails_at_once() {
    let server = support::server();
    let connect_string = server.connect_string();
    let observer = connect(&connect_string, Duration::from_secs(4)).await;
    let (id, password) = detached_owner(&connect_string, Duration::from_millis(800)).await;
    // Wait for the server to expire it: its node goes.
    let (stat, gone) = observer.exists_and_watch("/owned").await.unwrap();
    if stat.is_some() {
        let event = within("the session to expire", gone).await;
        assert_eq!(event.event_type, EventType::NodeDeleted);
    }
    let started = Instant::now();
    let err = Client::builder(&connect_string)
        .connect_timeout(Duration::from_secs(10))
        .resume(id, password)
        .connect()
        .await
        .unwrap_err();
    assert!(err.is_session_expired(), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("refused to resume session {id:#x}")),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_session_zero_is_refused_before_connecting() {
    let err = Client::builder("127.0.0.1:1")
        .resume(0, vec![0; 16])
        .connect()
        .await
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
}

#[test]
fn a_builder_never_shows_the_password() {
    let builder = Client::builder("127.0.0.1:1").resume(0x1234, b"secret-password!".to_vec());
    let shown = format!("{builder:?}");
    assert!(
        shown.contains("id: 0x1234, password: Secret(***)"),
        "{shown}"
    );
    assert!(!shown.contains("115, 101, 99"), "{shown}"); // "sec" as bytes
}
