//! Lines that mix languages, through a fault: our waiter third in line watches the holder as
//! well as its predecessor (the look-ahead; a `LeaderLatch` also its own node) and a Curator
//! 5.4 peer waits between them; the holder's session expires (cut off by a `FaultyProxy`),
//! Curator's peer takes the lock (leads), and ours follows it in Curator's order, then
//! Curator's waits behind ours. For `InterProcessMutex` and `LeaderLatch`, and a one-lease
//! `InterProcessSemaphoreV2` whose holder's session expires.
//!
//! Needs a JDK and Curator's jars, as `tests/curator_interop.rs` (never skipped).

use std::time::Duration;

use zkrs_client::Client;
use zkrs_recipes::framework::{join, node_name};
use zkrs_recipes::leader::{LeaderLatch, LeadershipEvent};
use zkrs_recipes::lock::{InterProcessMutex, InterProcessSemaphoreV2};
use zkrs_testkit::{FaultyProxy, TestingServer};

mod support;
use support::{children_until, connect, new_name, within, Peer, DEADLINE};

/// A server, a `FaultyProxy` in front of it, a session through the proxy (2 s timeout: the
/// one the fault cuts off until it expires) and a session straight to the server.
async fn server_and_sessions() -> (TestingServer, FaultyProxy, Client, Client) {
    let zk = TestingServer::start().unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let cut_off = within(
        "connect through the proxy",
        Client::builder(&proxy.connect_string())
            .session_timeout(Duration::from_secs(2))
            .connect(),
    )
    .await
    .unwrap();
    let client = connect(&zk).await;
    (zk, proxy, cut_off, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_line_hands_over_through_the_holders_session_expiry() {
    let (zk, proxy, cut_off, client) = server_and_sessions().await;
    let path = "/interop/line-expiry";

    // rust-a holds, java-1 waits behind it, rust-b waits behind java-1 (and looks ahead at
    // rust-a).
    let a = within(
        "rust-a",
        InterProcessMutex::builder(&cut_off, path)
            .build()
            .unwrap()
            .acquire(),
    )
    .await
    .unwrap();
    let a_name = node_name(a.path()).to_string();
    let mut j1 = Peer::start("java-1", &["mutex", &zk.connect_string(), path]).await;
    let names = children_until(&client, path, "java-1's node", |c| c.len() == 2).await;
    let j1_name = new_name(&names, &[&a_name]);
    let b = {
        let mutex = InterProcessMutex::builder(&client, path).build().unwrap();
        tokio::spawn(async move { mutex.acquire().await })
    };
    let names = children_until(&client, path, "rust-b's node", |c| c.len() == 3).await;
    let b_name = new_name(&names, &[&a_name, &j1_name]);

    // The fault: rust-a's session is cut off until the server expires it, and its node goes.
    proxy.partition();
    assert_eq!(j1.expect("ACQUIRED").await, join(path, &j1_name));
    assert!(!b.is_finished(), "rust-b acquired while java-1 holds");
    j1.ask("release", "RELEASED").await;
    let b = within("rust-b after java-1", b).await.unwrap().unwrap();
    assert_eq!(b.path(), join(path, &b_name));

    // The other way: Curator's peer waits behind ours and gets the lock when ours goes.
    let mut j2 = Peer::start("java-2", &["mutex", &zk.connect_string(), path]).await;
    let names = children_until(&client, path, "java-2's node", |c| c.len() == 2).await;
    let j2_name = new_name(&names, &[&b_name]);
    j2.assert_silent("java-2 acquired while rust-b holds").await;
    b.release().await.unwrap();
    assert_eq!(j2.expect("ACQUIRED").await, join(path, &j2_name));
    j2.ask("release", "RELEASED").await;
    for peer in [j1, j2] {
        peer.exit().await;
    }
    proxy.heal();
    drop(a); // Its node went with its session.
    children_until(&client, path, "no node left", |c| c.is_empty()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_latch_line_hands_over_through_the_leaders_session_expiry() {
    let (zk, proxy, cut_off, client) = server_and_sessions().await;
    let cs = zk.connect_string();
    let path = "/interop/latch-line-expiry";

    // rust-a leads, java-1 waits behind it, rust-b waits behind java-1 (looking ahead at
    // rust-a, and watching its own node).
    let a = LeaderLatch::builder(&cut_off, path)
        .id("rust-a")
        .start()
        .unwrap();
    assert!(a.await_leadership_timeout(DEADLINE).await.unwrap());
    let mut j1 = Peer::start("java-1", &["latch", &cs, path, "java-1"]).await;
    children_until(&client, path, "java-1's node", |c| c.len() == 2).await;
    let b = LeaderLatch::builder(&client, path)
        .id("rust-b")
        .start()
        .unwrap();
    let mut b_events = b.events();
    children_until(&client, path, "rust-b's node", |c| c.len() == 3).await;
    let ids: Vec<String> = b
        .participants()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, ["rust-a", "java-1", "rust-b"]);

    // The fault: rust-a's session is cut off until the server expires it, and its node goes.
    proxy.partition();
    j1.expect("LEADER").await;
    assert!(!b.is_leader(), "rust-b leads beside java-1");
    assert_eq!(j1.ask("has", "HAS_LEADERSHIP").await, "true");
    j1.exit().await; // Closes its latch and its session.

    assert_eq!(
        within("rust-b leads after java-1", b_events.next()).await,
        Some(LeadershipEvent::Gained)
    );

    // The other way: Curator's peer waits behind ours and leads when ours goes.
    let mut j2 = Peer::start("java-2", &["latch", &cs, path, "java-2"]).await;
    children_until(&client, path, "java-2's node", |c| c.len() == 2).await;
    assert_eq!(j2.ask("leader", "LEADER_ID").await, "rust-b");
    assert_eq!(j2.ask("has", "HAS_LEADERSHIP").await, "false");
    b.close().await.unwrap();
    j2.expect("LEADER").await;
    j2.exit().await;
    // rust-a's node went with its session; closed before the heal, it does not join again.
    drop(a);
    proxy.heal();
    children_until(&client, path, "no node left", |c| c.is_empty()).await;
}

/// A one-lease semaphore shared with Curator through a holder's session expiry: ours holds
/// the lease (through a `FaultyProxy`), Curator's peer waits for it (holding the semaphore's
/// mutex), ours waits behind (on the mutex); the holder is cut off until its session expires;
/// Curator's peer gets the lease, ours only once Curator's returns it; then Curator's waits
/// behind ours. Every mutex node goes (ours let go in the background once a lease is
/// counted), and no lease is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mixed_semaphore_hands_its_lease_over_through_the_holders_session_expiry() {
    let (zk, proxy, cut_off, client) = server_and_sessions().await;
    let path = "/interop/semaphore-expiry";
    let (leases, locks) = (join(path, "leases"), join(path, "locks"));
    let semaphore = |c: &Client| {
        InterProcessSemaphoreV2::builder(c, path, 1)
            .build()
            .unwrap()
    };

    // rust-a holds the lease; java-1 waits for it, holding the mutex; rust-b waits on the
    // mutex behind java-1.
    let a = within("rust-a's lease", semaphore(&cut_off).acquire_one())
        .await
        .unwrap();
    children_until(&client, &locks, "rust-a's mutex let go", |c| c.is_empty()).await;
    let mut j1 = Peer::start("java-1", &["semaphore", &zk.connect_string(), path, "1"]).await;
    j1.send("acquire");
    let names = children_until(&client, &leases, "java-1's lease node", |c| c.len() == 2).await;
    let j1_lease = new_name(&names, &[a.node_name()]);
    let b = {
        let semaphore = semaphore(&client);
        tokio::spawn(async move { semaphore.acquire_one().await })
    };
    children_until(&client, &locks, "rust-b behind java-1", |c| c.len() == 2).await;

    // The fault: rust-a's session is cut off until the server expires it, and its lease goes.
    proxy.partition();
    assert_eq!(j1.expect("LEASE").await, join(&leases, &j1_lease));
    // rust-b now holds the mutex and waits for the one lease java-1 holds.
    children_until(&client, &leases, "rust-b's lease node", |c| c.len() == 2).await;
    assert!(!b.is_finished(), "rust-b took a second lease of one");
    j1.ask("release", "RELEASED").await;
    let b = within("rust-b after java-1", b).await.unwrap().unwrap();
    let names = children_until(&client, &leases, "rust-b's lease alone", |c| c.len() == 1).await;
    assert_eq!(names, [b.node_name()]);

    // The other way: Curator's peer waits for the lease ours holds, and gets it when ours
    // returns it.
    let mut j2 = Peer::start("java-2", &["semaphore", &zk.connect_string(), path, "1"]).await;
    j2.send("acquire");
    children_until(&client, &leases, "java-2's lease node", |c| c.len() == 2).await;
    j2.assert_silent("java-2 took a second lease of one").await;
    b.release().await.unwrap();
    j2.expect("LEASE").await;
    j2.ask("release", "RELEASED").await;
    for peer in [j1, j2] {
        peer.exit().await;
    }
    proxy.heal();
    drop(a); // Its node went with its session.
    children_until(&client, &leases, "no lease left", |c| c.is_empty()).await;
    children_until(&client, &locks, "no mutex node left", |c| c.is_empty()).await;
}
