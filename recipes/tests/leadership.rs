//! The leader recipes' one vocabulary ([`Leadership`]), the same test for each of
//! `LeaderLatch`, `LeaderSelector`, `LeaderElection` and `MasterElection`, written once over
//! the trait: the first contender leads, the second waits (and a bounded wait says so
//! without an error); the first leaves, the second is told and leads; a wait on a stopped
//! recipe fails with an error of kind "closed", not a hang.

use std::future::Future;
use std::time::Duration;

use zkrs_client::Client;
use zkrs_recipes::leader::{ElectionEvent, LeaderContext, Leadership, LeadershipEvent};
use zkrs_recipes::leader::{LeaderElection, LeaderLatch, LeaderSelector, MasterElection};
use zkrs_testkit::TestingServer;

mod support;
use support::*;

/// Runs the story with contenders made by `join` (a client, an id); `gained` says whether an
/// event tells that leadership was gained.
async fn story<L, J>(name: &str, join: J, gained: impl Fn(&L::Event) -> bool)
where
    L: Leadership + Send + Sync + 'static,
    L::Event: std::fmt::Debug,
    J: Fn(&Client, &str) -> zkrs_client::Result<L>,
{
    let zk = TestingServer::start().unwrap();
    let (a_client, b_client) = (connect(&zk).await, connect(&zk).await);
    let join = |client: &Client, id: &str| join(client, id).unwrap();
    let a = join(&a_client, "a");
    within(name, a.await_leadership()).await.unwrap();
    assert!(a.is_leader(), "{name}: a leads");
    assert!(a.leadership().get(), "{name}: a's leadership value");

    let b = join(&b_client, "b");
    let mut b_events = b.events();
    assert!(
        !b.await_leadership_timeout(Duration::from_millis(300))
            .await
            .unwrap(),
        "{name}: b waits while a leads"
    );
    assert!(!b.is_leader());

    within(name, a.close()).await.unwrap();
    within(&format!("{name}: b told it leads"), async {
        loop {
            let event = b_events.next().await.expect("b's events ended");
            if gained(&event) {
                break;
            }
        }
    })
    .await;
    assert!(b.await_leadership_timeout(DEADLINE).await.unwrap());
    assert!(b.is_leader(), "{name}: b leads");
    within(name, b.close()).await.unwrap();
}

/// Whether a [`LeadershipEvent`] tells that leadership was gained.
fn gained(event: &LeadershipEvent) -> bool {
    *event == LeadershipEvent::Gained
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_latch() {
    let join = |c: &Client, id: &str| LeaderLatch::builder(c, "/lead/latch").id(id).start();
    story("latch", join, gained).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selector() {
    let join = |c: &Client, id: &str| {
        let lead = |ctx: LeaderContext| async move {
            ctx.cancelled().await;
        };
        LeaderSelector::builder(c, "/lead/selector", lead)
            .id(id)
            .start()
    };
    story("selector", join, gained).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_election() {
    let join = |c: &Client, id: &str| LeaderElection::builder(c, "/lead/election").id(id).start();
    story("election", join, |e| *e == ElectionEvent::ElectedComplete).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_election() {
    let join = |c: &Client, id: &str| MasterElection::builder(c, "/lead/master").id(id).start();
    story("master", join, gained).await;
}

/// Waits on a recipe that stops meanwhile end with an error whose kind is "closed".
async fn a_wait_ends_when_stopped<F: Future<Output = zkrs_client::Result<()>>>(
    name: &str,
    wait: F,
    stop: impl Future<Output = ()>,
) {
    let (waited, ()) = tokio::join!(within(name, wait), stop);
    let e = waited.expect_err("the wait succeeded");
    assert!(e.is_closed(), "{name}: {e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_on_a_stopped_recipe_fails_as_closed() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let holder = MasterElection::builder(&client, "/stop/master")
        .id("holder")
        .start()
        .unwrap();
    holder.await_leadership().await.unwrap();

    let other = connect(&zk).await;
    let master = MasterElection::builder(&other, "/stop/master")
        .id("waiter")
        .start()
        .unwrap();
    a_wait_ends_when_stopped("master resigns", master.await_leadership(), async {
        master.resign().await.unwrap();
    })
    .await;
    // Contending again: waits again (and wins once the holder leaves).
    assert!(master.rejoin());
    holder.close().await.unwrap();
    within("master after the holder left", master.await_leadership())
        .await
        .unwrap();

    // (A LeaderElection is only stopped by `close(self)`, which a pending wait, borrowing
    // it, rules out by construction.)
    let lock = zkrs_recipes::lock::InterProcessMutex::builder(&client, "/stop/selector")
        .build()
        .unwrap();
    let guard = within("the lock", lock.acquire()).await.unwrap();
    let selector = LeaderSelector::builder(&other, "/stop/selector", |ctx| async move {
        ctx.cancelled().await;
    })
    .id("s")
    .start()
    .unwrap();
    // The selector waits behind the lock; a bad-path latch fails at once with its reason.
    let e = LeaderLatch::builder(&other, "no-slash")
        .id("l")
        .start()
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    assert!(!selector.is_leader());
    guard.release().await.unwrap();
    within("the selector leads", selector.await_leadership())
        .await
        .unwrap();
    selector.close().await.unwrap();
}
