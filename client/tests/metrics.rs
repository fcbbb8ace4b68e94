//! `Client::metrics()` counts what the client did: requests, errors by operation and by
//! code, latencies, bytes, connections, watches and their events.

use std::time::Duration;

use zkrs_client::{Client, CreateMode, ErrorCode, OpCode};
use zkrs_testkit::TestingServer;

mod support;

const DEADLINE: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    support::within_deadline(DEADLINE, what, f).await
}

#[tokio::test]
async fn the_snapshot_counts_what_the_client_did() {
    let zk = TestingServer::start().unwrap();
    let client = within("connect", Client::connect(&zk.connect_string()))
        .await
        .unwrap();
    client
        .create("/m", b"x", CreateMode::Persistent)
        .await
        .unwrap();
    for _ in 0..100 {
        client.get_data("/m").await.unwrap();
    }
    for _ in 0..7 {
        let e = client.get_data("/missing").await.unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::NoNode));
    }
    // Three one-shot watches, each fired by a write.
    for i in 0..3 {
        let (_, _, watch) = client.get_data_and_watch("/m").await.unwrap();
        client.set_data("/m", &[i], None).await.unwrap();
        within("the watch", watch).await;
    }

    let m = client.metrics();
    let op = |op: OpCode| {
        m.operations
            .iter()
            .find(|o| o.op == op)
            .unwrap_or_else(|| panic!("no {op} in {m:?}"))
    };
    let get_data = op(OpCode::GetData);
    assert_eq!((get_data.requests, get_data.errors), (110, 7));
    assert_eq!(get_data.latency.total(), 110);
    assert!(get_data.latency.quantile(0.5).is_some());
    assert_eq!(
        (op(OpCode::SetData).requests, op(OpCode::SetData).errors),
        (3, 0)
    );
    assert_eq!(op(OpCode::Create).requests, 1);
    assert_eq!(m.errors, [(ErrorCode::NoNode, 7)]);
    assert_eq!(m.watches_registered, 3);
    assert_eq!(m.watch_events, 3);
    assert_eq!(m.connections, 1);
    assert_eq!(m.session_expiries, 0);
    assert_eq!(m.in_flight, Some(0));
    assert_eq!(m.waiting, 0);
    // 114 requests of at least 16 bytes each way, plus the handshake.
    assert!(
        m.bytes_sent > 114 * 16 && m.bytes_received > 114 * 16,
        "{m:?}"
    );
}
