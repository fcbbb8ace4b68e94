//! SASL DIGEST-MD5: the server knows users from its JAAS file (`user_<name>="<password>"`),
//! the client proves it knows the password on every connection, and the session gets the
//! identity `sasl:<name>`, usable in ACLs. A wrong password ends the client at once with
//! `AuthFailed` (no retry can fix it).
//!
//! Starts a local ZooKeeper whose JAAS file holds one user. Run:
//! `cargo run --example sasl_digest --features sasl-digest`.

use std::time::Duration;

use zkrs::{sasl, AclEntry, ClientBuilder, CreateMode, CreateOptions, ErrorCode, ErrorKind, Perms};
use zkrs_testkit::{ServerOptions, TestingServer};

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    // The server's JAAS file gets `user_reporter="s3cret"` (the test kit writes it).
    let server =
        TestingServer::start_with(ServerOptions::new().sasl_digest_user("reporter", "s3cret"))?;
    println!("started ZooKeeper with SASL at {}", server.connect_string());

    // In a service, read the password from a file or a secret store, never argv.
    let client = ClientBuilder::new(server.connect_string())
        .sasl(sasl::digest_md5("reporter", "s3cret"))
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
    let anonymous = zkrs::Client::connect(&server.connect_string()).await?;
    match anonymous.get_data("/reports").await {
        Err(e) if e.code() == Some(ErrorCode::NoAuth) => {
            println!("an anonymous session is refused: {e}")
        }
        other => return Err(format!("expected NoAuth, got {other:?}").into()),
    }

    let wrong = ClientBuilder::new(server.connect_string())
        .connect_timeout(Duration::from_secs(5))
        .sasl(sasl::digest_md5("reporter", "guess"))
        .connect()
        .await;
    match wrong {
        Err(e) if e.kind() == ErrorKind::AuthFailed => println!("a wrong password: {e}"),
        other => return Err(format!("expected AuthFailed, got {other:?}").into()),
    }
    client.close().await?;
    Ok(())
}
