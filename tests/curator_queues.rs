//! Queue interop with the real Apache Curator 5.4: a Java peer (`tests/java/CuratorQueuePeer.java`)
//! runs Curator's own queues on the same server and paths as ours, both ways, for each queue
//! kind: what one side puts, the other takes, in the same order, with the same framing, node
//! names and lock nodes.
//!
//! Needs a JDK and Curator's jars (`scripts/install-zookeeper.sh`); never skips. Every wait
//! has a deadline.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zkrs_client::{Client, ErrorCode};
use zkrs_recipes::queue::{
    DistributedDelayQueue, DistributedIdQueue, DistributedPriorityQueue, DistributedQueue,
    SimpleDistributedQueue,
};
use zkrs_testkit::TestingServer;

#[path = "../recipes/tests/support/curator_peer.rs"]
mod curator_peer;
use curator_peer::{hex, QueuePeer, TEST_JVM};

const DEADLINE: Duration = Duration::from_secs(30);
/// How long a consumer must stay silent to count as "did not take it".
const QUIET: Duration = Duration::from_millis(1500);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: not done within {DEADLINE:?}"))
}

async fn setup() -> (TestingServer, Client, QueuePeer) {
    let zk = TestingServer::start().unwrap();
    let client = within("connect", Client::connect(&zk.connect_string()))
        .await
        .unwrap();
    let peer = QueuePeer::start("curator", &zk.connect_string(), TEST_JVM).await;
    (zk, client, peer)
}

async fn names(client: &Client, dir: &str) -> Vec<String> {
    let mut names = match client.get_children(dir).await {
        Ok(c) => c.to_vec(),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => Vec::new(),
        Err(e) => panic!("listing {dir}: {e}"),
    };
    names.sort();
    names
}

/// Returns once `dir` has no children, waking on child watches rather than polling.
async fn until_empty(client: &Client, dir: &str) {
    loop {
        let (children, watch) = client.get_children_and_watch(dir).await.unwrap();
        if children.is_empty() {
            return;
        }
        watch.await;
    }
}

/// The next `n` items Curator's consumer takes.
async fn curator_takes(peer: &mut QueuePeer, n: usize) -> Vec<Vec<u8>> {
    let mut items = Vec::new();
    for _ in 0..n {
        let (kind, item) = peer.next_event(DEADLINE).await;
        assert_eq!(kind, "ITEM", "{item:?}");
        items.push(item);
    }
    items
}

fn epoch_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

#[tokio::test]
async fn distributed_queue_both_ways() {
    let (_zk, client, mut peer) = setup().await;
    // Ours put, Curator takes: single items and a batch, in order.
    let queue = DistributedQueue::builder(&client, "/q/ours")
        .build()
        .unwrap();
    queue.put(b"a").await.unwrap();
    queue.put_multi([&b"xy"[..], b"", b"z"]).await.unwrap();
    queue.put(b"c").await.unwrap();
    peer.ask_within("consume queue /q/ours - -", "CONSUMING", DEADLINE)
        .await;
    let got = curator_takes(&mut peer, 5).await;
    assert_eq!(got, [&b"a"[..], b"xy", b"", b"z", b"c"]);
    peer.ask_within("stop", "STOPPED", DEADLINE).await;
    assert!(names(&client, "/q/ours").await.is_empty());

    // Curator puts, ours take: its nodes are `queue-<seq>`, its framing ours.
    peer.ask_within(
        &format!("put queue /q/theirs {}", hex(b"one")),
        "PUT",
        DEADLINE,
    )
    .await;
    peer.ask_within(
        &format!(
            "putmulti queue /q/theirs {},{},_",
            hex(b"two"),
            hex(b"three")
        ),
        "PUT",
        DEADLINE,
    )
    .await;
    assert_eq!(
        names(&client, "/q/theirs").await,
        ["queue-0000000000", "queue-0000000001"]
    );
    let mut consumer = DistributedQueue::builder(&client, "/q/theirs")
        .build()
        .unwrap()
        .consumer();
    let one = within("take", consumer.take()).await.unwrap();
    assert_eq!(one.items(), [&b"one"[..]]);
    let batch = within("take", consumer.take()).await.unwrap();
    assert_eq!(batch.items(), [&b"two"[..], b"three", b""]);
    peer.exit().await;
}

