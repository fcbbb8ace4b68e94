//! The recipes' errors a caller can act on, matched by kind (never by text): a node whose
//! data is not what the recipe reads. (Queues' `InvalidData` is also checked in `queue.rs`,
//! a service instance's `InvalidData` in `discovery.rs`.) A recipe used before `start`,
//! started twice, or asked to take from an empty queue has no error kind any more: the
//! first two cannot be written (a started recipe comes only from its builder's `start`),
//! and an empty queue answers `None`.

mod support;

use zkrs_client::{CreateMode, ErrorKind};
use zkrs_recipes::counter::DistributedAtomicLong;
use zkrs_recipes::framework::RetryPolicy;
use zkrs_recipes::queue::SimpleDistributedQueue;
use zkrs_testkit::TestingServer;

#[tokio::test]
async fn nothing_to_take_is_none_and_foreign_data_is_a_kind() {
    let zk = TestingServer::start().unwrap();
    let client = support::connect(&zk).await;

    // Nothing to take.
    let queue = SimpleDistributedQueue::builder(&client, "/simple")
        .build()
        .unwrap();
    assert_eq!(queue.try_take().await.unwrap(), None);
    assert_eq!(queue.peek().await.unwrap(), None);

    // A counter node holding something else than 8 bytes.
    client
        .create("/long", b"abc", CreateMode::Persistent)
        .await
        .unwrap();
    let long = DistributedAtomicLong::builder(&client, "/long")
        .retry(RetryPolicy::default())
        .build()
        .unwrap();
    let e = long.get().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidData, "{e:?}");
}
