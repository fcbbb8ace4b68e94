//! Queues against a real server: node layout and framing, order of every kind, the cost of
//! consuming (listings), lock-path delivery (complete, fail, release, drop), bounded puts,
//! cancel safety, bad input. The 10,000-item safety runs are in `queue_safety.rs`.

use std::time::{Duration, SystemTime};

use zkrs_client::{Client, CreateMode, ErrorCode, ErrorKind};
use zkrs_recipes::queue::{
    encode_items, DistributedDelayQueue, DistributedIdQueue, DistributedPriorityQueue,
    DistributedQueue, ErrorMode, Message, SimpleDistributedQueue,
};
use zkrs_testkit::TestingServer;

mod support;
use support::*;

/// The first item of a message, as text.
fn text(message: &Message) -> String {
    String::from_utf8_lossy(&message.items()[0]).into_owned()
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

#[tokio::test]
async fn put_and_take_in_order_with_curator_nodes_and_framing() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = DistributedQueue::builder(&client, "/app/queues/jobs")
        .build()
        .unwrap();
    let first = queue.put(b"a").await.unwrap();
    assert_eq!(first, "/app/queues/jobs/queue-0000000000");
    queue.put_multi([&b"xy"[..], b"", b"z"]).await.unwrap();
    queue.put("c").await.unwrap();
    // The queue node is persistent, its missing parents containers (as Curator's start()).
    let (_, stat) = client.get_data("/app/queues/jobs").await.unwrap();
    assert_eq!(stat.ephemeral_owner, 0);
    let (data, _) = client
        .get_data("/app/queues/jobs/queue-0000000001")
        .await
        .unwrap();
    assert_eq!(&data[..], &encode_items([&b"xy"[..], b"", b"z"])[..]);
    assert_eq!(queue.len().await.unwrap(), 3);

    let mut consumer = queue.consumer();
    let a = within("take a", consumer.take()).await.unwrap();
    assert_eq!(a.name(), "queue-0000000000");
    assert_eq!(text(&a), "a");
    assert!(!a.is_locked());
    let multi = within("take batch", consumer.take()).await.unwrap();
    assert_eq!(multi.items(), [&b"xy"[..], b"", b"z"]);
    let c = within("take c", consumer.take()).await.unwrap();
    assert_eq!(text(&c), "c");
    // No lock path: taken means deleted.
    assert!(names(&client, "/app/queues/jobs").await.is_empty());
    assert!(consumer
        .take_timeout(Duration::from_millis(200))
        .await
        .unwrap()
        .is_none());
    assert!(consumer.try_take().await.unwrap().is_none());
    let stats = consumer.stats();
    assert_eq!((stats.taken, stats.lost), (3, 0), "{stats:?}");
}

#[tokio::test]
async fn a_consumer_lists_once_per_batch_not_per_item() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = DistributedQueue::builder(&client, "/q").build().unwrap();
    let puts = (0..500).map(|i| queue.put(format!("{i:04}")));
    for r in zkrs_recipes::framework::join_all(puts).await {
        r.unwrap();
    }
    let mut consumer = queue.consumer();
    for i in 0..500 {
        let m = within("take", consumer.take()).await.unwrap();
        assert_eq!(
            text(&m),
            format!("{i:04}"),
            "a lone consumer takes in order"
        );
    }
    assert!(consumer.try_take().await.unwrap().is_none());
    let stats = consumer.stats();
    // One listing for the 500, one more to see the queue empty (Curator: one per item).
    assert!(stats.listings <= 3, "{stats:?}");
    assert_eq!(stats.lost, 0, "{stats:?}");

    // Items put while the consumer waits: it is woken by its watch, lists once per wake-up.
    let producer = queue.clone();
    let put_later = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        producer.put(b"late").await.unwrap();
    });
    let m = within("take late", consumer.take()).await.unwrap();
    assert_eq!(text(&m), "late");
    put_later.await.unwrap();
}

