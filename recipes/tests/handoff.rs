//! A hand-off in one notification: when the contender a waiter watches was the only one
//! before it, the waiter learns it is first from the deletion's notification and sends no
//! request between that deletion and holding (Curator, and this crate before, listed the
//! children again: a second round trip per hand-off).
//!
//! The waiter's requests are counted with its client's metrics; each waiter has a session of
//! its own, so nothing else counts there.

use zkrs_client::{Client, OpCode};
use zkrs_recipes::leader::{LeaderElection, LeaderLatch, Leadership};
use zkrs_recipes::lock::{InterProcessMutex, InterProcessReadWriteLock};
use zkrs_testkit::TestingServer;

mod support;
use support::*;

/// Waits until the session `waiter` watches `node` on the server: it is in line.
///
/// A request is counted when its answer reaches the caller, and the server registers a watch
/// before it answers, so the watch's request may not be counted yet: the tests count a
/// waiter's requests over its whole wait (a fixed number, whatever the timing), not from here.
async fn until_watching(zk: &TestingServer, waiter: &Client, node: &str) {
    let session = waiter.session_id();
    eventually("the waiter to watch its predecessor", || async {
        server_watches(zk, session).iter().any(|p| p == node)
    })
    .await;
}

#[tokio::test]
async fn a_mutex_hand_off_sends_no_request() {
    let zk = TestingServer::start().unwrap();
    let clients = [connect(&zk).await, connect(&zk).await];
    let mutexes = clients.each_ref().map(|c| {
        InterProcessMutex::builder(c, "/handoff/mutex")
            .build()
            .unwrap()
    });
    let mut holder = within("the first lock", mutexes[0].acquire())
        .await
        .unwrap();
    // Back and forth, so each session is the waiter with a node made after a release.
    for round in 1..=4 {
        let waiter = round % 2;
        let mutex = mutexes[waiter].clone();
        let before = requests(&clients[waiter], None);
        let waiting = tokio::spawn(async move { mutex.acquire().await });
        until_watching(&zk, &clients[waiter], holder.path()).await;
        holder.release().await.unwrap();
        holder = within("the hand-off", waiting).await.unwrap().unwrap();
        // The create and the listing (pipelined), the predecessor's watch: nothing after.
        assert_eq!(
            requests(&clients[waiter], None) - before,
            3,
            "round {round}: the waiter asked the server again before holding the lock"
        );
    }
    holder.release().await.unwrap();
}

/// Third in line, a waiter also watches the holder (the one before its predecessor); when the
/// holder leaves it lists again while its predecessor holds, so the predecessor's release
/// alone hands it the lock: a deeper line hands over as a line of two does.
#[tokio::test]
async fn third_in_line_hands_over_without_a_request() {
    let zk = TestingServer::start().unwrap();
    let clients = [connect(&zk).await, connect(&zk).await, connect(&zk).await];
    let mutexes = clients.each_ref().map(|c| {
        InterProcessMutex::builder(c, "/handoff/deep")
            .build()
            .unwrap()
    });
    let first = within("the first lock", mutexes[0].acquire())
        .await
        .unwrap();
    let second = mutexes[1].clone();
    let second = tokio::spawn(async move { second.acquire().await });
    until_watching(&zk, &clients[1], first.path()).await;
    let third = mutexes[2].clone();
    let third = tokio::spawn(async move { third.acquire().await });
    // The third one watches the holder too (the look-ahead) besides its predecessor.
    until_watching(&zk, &clients[2], first.path()).await;
    let listed = listings(&clients[2]);
    first.release().await.unwrap();
    let second = within("the first hand-off", second).await.unwrap().unwrap();
    // The third one lists again once the holder left, while the second holds.
    eventually(
        "the third one to list again after the holder left",
        || async { listings(&clients[2]) > listed },
    )
    .await;
    let before = requests(&clients[2], None);
    second.release().await.unwrap();
    let third = within("the second hand-off", third).await.unwrap().unwrap();
    assert_eq!(
        requests(&clients[2], None),
        before,
        "third in line, the waiter asked the server again before holding the lock"
    );
    third.release().await.unwrap();
}

#[tokio::test]
async fn a_reader_behind_one_writer_gets_in_without_a_request() {
    let zk = TestingServer::start().unwrap();
    let (a, b) = (connect(&zk).await, connect(&zk).await);
    let lock_a = InterProcessReadWriteLock::builder(&a, "/handoff/rw")
        .build()
        .unwrap();
    let lock_b = InterProcessReadWriteLock::builder(&b, "/handoff/rw")
        .build()
        .unwrap();
    let write = within("the write lock", lock_a.write_lock().acquire())
        .await
        .unwrap();
    let reader = lock_b.read_lock();
    let before = requests(&b, None);
    let waiting = tokio::spawn(async move { reader.acquire().await });
    until_watching(&zk, &b, write.path()).await;
    write.release().await.unwrap();
    let read = within("the hand-off", waiting).await.unwrap().unwrap();
    // The create and the listing, the writer's watch: nothing after.
    assert_eq!(requests(&b, None) - before, 3, "the reader asked again");
    read.release().await.unwrap();
}

