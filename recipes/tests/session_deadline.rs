//! The session-deadline policy against a real server: a lock holder keeps its lock through a
//! suspension shorter than the deadline (where the standard policy drops it), and hears
//! "lost" at the deadline, before the server expires the session; fencing tokens grow from
//! holder to holder, across a session expiry too.
//!
//! Every wait has a deadline. The figures (when "lost" fired against the deadline and
//! against the server's own expiry) are printed with `--nocapture`.

use std::time::{Duration, Instant};

use zkrs_client::{Client, ClientBuilder, ConnectionState, EventType, StateChanges};
use zkrs_recipes::framework::ConnectionStatePolicy;
use zkrs_recipes::lock::{InterProcessMutex, LockGuard};
use zkrs_testkit::{FaultyProxy, ServerOptions, TestingServer};

mod support;
use support::within;

/// The client's clock (tokio's), as the library reads it.
fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// Waits (with a deadline) for `state` on `changes`.
async fn state(changes: &mut StateChanges, state: ConnectionState) {
    within(&format!("{state:?}"), async {
        while let Some(change) = changes.next().await {
            if change.state == state {
                return;
            }
        }
        panic!("the client is gone before {state:?}");
    })
    .await
}

async fn client(connect_string: &str, timeout: Duration) -> Client {
    ClientBuilder::new(connect_string)
        .session_timeout(timeout)
        .connect()
        .await
        .unwrap()
}

async fn lock(client: &Client, path: &str, policy: ConnectionStatePolicy) -> LockGuard {
    let mutex = InterProcessMutex::builder(client, path)
        .policy(policy)
        .build()
        .unwrap();
    within("acquire", mutex.acquire()).await.unwrap()
}

/// The server is paused for longer than the read timeout (both clients are suspended) and
/// resumed before the deadline: the standard policy reports the lock lost at the
/// suspension; the session-deadline policy never does, and the lock is held again once the
/// same session is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_shorter_than_the_deadline_keeps_the_lock_where_standard_drops_it() {
    // Session timeouts up to 20 ticks: 8 s. Suspended 5 s after the last reply (the read
    // timeout, 2/3 of the timeout), deadline 6.75 s after the last request was sent.
    let zk = TestingServer::start_with(ServerOptions::new().tick_time_ms(400)).unwrap();
    let timeout = Duration::from_millis(7500);
    let keeper = client(&zk.connect_string(), timeout).await;
    let dropper = client(&zk.connect_string(), timeout).await;
    assert_eq!(keeper.session_timeout(), timeout);
    let kept = lock(
        &keeper,
        "/deadline/kept",
        ConnectionStatePolicy::SessionDeadline,
    )
    .await;
    let dropped = lock(
        &dropper,
        "/deadline/dropped",
        ConnectionStatePolicy::Standard,
    )
    .await;
    let session = keeper.session_id();
    let mut changes = keeper.state_changes();
    // The server hears from both now: the deadline counts from here.
    keeper.exists("/").await.unwrap();
    dropper.exists("/").await.unwrap();
    let heard = keeper.last_heard().expect("a session");

    zk.pause().unwrap();
    let outage = async {
        within("the standard policy's lost", dropped.lost()).await;
        state(&mut changes, ConnectionState::Suspended).await;
        assert!(kept.is_held(), "suspended, before the deadline: still held");
        zk.resume().unwrap();
        state(&mut changes, ConnectionState::Reconnected).await;
        now()
    };
    let back = tokio::select! {
        biased;
        back = outage => back,
        () = kept.lost() => panic!(
            "the session-deadline lock was reported lost {:?} after the last request",
            now() - heard
        ),
    };
    let deadline = heard + timeout - timeout / 10;
    println!(
        "session back {:?} after the last request, {:?} before the deadline",
        back - heard,
        deadline.saturating_duration_since(back)
    );
    assert!(
        back < deadline,
        "the test resumed too late to show anything"
    );
    assert_eq!(keeper.session_id(), session);
    assert!(kept.is_held(), "the same session is back: held");
    kept.release().await.unwrap();
    dropped.release().await.unwrap();
}

/// The holder is cut off (through a proxy, so the server runs on and expires the session on
/// its own): "lost" fires at the deadline, not before, and before the server expires the
/// session (seen by another client as the lock node's deletion).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_fires_at_the_deadline_before_the_server_expires_the_session() {
    let zk = TestingServer::start_with(ServerOptions::new().tick_time_ms(200)).unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let timeout = Duration::from_secs(4);
    let holder = client(&proxy.connect_string(), timeout).await;
    let observer = client(&zk.connect_string(), timeout).await;
    let guard = lock(
        &holder,
        "/deadline/cut",
        ConnectionStatePolicy::SessionDeadline,
    )
    .await;
    let (stat, watch) = observer.exists_and_watch(guard.path()).await.unwrap();
    assert!(stat.is_some());
    holder.exists("/").await.unwrap();
    let heard = holder.last_heard().expect("a session");
    let deadline = heard + timeout - timeout / 10;

    proxy.partition();
    let lost = async {
        within("lost", guard.lost()).await;
        now()
    };
    let expired = async {
        let event = within("the lock node's deletion", watch).await;
        assert_eq!(event.event_type, EventType::NodeDeleted);
        now()
    };
    let (lost, expired) = tokio::join!(lost, expired);
    println!(
        "lost {:?} after the last request (deadline {:?}); the server expired the session \
         {:?} after it: {:?} after lost",
        lost - heard,
        deadline - heard,
        expired - heard,
        expired.saturating_duration_since(lost)
    );
    assert!(lost >= deadline, "lost before the deadline");
    assert!(
        lost < deadline + Duration::from_secs(1),
        "lost {:?} after the deadline",
        lost - deadline
    );
    assert!(lost < expired, "lost after the server expired the session");
    assert!(!guard.is_held());
    proxy.heal();
    drop(guard);
}

/// Tokens grow: from a holder to the next, and from a holder whose session the server
/// expired (cut off, still holding its guard) to the one that took over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fencing_tokens_grow_from_holder_to_holder_and_across_a_session_expiry() {
    let zk = TestingServer::start_with(ServerOptions::new().tick_time_ms(200)).unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let path = "/deadline/fenced";
    let policy = ConnectionStatePolicy::SessionDeadline;
    let first = client(&zk.connect_string(), Duration::from_secs(4)).await;
    let cut_off = client(&proxy.connect_string(), Duration::from_secs(1)).await;
    let last = client(&zk.connect_string(), Duration::from_secs(4)).await;

    let guard = lock(&first, path, policy).await;
    let t1 = guard.fencing_token();
    let (_, stat) = first.get_data(guard.path()).await.unwrap();
    assert_eq!(t1.zxid(), stat.czxid, "the token is the lock node's czxid");
    guard.release().await.unwrap();

    let stale = lock(&cut_off, path, policy).await;
    let t2 = stale.fencing_token();
    assert!(t2 > t1, "{t2} after {t1}");
    let waiter = {
        let mutex = InterProcessMutex::builder(&last, path)
            .policy(policy)
            .build()
            .unwrap();
        tokio::spawn(async move { mutex.acquire().await })
    };
    proxy.partition();
    let taken = within("the next holder, after the expiry", waiter)
        .await
        .unwrap()
        .unwrap();
    let t3 = taken.fencing_token();
    assert!(t3 > t2, "{t3} after the expired holder's {t2}");
    assert!(!stale.is_held());
    taken.release().await.unwrap();
    proxy.heal();
    drop(stale);
}
