//! The recipes' errors a caller can act on, matched by kind (never by text): used before
//! `start`, started twice, nothing to take, a node whose data is not what the recipe reads.
//! (`Empty` and `InvalidData` of the queues are also checked in `queue.rs`, a service
//! instance's `InvalidData` in `discovery.rs`.)

mod support;

use zkrs_client::{CreateMode, ErrorKind};
use zkrs_recipes::cache::{NodeCache, PathChildrenCache, StartMode};
use zkrs_recipes::counter::{DistributedAtomicLong, SharedCount};
use zkrs_recipes::framework::RetryPolicy;
use zkrs_recipes::node::PersistentNode;
use zkrs_recipes::queue::SimpleDistributedQueue;
use zkrs_testkit::TestingServer;

#[tokio::test]
async fn wrong_state_empty_and_foreign_data_are_kinds() {
    let zk = TestingServer::start().unwrap();
    let client = support::connect(&zk).await;

    // Used before start.
    let count = SharedCount::new(&client, "/count", 0);
    assert_eq!(count.count().unwrap_err().kind(), ErrorKind::NotStarted);
    let node = PersistentNode::new(&client, "/node", CreateMode::Ephemeral, b"");
    let e = node
        .wait_for_initial_create(std::time::Duration::from_secs(1))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotStarted, "{e:?}");
    let children = PathChildrenCache::new(&client, "/kids");
    let e = children.clear_and_refresh().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotStarted, "{e:?}");

    // Started twice.
    count.start().await.unwrap();
    assert_eq!(
        count.start().await.unwrap_err().kind(),
        ErrorKind::AlreadyStarted
    );
    node.start().unwrap();
    assert_eq!(node.start().unwrap_err().kind(), ErrorKind::AlreadyStarted);
    let cache = NodeCache::new(&client, "/watched");
    cache.start().unwrap();
    assert_eq!(cache.start().unwrap_err().kind(), ErrorKind::AlreadyStarted);
    children.start(StartMode::Normal).await.unwrap();
    let e = children.start(StartMode::Normal).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::AlreadyStarted, "{e:?}");

    // Nothing to take.
    let queue = SimpleDistributedQueue::new(&client, "/simple");
    assert_eq!(queue.remove().await.unwrap_err().kind(), ErrorKind::Empty);

    // A counter node holding something else than 8 bytes.
    client
        .create("/long", b"abc", CreateMode::Persistent)
        .await
        .unwrap();
    let long = DistributedAtomicLong::new(&client, "/long", RetryPolicy::default());
    let e = long.get().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidData, "{e:?}");

    count.close();
    node.close().await.unwrap();
    cache.close().await;
    children.close().await;
}