#[tokio::test]
async fn lock_paths_exclude_each_other() {
    let (_zk, client, mut peer) = setup().await;
    let queue = DistributedQueue::builder(&client, "/lq")
        .lock_path("/lq-locks")
        .build()
        .unwrap();
    queue.put(b"held").await.unwrap();
    let mut consumer = queue.consumer();
    let held = within("take", consumer.take()).await.unwrap();
    assert_eq!(
        names(&client, "/lq-locks").await,
        ["queue-0000000000"],
        "Curator's lock node"
    );
    // Curator's consumer on the same lock path must leave our locked item alone.
    peer.ask_within("consume queue /lq /lq-locks -", "CONSUMING", DEADLINE)
        .await;
    peer.assert_no_event(QUIET).await;
    // Released (not failed): the item stays where it was. Curator only looks again when the
    // queue changes, so nudge it with another item: it takes both, in order.
    held.release().await.unwrap();
    queue.put(b"nudge").await.unwrap();
    let got = curator_takes(&mut peer, 2).await;
    assert_eq!(got, [&b"held"[..], b"nudge"]);

    // Curator fails an item: it is put back (its REQUEUE) and taken again.
    peer.ask_within("stop", "STOPPED", DEADLINE).await;
    peer.ask_within(
        &format!("consume queue /lq /lq-locks {}", hex(b"boom")),
        "CONSUMING",
        DEADLINE,
    )
    .await;
    queue.put(b"boom").await.unwrap();
    let (kind, item) = peer.next_event(DEADLINE).await;
    assert_eq!((kind.as_str(), &item[..]), ("FAILED", &b"boom"[..]));
    let (kind, item) = peer.next_event(DEADLINE).await;
    assert_eq!((kind.as_str(), &item[..]), ("ITEM", &b"boom"[..]));
    peer.ask_within("stop", "STOPPED", DEADLINE).await;

    // Our failed item goes back at the end (one transaction), and Curator takes it.
    queue.put(b"retry me").await.unwrap();
    let m = within("take", consumer.take()).await.unwrap();
    m.fail().await.unwrap();
    peer.ask_within("consume queue /lq /lq-locks -", "CONSUMING", DEADLINE)
        .await;
    assert_eq!(curator_takes(&mut peer, 1).await, [b"retry me".to_vec()]);
    // Curator tells ITEM from its consumer callback and deletes the item and its lock node
    // after the callback returns; exiting before that would cut the deletes short.
    within(
        "Curator deletes the taken item",
        until_empty(&client, "/lq"),
    )
    .await;
    within(
        "Curator deletes its lock node",
        until_empty(&client, "/lq-locks"),
    )
    .await;
    peer.exit().await;
}

#[tokio::test]
async fn id_queue_both_ways() {
    let (_zk, client, mut peer) = setup().await;
    peer.ask_within(
        &format!("put id /iq {} job/1", hex(b"first")),
        "PUT",
        DEADLINE,
    )
    .await;
    peer.ask_within(
        &format!("put id /iq {} job-2", hex(b"second")),
        "PUT",
        DEADLINE,
    )
    .await;
    assert_eq!(
        names(&client, "/iq").await,
        ["queue-|job-2|0000000001", "queue-|job_1|0000000000"]
    );
    let queue = DistributedIdQueue::builder(&client, "/iq").build().unwrap();
    // Ours removes what Curator put, by id.
    assert_eq!(queue.remove("job-2").await.unwrap(), 1);
    let m = within("take", queue.consumer().take()).await.unwrap();
    assert_eq!((m.id(), &m.items()[0][..]), (Some("job_1"), &b"first"[..]));

    // Curator removes and takes what ours put.
    queue.put(b"gone", "x").await.unwrap();
    queue.put(b"kept", "y").await.unwrap();
    assert_eq!(
        peer.ask_within("remove /iq x", "REMOVED", DEADLINE).await,
        "1"
    );
    peer.ask_within("consume id /iq - -", "CONSUMING", DEADLINE)
        .await;
    assert_eq!(curator_takes(&mut peer, 1).await, [b"kept".to_vec()]);
    peer.exit().await;
}