#[tokio::test]
async fn competing_consumers_each_get_distinct_items() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = DistributedQueue::builder(&client, "/q").build().unwrap();
    let puts = (0..300).map(|i| queue.put(format!("{i}")));
    for r in zkrs_recipes::framework::join_all(puts).await {
        r.unwrap();
    }
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let own = connect(&zk).await;
        tasks.push(tokio::spawn(async move {
            let mut consumer = DistributedQueue::builder(&own, "/q")
                .build()
                .unwrap()
                .consumer();
            let mut got = Vec::new();
            while let Some(m) = consumer.try_take().await.unwrap() {
                got.push(text(&m).parse::<u32>().unwrap());
            }
            (got, consumer.stats())
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        let (got, stats) = within("consumer", t).await.unwrap();
        eprintln!("consumer: {} items, {stats:?}", got.len());
        all.extend(got);
    }
    all.sort_unstable();
    assert_eq!(all, (0..300).collect::<Vec<_>>(), "each item exactly once");
}

#[tokio::test]
async fn lock_path_keeps_the_item_until_it_is_settled() {
    let zk = TestingServer::start().unwrap();
    let a = connect(&zk).await;
    let b = connect(&zk).await;
    let queue = locked_queue(&a);
    queue.put(b"one").await.unwrap();
    queue.put(b"two").await.unwrap();

    let mut ca = queue.consumer();
    let one = within("take", ca.take()).await.unwrap();
    assert!(one.is_locked() && one.is_held());
    // The item stays; our ephemeral lock node is next to it, under the lock path.
    assert_eq!(
        names(&a, "/q").await,
        ["queue-0000000000", "queue-0000000001"]
    );
    let (_, lock) = a.get_data("/q-locks/queue-0000000000").await.unwrap();
    assert_eq!(lock.ephemeral_owner, a.session_id());

    // Another consumer skips the locked item and takes the next.
    let mut cb = locked_queue(&b).consumer();
    let two = within("take two", cb.take()).await.unwrap();
    assert_eq!(text(&two), "two");
    assert!(cb.try_take().await.unwrap().is_none(), "one is locked");
    assert!(cb.stats().busy >= 1);

    one.complete().await.unwrap();
    two.complete().await.unwrap();
    assert!(names(&a, "/q").await.is_empty());
    assert!(names(&a, "/q-locks").await.is_empty());
}

#[tokio::test]
async fn a_failed_item_is_put_back_at_the_end_or_deleted() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = DistributedQueue::builder(&client, "/q")
        .lock_path("/locks/q")
        .build()
        .unwrap();
    for item in ["a", "b"] {
        queue.put(item).await.unwrap();
    }
    let mut consumer = queue.consumer();
    let a = within("take", consumer.take()).await.unwrap();
    assert_eq!(text(&a), "a");
    a.fail().await.unwrap();
    // Deleted and created again in one transaction: a new sequence, at the end.
    let now = names(&client, "/q").await;
    assert_eq!(now.len(), 2, "{now:?}");
    assert_eq!(now[0], "queue-0000000001");
    assert!(now[1].starts_with("queue-") && now[1] > now[0], "{now:?}");
    assert!(names(&client, "/locks/q").await.is_empty());
    let b = within("take", consumer.take()).await.unwrap();
    assert_eq!(text(&b), "b");
    b.complete().await.unwrap();
    let again = within("take", consumer.take()).await.unwrap();
    assert_eq!((text(&again), again.name()), ("a".into(), now[1].as_str()));
    again.complete().await.unwrap();

    // `process`: Err fails the item (here: deleted, with ErrorMode::Delete).
    let deleting = DistributedQueue::builder(&client, "/q")
        .lock_path("/locks/q")
        .error_mode(ErrorMode::Delete)
        .build()
        .unwrap();
    deleting.put(b"bad").await.unwrap();
    let mut consumer = deleting.consumer();
    let r = within(
        "process",
        consumer.process(|items| async move { Err::<(), _>(format!("no {:?}", items[0])) }),
    )
    .await
    .unwrap();
    assert!(r.is_err());
    assert!(names(&client, "/q").await.is_empty());

    // Without a lock path the item left when it was taken: fail changes nothing.
    let plain = DistributedQueue::builder(&client, "/plain")
        .build()
        .unwrap();
    plain.put(b"x").await.unwrap();
    let m = plain.consumer().take().await.unwrap();
    m.fail().await.unwrap();
    assert!(names(&client, "/plain").await.is_empty());
}

