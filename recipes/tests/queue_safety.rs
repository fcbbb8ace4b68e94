//! Queue safety, at scale: 3 producers and 3 consumers, each on a session of its own, move
//! 10,000 items. Without a lock path none is lost and none delivered twice; with a lock path
//! a consumer whose session dies mid-handler loses nothing, and does not delete the item it
//! was handling once another consumer has it (apache/curator#1122).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use zkrs_client::{Client, ConnectionState};
use zkrs_recipes::framework::join_all;
use zkrs_recipes::queue::{DistributedQueue, QueueConsumer};
use zkrs_testkit::{FaultyProxy, ServerOptions, TestingServer};

mod support;
use support::*;

const ITEMS: usize = 10_000;
const PRODUCERS: usize = 3;
const CONSUMERS: usize = 3;
/// Puts in flight per producer.
const WINDOW: usize = 32;
/// For the whole run of 10,000 items.
const RUN: Duration = Duration::from_secs(240);

/// Per item: how often it was delivered, and how often completed.
struct Tally {
    delivered: Vec<AtomicU32>,
    completed: Vec<AtomicU32>,
    completions: AtomicUsize,
}

/// Waits for every task, at most [`RUN`]; past it, fails saying how many items `marks` never
/// marked (`what`: "delivered", "completed").
async fn all_done(tasks: Vec<tokio::task::JoinHandle<()>>, marks: &[AtomicU32], what: &str) {
    tokio::time::timeout(RUN, async {
        for t in tasks {
            t.await.unwrap();
        }
    })
    .await
    .unwrap_or_else(|_| {
        let missing = marks
            .iter()
            .filter(|m| m.load(Ordering::SeqCst) == 0)
            .count();
        panic!("not done within {RUN:?}: {missing} items never {what}")
    });
}

impl Tally {
    fn new() -> Arc<Tally> {
        Arc::new(Tally {
            delivered: (0..ITEMS).map(|_| AtomicU32::new(0)).collect(),
            completed: (0..ITEMS).map(|_| AtomicU32::new(0)).collect(),
            completions: AtomicUsize::new(0),
        })
    }

    fn done(&self) -> bool {
        self.completions.load(Ordering::SeqCst) >= ITEMS
    }
}

/// An item: its index, padded to 100 bytes.
fn item(index: usize) -> Vec<u8> {
    let mut bytes = format!("{index:08}").into_bytes();
    bytes.resize(100, b'.');
    bytes
}

fn index_of(bytes: &[u8]) -> usize {
    std::str::from_utf8(&bytes[..8]).unwrap().parse().unwrap()
}

/// Producer `p` puts items p, p + PRODUCERS, ... with WINDOW puts in flight.
async fn produce(client: Client, path: &'static str, p: usize) {
    let queue = DistributedQueue::builder(&client, path).build().unwrap();
    let mine: Vec<usize> = (p..ITEMS).step_by(PRODUCERS).collect();
    for chunk in mine.chunks(WINDOW) {
        for r in join_all(chunk.iter().map(|&i| queue.put(item(i)))).await {
            r.unwrap();
        }
    }
    client.close().await.unwrap();
}

