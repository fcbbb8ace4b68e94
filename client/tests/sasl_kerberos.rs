//! SASL GSSAPI (Kerberos) against a real MIT KDC and a ZooKeeper server that logs in with its
//! keytab, both started by the test kit: a keytab gives the session its principal and `sasl`
//! ACLs work; a wrong keytab and an expired ticket end the client with `AuthFailed` naming
//! the cause; the ticket cache works; every new connection authenticates again; the server
//! principal is `zookeeper/<host>` by default, with the host as the connect string names it.
#![cfg(feature = "sasl-gssapi")]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use zkrs_client::sasl::{gssapi, Kerberos};
use zkrs_client::{
    AclEntry, Client, ClientBuilder, CreateMode, CreateOptions, ErrorCode, ErrorKind, Perms,
};
mod support;

use zkrs_testkit::{FaultyProxy, KerberosRealm, ServerOptions, TestingServer};

const DEADLINE: Duration = Duration::from_secs(20);

/// The realm, its principals' keytabs, and a server of the realm (`zookeeper/localhost`),
/// shared by the tests of this file.
struct Kdc {
    realm: KerberosRealm,
    alice: PathBuf,
    bob: PathBuf,
    server: TestingServer,
}

fn kdc() -> &'static Kdc {
    static KDC: OnceLock<Kdc> = OnceLock::new();
    KDC.get_or_init(|| {
        let realm = KerberosRealm::start().expect("a KDC (scripts/install-zookeeper.sh)");
        // The client library reads the realm's settings from here (the process's only realm).
        std::env::set_var("KRB5_CONFIG", realm.krb5_conf());
        let service = realm
            .add_principal_with_keytab("zookeeper/localhost")
            .unwrap();
        let alice = realm.add_principal_with_keytab("alice").unwrap();
        let bob = realm.add_principal_with_keytab("bob").unwrap();
        let server = TestingServer::start_with(ServerOptions::new().kerberos(
            &realm,
            &service,
            "zookeeper/localhost",
        ))
        .expect("a Kerberos ZooKeeper server");
        Kdc {
            realm,
            alice,
            bob,
            server,
        }
    })
}