#[tokio::test]
async fn a_released_or_dropped_message_stays_where_it_was() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = locked_queue(&client);
    queue.put(b"only").await.unwrap();
    let mut consumer = queue.consumer();
    let m = within("take", consumer.take()).await.unwrap();
    m.release().await.unwrap();
    assert!(names(&client, "/q-locks").await.is_empty());

    let mut other = queue.consumer();
    let m = within("take again", other.take()).await.unwrap();
    assert_eq!(m.name(), "queue-0000000000", "same node, same place");
    drop(m); // the lock goes in the background
    let m = within("take after drop", other.take()).await.unwrap();
    assert_eq!(m.name(), "queue-0000000000");
    m.complete().await.unwrap();
}

#[tokio::test]
async fn a_consumer_that_dies_mid_handler_loses_nothing() {
    let zk = TestingServer::start().unwrap();
    let dying = connect(&zk).await;
    let survivor = connect(&zk).await;
    let queue = locked_queue(&dying);
    queue.put(b"precious").await.unwrap();
    let mut doomed = queue.consumer();
    let m = within("take", doomed.take()).await.unwrap();

    // The survivor waits: the item is locked. It must be woken by the lock's release,
    // not by other queue activity (there is none).
    let mut consumer = locked_queue(&survivor).consumer();
    assert!(consumer.try_take().await.unwrap().is_none());
    let waiting = tokio::spawn(async move {
        let m = consumer.take().await.unwrap();
        (text(&m), m)
    });
    // The process dies mid-handler: no cleanup, its session ends.
    std::mem::forget(m);
    std::mem::forget(doomed);
    dying.close().await.unwrap();
    let (got, m) = within("survivor takes it", waiting).await.unwrap();
    assert_eq!(got, "precious");
    m.complete().await.unwrap();
    assert!(names(&survivor, "/q").await.is_empty());
}

#[tokio::test]
async fn simple_queue_put_take_try_take_peek() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = SimpleDistributedQueue::builder(&client, "/app/simple")
        .build()
        .unwrap();
    assert!(queue.peek().await.unwrap().is_none());
    assert!(queue.try_take().await.unwrap().is_none());

    assert_eq!(queue.put(b"1").await.unwrap(), "/app/simple/qn-0000000000");
    queue.put(b"").await.unwrap();
    queue.put(b"3").await.unwrap();
    // Raw bytes, and the queue node is a container.
    let (data, _) = client.get_data("/app/simple/qn-0000000000").await.unwrap();
    assert_eq!(&data[..], b"1");
    let (_, stat) = client.get_data("/app/simple").await.unwrap();
    assert_eq!(stat.ephemeral_owner, 0);
    assert_eq!(queue.peek().await.unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(queue.take().await.unwrap(), &b"1"[..]);
    assert_eq!(queue.try_take().await.unwrap().as_deref(), Some(&b""[..]));
    assert_eq!(queue.try_take().await.unwrap().as_deref(), Some(&b"3"[..]));
    assert!(queue.try_take().await.unwrap().is_none());

    // take waits for an offer from another session.
    let other = connect(&zk).await;
    let offer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        SimpleDistributedQueue::builder(&other, "/app/simple")
            .build()
            .unwrap()
            .put(b"later")
            .await
            .unwrap();
    });
    assert_eq!(
        within("take waits", queue.take()).await.unwrap(),
        &b"later"[..]
    );
    offer.await.unwrap();
    assert!(queue
        .take_timeout(Duration::from_millis(150))
        .await
        .unwrap()
        .is_none());
    let stats = queue.stats();
    assert_eq!(stats.taken, 4, "{stats:?}");

    // Calls on one handle do not wait for each other: peek and poll answer while a take
    // waits on the same handle.
    let queue = std::sync::Arc::new(queue);
    let waiter = queue.clone();
    let waiting = tokio::spawn(async move { waiter.take().await });
    tokio::task::yield_now().await;
    assert!(within("peek", queue.peek()).await.unwrap().is_none());
    assert!(within("try_take", queue.try_take())
        .await
        .unwrap()
        .is_none());
    queue.put(b"for the waiter").await.unwrap();
    assert_eq!(
        within("waiting take", waiting).await.unwrap().unwrap(),
        &b"for the waiter"[..]
    );
}

