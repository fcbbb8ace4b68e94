//! Queue claims whose replies are lost, through a faulty proxy between the consumer and a real
//! server: the request reached the server, the reply never came, the connection dropped.
//! - no lock path: the delete went through, so the item is ours, but we cannot know it (the
//!   node is gone either way): it is counted as in doubt and not delivered (at most once);
//! - lock path: the lock node is ours (same session) and is adopted after the reconnect, not
//!   created twice; the item is delivered.

use std::time::Duration;

use zkrs_client::{Client, ConnectionState};
use zkrs_recipes::queue::{DistributedQueue, QueueConsumer};
use zkrs_testkit::{FaultyProxy, TestingServer};

mod support;
use support::*;

/// Starts a claim (one poll of `take`, which sends its requests), then loses the replies
/// and the connection once `applied` holds on the server.
async fn claim_with_lost_reply<F, Fut>(
    consumer: &mut QueueConsumer,
    proxy: &FaultyProxy,
    applied: F,
) where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    proxy.mute_replies(true);
    tokio::select! {
        biased;
        _ = consumer.take() => panic!("a claim cannot finish without its reply"),
        _ = std::future::ready(()) => {}
    }
    eventually("the claim reached the server", applied).await;
    proxy.cut();
    proxy.mute_replies(false);
    proxy.heal();
}

#[tokio::test]
async fn a_lost_delete_reply_is_in_doubt_never_delivered() {
    let zk = TestingServer::start().unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let observer = connect(&zk).await;
    let client = Client::connect(&proxy.connect_string()).await.unwrap();
    let queue = DistributedQueue::builder(&client, "/q").build().unwrap();
    queue.put(b"a").await.unwrap();
    queue.put(b"b").await.unwrap();
    let mut consumer = queue.consumer();
    let a = within("take a", consumer.take()).await.unwrap();
    assert_eq!(&a.items()[0][..], b"a");

    claim_with_lost_reply(&mut consumer, &proxy, || async {
        observer
            .exists("/q/queue-0000000001")
            .await
            .unwrap()
            .is_none()
    })
    .await;
    let next = within(
        "take after the reconnect",
        consumer.take_timeout(Duration::from_millis(500)),
    )
    .await
    .unwrap();
    assert!(next.is_none(), "delivered an item whose claim is in doubt");
    assert_eq!(consumer.stats().in_doubt, 1, "{:?}", consumer.stats());

    // The consumer goes on normally.
    queue.put(b"c").await.unwrap();
    let c = within("take c", consumer.take()).await.unwrap();
    assert_eq!(&c.items()[0][..], b"c");
}

#[tokio::test]
async fn a_lost_lock_create_reply_is_adopted_after_the_reconnect() {
    let zk = TestingServer::start().unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let observer = connect(&zk).await;
    let client = Client::connect(&proxy.connect_string()).await.unwrap();
    let queue = locked_queue(&client);
    queue.put(b"a").await.unwrap();
    queue.put(b"b").await.unwrap();
    let mut consumer = queue.consumer();
    let a = within("take a", consumer.take()).await.unwrap();
    a.complete().await.unwrap();

    claim_with_lost_reply(&mut consumer, &proxy, || async {
        observer
            .exists("/q-locks/queue-0000000001")
            .await
            .unwrap()
            .is_some()
    })
    .await;
    let b = within("take b after the reconnect", consumer.take())
        .await
        .unwrap();
    assert_eq!(&b.items()[0][..], b"b");
    assert!(b.is_held());
    let (_, lock) = observer
        .get_data("/q-locks/queue-0000000001")
        .await
        .unwrap();
    assert_eq!(
        lock.ephemeral_owner,
        client.session_id(),
        "our lock, adopted"
    );
    b.complete().await.unwrap();
    assert_eq!(children(&observer, "/q").await, 0);
    assert_eq!(children(&observer, "/q-locks").await, 0);
}

#[tokio::test]
async fn a_waiting_consumer_survives_its_session_expiring() {
    // apache/curator#1140: a queue consumer was dead after a long disconnect.
    let zk = TestingServer::start().unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let observer = connect(&zk).await;
    let client = Client::builder(&proxy.connect_string())
        .session_timeout(Duration::from_millis(1500))
        .connect()
        .await
        .unwrap();
    let mut changes = client.state_changes();
    let mut consumer = DistributedQueue::builder(&client, "/q")
        .build()
        .unwrap()
        .consumer();
    assert!(consumer.try_take().await.unwrap().is_none());
    let waiting = tokio::spawn(async move {
        let m = consumer.take().await.unwrap();
        (m.items()[0].clone(), consumer.stats())
    });
    let old_session = client.session_id();
    proxy.partition();
    within("the session is lost", async {
        while let Some(change) = changes.next().await {
            if change.state == ConnectionState::Lost {
                return;
            }
        }
    })
    .await;
    proxy.heal();
    within("a new session", async {
        while client.session_id() == old_session || !client.state().is_connected() {
            changes.next().await;
        }
    })
    .await;
    DistributedQueue::builder(&observer, "/q")
        .build()
        .unwrap()
        .put(b"after the expiry")
        .await
        .unwrap();
    let (item, stats) = within("the consumer takes it", waiting).await.unwrap();
    assert_eq!(&item[..], b"after the expiry");
    assert!(stats.listings >= 2, "{stats:?}");
}
