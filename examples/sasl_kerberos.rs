//! Kerberos (SASL GSSAPI): the client proves its principal with a keytab (or the ticket cache)
//! to a ZooKeeper server that logs in with its own keytab as `zookeeper/<host>`; the session
//! gets the identity `sasl:<principal>`, usable in ACLs. A keytab that does not hold the
//! principal's keys ends the client at once with `AuthFailed`, naming the cause.
//!
//! Starts a throw-away MIT KDC (realm ZKR.TEST) and a Kerberos ZooKeeper. Run:
//! `cargo run --example sasl_kerberos --features sasl-gssapi` (MIT krb5's KDC and libkrb5-dev:
//! `scripts/install-zookeeper.sh`).

use std::time::Duration;

use zkrs::sasl::{gssapi, Kerberos};
use zkrs::{AclEntry, ClientBuilder, CreateMode, CreateOptions, ErrorCode, ErrorKind, Perms};
use zkrs_testkit::{KerberosRealm, ServerOptions, TestingServer};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let realm = KerberosRealm::start()?;
    // In a real deployment /etc/krb5.conf names the realm; here the example's own.
    std::env::set_var("KRB5_CONFIG", realm.krb5_conf());
    let service = realm.add_principal_with_keytab("zookeeper/localhost")?;
    let reporter = realm.add_principal_with_keytab("reporter")?;
    let other = realm.add_principal_with_keytab("other")?;
    let server = TestingServer::start_with(ServerOptions::new().kerberos(
        &realm,
        &service,
        "zookeeper/localhost",
    ))?;
    // As `localhost`: the client asks for a ticket to `zookeeper/localhost`.
    let connect = format!("localhost:{}", server.address().port());
    println!(
        "started a KDC for {} and ZooKeeper at {connect}",
        realm.realm()
    );

    let client = ClientBuilder::new(&connect)
        .sasl(gssapi(Kerberos::from_keytab(
            "reporter@ZKR.TEST",
            &reporter,
        )))
        .connect()
        .await?;
    println!("authenticated as {:?}", client.who_am_i().await?);

    let acl = [AclEntry::new(Perms::ALL, "sasl", "reporter")];
    client
        .create_with(
            "/reports",
            b"for reporter only",
            &CreateOptions::new(CreateMode::Ephemeral).acl(&acl),
        )
        .await?;
    let anonymous = zkrs::Client::connect(&connect).await?;
    match anonymous.get_data("/reports").await {
        Err(e) if e.code() == Some(ErrorCode::NoAuth) => {
            println!("an anonymous session is refused: {e}")
        }
        other => return Err(format!("expected NoAuth, got {other:?}").into()),
    }

    let wrong = ClientBuilder::new(&connect)
        .connect_timeout(Duration::from_secs(5))
        .sasl(gssapi(Kerberos::from_keytab("reporter@ZKR.TEST", &other)))
        .connect()
        .await;
    match wrong {
        Err(e) if e.kind() == ErrorKind::AuthFailed => println!("another principal's keytab: {e}"),
        other => return Err(format!("expected AuthFailed, got {other:?}").into()),
    }
    client.close().await?;
    Ok(())
}