#[tokio::test]
async fn simple_queue_survives_its_container_being_reaped_while_it_waits() {
    // apache/curator#828: a take waiting on a reaped container hung.
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let other = connect(&zk).await;
    let queue = SimpleDistributedQueue::builder(&client, "/reaped/q")
        .build()
        .unwrap();
    // Creates the container and lists it with a child watch (`wchc` shows data watches
    // only, so it cannot show this one); the take then waits on that watch.
    assert!(queue.try_take().await.unwrap().is_none());
    let waiting = tokio::spawn(async move { queue.take().await });
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    // Reaped: the empty container is deleted.
    other.delete("/reaped/q", None).await.unwrap();
    // The waiter notices, recreates the container and waits again; an offer reaches it.
    eventually("queue node recreated", || async {
        other.exists("/reaped/q").await.unwrap().is_some()
    })
    .await;
    SimpleDistributedQueue::builder(&other, "/reaped/q")
        .build()
        .unwrap()
        .put(b"after")
        .await
        .unwrap();
    let got = within("take after the reap", waiting)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&got[..], b"after");
}

#[tokio::test]
async fn priority_queue_takes_lower_numbers_first() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = DistributedPriorityQueue::builder(&client, "/pq")
        .build()
        .unwrap();
    for (item, priority) in [
        ("p5", 5),
        ("m1", -1),
        ("p3", 3),
        ("min", i32::MIN),
        ("p3b", 3),
    ] {
        queue.put(item, priority).await.unwrap();
    }
    assert_eq!(
        names(&client, "/pq").await[0],
        "queue-0800000000000000003",
        "i32::MIN: 0 + 80000000 + seq"
    );
    let mut consumer = queue.consumer();
    let mut got = Vec::new();
    while let Some(m) = consumer.try_take().await.unwrap() {
        got.push(text(&m));
    }
    assert_eq!(got, ["min", "m1", "p3", "p3b", "p5"]);

    // An urgent item put while a consumer works through a long listing is taken after at
    // most `refresh_after` more items.
    let queue = DistributedPriorityQueue::builder(&client, "/pq")
        .refresh_after(2)
        .build()
        .unwrap();
    for i in 0..20 {
        queue.put(format!("low{i}"), 100).await.unwrap();
    }
    let mut consumer = queue.consumer();
    let first = within("take", consumer.take()).await.unwrap();
    assert_eq!(text(&first), "low0");
    queue.put(b"urgent", -100).await.unwrap();
    let mut before_urgent = 0;
    loop {
        let m = within("take", consumer.take()).await.unwrap();
        if text(&m) == "urgent" {
            break;
        }
        before_urgent += 1;
    }
    assert!(
        before_urgent <= 2,
        "{before_urgent} items before the urgent one"
    );
}