/// Takes and completes items until every item is completed.
async fn consume(mut consumer: QueueConsumer, tally: Arc<Tally>) {
    while !tally.done() {
        let Some(message) = consumer
            .take_timeout(Duration::from_millis(200))
            .await
            .unwrap()
        else {
            continue;
        };
        let index = index_of(&message.items()[0]);
        tally.delivered[index].fetch_add(1, Ordering::SeqCst);
        message.complete().await.unwrap();
        tally.completed[index].fetch_add(1, Ordering::SeqCst);
        tally.completions.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_items_none_lost_none_twice_without_a_lock_path() {
    let zk = TestingServer::start().unwrap();
    let tally = Tally::new();
    let mut tasks = Vec::new();
    for _ in 0..CONSUMERS {
        let consumer = DistributedQueue::builder(&connect(&zk).await, "/safety")
            .build()
            .unwrap()
            .consumer();
        tasks.push(tokio::spawn(consume(consumer, tally.clone())));
    }
    for p in 0..PRODUCERS {
        tasks.push(tokio::spawn(produce(connect(&zk).await, "/safety", p)));
    }
    all_done(tasks, &tally.delivered, "delivered").await;
    for i in 0..ITEMS {
        assert_eq!(
            tally.delivered[i].load(Ordering::SeqCst),
            1,
            "item {i} delivered a wrong number of times"
        );
    }
    let checker = connect(&zk).await;
    assert_eq!(children(&checker, "/safety").await, 0, "items left behind");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_items_with_a_lock_path_and_a_consumer_killed_mid_handler() {
    let zk = TestingServer::start_with(ServerOptions::new().min_session_timeout_ms(400)).unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let tally = Tally::new();
    let mut tasks = Vec::new();
    for _ in 0..CONSUMERS - 1 {
        let queue = DistributedQueue::builder(&connect(&zk).await, "/safety")
            .lock_path("/safety-locks")
            .build()
            .unwrap();
        tasks.push(tokio::spawn(consume(queue.consumer(), tally.clone())));
    }
    // The victim: through the proxy, with a short session. After 500 items it holds one and
    // stops in its handler until told to go on.
    let victim_client = Client::builder(&proxy.connect_string())
        .session_timeout(Duration::from_millis(1500))
        .connect()
        .await
        .unwrap();
    let (holding_tx, mut holding_rx) = mpsc::unbounded_channel::<usize>();
    let (go_tx, go_rx) = oneshot::channel::<()>();
    let victim = {
        let tally = tally.clone();
        let mut consumer = DistributedQueue::builder(&victim_client, "/safety")
            .lock_path("/safety-locks")
            .build()
            .unwrap()
            .consumer();
        tokio::spawn(async move {
            let mut handled = 0;
            loop {
                let message = consumer.take().await.unwrap();
                let index = index_of(&message.items()[0]);
                tally.delivered[index].fetch_add(1, Ordering::SeqCst);
                handled += 1;
                if handled == 500 {
                    holding_tx.send(index).unwrap();
                    go_rx.await.unwrap();
                    // Its session is gone, and another consumer has the item: the victim
                    // must not delete it.
                    let e = message.complete().await.unwrap_err();
                    assert!(e.is_session_expired(), "{e}");
                    return index;
                }
                message.complete().await.unwrap();
                tally.completed[index].fetch_add(1, Ordering::SeqCst);
                tally.completions.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    for p in 0..PRODUCERS {
        tasks.push(tokio::spawn(produce(connect(&zk).await, "/safety", p)));
    }
    let held = within("the victim holds an item", holding_rx.recv())
        .await
        .unwrap();
    // The victim's process "dies": no more packets. Its session expires on the server, its
    // lock goes, and another consumer takes the item.
    proxy.partition();
    tokio::time::timeout(RUN, async {
        while tally.completed[held].load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the dead consumer's item was never taken again");
    // Back from the dead (a new session): it finds its lock gone and leaves the item alone.
    proxy.heal();
    go_tx.send(()).unwrap();
    assert_eq!(within("victim", victim).await.unwrap(), held);

    all_done(tasks, &tally.completed, "completed").await;
    let mut twice = Vec::new();
    for i in 0..ITEMS {
        assert_eq!(
            tally.completed[i].load(Ordering::SeqCst),
            1,
            "item {i} completed a wrong number of times"
        );
        if tally.delivered[i].load(Ordering::SeqCst) > 1 {
            twice.push(i);
        }
    }
    // Only the item the victim held was delivered twice.
    assert_eq!(twice, [held]);
    let checker = connect(&zk).await;
    assert_eq!(children(&checker, "/safety").await, 0, "items left behind");
    assert_eq!(
        children(&checker, "/safety-locks").await,
        0,
        "locks left behind"
    );
}

/// How a consumer gives up the item it holds, in [`a_settle_held_back_past_a_session_loss`].
#[derive(Debug, Clone, Copy)]
enum Settle {
    Release,
    Complete,
}

/// Polls `f` once, so that it runs up to its first wait; it must still be waiting then.
async fn poll_once<F: std::future::Future + Unpin>(f: &mut F) {
    std::future::poll_fn(|cx| {
        let polled = std::pin::Pin::new(&mut *f).poll(cx);
        assert!(polled.is_pending(), "done at once");
        std::task::Poll::Ready(())
    })
    .await
}

/// A consumer's settle (release or complete) that passed its session check but whose request
/// was held back until its session was lost: it must not be sent on the next session, where
/// it would delete the lock of the consumer that took the item meanwhile (and, for a
/// complete, the item under it: an item handled twice).
///
/// The request is held back by the client's bound on requests in flight (one): a request
/// made while disconnected holds the only place until the client declares the session lost
/// (disconnected for the session timeout), which fails it and frees the place; the settle's
/// request then waits for a connection, which the next session gives.
async fn a_settle_held_back_past_a_session_loss(settle: Settle) {
    const TIMEOUT: Duration = Duration::from_secs(3);
    let zk = TestingServer::start().unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let observer = connect(&zk).await;
    let queue_b = DistributedQueue::builder(&connect(&zk).await, "/held")
        .lock_path("/held-locks")
        .build()
        .unwrap();
    queue_b.put(b"x").await.unwrap();

    let a = Client::builder(&proxy.connect_string())
        .session_timeout(TIMEOUT)
        .max_in_flight(1)
        .connect()
        .await
        .unwrap();
    let mut consumer_a = DistributedQueue::builder(&a, "/held")
        .lock_path("/held-locks")
        .build()
        .unwrap()
        .consumer();
    let message = within("A takes the item", consumer_a.take()).await.unwrap();
    let lock = format!("/held-locks/{}", message.name());
    let stat = observer.exists(&lock).await.unwrap().expect("A's lock");
    assert_eq!(stat.ephemeral_owner, a.session_id());

    // A's link goes dead; once A knows, its requests wait for a connection.
    let mut states = a.state_changes();
    proxy.partition();
    next_state(&mut states, ConnectionState::Suspended).await;
    let waiting = a.clone();
    let mut blocker = Box::pin(async move { waiting.exists("/held").await });
    poll_once(&mut blocker).await;
    let mut settled = match settle {
        Settle::Release => Box::pin(message.release())
            as std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send>>,
        Settle::Complete => Box::pin(message.complete()),
    };
    poll_once(&mut settled).await;
    let blocker = tokio::spawn(blocker);
    let settled = tokio::spawn(settled);

    // The server expires A's session (its lock goes) and B takes the item.
    within("A's session expires on the server", async {
        while let (Some(_), gone) = observer.exists_and_watch(&lock).await.unwrap() {
            gone.await;
        }
    })
    .await;
    let mut consumer_b = queue_b.consumer();
    let b_message = within("B takes the item", consumer_b.take()).await.unwrap();
    let b_session = observer.exists(&lock).await.unwrap().expect("B's lock");
    // A declares its session lost, then makes a new one.
    next_state(&mut states, ConnectionState::Lost).await;
    proxy.heal();
    next_state(&mut states, ConnectionState::Reconnected).await;
    let blocked = within("the blocker", blocker).await.unwrap();
    assert!(blocked.unwrap_err().is_session_expired());
    let outcome = within("A's settle", settled).await.unwrap();

    let now = observer.exists(&lock).await.unwrap();
    assert_eq!(
        now.map(|s| s.ephemeral_owner),
        Some(b_session.ephemeral_owner),
        "{settle:?} of a lost session's lock deleted the next consumer's lock (outcome {:?})",
        outcome.map_err(|e| e.to_string())
    );
    // A hears that its lock went with its session: a release has nothing left to do, a
    // complete says the item was not settled.
    match settle {
        Settle::Release => outcome.unwrap(),
        Settle::Complete => assert!(outcome.unwrap_err().is_session_expired()),
    }
    // B still holds the item and settles it.
    b_message.complete().await.unwrap();
}

#[tokio::test]
async fn a_release_held_back_past_a_session_loss_leaves_the_next_lock_alone() {
    a_settle_held_back_past_a_session_loss(Settle::Release).await;
}

#[tokio::test]
async fn a_complete_held_back_past_a_session_loss_leaves_the_next_lock_alone() {
    a_settle_held_back_past_a_session_loss(Settle::Complete).await;
}
