//! No secret reaches the logs: a client with a digest identity, SASL DIGEST-MD5 and a
//! resumed session, run against a real server under a subscriber that takes every event
//! and span of every target at TRACE, never logs a password (nor a wrong one). Run by
//! `scripts/test.sh` with every feature (this file is empty without `tracing` and
//! `sasl-digest`).
#![cfg(all(feature = "tracing", feature = "sasl-digest"))]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use zkrs_client::{sasl, Client, CreateMode};
use zkrs_testkit::{ServerOptions, TestingServer};

const SASL_PASSWORD: &str = "hunter2-zkrs";
const DIGEST_PASSWORD: &str = "digest-hunter2-zkrs";
const WRONG_PASSWORD: &str = "wrong-hunter3-zkrs";

/// Every event and span, as text: `LEVEL target field=value ...`.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<String>>>);

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl Subscriber for Captured {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let mut line = Line(format!("SPAN {}", attributes.metadata().name()));
        attributes.record(&mut line);
        self.0.lock().unwrap().push(line.0);
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, values: &Record<'_>) {
        let mut line = Line("RECORD".into());
        values.record(&mut line);
        self.0.lock().unwrap().push(line.0);
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        let mut line = Line(format!("{} {}", metadata.level(), metadata.target()));
        event.record(&mut line);
        self.0.lock().unwrap().push(line.0);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_password_reaches_the_trace() {
    let captured = Captured::default();
    tracing::subscriber::set_global_default(captured.clone()).unwrap();
    let zk = TestingServer::start_with(ServerOptions::new().sasl_digest_user("ops", SASL_PASSWORD))
        .unwrap();
    let builder = Client::builder(&zk.connect_string())
        .session_timeout(Duration::from_secs(4))
        .auth("digest", format!("user:{DIGEST_PASSWORD}"))
        .sasl(sasl::digest_md5("ops", SASL_PASSWORD));
    tracing::info!(?builder, "a service logs its client's settings");
    let client = within("connect", builder.connect()).await.unwrap();
    client
        .add_auth("digest", format!("other:{DIGEST_PASSWORD}"))
        .await
        .unwrap();
    client
        .create("/traced", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    tracing::info!(?client, password = ?client.session_password(), "the session");

    // Another client resumes the session, which then ends.
    let (id, session_password) = (client.session_id(), client.session_password());
    within("detach", client.detach()).await;
    let resumed = within(
        "resume",
        Client::builder(&zk.connect_string())
            .resume(id, session_password.clone())
            .sasl(sasl::digest_md5("ops", SASL_PASSWORD))
            .connect(),
    )
    .await
    .unwrap();
    within("close", resumed.close()).await.unwrap();

    // A refusal is logged too, without the password tried.
    let refused = within(
        "refusal",
        Client::builder(&zk.connect_string())
            .sasl(sasl::digest_md5("ops", WRONG_PASSWORD))
            .connect(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        refused.kind(),
        zkrs_client::ErrorKind::AuthFailed,
        "{refused}"
    );

    let lines = captured.0.lock().unwrap().clone();
    let text = lines.join("\n");
    assert!(
        text.contains("session established") && text.contains("authentication failed"),
        "the subscriber saw the client's events:\n{text}"
    );
    assert!(text.contains("Secret(***)"), "{text}");
    for password in [SASL_PASSWORD, DIGEST_PASSWORD, WRONG_PASSWORD] {
        assert!(!text.contains(password), "{password} in the trace:\n{text}");
    }
    // The session password, as `{:?}` of its bytes would print them.
    let session_bytes = format!("{:?}", session_password.expose());
    let session_bytes = session_bytes.trim_matches(|c| c == '[' || c == ']');
    assert!(
        !text.contains(session_bytes),
        "the session password in the trace:\n{text}"
    );
}