/// What a leader recipe's hand-off tests need of it: its node (or offer) once it leads.
trait InLine: Leadership {
    fn node(&self) -> String;
}

impl InLine for LeaderLatch {
    fn node(&self) -> String {
        self.node_path().expect("the leader's node")
    }
}

impl InLine for LeaderElection {
    fn node(&self) -> String {
        self.node_path().expect("the leader's offer")
    }
}

/// The next in line, started by `start` on its own session behind a leader, learns that the
/// leader left from the deletion's notification: `looks` counts `looked` requests of its
/// session from before it started to when it leads (the ones it makes to get in line), and
/// no more (`complaint` otherwise).
async fn next_in_line<L: InLine>(
    start: impl Fn(&Client, &str) -> L,
    looks: impl Fn(&Client) -> u64,
    looked: u64,
    complaint: &str,
) {
    let zk = TestingServer::start().unwrap();
    let (a, b) = (connect(&zk).await, connect(&zk).await);
    let leader = start(&a, "a");
    within("the first leadership", leader.await_leadership())
        .await
        .unwrap();
    let before = looks(&b);
    let next = start(&b, "b");
    until_watching(&zk, &b, &leader.node()).await;
    let mut leadership = next.leadership();
    leader.close().await.unwrap();
    within("the hand-off", leadership.wait_for(|leads| *leads))
        .await
        .unwrap();
    assert_eq!(looks(&b) - before, looked, "{complaint}");
    next.close().await.unwrap();
}

/// Third in line (each participant started by `start` on a session of its own), the third
/// also watches the leader (the one before its predecessor) and lists again once it leaves,
/// so the second's close alone makes it lead, without a request `looks` counts (`complaint`
/// otherwise).
async fn third_in_line<L: InLine>(
    start: impl Fn(&Client, &str) -> L,
    looks: impl Fn(&Client) -> u64,
    complaint: &str,
) {
    let zk = TestingServer::start().unwrap();
    let clients = [connect(&zk).await, connect(&zk).await, connect(&zk).await];
    let first = start(&clients[0], "a");
    within("the first leadership", first.await_leadership())
        .await
        .unwrap();
    let second = start(&clients[1], "b");
    let first_node = first.node();
    until_watching(&zk, &clients[1], &first_node).await;
    let third = start(&clients[2], "c");
    until_watching(&zk, &clients[2], &first_node).await;
    let listed = listings(&clients[2]);
    first.close().await.unwrap();
    within("the first hand-off", second.await_leadership())
        .await
        .unwrap();
    // It lists again, keeping its watch on the second.
    eventually(
        "the third one to list again after the leader left",
        || async { listings(&clients[2]) > listed },
    )
    .await;
    let before = looks(&clients[2]);
    let mut leadership = third.leadership();
    second.close().await.unwrap();
    within("the second hand-off", leadership.wait_for(|leads| *leads))
        .await
        .unwrap();
    assert_eq!(looks(&clients[2]), before, "{complaint}");
    third.close().await.unwrap();
}

fn latch(path: &'static str) -> impl Fn(&Client, &str) -> LeaderLatch {
    move |client, id| LeaderLatch::builder(client, path).id(id).start().unwrap()
}

fn election(root: &'static str) -> impl Fn(&Client, &str) -> LeaderElection {
    move |client, id| {
        LeaderElection::builder(client, root)
            .id(id)
            .start()
            .unwrap()
    }
}

/// A latch's listings and reads.
fn latch_looks(client: &Client) -> u64 {
    listings(client) + requests(client, Some(OpCode::GetData))
}

#[tokio::test]
async fn a_latch_hand_off_lists_nothing() {
    // The new leader watches its own node once it leads; what must not happen is a listing
    // (or a read) between the deletion and being told: one listing (with the create) and one
    // read (the watch on the leader) in all.
    let complaint = "the next in line looked again";
    next_in_line(latch("/handoff/latch"), latch_looks, 2, complaint).await;
}

#[tokio::test]
async fn a_latch_third_in_line_lists_nothing_at_its_hand_off() {
    let complaint = "third in line, it looked again";
    third_in_line(latch("/handoff/deep-latch"), latch_looks, complaint).await;
}

#[tokio::test]
async fn an_election_hand_off_lists_nothing() {
    // Before ELECTED the next one checks its own offer (an `exists`); what must not happen
    // is a listing after the first.
    let complaint = "the next in line listed the offers again";
    next_in_line(election("/handoff/election"), listings, 1, complaint).await;
}

#[tokio::test]
async fn an_election_third_in_line_lists_nothing_at_its_hand_off() {
    let complaint = "third in line, it listed the offers again";
    third_in_line(election("/handoff/deep-election"), listings, complaint).await;
}
