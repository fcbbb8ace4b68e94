//! Feature `metrics`: the client's figures reach the `metrics` facade (here a debugging
//! recorder standing in for a Prometheus or OpenTelemetry exporter) under the documented
//! names, with the client's label.
#![cfg(feature = "metrics")]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use zkrs_client::{Client, CreateMode};
use zkrs_testkit::TestingServer;

/// Counters and gauges by name and sorted labels (`name{k=v,...}`).
fn figures(snapshotter: &Snapshotter) -> HashMap<String, f64> {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .filter_map(|(key, _, _, value)| {
            let key = key.key();
            let mut labels: Vec<String> = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            labels.sort();
            let value = match value {
                DebugValue::Counter(n) => n as f64,
                DebugValue::Gauge(g) => g.into_inner(),
                DebugValue::Histogram(_) => return None,
            };
            Some((format!("{}{{{}}}", key.name(), labels.join(",")), value))
        })
        .collect()
}

#[tokio::test]
async fn the_figures_reach_the_facade_under_their_names() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder.install().unwrap();

    let zk = TestingServer::start().unwrap();
    let client = Client::builder(&zk.connect_string())
        .metrics_label("orders")
        .connect()
        .await
        .unwrap();
    client
        .create("/f", b"x", CreateMode::Persistent)
        .await
        .unwrap();
    for _ in 0..5 {
        client.get_data("/f").await.unwrap();
    }
    for _ in 0..2 {
        client.get_data("/none").await.unwrap_err();
    }

    // Reported once a second: wait for this state to show, with a deadline.
    let wanted = [
        (
            "zookeeper_client_requests_total{client=orders,op=getData}",
            7.0,
        ),
        (
            "zookeeper_client_request_errors_total{client=orders,op=getData}",
            2.0,
        ),
        (
            "zookeeper_client_errors_total{client=orders,code=NoNode}",
            2.0,
        ),
        (
            "zookeeper_client_requests_total{client=orders,op=create}",
            1.0,
        ),
        ("zookeeper_client_connections_total{client=orders}", 1.0),
        (
            "zookeeper_client_request_duration_seconds_bucket{client=orders,le=+Inf,op=getData}",
            7.0,
        ),
        ("zookeeper_client_requests_in_flight{client=orders}", 0.0),
    ];
    let deadline = Instant::now() + Duration::from_secs(10);
    let seen = loop {
        let seen = figures(&snapshotter);
        if wanted.iter().all(|(k, v)| seen.get(*k) == Some(v)) {
            break seen;
        }
        assert!(
            Instant::now() < deadline,
            "not reported within 10 s: {seen:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(seen["zookeeper_client_sent_bytes_total{client=orders}"] > 0.0);
    assert!(seen["zookeeper_client_received_bytes_total{client=orders}"] > 0.0);
}