#[tokio::test]
async fn priority_queue_both_ways() {
    let (_zk, client, mut peer) = setup().await;
    for (item, priority) in [("p5", 5), ("m1", -1), ("p3", 3)] {
        peer.ask_within(
            &format!("put priority /pq {} {priority}", hex(item.as_bytes())),
            "PUT",
            DEADLINE,
        )
        .await;
    }
    assert_eq!(
        names(&client, "/pq").await,
        [
            "queue-0FFFFFFFF0000000001",
            "queue-1000000030000000002",
            "queue-1000000050000000000"
        ]
    );
    let queue = DistributedPriorityQueue::builder(&client, "/pq")
        .build()
        .unwrap();
    let mut consumer = queue.consumer();
    let mut got = Vec::new();
    for _ in 0..3 {
        let m = within("take", consumer.take()).await.unwrap();
        got.push(String::from_utf8(m.items()[0].to_vec()).unwrap());
    }
    assert_eq!(got, ["m1", "p3", "p5"]);

    for (item, priority) in [("p7", 7), ("m2", -2), ("zero", 0)] {
        queue.put(item, priority).await.unwrap();
    }
    peer.ask_within("consume priority /pq - -", "CONSUMING", DEADLINE)
        .await;
    assert_eq!(
        curator_takes(&mut peer, 3).await,
        [b"m2".to_vec(), b"zero".to_vec(), b"p7".to_vec()]
    );
    peer.exit().await;
}

#[tokio::test]
async fn delay_queue_both_ways() {
    let (_zk, client, mut peer) = setup().await;
    let now = SystemTime::now();
    let due = now + Duration::from_millis(1500);
    peer.ask_within(
        &format!("put delay /dq {} {}", hex(b"later"), epoch_ms(due)),
        "PUT",
        DEADLINE,
    )
    .await;
    peer.ask_within(
        &format!(
            "put delay /dq {} {}",
            hex(b"past"),
            epoch_ms(now - Duration::from_secs(10))
        ),
        "PUT",
        DEADLINE,
    )
    .await;
    let expected = format!("queue-|{:08X}|0000000000", epoch_ms(due));
    assert!(
        names(&client, "/dq").await.contains(&expected),
        "{expected}"
    );
    let mut consumer = DistributedDelayQueue::builder(&client, "/dq")
        .build()
        .unwrap()
        .consumer();
    let m = within("take", consumer.take()).await.unwrap();
    assert_eq!(&m.items()[0][..], b"past");
    let m = within("take", consumer.take()).await.unwrap();
    assert_eq!(&m.items()[0][..], b"later");
    assert!(SystemTime::now() >= due, "taken before it was due");

    // Ours put, Curator waits for the due time too.
    let due = SystemTime::now() + Duration::from_millis(1500);
    DistributedDelayQueue::builder(&client, "/dq2")
        .build()
        .unwrap()
        .put(b"soon", due)
        .await
        .unwrap();
    peer.ask_within("consume delay /dq2 - -", "CONSUMING", DEADLINE)
        .await;
    assert_eq!(curator_takes(&mut peer, 1).await, [b"soon".to_vec()]);
    assert!(
        SystemTime::now() >= due,
        "Curator took it before it was due"
    );
    peer.exit().await;
}

#[tokio::test]
async fn simple_queue_both_ways() {
    let (_zk, client, mut peer) = setup().await;
    let queue = SimpleDistributedQueue::builder(&client, "/sq")
        .build()
        .unwrap();
    queue.put(b"ours 1").await.unwrap();
    queue.put(b"").await.unwrap();
    assert_eq!(
        peer.ask_within("peek /sq", "PEEKED", DEADLINE).await,
        hex(b"ours 1")
    );
    assert_eq!(
        peer.ask_within("take /sq", "TAKEN", DEADLINE).await,
        hex(b"ours 1")
    );
    assert_eq!(
        peer.ask_within("poll /sq 100", "POLLED", DEADLINE).await,
        "_"
    );
    assert_eq!(
        peer.ask_within("poll /sq 100", "POLLED", DEADLINE).await,
        "NONE"
    );

    peer.ask_within(
        &format!("offer /sq {}", hex(b"theirs")),
        "OFFERED",
        DEADLINE,
    )
    .await;
    let now = names(&client, "/sq").await;
    assert!(now.len() == 1 && now[0].starts_with("qn-"), "{now:?}");
    assert_eq!(queue.peek().await.unwrap().as_deref(), Some(&b"theirs"[..]));
    assert_eq!(within("take", queue.take()).await.unwrap(), &b"theirs"[..]);
    // Ours waits for Curator's next offer.
    let waiting = tokio::spawn(async move { queue.take().await });
    peer.ask_within(&format!("offer /sq {}", hex(b"later")), "OFFERED", DEADLINE)
        .await;
    assert_eq!(
        within("take waits", waiting).await.unwrap().unwrap(),
        &b"later"[..]
    );
    peer.exit().await;
}