#[tokio::test]
async fn delay_queue_hides_items_until_due() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = DistributedDelayQueue::builder(&client, "/dq")
        .build()
        .unwrap();
    let now = SystemTime::now();
    let later = now + Duration::from_secs(3);
    queue.put(b"later", later).await.unwrap();
    queue
        .put(b"past", now - Duration::from_secs(3600))
        .await
        .unwrap();
    let name = names(&client, "/dq").await;
    assert!(
        name.iter()
            .any(|n| n.starts_with("queue-|") && n.ends_with("|0000000000")),
        "{name:?}"
    );

    let mut consumer = queue.consumer();
    let m = within("take past", consumer.take()).await.unwrap();
    assert_eq!(text(&m), "past");
    assert!(consumer
        .take_timeout(Duration::from_millis(300))
        .await
        .unwrap()
        .is_none());
    // An item due sooner, put while the consumer sleeps until `later`, comes first.
    let producer = queue.clone();
    let sooner = tokio::spawn(async move {
        producer
            .put(b"sooner", SystemTime::now() + Duration::from_millis(200))
            .await
            .unwrap();
    });
    let m = within("take sooner", consumer.take()).await.unwrap();
    assert_eq!(text(&m), "sooner");
    sooner.await.unwrap();
    let m = within("take later", consumer.take()).await.unwrap();
    assert_eq!(text(&m), "later");
    assert!(SystemTime::now() >= later, "taken before it was due");
}

#[tokio::test]
async fn id_queue_removes_by_id_and_keeps_ids_on_requeue() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = DistributedIdQueue::builder(&client, "/iq")
        .lock_path("/iq-locks")
        .build()
        .unwrap();
    queue.put(b"1", "keep").await.unwrap();
    queue.put(b"2", "job/7").await.unwrap();
    queue.put(b"3", "job/7").await.unwrap();
    queue.put(b"4", "keep").await.unwrap();
    assert_eq!(
        names(&client, "/iq").await,
        [
            "queue-|job_7|0000000001",
            "queue-|job_7|0000000002",
            "queue-|keep|0000000000",
            "queue-|keep|0000000003"
        ]
    );
    assert_eq!(queue.remove("job/7").await.unwrap(), 2);
    assert_eq!(queue.remove("job/7").await.unwrap(), 0);

    let mut consumer = queue.consumer();
    let m = within("take", consumer.take()).await.unwrap();
    assert_eq!((text(&m), m.id()), ("1".into(), Some("keep")));
    // A locked item is not removed by id.
    assert_eq!(queue.remove("keep").await.unwrap(), 1);
    assert_eq!(queue.len().await.unwrap(), 1);
    m.fail().await.unwrap();
    let names = names(&client, "/iq").await;
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(
        names[0].starts_with("queue-|keep|"),
        "requeued with its id: {names:?}"
    );
    assert!(queue.put(b"x", "").await.unwrap_err().is_invalid_input());
}

#[tokio::test]
async fn a_bounded_queue_makes_put_wait_for_room() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = DistributedQueue::builder(&client, "/bq")
        .max_items(3)
        .build()
        .unwrap();
    for i in 0..3 {
        queue.put(format!("{i}")).await.unwrap();
    }
    let full = queue
        .try_put(b"no room", Duration::from_millis(300))
        .await
        .unwrap();
    assert!(full.is_none());
    assert_eq!(queue.len().await.unwrap(), 3);

    let producer = queue.clone();
    let mut blocked = tokio::spawn(async move { producer.put(b"3").await });
    assert!(
        tokio::time::timeout(Duration::from_millis(300), &mut blocked)
            .await
            .is_err(),
        "put went ahead in a full queue"
    );
    let other = connect(&zk).await;
    let mut consumer = DistributedQueue::builder(&other, "/bq")
        .build()
        .unwrap()
        .consumer();
    within("take", consumer.take()).await.unwrap();
    within("blocked put", blocked).await.unwrap().unwrap();
    assert_eq!(queue.len().await.unwrap(), 3);
}

