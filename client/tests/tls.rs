//! TLS against real ZooKeeper servers (`secureClientPort`, Netty) started by the test kit with
//! certificates it makes: server-only TLS, mutual TLS and the `x509` identity, and each way a
//! handshake fails, which must end `connect()` with an error that names the cause.
#![cfg(feature = "tls")]

use std::sync::OnceLock;
use std::time::Duration;

use zkrs_client::{
    AclEntry, ClientBuilder, CreateMode, CreateOptions, ErrorCode, ErrorKind, Perms, TlsError,
    TlsErrorKind, TlsOptions,
};
use zkrs_testkit::{ClientAuth, ServerOptions, TestingServer, TlsCertificates};

const DEADLINE: Duration = Duration::from_secs(20);
/// Short, so a refused handshake ends the test quickly; long enough for a real one.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(2500);

fn certs() -> &'static TlsCertificates {
    static CERTS: OnceLock<TlsCertificates> = OnceLock::new();
    CERTS.get_or_init(|| {
        TlsCertificates::generate().expect("openssl (scripts/install-zookeeper.sh)")
    })
}

/// One server per client-auth mode, shared by the tests of this file.
mod support;

fn server(auth: ClientAuth) -> &'static TestingServer {
    static NONE: OnceLock<TestingServer> = OnceLock::new();
    static NEED: OnceLock<TestingServer> = OnceLock::new();
    let cell = match auth {
        ClientAuth::Need => &NEED,
        _ => &NONE,
    };
    cell.get_or_init(|| {
        TestingServer::start_with(ServerOptions::new().tls(certs(), auth))
            .expect("ZooKeeper with TLS (scripts/install-zookeeper.sh)")
    })
}