/// The server as `localhost:<port>`: its principal is `zookeeper/localhost`.
fn localhost(kdc: &Kdc) -> String {
    format!("localhost:{}", kdc.server.address().port())
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

fn builder(connect: &str, kerberos: Kerberos) -> ClientBuilder {
    ClientBuilder::new(connect)
        .session_timeout(Duration::from_secs(4))
        .connect_timeout(Duration::from_secs(4))
        .sasl(gssapi(kerberos))
}

/// The session's identities; `None` on a server before 3.7, which has no whoAmI (the error
/// is checked to say so; each test's ACL checks still tell who the session is).
async fn identity(client: &Client) -> Option<Vec<(String, String)>> {
    let ids = client.who_am_i().await;
    support::known_since(&kdc().server, client, (3, 7), &ids)
        .await
        .then(|| ids.unwrap())
}

/// Whether the session is authenticated as `name` (or the server cannot say: see
/// [`identity`]).
async fn is_principal(client: &Client, name: &str) -> bool {
    let sasl = ("sasl".to_string(), name.to_string());
    identity(client).await.is_none_or(|ids| ids.contains(&sasl))
}

/// A session on `connect` authenticated by `kerberos`, within the deadline (`what`).
async fn connect(what: &str, connect: &str, kerberos: Kerberos) -> zkrs_client::Result<Client> {
    within(what, builder(connect, kerberos).connect()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keytab_gives_the_session_its_principal_and_sasl_acls_hold() {
    let kdc = kdc();
    let alice = connect(
        "alice connects",
        &localhost(kdc),
        Kerberos::from_keytab("alice@ZKR.TEST", &kdc.alice),
    )
    .await
    .unwrap();
    assert!(is_principal(&alice, "alice").await);
    let acl = [AclEntry::new(Perms::ALL, "sasl", "alice")];
    alice
        .create_with(
            "/krb-alice",
            b"hers",
            &CreateOptions::new(CreateMode::Persistent).acl(&acl),
        )
        .await
        .unwrap();
    assert_eq!(&alice.get_data("/krb-alice").await.unwrap().0[..], b"hers");
    // Bob, authenticated as himself, is refused.
    let bob = connect(
        "bob connects",
        &localhost(kdc),
        Kerberos::from_keytab("bob", &kdc.bob),
    )
    .await
    .unwrap();
    assert!(is_principal(&bob, "bob").await);
    let refused = bob.get_data("/krb-alice").await.unwrap_err();
    assert_eq!(refused.code(), Some(ErrorCode::NoAuth), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_keytab_ends_the_client_with_auth_failed_naming_it() {
    let kdc = kdc();
    let e = connect(
        "connect",
        &localhost(kdc),
        Kerberos::from_keytab("alice@ZKR.TEST", &kdc.bob),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AuthFailed, "{e}");
    let text = support::sasl_refusal(&e);
    assert!(text.contains("alice@ZKR.TEST"), "{text}");
    assert!(text.contains(&kdc.bob.display().to_string()), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_principal_is_zookeeper_at_the_host_named_or_the_one_given() {
    let kdc = kdc();
    // Through 127.0.0.1 the default is zookeeper/127.0.0.1, which the KDC does not know.
    let by_ip = kdc.server.connect_string();
    let e = connect(
        "connect by IP",
        &by_ip,
        Kerberos::from_keytab("alice", &kdc.alice),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AuthFailed, "{e}");
    assert!(support::sasl_refusal(&e).contains("not found"), "{e:?}");
    // Named explicitly, the same address works.
    let alice = connect(
        "connect by IP, principal given",
        &by_ip,
        Kerberos::from_keytab("alice", &kdc.alice).service_principal("zookeeper/localhost"),
    )
    .await
    .unwrap();
    assert!(is_principal(&alice, "alice").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_new_connection_authenticates_again() {
    let kdc = kdc();
    let proxy = FaultyProxy::start(kdc.server.address()).unwrap();
    let alice = connect(
        "connect",
        &proxy.connect_string(),
        Kerberos::from_keytab("alice", &kdc.alice).service_principal("zookeeper/localhost"),
    )
    .await
    .unwrap();
    support::cut_and_reconnect(&proxy, &alice, DEADLINE).await;
    assert!(
        is_principal(&alice, "alice").await,
        "the new connection is authenticated too"
    );
}

/// Ticket caches named explicitly (`KRB5CCNAME` is the process's, and MIT krb5 keeps the
/// default cache's name per thread once it has read it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticket_cache_works_and_an_expired_ticket_is_refused_naming_it() {
    let kdc = kdc();
    let dir = kdc.realm.dir();
    let good = dir.join("alice.ccache");
    kdc.realm.kinit("alice", &kdc.alice, &good, None).unwrap();
    let alice = connect(
        "connect from the cache",
        &localhost(kdc),
        Kerberos::from_ticket_cache_at(format!("FILE:{}", good.display())),
    )
    .await
    .unwrap();
    assert!(is_principal(&alice, "alice").await);

    let short = dir.join("bob-short.ccache");
    kdc.realm
        .kinit("bob", &kdc.bob, &short, Some(Duration::from_secs(1)))
        .unwrap();
    let deadline = Instant::now() + DEADLINE;
    while kdc.realm.has_valid_ticket(&short).unwrap() {
        assert!(Instant::now() < deadline, "bob's 1 s ticket never expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The KDC still honours a ticket for its clock skew (the realm's is 1 s) after its
    // end, and the server may refuse the cached service ticket before our side sees it
    // expired (it does not say why): connect until our side refuses it, within the deadline.
    let cache = format!("FILE:{}", short.display());
    let e = within("an expired ticket refused", async {
        loop {
            match builder(&localhost(kdc), Kerberos::from_ticket_cache_at(&cache))
                .connect()
                .await
            {
                Ok(client) => {
                    let _ = client.close().await;
                }
                Err(e) if support::sasl_refusal(&e).starts_with("the server refused") => {}
                Err(e) => return e,
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert_eq!(e.kind(), ErrorKind::AuthFailed, "{e}");
    assert!(support::sasl_refusal(&e).contains("expired"), "{e:?}");
}
