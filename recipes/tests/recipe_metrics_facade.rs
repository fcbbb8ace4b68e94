//! Feature `metrics`: the recipes' figures reach the `metrics` facade (a debugging recorder
//! standing in for an exporter) under the documented names, as they are counted.
#![cfg(feature = "metrics")]

use std::collections::HashMap;

use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use zkrs_client::Client;
use zkrs_recipes::lock::InterProcessMutex;
use zkrs_testkit::TestingServer;

mod support;
use support::*;

#[tokio::test]
async fn the_recipe_figures_reach_the_facade_under_their_names() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder.install().unwrap();

    let zk = TestingServer::start().unwrap();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    let mutex = InterProcessMutex::builder(&client, "/m").build().unwrap();
    for _ in 0..2 {
        mutex.acquire().await.unwrap().release().await.unwrap();
    }
    let latch = leading_latch(&client, "/latch").await;
    latch.close().await.unwrap();

    // Counted when they happen: no wait needed.
    let mut seen: HashMap<String, String> = HashMap::new();
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let key = key.key();
        let labels: Vec<String> = key
            .labels()
            .map(|l| format!("{}={}", l.key(), l.value()))
            .collect();
        let value = match value {
            DebugValue::Counter(n) => n.to_string(),
            DebugValue::Gauge(g) => g.into_inner().to_string(),
            DebugValue::Histogram(h) => format!("{} samples", h.len()),
        };
        seen.insert(format!("{}{{{}}}", key.name(), labels.join(",")), value);
    }
    let wanted = [
        ("zookeeper_recipe_lock_acquired_total{kind=mutex}", "2"),
        ("zookeeper_recipe_lock_released_total{kind=mutex}", "2"),
        (
            "zookeeper_recipe_lock_wait_seconds{kind=mutex}",
            "2 samples",
        ),
        (
            "zookeeper_recipe_lock_hold_seconds{kind=mutex}",
            "2 samples",
        ),
        ("zookeeper_recipe_leadership_terms_total{}", "1"),
        ("zookeeper_recipe_leadership_term_seconds{}", "1 samples"),
        ("zookeeper_recipe_leaders{}", "0"),
    ];
    for (name, value) in wanted {
        assert_eq!(
            seen.get(name).map(String::as_str),
            Some(value),
            "{name} in {seen:#?}"
        );
    }
}