#[tokio::test]
async fn dropping_a_take_or_a_consumer_loses_nothing() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = DistributedQueue::builder(&client, "/q").build().unwrap();
    for i in 0..4 {
        queue.put(format!("{i}")).await.unwrap();
    }
    let mut consumer = queue.consumer();
    let zero = within("take", consumer.take()).await.unwrap();
    assert_eq!(text(&zero), "0");
    // A take dropped right after its claim went out: the claim finishes into the consumer.
    tokio::select! {
        biased;
        _ = consumer.take() => panic!("a claim cannot finish without a round trip"),
        _ = std::future::ready(()) => {}
    }
    let one = within("take after a dropped take", consumer.take())
        .await
        .unwrap();
    assert_eq!(text(&one), "1");

    // A consumer dropped with claims in flight and claimed items not handed out: they are
    // put back (at the end: they had left the queue).
    let mut prefetching = queue.consumer().prefetch(3);
    let two = within("take", prefetching.take()).await.unwrap();
    assert_eq!(text(&two), "2");
    let mut got = Vec::new();
    tokio::select! {
        biased;
        m = prefetching.take() => got.push(text(&m.unwrap())), // its claim was already in
        _ = std::future::ready(()) => {}
    }
    drop(prefetching);
    let expected = 1 - got.len();
    eventually("claimed items given back", || async {
        queue.len().await.unwrap() == expected
    })
    .await;
    let mut consumer = queue.consumer();
    while let Some(m) = consumer.try_take().await.unwrap() {
        got.push(text(&m));
    }
    assert_eq!(got, ["3"], "each item exactly once");

    // With a lock path a dropped consumer's locks go; its items never left.
    let locked = DistributedQueue::builder(&client, "/lq")
        .lock_path("/lq-locks")
        .build()
        .unwrap();
    for i in 0..3 {
        locked.put(format!("{i}")).await.unwrap();
    }
    let mut prefetching = locked.consumer().prefetch(3);
    let m = within("take", prefetching.take()).await.unwrap();
    drop(m);
    drop(prefetching);
    eventually("locks gone", || async {
        names(&client, "/lq-locks").await.is_empty()
    })
    .await;
    assert_eq!(locked.len().await.unwrap(), 3);
}

#[tokio::test]
async fn bad_input_and_foreign_nodes() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let queue = DistributedQueue::builder(&client, "/q").build().unwrap();
    let e = queue.put_multi(Vec::<Vec<u8>>::new()).await.unwrap_err();
    assert!(
        e.is_invalid_input() && e.to_string().contains("empty batch"),
        "{e}"
    );
    // Bad settings are refused by `build`, before anything is sent.
    let e = DistributedQueue::builder(&client, "no-slash")
        .build()
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    let e = DistributedQueue::builder(&client, "/").build().unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    let e = DistributedQueue::builder(&client, "/q")
        .lock_path("/q")
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("lock path"), "{e}");
    let e = DistributedQueue::builder(&client, "/q")
        .max_items(0)
        .build()
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    let e = DistributedDelayQueue::builder(&client, "/dq")
        .build()
        .unwrap()
        .put(b"x", SystemTime::UNIX_EPOCH)
        .await
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    let e = queue.put(vec![0u8; 2 << 20]).await.unwrap_err();
    assert!(e.is_invalid_input(), "{e}");

    // A foreign child is skipped; a corrupt item is reported by path, removed, and the
    // consumer carries on.
    queue.put(b"good").await.unwrap();
    client
        .create("/q/not-an-item", b"", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create("/q/queue-", b"junk", CreateMode::PersistentSequential)
        .await
        .unwrap();
    queue.put(b"also good").await.unwrap();
    let mut consumer = queue.consumer();
    assert_eq!(text(&consumer.take().await.unwrap()), "good");
    let e = consumer.take().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidData, "{e}");
    assert_eq!(e.path(), Some("/q/queue-0000000002"), "{e}");
    assert!(e.to_string().contains("not a queue item"), "{e}");
    assert_eq!(text(&consumer.take().await.unwrap()), "also good");
    assert_eq!(names(&client, "/q").await, ["not-an-item"]);
}
