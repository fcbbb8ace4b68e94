//! Issue 36: a client moved between healthy members of a real 3-member ZooKeeper 3.8
//! ensemble (`Client::update_hosts` with a list that leaves out its current member) moves
//! its session without suspending it (make before break): no `Suspended`, the same session,
//! an `InterProcessMutex` held under Curator's standard policy never reported lost, and
//! requests issued concurrently during the moves all answered, successfully and in order.
//! Every wait has a deadline.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::block_in_place;
use zkrs_client::{Client, ClientBuilder, ConnectionState, CreateMode};
use zkrs_recipes::framework::{join_all, ConnectionStatePolicy};
use zkrs_recipes::lock::InterProcessMutex;
use zkrs_testkit::TestingCluster;

const DEADLINE: Duration = Duration::from_secs(30);
const MOVES: usize = 4;
const BATCH: usize = 16;

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {DEADLINE:?}"))
}

/// The members whose `cons` lists session `session` (one, except for a moment during a
/// move, when the old member has not closed its side yet).
fn members_with(cluster: &TestingCluster, session: i64) -> Vec<usize> {
    let sid = format!("sid={session:#x}");
    (0..cluster.len())
        .filter(|&i| {
            zkrs_testkit::four_letter_word(cluster.member_address(i), "cons", DEADLINE)
                .map(|cons| cons.lines().any(|l| l.contains(&sid)))
                .unwrap_or(false)
        })
        .collect()
}

/// Waits until the session is on one member only, other than `not` if given; returns it.
async fn member_of(cluster: &TestingCluster, session: i64, not: Option<usize>) -> usize {
    within("the session on one member", async {
        loop {
            let on = block_in_place(|| members_with(cluster, session));
            if let [member] = on[..] {
                if Some(member) != not {
                    return member;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

/// Batches of sequential creates issued together, until `stop`: each must succeed, and the
/// sequence numbers must follow the order of issue. Returns how many batches ran.
async fn ordered_load(client: Client, stop: Arc<AtomicBool>) -> usize {
    let mut batches = 0;
    while !stop.load(Ordering::Relaxed) {
        // `join_all` polls in input order: the requests go out in the order of issue.
        let creates =
            (0..BATCH).map(|_| client.create("/moves/seq-", b"", CreateMode::PersistentSequential));
        let paths: Vec<zkrs_client::Result<String>> = join_all(creates).await;
        let numbers: Vec<u64> = paths
            .into_iter()
            .map(|p| {
                let p = p.unwrap_or_else(|e| panic!("a request during the moves failed: {e}"));
                p.rsplit('-').next().unwrap().parse().unwrap()
            })
            .collect();
        assert!(
            numbers.windows(2).all(|w| w[0] < w[1]),
            "answers out of order: {numbers:?}"
        );
        batches += 1;
    }
    batches
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_between_healthy_members_suspend_nothing() {
    let cluster = block_in_place(|| TestingCluster::start(3))
        .expect("start ZooKeeper (run scripts/install-zookeeper.sh)");
    let client = within(
        "connecting",
        ClientBuilder::new(cluster.connect_string())
            .session_timeout(Duration::from_secs(8))
            .connect(),
    )
    .await
    .unwrap();
    let session = client.session_id();
    let states = Arc::new(Mutex::new(Vec::new()));
    let mut changes = client.state_changes();
    let log = states.clone();
    tokio::spawn(async move {
        while let Some(change) = changes.next().await {
            log.lock().unwrap().push(change.state);
        }
    });
    client
        .create("/moves", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let mutex = InterProcessMutex::builder(&client, "/locks/moves")
        .policy(ConnectionStatePolicy::Standard)
        .build()
        .unwrap();
    let guard = within("taking the lock", mutex.acquire()).await.unwrap();
    let lock_node = guard.path().to_string();

    let stop = Arc::new(AtomicBool::new(false));
    let load = tokio::spawn(ordered_load(client.clone(), stop.clone()));
    let moves = async {
        let mut on = member_of(&cluster, session, None).await;
        for n in 0..MOVES {
            // Every member but the current one.
            let others: Vec<String> = (0..3)
                .filter(|&i| i != on)
                .map(|i| format!("127.0.0.1:{}", cluster.member_port(i)))
                .collect();
            let moved = within("updating the hosts", client.update_hosts(&others.join(",")))
                .await
                .unwrap();
            assert!(moved, "move {n}: the current member left the list");
            let next = member_of(&cluster, session, Some(on)).await;
            eprintln!("move {n}: member {} -> member {}", on + 1, next + 1);
            on = next;
        }
    };
    tokio::select! {
        biased;
        () = guard.lost() => panic!("the lock was reported lost: {:?}", states.lock().unwrap()),
        () = moves => {}
    }
    stop.store(true, Ordering::Relaxed);
    let batches = within("the load's last batch", load).await.unwrap();
    eprintln!("{batches} batches of {BATCH} ordered creates during {MOVES} moves");
    assert!(batches > 0);

    let log = states.lock().unwrap().clone();
    let suspended = log
        .iter()
        .filter(|s| **s == ConnectionState::Suspended)
        .count();
    assert_eq!(suspended, 0, "Suspended {suspended} times: {log:?}");
    assert!(log.is_empty(), "no state change at all: {log:?}");
    assert_eq!(client.session_id(), session);
    assert!(guard.is_held());
    let stat = client
        .exists(&lock_node)
        .await
        .unwrap()
        .expect("the lock node");
    assert_eq!(stat.ephemeral_owner, session);
    assert_eq!(client.metrics().session_moves, MOVES as u64);
    guard.release().await.unwrap();
    client.close().await.unwrap();
}
