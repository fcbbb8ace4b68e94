//! Counters, the double barrier and group membership against real Curator 5.4 peers
//! (`tests/java/CuratorQueuePeer.java`), both ways: a Curator SharedCount and ours on one node,
//! Curator's DistributedAtomicLong and ours incrementing one counter (with PromotedToLock on
//! both sides, through the same lock layout), a double barrier with Curator members among
//! ours, and one group with Curator and Rust members.

use std::collections::BTreeMap;
use std::time::Duration;

use zkr_client::Client;
use zkr_recipes::barrier::DistributedDoubleBarrier;
use zkr_recipes::counter::{DistributedAtomicLong, PromotedToLock, SharedCount, SharedValueEvent};
use zkr_recipes::node::GroupMember;
use zkr_recipes::RetryPolicy;
use zkr_testkit::TestingServer;

#[path = "../recipes/tests/support/curator_peer.rs"]
mod curator_peer;
use curator_peer::{hex, QueuePeer, TEST_JVM};

const DEADLINE: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: not done within {DEADLINE:?}"))
}

async fn connect(zk: &TestingServer) -> Client {
    within("connect", Client::connect(&zk.connect_string()))
        .await
        .unwrap()
}

fn forever() -> RetryPolicy {
    RetryPolicy::Forever {
        sleep: Duration::from_millis(2),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_count_with_curator_both_ways() {
    let zk = TestingServer::start().unwrap();
    let mut java = QueuePeer::start("curator", &zk.connect_string(), TEST_JVM).await;
    let client = connect(&zk).await;
    // Curator creates it with its seed; ours sees the value and keeps the seed it found.
    let started = java
        .ask_within("countstart /count 7", "COUNT", DEADLINE)
        .await;
    assert_eq!(started, "7 0");
    let ours = SharedCount::new(&client, "/count", 99);
    ours.start().await.unwrap();
    assert_eq!(ours.count().unwrap(), 7);
    let (data, _) = client.get_data("/count").await.unwrap();
    assert_eq!(&data[..], [0, 0, 0, 7]);

    // Curator writes, ours hears it.
    let mut events = ours.events();
    java.ask_within("countset /count -2", "COUNTSET", DEADLINE)
        .await;
    within("our event", async {
        loop {
            if let Some(SharedValueEvent::Changed(v)) = events.next().await {
                if v.value == -2 {
                    return;
                }
            }
        }
    })
    .await;
    // Ours writes, Curator's cache follows (polled through its getVersionedValue).
    assert!(ours
        .try_set_count(&ours.versioned_value().unwrap(), 40)
        .await
        .unwrap());
    within("Curator sees 40", async {
        loop {
            if java
                .ask_within("countget /count", "COUNT", DEADLINE)
                .await
                .starts_with("40 ")
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;

    // Both sides increment with compare-and-set loops at once: 2 x 20 from each.
    let mut java2 = QueuePeer::start("curator2", &zk.connect_string(), TEST_JVM).await;
    java2
        .ask_within("countstart /count 0", "COUNT", DEADLINE)
        .await;
    java.send("countinc /count 20");
    java2.send("countinc /count 20");
    let mut rust = tokio::task::JoinSet::new();
    for _ in 0..2 {
        let c = connect(&zk).await;
        rust.spawn(async move {
            let count = SharedCount::new(&c, "/count", 0);
            count.start().await.unwrap();
            for _ in 0..20 {
                loop {
                    let seen = count.versioned_value().unwrap();
                    if count.try_set_count(&seen, seen.value + 1).await.unwrap() {
                        break;
                    }
                }
            }
        });
    }
    java.expect_within("COUNTINC", DEADLINE).await;
    java2.expect_within("COUNTINC", DEADLINE).await;
    while let Some(done) = rust.join_next().await {
        done.unwrap();
    }
    let (data, _) = client.get_data("/count").await.unwrap();
    assert_eq!(&data[..], 120i32.to_be_bytes(), "40 + 4 x 20");
    java.exit().await;
    java2.exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_long_with_curator_both_ways_and_promoted_to_one_lock() {
    let zk = TestingServer::start().unwrap();
    let mut java = QueuePeer::start("curator", &zk.connect_string(), TEST_JVM).await;
    let client = connect(&zk).await;
    // Each reads what the other wrote (8 bytes, big-endian).
    let ours = DistributedAtomicLong::new(&client, "/hits", forever());
    assert_eq!(ours.add(5).await.unwrap().post_value, 5);
    assert_eq!(
        java.ask_within("atomicget /hits", "ATOMIC", DEADLINE).await,
        "5 0"
    );
    assert_eq!(
        java.ask_within("atomicadd /hits 1 -", "ATOMIC", DEADLINE)
            .await,
        "6 1"
    );
    assert_eq!(ours.get().await.unwrap().post_value, 6);

    // Concurrently, 2 Java and 2 Rust sessions x 50, promoted to the same lock path.
    let mut java2 = QueuePeer::start("curator2", &zk.connect_string(), TEST_JVM).await;
    java.send("atomicadd /hits 50 /hits-lock");
    java2.send("atomicadd /hits 50 /hits-lock");
    let mut rust = tokio::task::JoinSet::new();
    for _ in 0..2 {
        let c = connect(&zk).await;
        rust.spawn(async move {
            let counter = DistributedAtomicLong::new(&c, "/hits", RetryPolicy::Never)
                .promoted_to_lock(PromotedToLock {
                    lock_path: "/hits-lock".into(),
                    max_lock_time: Some(Duration::from_secs(20)),
                    retry: forever(),
                });
            let mut ok = 0;
            for _ in 0..50 {
                ok += u32::from(counter.increment().await.unwrap().succeeded);
            }
            ok
        });
    }
    let java_ok: u32 = [
        java.expect_within("ATOMIC", DEADLINE * 2).await,
        java2.expect_within("ATOMIC", DEADLINE * 2).await,
    ]
    .iter()
    .map(|a| a.split(' ').nth(1).unwrap().parse::<u32>().unwrap())
    .sum();
    let mut rust_ok = 0;
    while let Some(ok) = rust.join_next().await {
        rust_ok += ok.unwrap();
    }
    assert_eq!(
        rust_ok, 100,
        "ours always succeed (promoted, retried under the lock)"
    );
    let total = ours.get().await.unwrap().post_value;
    assert_eq!(
        total,
        6 + i64::from(java_ok + rust_ok),
        "each success counted once"
    );
    let locks = client
        .get_children("/hits-lock")
        .await
        .map(|c| c.len())
        .unwrap_or(0);
    assert_eq!(locks, 0, "no lock node left");
    java.exit().await;
    java2.exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_double_barrier_with_two_curator_members_among_ours() {
    let zk = TestingServer::start().unwrap();
    let mut javas = Vec::new();
    for name in ["curator-a", "curator-b"] {
        javas.push(QueuePeer::start(name, &zk.connect_string(), TEST_JVM).await);
    }
    let client = connect(&zk).await;
    // Two Curator members and two of ours: nobody is in before the fifth (ours) arrives.
    for java in &mut javas {
        java.ask_within("dbarrier /phase 5 30000", "DBARRIER", DEADLINE)
            .await;
    }
    let mut ours = tokio::task::JoinSet::new();
    let (entered_tx, mut entered_rx) = tokio::sync::mpsc::unbounded_channel();
    for _ in 0..2 {
        let c = connect(&zk).await;
        let tx = entered_tx.clone();
        ours.spawn(async move {
            let barrier = DistributedDoubleBarrier::new(&c, "/phase", 5);
            assert!(barrier.enter(Some(DEADLINE)).await.unwrap());
            tx.send(()).unwrap();
            assert!(barrier.leave(Some(DEADLINE)).await.unwrap());
        });
    }
    within("four members waiting", async {
        loop {
            if client
                .get_children("/phase")
                .await
                .map(|c| c.len())
                .unwrap_or(0)
                == 4
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(
        entered_rx.try_recv().is_err(),
        "one of ours entered with 4 of 5"
    );
    let fifth_client = connect(&zk).await;
    let fifth = DistributedDoubleBarrier::new(&fifth_client, "/phase", 5);
    assert!(within("fifth enters", fifth.enter(Some(DEADLINE)))
        .await
        .unwrap());
    for java in &mut javas {
        assert_eq!(java.expect_within("ENTERED", DEADLINE).await, "true");
    }
    assert!(within("fifth leaves", fifth.leave(Some(DEADLINE)))
        .await
        .unwrap());
    for java in &mut javas {
        assert_eq!(java.expect_within("LEFT", DEADLINE).await, "true");
    }
    while let Some(done) = ours.join_next().await {
        done.unwrap();
    }
    let left = client
        .get_children("/phase")
        .await
        .map(|c| c.to_vec())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    for java in javas {
        java.exit().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_group_with_curator_and_rust_members() {
    let zk = TestingServer::start().unwrap();
    let mut java = QueuePeer::start("curator", &zk.connect_string(), TEST_JVM).await;
    let client = connect(&zk).await;
    java.ask_within(
        &format!("member /group j {}", hex(b"java-1")),
        "MEMBER",
        DEADLINE,
    )
    .await;
    let ours = GroupMember::new(&client, "/group", "r", b"rust-1").unwrap();
    ours.start().await.unwrap();
    let expected: BTreeMap<String, Vec<u8>> = [("j", &b"java-1"[..]), ("r", &b"rust-1"[..])]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_vec()))
        .collect();
    let ours_view = || {
        ours.current_members()
            .into_iter()
            .map(|(k, v)| (k, v.to_vec()))
            .collect::<BTreeMap<_, _>>()
    };
    let line = |view: &BTreeMap<String, Vec<u8>>| {
        view.iter()
            .map(|(k, v)| format!("{k}={}", hex(v)))
            .collect::<Vec<_>>()
            .join(",")
    };
    within("both see both", async {
        loop {
            let theirs = java.ask_within("members j", "MEMBERS", DEADLINE).await;
            if ours_view() == expected && theirs == line(&expected) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    // Data changes, each way.
    java.ask_within(
        &format!("memberset j {}", hex(b"java-2")),
        "MEMBERSET",
        DEADLINE,
    )
    .await;
    ours.set_this_data(b"rust-2").await.unwrap();
    let mut changed = expected.clone();
    changed.insert("j".into(), b"java-2".to_vec());
    changed.insert("r".into(), b"rust-2".to_vec());
    within("both see the new data", async {
        loop {
            let theirs = java.ask_within("members j", "MEMBERS", DEADLINE).await;
            if ours_view() == changed && theirs == line(&changed) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    // The Java member leaves: ours sees it go.
    java.ask_within("memberleave j", "MEMBERLEFT", DEADLINE)
        .await;
    within("the Java member left", async {
        while ours_view().contains_key("j") {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    ours.close().await.unwrap();
    java.exit().await;
}
