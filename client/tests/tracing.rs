//! With the `tracing` feature, the client tells operators what happens to its connection:
//! a session established (host, session id, negotiated timeout), a connection lost with its
//! cause, a session lost. Run by `scripts/test.sh` with `--features tracing` (this file is
//! empty without it).
#![cfg(feature = "tracing")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::block_in_place;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use zkrs_client::{Client, ConnectionState};
use zkrs_testkit::TestingServer;

/// Keeps every event as one line: `LEVEL message field=value ...`.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<String>>>);

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0.push_str(&format!(" {value:?}"));
        } else {
            self.0.push_str(&format!(" {}={value:?}", field.name()));
        }
    }
}

impl Subscriber for Lines {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "zkrs"
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut line = Line(event.metadata().level().to_string());
        event.record(&mut line);
        self.0.lock().unwrap().push(line.0);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

impl Lines {
    fn find(&self, needle: &str) -> Option<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .find(|l| l.contains(needle))
            .cloned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_events_reach_the_subscriber() {
    let lines = Lines::default();
    tracing::subscriber::set_global_default(lines.clone()).unwrap();
    let zk = TestingServer::start().unwrap();
    let client = Client::builder(&zk.connect_string())
        .session_timeout(Duration::from_secs(2))
        .connect()
        .await
        .unwrap();
    let session = format!("{:#x}", client.session_id());
    let established = lines.find("session established").expect("an event");
    assert!(established.starts_with("INFO"), "{established}");
    assert!(established.contains(&session), "{established}");
    assert!(
        established.contains(&format!("127.0.0.1:{}", zk.port())),
        "{established}"
    );

    // The server stops: the connection is lost (with its cause), then the session.
    let mut states = client.state_changes();
    block_in_place(|| zk.pause()).unwrap();
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(c) = states.next().await {
            if c.state == ConnectionState::Lost {
                return;
            }
        }
    })
    .await
    .expect("Lost");
    let suspended = lines
        .find("connection lost")
        .expect("a connection-lost event");
    assert!(suspended.starts_with("WARN"), "{suspended}");
    let lost = lines.find("session lost").expect("a session-lost event");
    assert!(lost.contains(&session), "{lost}");
    block_in_place(|| zk.resume()).unwrap();
}
