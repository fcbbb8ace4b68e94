//! Mutual TLS to ZooKeeper's `secureClientPort`: the client trusts the ensemble's CA, shows
//! its own certificate, and the server knows the session by the certificate's subject (the
//! `x509` scheme), so a node can be locked to that certificate with an ACL.
//!
//! Starts a local ZooKeeper with TLS (certificates made by the test kit with `openssl` in a
//! temporary folder). Run: `cargo run --example tls_client --features tls`.
//!
//! Against your own ensemble, the same builder with your files:
//! `TlsOptions::new().ca_file("ca.pem").client_cert("client.pem", "client.key")`, and
//! `.server_name("zk.internal")` when the connect string has IPs the certificates don't name,
//! `.crl_file("ca-crl.pem")` to refuse revoked server certificates. The files are read again
//! when they change, so certificates rotated while the client runs are used from its next
//! connection on.

use zkrs::{AclEntry, ClientBuilder, CreateMode, CreateOptions, ErrorCode, Perms, TlsOptions};
use zkrs_testkit::{ClientAuth, ServerOptions, TestingServer, TlsCertificates};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let certs = TlsCertificates::generate()?;
    // The server requires a client certificate signed by its CA (`ssl.clientAuth=need`).
    let server = TestingServer::start_with(ServerOptions::new().tls(&certs, ClientAuth::Need))?;
    let secure = server.secure_connect_string().ok_or("no secure port")?;
    println!(
        "started ZooKeeper with TLS at {secure} (plain port {})",
        server.port()
    );

    let tls = TlsOptions::new()
        .ca_file(certs.ca_pem())
        .client_cert(certs.client_cert_pem(), certs.client_key_pem());
    let client = ClientBuilder::new(&secure).tls(tls).connect().await?;
    let me = client.who_am_i().await?;
    println!("connected over TLS; the server knows this session as {me:?}");

    // A node only this certificate may read or change.
    let subject = certs.client_subject();
    let acl = [AclEntry::new(Perms::ALL, "x509", subject)];
    client
        .create_with(
            "/tls-example",
            b"for the certificate's eyes only",
            &CreateOptions::new(CreateMode::Ephemeral).acl(&acl),
        )
        .await?;
    let (data, _) = client.get_data("/tls-example").await?;
    println!("read back: {}", String::from_utf8_lossy(&data));

    // A plain session (on the ordinary port) has no x509 identity: refused.
    let plain = zkrs::Client::connect(&server.connect_string()).await?;
    match plain.get_data("/tls-example").await {
        Err(e) if e.code() == Some(ErrorCode::NoAuth) => {
            println!("a plain session is refused: {e}")
        }
        other => return Err(format!("a plain session should be refused, got {other:?}").into()),
    }

    // Without a client certificate the handshake itself is refused, and the error says so.
    let refused = ClientBuilder::new(&secure)
        .connect_timeout(std::time::Duration::from_secs(2))
        .tls(TlsOptions::new().ca_file(certs.ca_pem()))
        .connect()
        .await;
    match refused {
        Err(e) => println!("without a client certificate: {e}"),
        Ok(_) => return Err("a session without a client certificate should be refused".into()),
    }
    client.close().await?;
    Ok(())
}