fn secure(server: &TestingServer) -> String {
    server.secure_connect_string().expect("a secure port")
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// Connects with `tls`; the error's text when it fails.
async fn try_connect(cs: &str, tls: TlsOptions) -> Result<zkrs_client::Client, String> {
    connect(cs, tls).await.map_err(|e| e.to_string())
}

/// The kind of the TLS failure of a connect that must fail, and its text. A connect that
/// ends before any handshake got as far as a verdict (a cold JVM on a busy machine can take
/// longer than `CONNECT_TIMEOUT` for its first) is tried again, a few times.
async fn refused(cs: &str, tls: TlsOptions) -> (TlsErrorKind, String) {
    for _ in 0..4 {
        match connect(cs, tls.clone()).await {
            Ok(_) => panic!("connected to {cs}"),
            Err(e) => match TlsError::find(&e) {
                Some(found) => return (found.kind(), e.to_string()),
                None => eprintln!("no TLS verdict yet, again: {e}"),
            },
        }
    }
    panic!("no TLS error from {cs} in 4 connects")
}

async fn connect(cs: &str, tls: TlsOptions) -> zkrs_client::Result<zkrs_client::Client> {
    connect_within(cs, tls, CONNECT_TIMEOUT).await
}

/// Connects with `tls` where it must work: time enough for a fresh JVM's first handshake
/// on a busy machine.
async fn connected(cs: &str, tls: TlsOptions) -> zkrs_client::Client {
    let timeout = DEADLINE - Duration::from_secs(2);
    connect_within(cs, tls, timeout).await.unwrap()
}

async fn connect_within(
    cs: &str,
    tls: TlsOptions,
    timeout: Duration,
) -> zkrs_client::Result<zkrs_client::Client> {
    within(
        "connect",
        ClientBuilder::new(cs)
            .session_timeout(Duration::from_secs(4))
            .connect_timeout(timeout)
            .tls(tls)
            .connect(),
    )
    .await
    .inspect_err(|e| {
        assert_eq!(e.kind(), ErrorKind::ConnectionLoss, "{e}");
        // Shown with --nocapture: what a user reads.
        eprintln!("connect({cs}) failed: {e}");
    })
}

fn trusting() -> TlsOptions {
    TlsOptions::new().ca_file(certs().ca_pem())
}

fn with_client_cert() -> TlsOptions {
    trusting().client_cert(certs().client_cert_pem(), certs().client_key_pem())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_only_tls_carries_a_session() {
    let zk = server(ClientAuth::None);
    let client = try_connect(&secure(zk), trusting()).await.unwrap();
    client
        .create("/tls-plain", b"over tls", CreateMode::Persistent)
        .await
        .unwrap();
    // Large enough to take several TLS records each way.
    let big = vec![7u8; 300 * 1024];
    client.set_data("/tls-plain", &big, None).await.unwrap();
    let (data, _) = client.get_data("/tls-plain").await.unwrap();
    assert_eq!(&data[..], &big[..]);
    // Pipelined: many requests in flight on the one TLS connection.
    let reads: Vec<_> = (0..200)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.exists("/tls-plain").await })
        })
        .collect();
    for read in reads {
        assert!(read.await.unwrap().unwrap().is_some());
    }
    // A plain client on the ordinary port sees the same data.
    let plain = zkrs_client::Client::connect(&zk.connect_string())
        .await
        .unwrap();
    assert_eq!(
        plain.get_data("/tls-plain").await.unwrap().0.len(),
        big.len()
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_gives_the_session_its_x509_identity() {
    let zk = server(ClientAuth::Need);
    let client = try_connect(&secure(zk), with_client_cert()).await.unwrap();
    let me = certs().client_subject();
    let identities = client.who_am_i().await;
    if support::known_since(zk, &client, (3, 7), &identities).await {
        let identities = identities.unwrap();
        assert!(
            identities.contains(&("x509".to_string(), me.to_string())),
            "{identities:?}"
        );
    }
    // A node only this certificate may touch.
    let acl = [AclEntry::new(Perms::ALL, "x509", me)];
    let _ = client.delete("/tls-mine", None).await;
    client
        .create_with(
            "/tls-mine",
            b"secret",
            &CreateOptions::new(CreateMode::Persistent).acl(&acl),
        )
        .await
        .unwrap();
    assert_eq!(
        &client.get_data("/tls-mine").await.unwrap().0[..],
        b"secret"
    );
    // A plain session on the ordinary port has no x509 identity: refused.
    let plain = zkrs_client::Client::connect(&zk.connect_string())
        .await
        .unwrap();
    let refused = plain.get_data("/tls-mine").await.unwrap_err();
    assert_eq!(refused.code(), Some(ErrorCode::NoAuth), "{refused}");
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_signed_by_an_unknown_ca_is_refused_naming_it() {
    let zk = server(ClientAuth::None);
    let tls = TlsOptions::new().ca_file(certs().other_ca_pem());
    let (kind, err) = refused(&secure(zk), tls).await;
    assert_eq!(kind, TlsErrorKind::ServerCertificateUnknownIssuer, "{err}");
    assert!(err.contains("UnknownIssuer"), "{err}");
    assert!(err.contains("TLS with 127.0.0.1 failed"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_name_checked_is_the_host_or_the_pinned_one() {
    let zk = server(ClientAuth::None);
    let port = zk.secure_port().unwrap();
    // The certificate names localhost, 127.0.0.1 and zookeeper.test.
    let by_name = try_connect(&format!("localhost:{port}"), trusting())
        .await
        .unwrap();
    by_name.close().await.unwrap();
    let pinned = try_connect(&secure(zk), trusting().server_name("zookeeper.test"))
        .await
        .unwrap();
    pinned.close().await.unwrap();
    let (kind, err) = refused(&secure(zk), trusting().server_name("wrong.example")).await;
    assert_eq!(kind, TlsErrorKind::ServerCertificateWrongName, "{err}");
    assert!(
        err.contains("NotValidForName") || err.contains("not valid for name"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_client_certificate_that_is_missing_or_untrusted_is_an_error() {
    let zk = server(ClientAuth::Need);
    let (kind, err) = refused(&secure(zk), trusting()).await;
    assert_eq!(kind, TlsErrorKind::ClientCertificateRefused, "{err}");
    assert!(err.contains("alert"), "no certificate: {err}");
    let untrusted = trusting().client_cert(
        certs().untrusted_client_cert_pem(),
        certs().untrusted_client_key_pem(),
    );
    let (kind, err) = refused(&secure(zk), untrusted).await;
    assert_eq!(kind, TlsErrorKind::ClientCertificateRefused, "{err}");
    assert!(err.contains("alert"), "untrusted certificate: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_server_certificate_is_refused_naming_it() {
    let zk = TestingServer::start_with(ServerOptions::new().tls_expired(certs(), ClientAuth::None))
        .expect("ZooKeeper with TLS");
    let (kind, err) = refused(&secure(&zk), trusting()).await;
    assert_eq!(kind, TlsErrorKind::ServerCertificateExpired, "{err}");
    assert!(err.to_lowercase().contains("expired"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_server_certificate_is_refused_with_the_crl_naming_it() {
    let zk = TestingServer::start_with(ServerOptions::new().tls_revoked(certs(), ClientAuth::None))
        .expect("ZooKeeper with TLS");
    // Without the CRL nothing says it is revoked.
    let unaware = connected(&secure(&zk), trusting()).await;
    unaware.close().await.unwrap();
    let with_crl = || trusting().crl_file(certs().crl_pem());
    let (kind, err) = refused(&secure(&zk), with_crl()).await;
    assert_eq!(kind, TlsErrorKind::ServerCertificateRevoked, "{err}");
    assert!(err.contains("Revoked"), "{err}");
    // A certificate the CRL does not list passes the same check.
    let fine = connected(&secure(server(ClientAuth::None)), with_crl()).await;
    fine.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_to_a_plain_port_fails_with_a_clear_error() {
    let zk = server(ClientAuth::None);
    let err = try_connect(&zk.connect_string(), trusting())
        .await
        .unwrap_err();
    assert!(err.contains("TLS"), "{err}");
}

#[tokio::test]
async fn unreadable_files_fail_at_once() {
    let started = std::time::Instant::now();
    let err = ClientBuilder::new("127.0.0.1:1")
        .tls(TlsOptions::new().ca_file("/no/such/ca.pem"))
        .connect()
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot read the CA file /no/such/ca.pem"),
        "{err}"
    );
    let err = ClientBuilder::new("127.0.0.1:1")
        .tls(trusting().client_cert(certs().client_cert_pem(), "/no/such/key.pem"))
        .connect()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("/no/such/key.pem"), "{err}");
    let err = ClientBuilder::new("127.0.0.1:1")
        .tls(trusting().crl_file(certs().ca_pem()))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("no CRL"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(1));
}

/// A 3-node ensemble serving TLS (no client certificate asked).
fn tls_ensemble() -> zkrs_testkit::TestingCluster {
    tokio::task::block_in_place(|| {
        let options = ServerOptions::new().tls(certs(), ClientAuth::None);
        zkrs_testkit::TestingCluster::start_with(3, options)
    })
    .expect("a TLS ensemble")
}

/// A session over TLS to `hosts` (a 10 s session timeout: members are killed under it).
async fn session_over_tls(hosts: impl Into<String>) -> zkrs_client::Client {
    let builder = ClientBuilder::new(hosts)
        .session_timeout(Duration::from_secs(10))
        .tls(trusting());
    within("connect", builder.connect()).await.unwrap()
}

/// TLS applies to every host of the connect string: a session over TLS to a 3-node
/// ensemble survives the loss of the member it uses, reconnecting to another over TLS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_session_fails_over_to_another_member() {
    let cluster = tls_ensemble();
    // Two members in the connect string: whichever the client uses, killing both in turn
    // makes it move at least once.
    let members = format!(
        "{},{}",
        cluster.member_secure_connect_string(0).unwrap(),
        cluster.member_secure_connect_string(1).unwrap()
    );
    let client = session_over_tls(&members).await;
    let session = client.session_id();
    client
        .create("/tls-failover", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    let mut states = client.state_changes();
    for member in [0, 1] {
        tokio::task::block_in_place(|| cluster.kill(member)).unwrap();
        // Usable again (on the other member, over TLS), with the same session.
        within("a read after the kill", async {
            loop {
                match client.exists("/tls-failover").await {
                    Ok(found) => return assert!(found.is_some(), "the ephemeral is there"),
                    Err(e) => assert!(e.is_retryable(), "{e}"),
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await;
        assert_eq!(client.session_id(), session);
        tokio::task::block_in_place(|| {
            cluster.restart(member)?;
            cluster.wait_serving(member, DEADLINE)
        })
        .unwrap();
    }
    let mut reconnected = 0;
    while let Some(change) = states.try_next() {
        if change.state == zkrs_client::ConnectionState::Reconnected {
            reconnected += 1;
        }
    }
    assert!(reconnected >= 1, "the client never moved to another member");
    client.close().await.unwrap();
}

/// Copies the CA, the client certificate and its key of `set` to `dir`, over what is
/// there, as a certificate manager (cert-manager, Vault's agent) rotates them.
fn install_client_files(dir: &std::path::Path, set: &TlsCertificates) {
    for (from, to) in [
        (set.ca_pem(), "ca.pem"),
        (set.client_cert_pem(), "client.pem"),
        (set.client_key_pem(), "client.key"),
    ] {
        std::fs::copy(from, dir.join(to)).unwrap();
    }
}

/// A long-lived client whose files are rotated (a new CA, a new client certificate and
/// key) while it runs: when the server comes back with the new CA, the client's next
/// connection reads the files again and gets in, without a restart of the client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotated_files_are_used_at_the_next_connection() {
    let (first, second) =
        tokio::task::block_in_place(|| (TlsCertificates::generate(), TlsCertificates::generate()));
    let (first, second) = (first.unwrap(), second.unwrap());
    let mut zk = tokio::task::block_in_place(|| {
        TestingServer::start_with(ServerOptions::new().tls(&first, ClientAuth::Need))
    })
    .expect("ZooKeeper with TLS");
    let dir = zkrs_testkit::TempDir::new().unwrap();
    install_client_files(dir.path(), &first);
    let tls = TlsOptions::new()
        .ca_file(dir.path().join("ca.pem"))
        .client_cert(dir.path().join("client.pem"), dir.path().join("client.key"));
    let client = connected(&secure(&zk), tls).await;
    client
        .create("/tls-rotated", b"", CreateMode::Persistent)
        .await
        .unwrap();

    // The rotation: new files for the client, then the server restarts trusting (and
    // presenting a certificate of) the new CA only. The old files work nowhere now.
    install_client_files(dir.path(), &second);
    tokio::task::block_in_place(|| zk.restart_with_tls(&second)).unwrap();

    // Usable again (the same session if the restart was quick, else a new one).
    within("a read after the rotation", async {
        loop {
            if let Ok(found) = client.exists("/tls-rotated").await {
                return assert!(found.is_some());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    let identities = client.who_am_i().await;
    if support::known_since(&zk, &client, (3, 7), &identities).await {
        let identities = identities.unwrap();
        assert!(
            identities.contains(&("x509".to_string(), second.client_subject().to_string())),
            "{identities:?}"
        );
    }
    client.close().await.unwrap();
}

/// A move to another member over TLS (`update_hosts` leaving out the member in use): the
/// new connection's TLS handshake is made while the session goes on over the old one, then
/// the session moves without being suspended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tls_session_moves_to_another_member_without_suspension() {
    let cluster = tls_ensemble();
    let secure = |i: usize| cluster.member_secure_connect_string(i).unwrap();
    let client = session_over_tls(secure(0)).await;
    let session = client.session_id();
    client
        .create("/tls-move", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    let mut states = client.state_changes();
    let moved = within(
        "update_hosts",
        client.update_hosts(&format!("{},{}", secure(1), secure(2))),
    )
    .await
    .unwrap();
    assert!(moved, "member 1 left the list");
    within("the move", async {
        while client.metrics().session_moves == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // Member 1 is gone for the client: a read is answered over TLS by another member.
    tokio::task::block_in_place(|| cluster.kill(0)).unwrap();
    let found = within("a read after the move", client.exists("/tls-move"))
        .await
        .unwrap();
    assert!(found.is_some_and(|s| s.ephemeral_owner == session));
    assert_eq!(client.session_id(), session);
    assert!(
        states.try_next().is_none(),
        "a move changes no state: {:?}",
        states.try_next()
    );
    client.close().await.unwrap();
}
