//! Cancel safety of the ways out: a `close`, `stop`, `leave` or `release` whose future is
//! dropped half-way (bounded by a timeout while the server is unreachable) still deletes the
//! recipe's node once the connection returns, on the same session. Without that, the node
//! outlives the handle for as long as the session lasts, and blocks everyone behind it (the
//! soak run found a latch node left so, seed 5931608014180215662).
//!
//! Each case: the recipe holds a node, the client is cut off from the server by a proxy
//! (the session survives: its timeout is longer than the cut), the way out is started and
//! dropped after a moment, the connection heals, and the node must go within the deadline.

use std::future::Future;
use std::time::Duration;

use zkrs_client::{Client, ClientBuilder, CreateMode};
use zkrs_recipes::barrier::DistributedDoubleBarrier;
use zkrs_recipes::node::PersistentNode;
use zkrs_recipes::queue::DistributedQueue;
use zkrs_recipes::{
    leader::{CloseMode, LeaderElection},
    lock::InterProcessMutex,
};
use zkrs_testkit::{FaultyProxy, TestingServer};

mod support;
use support::*;

/// Long enough that the cut below never costs the session.
const SESSION: Duration = Duration::from_secs(20);

/// A server, a proxy in front of it, an observer connected directly and the recipe's
/// client connected through the proxy.
struct Rig {
    _zk: TestingServer,
    proxy: FaultyProxy,
    observer: Client,
    client: Client,
}

impl Rig {
    async fn start() -> Rig {
        let zk = TestingServer::start().unwrap();
        let proxy = FaultyProxy::start(zk.address()).unwrap();
        let observer = connect(&zk).await;
        let client = ClientBuilder::new(proxy.connect_string())
            .session_timeout(SESSION)
            .connect()
            .await
            .unwrap();
        Rig {
            _zk: zk,
            proxy,
            observer,
            client,
        }
    }

    /// The children of `dir` whose names pass `keep`, sorted.
    async fn children(&self, dir: &str, keep: fn(&str) -> bool) -> Vec<String> {
        let mut names: Vec<String> = self
            .observer
            .get_children(dir)
            .await
            .unwrap()
            .iter()
            .filter(|n| keep(n))
            .map(str::to_string)
            .collect();
        names.sort();
        names
    }

    /// Waits until `dir` has exactly `n` children that pass `keep`.
    async fn children_become(&self, dir: &str, n: usize, keep: fn(&str) -> bool) {
        eventually(&format!("{dir} has {n} children"), || async {
            self.children(dir, keep).await.len() == n
        })
        .await;
    }

    /// Cuts the client off, starts `way_out` and drops it unfinished, heals the cut, and
    /// checks that the node under `dir` goes, on the same session.
    async fn cancel_while_cut_off<F: Future>(&self, dir: &str, keep: fn(&str) -> bool, way_out: F) {
        let session = self.client.session_id();
        assert_eq!(
            self.children(dir, keep).await.len(),
            1,
            "the recipe holds its node"
        );
        self.proxy.partition();
        let finished = tokio::time::timeout(Duration::from_millis(300), way_out).await;
        assert!(
            finished.is_err(),
            "the way out finished while the server was unreachable"
        );
        assert_eq!(
            self.children(dir, keep).await.len(),
            1,
            "nothing was deleted while cut off"
        );
        self.proxy.heal();
        self.children_become(dir, 0, keep).await;
        assert_eq!(self.client.session_id(), session, "the session survived");
    }
}

fn any(_: &str) -> bool {
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_latch_close_still_deletes_the_node() {
    let rig = Rig::start().await;
    let latch = leading_latch(&rig.client, "/latch").await;
    rig.cancel_while_cut_off("/latch", any, latch.close_with(CloseMode::Silent))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_election_stop_still_deletes_the_offer() {
    let rig = Rig::start().await;
    let election = LeaderElection::builder(&rig.client, "/election")
        .id("host-a")
        .start()
        .unwrap();
    assert!(
        election
            .await_state(zkrs_recipes::leader::ElectionState::Elected, DEADLINE)
            .await
    );
    // Cut short, the close drops the election where it stopped.
    rig.cancel_while_cut_off("/election", any, election.close())
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_persistent_node_close_still_deletes_the_node() {
    let rig = Rig::start().await;
    rig.observer
        .create("/members", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let node = PersistentNode::builder(&rig.client, "/members/me", CreateMode::Ephemeral)
        .data(b"x")
        .start()
        .unwrap();
    assert!(node.wait_for_initial_create(DEADLINE).await.unwrap());
    rig.cancel_while_cut_off("/members", any, node.close())
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_barrier_leave_still_deletes_our_member_node() {
    let rig = Rig::start().await;
    let barrier = DistributedDoubleBarrier::builder(&rig.client, "/barrier", 1)
        .build()
        .unwrap();
    assert!(within("enter", barrier.enter(None)).await.unwrap());
    let member = |name: &str| name != "ready";
    rig.cancel_while_cut_off("/barrier", member, barrier.leave(None))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_message_release_still_deletes_the_lock() {
    let rig = Rig::start().await;
    let queue = DistributedQueue::builder(&rig.client, "/q")
        .lock_path("/q-locks")
        .build()
        .unwrap();
    queue.put(b"item").await.unwrap();
    let mut consumer = queue.consumer();
    let message = within("take", consumer.take()).await.unwrap();
    rig.cancel_while_cut_off("/q-locks", any, message.release())
        .await;
    // The item stayed where it was, for the next consumer.
    assert_eq!(rig.children("/q", any).await, ["queue-0000000000"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_lock_release_still_deletes_the_node() {
    let rig = Rig::start().await;
    let guard = InterProcessMutex::builder(&rig.client, "/lock")
        .build()
        .unwrap()
        .acquire()
        .await
        .unwrap();
    rig.cancel_while_cut_off("/lock", any, guard.release())
        .await;
}
