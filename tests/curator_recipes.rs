//! Interop of the counters, the double barrier and group membership with the real Apache
//! Curator 5.4: a Java peer (`tests/java/CuratorPeer.java`, started by `tests/support`) runs
//! Curator's `SharedCount`, `DistributedAtomicLong` (with `PromotedToLock`),
//! `DistributedDoubleBarrier` and `GroupMember` on the same server and paths as ours. Each side
//! must read what the other writes (the node formats), refuse a compare-and-set the other made
//! stale, sum concurrent increments from both, wait for the other's members, and list the
//! other's members with their data.
//!
//! Needs a JDK and Curator's jars (`scripts/install-zookeeper.sh`); never skips. Every wait has
//! a deadline: our events and children are awaited with watches, the peer's lines with
//! timeouts; Curator's member list is polled by the peer with a deadline.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::{timeout_at, Instant};
use zkrs_client::{Bytes, Client, CreateMode, ErrorCode, EventStream, Stat};
use zkrs_recipes::barrier::{DistributedDoubleBarrier, READY_NODE};
use zkrs_recipes::counter::{DistributedAtomicLong, PromotedToLock, SharedCount, SharedValueEvent};
use zkrs_recipes::framework::{join, node_name};
use zkrs_recipes::node::GroupMember;
use zkrs_recipes::{framework::RetryPolicy, lock::InterProcessMutex};
use zkrs_testkit::TestingServer;

mod support;
use support::{children_until, connect, new_name, within, Peer, DEADLINE};

// ----- Helpers -----

/// The node's data and Stat.
async fn raw(client: &Client, path: &str) -> (Vec<u8>, Stat) {
    let (data, stat) = client
        .get_data(path)
        .await
        .unwrap_or_else(|e| panic!("reading {path}: {e}"));
    (data.to_vec(), stat)
}

fn hex(data: &[u8]) -> String {
    if data.is_empty() {
        return "-".to_string();
    }
    data.iter().map(|b| format!("{b:02x}")).collect()
}

/// Waits for a `Changed` event to `want` on our stream (older values and connection events
/// are skipped: a shared count tells the latest value only).
async fn changed_to(events: &mut EventStream<SharedValueEvent<i32>>, want: i32) {
    let deadline = Instant::now() + DEADLINE;
    let mut seen = Vec::new();
    loop {
        match timeout_at(deadline, events.next()).await {
            Ok(Some(SharedValueEvent::Changed(v))) if v.value == want => return,
            Ok(Some(event)) => seen.push(event),
            Ok(None) => panic!("our events ended while waiting for {want} (saw {seen:?})"),
            Err(_) => panic!("our SharedCount told no change to {want} (saw {seen:?})"),
        }
    }
}

/// Curator's listener tells `want`.
async fn curator_tells(peer: &mut Peer, want: i32) {
    let want = want.to_string();
    peer.expect_event("COUNT_CHANGED", |n| n == want).await;
}

/// Waits until `gate` exists (a watch); what every concurrent writer, Java or Rust, starts on.
async fn armed(client: &Client, gate: &str) -> impl std::future::Future<Output = ()> {
    let (stat, watch) = client.exists_and_watch(gate).await.unwrap();
    async move {
        if stat.is_none() {
            within("the gate", watch).await;
        }
    }
}

/// The members of a barrier at `path`, as the peer prints them: children but `ready`, sorted.
async fn barrier_members(client: &Client, path: &str) -> Vec<String> {
    let mut names: Vec<String> = match client.get_children(path).await {
        Ok(c) => c
            .iter()
            .filter(|n| *n != READY_NODE)
            .map(str::to_string)
            .collect(),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => Vec::new(),
        Err(e) => panic!("listing {path}: {e}"),
    };
    names.sort();
    names
}

fn list(answer: &str) -> Vec<String> {
    if answer.is_empty() {
        Vec::new()
    } else {
        answer.split(',').map(str::to_string).collect()
    }
}

// ----- SharedCount -----

/// One node, two languages: Curator's seed is read by ours; each side's setCount and
/// trySetCount is seen by the other (ours through its events, Curator's through its
/// listener); a trySetCount from a value the other made stale is refused on both sides; the
/// data is always Curator's 4-byte big-endian int.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_count_both_ways() {
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let client = connect(&zk).await;
    let path = "/interop/count";

    // Curator creates the node with its seed; ours reads it (its own seed is not written).
    let mut peer = Peer::start("java-count", &["sharedcount", &cs, path, "7"]).await;
    let first = peer.ask("get", "COUNT").await; // answered once started
    assert_eq!(first, "7@0");
    assert_eq!(raw(&client, path).await.0, [0, 0, 0, 7], "curator's seed");
    let ours = SharedCount::builder(&client, path)
        .seed(99)
        .start()
        .unwrap();
    let mut events = ours.events();
    within("start", ours.initialized()).await.unwrap();
    let seen = ours.versioned_value();
    assert_eq!(seen.value, 7, "ours reads curator's seed");
    assert_eq!(
        peer.ask("get", "COUNT").await,
        format!("7@{}", seen.version),
        "same value and version on both sides"
    );

    // Ours sets; Curator's listener tells it.
    within("set", ours.set_count(-2)).await.unwrap();
    assert_eq!(raw(&client, path).await.0, [0xff, 0xff, 0xff, 0xfe]);
    curator_tells(&mut peer, -2).await;

    // Curator sets; our events tell it.
    peer.ask("set 1000", "SET").await;
    assert_eq!(raw(&client, path).await.0, 1000i32.to_be_bytes());
    changed_to(&mut events, 1000).await;

    // trySetCount from the current value, both ways.
    let seen = ours.versioned_value();
    assert_eq!(seen.value, 1000);
    assert!(within("try", ours.try_set_count(&seen, 1001))
        .await
        .unwrap());
    curator_tells(&mut peer, 1001).await;
    assert_eq!(peer.ask("tryset 1002", "TRYSET").await, "true");
    changed_to(&mut events, 1002).await;

    // From a value the other side made stale: refused, the other's value stays.
    let stale = ours.versioned_value();
    assert_eq!(stale.value, 1002);
    assert_eq!(peer.ask("tryset 1003", "TRYSET").await, "true");
    assert!(
        !within("stale try", ours.try_set_count(&stale, 5000))
            .await
            .unwrap(),
        "ours wrote over curator's 1003 from a stale read"
    );
    assert_eq!(raw(&client, path).await.0, 1003i32.to_be_bytes());
    changed_to(&mut events, 1003).await;
    let marked = peer.ask("mark", "MARKED").await;
    let seen = ours.versioned_value();
    assert_eq!(marked, format!("1003@{}", seen.version));
    assert!(within("try", ours.try_set_count(&seen, 1004))
        .await
        .unwrap());
    assert_eq!(
        peer.ask("trysetmarked 6000", "TRYSET").await,
        "false",
        "curator wrote over our 1004 from a stale read"
    );
    assert_eq!(raw(&client, path).await.0, 1004i32.to_be_bytes());
    curator_tells(&mut peer, 1004).await;

    // Two Java and two Rust sessions add 1, 20 times each, with trySetCount loops, all at once.
    let (sessions, rounds) = (2usize, 20i32);
    let gate = "/interop/count-gate";
    peer.ask(&format!("incr {sessions} {rounds} {gate}"), "ARMED")
        .await;
    let mut writers: Vec<JoinHandle<u32>> = Vec::new();
    for _ in 0..sessions {
        let client = connect(&zk).await;
        let count = SharedCount::builder(&client, path).start().unwrap();
        within("writer start", count.initialized()).await.unwrap();
        let go = armed(&client, gate).await;
        writers.push(tokio::spawn(async move {
            go.await;
            let mut lost = 0;
            for _ in 0..rounds {
                loop {
                    let seen = count.versioned_value();
                    if count.try_set_count(&seen, seen.value + 1).await.unwrap() {
                        break;
                    }
                    lost += 1;
                }
            }
            drop(client);
            lost
        }));
    }
    client
        .create(gate, b"", CreateMode::Persistent)
        .await
        .unwrap();
    let mut rust_lost = 0;
    for writer in writers {
        rust_lost += within("rust writers", writer).await.unwrap();
    }
    let java = peer.expect("INCREMENTED").await;
    let java_lost: u32 = java.split(' ').next().unwrap().parse().unwrap();
    let expected = 1004 + 2 * sessions as i32 * rounds;
    assert_eq!(
        raw(&client, path).await.0,
        expected.to_be_bytes(),
        "the sum of every increment"
    );
    changed_to(&mut events, expected).await;
    curator_tells(&mut peer, expected).await;
    assert_eq!(
        peer.ask("get", "COUNT").await,
        format!("{expected}@{}", ours.versioned_value().version)
    );
    eprintln!("shared count: trySetCounts that lost a race: java {java_lost}, rust {rust_lost}");
    assert!(
        java_lost + rust_lost > 0,
        "the writers never raced: the sum proves nothing"
    );
    peer.exit().await;
}

// ----- DistributedAtomicLong -----

const ATOMIC: &str = "/interop/atomic";
const ATOMIC_LOCK: &str = "/interop/atomic-lock";

/// Ours, as the peer's: no optimistic retry (a lost race goes straight to the lock), the
/// promoted lock at `lock` waited for at most `lock_ms`, 3 retries under it.
fn our_atomic(client: &Client, lock: &str, lock_ms: u64) -> DistributedAtomicLong {
    DistributedAtomicLong::builder(client, ATOMIC)
        .retry(RetryPolicy::Never)
        .promoted_to_lock(PromotedToLock {
            retry: RetryPolicy::NTimes {
                n: 3,
                sleep: Duration::ZERO,
            },
            ..PromotedToLock::new(lock, Some(Duration::from_millis(lock_ms)))
        })
        .build()
        .unwrap()
}

async fn curator_value(peer: &mut Peer) -> i64 {
    peer.ask("get", "VALUE").await.parse().unwrap()
}

/// Each side reads what the other wrote (8 bytes, big-endian, past 32 bits too); then two
/// Java and two Rust sessions increment the same counter 50 times each, both sides promoted
/// to the same lock: the sum is right and both sides read it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn atomic_long_both_ways_and_concurrent() {
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let client = connect(&zk).await;
    let mut peer = Peer::start(
        "java-atomic",
        &["atomic", &cs, ATOMIC, "0", ATOMIC_LOCK, "10000"],
    )
    .await;
    let ours = our_atomic(&client, ATOMIC_LOCK, 10_000);

    // A missing node reads 0 on both sides, and neither read creates it.
    assert_eq!(curator_value(&mut peer).await, 0);
    assert_eq!(within("get", ours.get()).await.unwrap().post_value, 0);
    assert_eq!(client.exists(ATOMIC).await.unwrap(), None);

    // Curator creates it; ours reads it.
    assert_eq!(peer.ask("add 5", "ADDED").await, "true 0 5 1 0 0");
    assert_eq!(raw(&client, ATOMIC).await.0, 5i64.to_be_bytes());
    assert_eq!(within("get", ours.get()).await.unwrap().post_value, 5);

    // Ours adds; Curator reads it.
    let r = within("add", ours.add(-7)).await.unwrap();
    assert!(r.succeeded);
    assert_eq!((r.pre_value, r.post_value), (5, -2));
    assert_eq!(raw(&client, ATOMIC).await.0, (-2i64).to_be_bytes());
    assert_eq!(curator_value(&mut peer).await, -2);

    // Past 32 bits, both ways.
    let big = 1i64 << 33;
    assert_eq!(
        peer.ask(&format!("add {big}"), "ADDED").await,
        format!("true -2 {} 1 0 0", big - 2)
    );
    assert_eq!(within("get", ours.get()).await.unwrap().post_value, big - 2);
    let r = within("add", ours.add(-big)).await.unwrap();
    assert_eq!((r.pre_value, r.post_value), (big - 2, -2));
    assert_eq!(curator_value(&mut peer).await, -2);

    // 2 + 2 sessions x 50 increments, all at once; a lost race takes the shared lock.
    let (sessions, rounds) = (2usize, 50i64);
    let gate = "/interop/atomic-gate";
    peer.ask(&format!("incr {sessions} {rounds} {gate}"), "ARMED")
        .await;
    let mut writers: Vec<JoinHandle<(u32, u32)>> = Vec::new();
    for _ in 0..sessions {
        let client = connect(&zk).await;
        let counter = our_atomic(&client, ATOMIC_LOCK, 10_000);
        let go = armed(&client, gate).await;
        writers.push(tokio::spawn(async move {
            go.await;
            let (mut lost, mut promoted) = (0, 0);
            for _ in 0..rounds {
                loop {
                    let r = counter.increment().await.unwrap();
                    if r.stats.promoted_lock_tries > 0 {
                        promoted += 1;
                    }
                    let first_try =
                        r.stats.optimistic_tries == 1 && r.stats.promoted_lock_tries == 0;
                    if !(r.succeeded && first_try) {
                        lost += 1;
                    }
                    if r.succeeded {
                        break;
                    }
                }
            }
            drop(client);
            (lost, promoted)
        }));
    }
    client
        .create(gate, b"", CreateMode::Persistent)
        .await
        .unwrap();
    let (mut rust_lost, mut rust_promoted) = (0, 0);
    for writer in writers {
        let (lost, promoted) = within("rust writers", writer).await.unwrap();
        rust_lost += lost;
        rust_promoted += promoted;
    }
    let java = peer.expect("INCREMENTED").await;
    let (java_lost, java_promoted) = java.split_once(' ').unwrap();
    let expected = -2 + 2 * sessions as i64 * rounds;
    assert_eq!(
        raw(&client, ATOMIC).await.0,
        expected.to_be_bytes(),
        "the sum"
    );
    assert_eq!(
        within("get", ours.get()).await.unwrap().post_value,
        expected
    );
    assert_eq!(curator_value(&mut peer).await, expected);
    eprintln!(
        "atomic long: increments not done by their first try: java {java_lost}, rust \
         {rust_lost}; tried under the promoted lock: java {java_promoted}, rust {rust_promoted}"
    );
    assert!(
        java_promoted.parse::<u32>().unwrap() + rust_promoted > 0,
        "no increment was promoted to the lock: the writers never raced"
    );
    // No lock node is left behind by either side.
    children_until(&client, ATOMIC_LOCK, "no lock node left", |c| c.is_empty()).await;
    peer.exit().await;
}

/// Writes the counter over and over from a session of its own (8 writes in flight), so that
/// an optimistic read-then-write of it almost always loses the race and is promoted to the
/// lock. Stops when dropped.
struct Hammer {
    tasks: Vec<JoinHandle<()>>,
}

impl Hammer {
    async fn start(zk: &TestingServer) -> Hammer {
        let client = connect(zk).await;
        let tasks = (0..8)
            .map(|_| {
                let client = client.clone();
                tokio::spawn(async move {
                    while client
                        .set_data(ATOMIC, &0i64.to_be_bytes(), None)
                        .await
                        .is_ok()
                    {}
                })
            })
            .collect();
        Hammer { tasks }
    }
}

impl Drop for Hammer {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The lock directory's child version: +1 for every lock node created in it, +1 for every one
/// deleted.
async fn cversion(client: &Client) -> i32 {
    client.exists(ATOMIC_LOCK).await.unwrap().unwrap().cversion
}

/// The promoted lock is one mutex for both languages: while Curator holds an
/// InterProcessMutex at the lock path, our promoted increments wait for it and time out (their
/// lock nodes are made and deleted in Curator's directory), and get it once Curator lets go;
/// while ours holds it, Curator's promoted increments time out the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promoted_lock_is_shared_across_languages() {
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let client = connect(&zk).await;
    client
        .create("/interop", b"", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create(ATOMIC, &0i64.to_be_bytes(), CreateMode::Persistent)
        .await
        .unwrap();
    let hammer = Hammer::start(&zk).await;

    // Curator holds the mutex: ours times out on it.
    let mut mutex_peer = Peer::start("java-mutex", &["mutex", &cs, ATOMIC_LOCK]).await;
    mutex_peer.expect("ACQUIRED").await;
    let ours = our_atomic(&client, ATOMIC_LOCK, 500);
    let before = cversion(&client).await;
    let deadline = Instant::now() + DEADLINE;
    let r = loop {
        let r = within("increment", ours.increment()).await.unwrap();
        assert_eq!(
            r.stats.promoted_lock_tries, 0,
            "ours tried under the lock curator holds: {r:?}"
        );
        if r.stats.promoted_time > Duration::ZERO {
            break r;
        }
        assert!(
            Instant::now() < deadline,
            "no optimistic try of ours lost a race"
        );
    };
    assert!(!r.succeeded, "{r:?}");
    assert!(
        r.stats.promoted_time >= Duration::from_millis(500),
        "ours gave up on the lock early: {r:?}"
    );
    // Our timed-out lock node is deleted in the background: wait for it to go.
    children_until(&client, ATOMIC_LOCK, "our timed-out lock node gone", |c| {
        c.len() == 1
    })
    .await;
    assert_eq!(
        cversion(&client).await - before,
        2,
        "our lock node was made and deleted in curator's lock directory"
    );

    // Curator lets go: ours gets the lock.
    mutex_peer.ask("release", "RELEASED").await;
    let deadline = Instant::now() + DEADLINE;
    loop {
        let r = within("increment", ours.increment()).await.unwrap();
        if r.stats.promoted_lock_tries > 0 {
            break;
        }
        assert!(
            r.stats.promoted_time == Duration::ZERO,
            "ours did not get the free lock: {r:?}"
        );
        assert!(
            Instant::now() < deadline,
            "no optimistic try of ours lost a race"
        );
    }
    mutex_peer.exit().await;

    // Ours holds the mutex: Curator's promoted increments time out on it.
    let guard = within(
        "rust acquire",
        InterProcessMutex::builder(&client, ATOMIC_LOCK)
            .build()
            .unwrap()
            .acquire(),
    )
    .await
    .unwrap();
    let mut peer = Peer::start(
        "java-atomic",
        &["atomic", &cs, ATOMIC, "0", ATOMIC_LOCK, "500"],
    )
    .await;
    let before = cversion(&client).await;
    let deadline = Instant::now() + DEADLINE;
    let mut promoted = 0;
    while promoted == 0 {
        let answer = peer.ask("add 1", "ADDED").await;
        let fields: Vec<&str> = answer.split(' ').collect();
        let (succeeded, promoted_tries, promoted_ms) = (
            fields[0] == "true",
            fields[4].parse::<u32>().unwrap(),
            fields[5].parse::<u64>().unwrap(),
        );
        assert_eq!(promoted_tries, 0, "curator tried under the lock ours holds");
        if !succeeded {
            assert!(
                promoted_ms >= 450,
                "curator gave up on the lock early: {answer}"
            );
            promoted += 1;
        }
        assert!(
            Instant::now() < deadline,
            "no optimistic try of curator's lost a race"
        );
    }
    assert_eq!(
        cversion(&client).await - before,
        2 * promoted,
        "curator's lock node was made and deleted in our lock directory"
    );
    assert_eq!(
        client.get_children(ATOMIC_LOCK).await.unwrap().to_vec(),
        [node_name(guard.path())]
    );

    // Ours lets go: Curator gets the lock.
    guard.release().await.unwrap();
    let deadline = Instant::now() + DEADLINE;
    loop {
        let answer = peer.ask("add 1", "ADDED").await;
        let fields: Vec<&str> = answer.split(' ').collect();
        if fields[4] != "0" {
            break;
        }
        assert_eq!(
            fields[5], "0",
            "curator did not get the free lock: {answer}"
        );
        assert!(
            Instant::now() < deadline,
            "no optimistic try of curator's lost a race"
        );
    }
    drop(hammer);
    peer.exit().await;
    children_until(&client, ATOMIC_LOCK, "no lock node left", |c| c.is_empty()).await;
}

// ----- DistributedDoubleBarrier -----

const BARRIER: &str = "/interop/barrier";
const MEMBERS: usize = 5;

/// A Rust member on a session of its own.
struct RustMember {
    barrier: DistributedDoubleBarrier,
    client: Client,
}

impl RustMember {
    async fn new(zk: &TestingServer) -> RustMember {
        let client = connect(zk).await;
        RustMember {
            barrier: DistributedDoubleBarrier::builder(&client, BARRIER, MEMBERS)
                .build()
                .unwrap(),
            client,
        }
    }

    /// Enters in a task; the task returns the members it lists once in.
    fn enter(&self) -> JoinHandle<Vec<String>> {
        let barrier = self.barrier.clone();
        let client = self.client.clone();
        tokio::spawn(async move {
            assert!(
                barrier.enter(Some(DEADLINE)).await.unwrap(),
                "enter timed out"
            );
            barrier_members(&client, BARRIER).await
        })
    }

    /// Leaves in a task; the task returns the members it lists once out.
    fn leave(&self) -> JoinHandle<Vec<String>> {
        let barrier = self.barrier.clone();
        let client = self.client.clone();
        tokio::spawn(async move {
            assert!(
                barrier.leave(Some(DEADLINE)).await.unwrap(),
                "leave timed out"
            );
            barrier_members(&client, BARRIER).await
        })
    }
}

/// Waits until the barrier has `n` member nodes; returns them. With fewer than all of them,
/// `ready` must not exist.
async fn members_until(client: &Client, n: usize) -> Vec<String> {
    let names = children_until(client, BARRIER, &format!("{n} member nodes"), |c| {
        c.iter().filter(|c| *c != READY_NODE).count() == n
    })
    .await;
    assert!(
        n >= MEMBERS || !names.iter().any(|n| n == READY_NODE),
        "`ready` exists with {names:?}"
    );
    barrier_members(client, BARRIER).await
}

/// Asserts that the Java members stay silent and the Rust tasks unfinished for a while
/// (`support::QUIET`).
async fn nobody_done(java: &mut [&mut Peer], rust: &[&JoinHandle<Vec<String>>], what: &str) {
    let (a, b) = java.split_at_mut(1);
    tokio::join!(a[0].assert_silent(what), b[0].assert_silent(what));
    for task in rust {
        assert!(!task.is_finished(), "{what}: a rust member is done");
    }
}

/// Five members, two of them Curator's, enter and leave one double barrier together, twice:
/// once with a Rust member arriving (and leaving) last, once with a Java one. Nobody is in
/// before the fifth member's node exists, and every member lists all five once in; nobody is
/// out before the last member leaves, and none is left once out; no node is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn double_barrier_mixes_languages() {
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let client = connect(&zk).await;
    let n = MEMBERS.to_string();
    let args = ["doublebarrier", &cs, BARRIER, &n];
    let (mut j1, mut j2) = tokio::join!(Peer::start("java-1", &args), Peer::start("java-2", &args));
    let rust = [
        RustMember::new(&zk).await,
        RustMember::new(&zk).await,
        RustMember::new(&zk).await,
    ];
    let enter = format!("enter {}", DEADLINE.as_millis());
    let leave = format!("leave {}", DEADLINE.as_millis());

    for java_last in [false, true] {
        // Four arrive, of both languages; they wait.
        let (last_java, other_java) = if java_last {
            (&mut j2, &mut j1)
        } else {
            (&mut j1, &mut j2)
        };
        other_java.send(&enter);
        members_until(&client, 1).await;
        let r0 = rust[0].enter();
        let r1 = rust[1].enter();
        members_until(&client, 3).await;
        let mut r2 = None;
        if java_last {
            r2 = Some(rust[2].enter());
        } else {
            last_java.send(&enter);
        }
        let four = members_until(&client, 4).await;
        {
            let mut waiting: Vec<&JoinHandle<Vec<String>>> = vec![&r0, &r1];
            waiting.extend(r2.as_ref());
            nobody_done(
                &mut [&mut *other_java, &mut *last_java],
                &waiting,
                "in with four members of five",
            )
            .await;
        }
        assert_eq!(barrier_members(&client, BARRIER).await, four);

        // The fifth arrives: everyone is in, and saw five members.
        let r_last = if java_last {
            last_java.send(&enter);
            None
        } else {
            Some(rust[2].enter())
        };
        let five = members_until(&client, 5).await;
        let fifth = new_name(&five, &four.iter().map(String::as_str).collect::<Vec<_>>());
        let in_java = [
            list(&other_java.expect("ENTERED").await),
            list(&last_java.expect("ENTERED").await),
        ];
        let mut in_rust = Vec::new();
        for task in [Some(r0), Some(r1), r2, r_last].into_iter().flatten() {
            in_rust.push(within("rust enter", task).await.unwrap());
        }
        for seen in in_java.iter().chain(&in_rust) {
            assert_eq!(*seen, five, "a member was in before all five had arrived");
        }
        let (_, ready) = raw(&client, &join(BARRIER, READY_NODE)).await;
        let (_, fifth_stat) = raw(&client, &join(BARRIER, &fifth)).await;
        assert!(
            ready.czxid > fifth_stat.czxid,
            "`ready` was made before the fifth member's node"
        );

        // Four leave; they wait for the fifth.
        other_java.send(&leave);
        let r0 = rust[0].leave();
        let r1 = rust[1].leave();
        let mut r2 = None;
        if java_last {
            r2 = Some(rust[2].leave());
        } else {
            last_java.send(&leave);
        }
        // Curator's order: all but the lowest delete their nodes, the lowest waits for the
        // highest to go; here that leaves the lowest and the fifth.
        let mut staying = vec![five[0].clone(), fifth.clone()];
        staying.dedup();
        staying.sort();
        children_until(&client, BARRIER, "the leavers' nodes gone", |c| {
            let mut left: Vec<&String> = c.iter().filter(|n| *n != READY_NODE).collect();
            left.sort();
            left == staying.iter().collect::<Vec<_>>()
        })
        .await;
        {
            let mut waiting: Vec<&JoinHandle<Vec<String>>> = vec![&r0, &r1];
            waiting.extend(r2.as_ref());
            nobody_done(
                &mut [&mut *other_java, &mut *last_java],
                &waiting,
                "out before the fifth member left",
            )
            .await;
        }
        assert!(
            barrier_members(&client, BARRIER).await.contains(&fifth),
            "the fifth member's node is gone before it left"
        );

        // The fifth leaves: everyone is out, and none saw a member left.
        let r_last = if java_last {
            last_java.send(&leave);
            None
        } else {
            Some(rust[2].leave())
        };
        let out_java = [
            list(&other_java.expect("LEFT").await),
            list(&last_java.expect("LEFT").await),
        ];
        for seen in &out_java {
            assert!(seen.is_empty(), "a java member left with {seen:?} still in");
        }
        for task in [Some(r0), Some(r1), r2, r_last].into_iter().flatten() {
            let seen = within("rust leave", task).await.unwrap();
            assert!(seen.is_empty(), "a rust member left with {seen:?} still in");
        }
        // Nothing left but (perhaps) the barrier's own container.
        children_until(&client, BARRIER, "no member or ready node left", |c| {
            c.is_empty()
        })
        .await;
    }
    j1.exit().await;
    j2.exit().await;
}

// ----- GroupMember -----

const GROUP: &str = "/interop/group";

fn members(entries: &[(&str, &[u8])]) -> BTreeMap<String, Bytes> {
    entries
        .iter()
        .map(|(id, data)| (id.to_string(), Bytes::copy_from_slice(data)))
        .collect()
}

/// The peer's form of a member list.
fn curator_form(entries: &[(&str, &[u8])]) -> String {
    let mut all: Vec<String> = entries
        .iter()
        .map(|(id, data)| format!("{id}={}", hex(data)))
        .collect();
    all.sort();
    all.join(",")
}

/// Waits (on our member's events) until our member list is `want`.
async fn ours_lists(
    member: &GroupMember,
    events: &mut EventStream<impl std::fmt::Debug>,
    want: &[(&str, &[u8])],
) {
    let want = members(want);
    let deadline = Instant::now() + DEADLINE;
    while member.current_members() != want {
        match timeout_at(deadline, events.next()).await {
            Ok(Some(_)) => {}
            Ok(None) => panic!("our member's events ended"),
            Err(_) => panic!(
                "our member lists {:?}, not {want:?}",
                member.current_members()
            ),
        }
    }
}

/// Curator's member list becomes `want` (polled by the peer, with a deadline).
async fn curator_lists(peer: &mut Peer, want: &[(&str, &[u8])]) {
    let want = curator_form(want);
    // The peer gives up first, so a wrong list is shown rather than a timeout.
    let command = format!("members_until {} {want}", DEADLINE.as_millis() * 2 / 3);
    assert_eq!(
        peer.ask(&command, "MEMBERS").await,
        want,
        "curator's member list"
    );
}

/// A Curator GroupMember and ours in one group: each lists the other's id and data, sees the
/// other's data change, and sees a member of the other language leave. The member nodes are
/// Curator's: `<path>/<id>`, ephemeral, holding the data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_members_see_each_other() {
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let client = connect(&zk).await;
    // Curator 5's GroupMember lists members from its CuratorCache, which it does not serve
    // on a 3.5 server (its compatibility mode: Curator 5.4 lists only itself, 5.9 fails):
    // there, Curator's side is checked through the nodes it reads, not its list.
    let curator_lists_members = zk.version().unwrap().at_least(3, 6);
    let mut peer = Peer::start(
        "java-member",
        &["member", &cs, GROUP, "java-1", &hex(b"j1")],
    )
    .await;
    let ours = GroupMember::builder(&client, GROUP)
        .id("rust-1")
        .data(b"r1")
        .start()
        .unwrap();
    let mut events = ours.events();
    within("start", ours.initialized()).await.unwrap();

    // Each lists both, with their data.
    ours_lists(&ours, &mut events, &[("java-1", b"j1"), ("rust-1", b"r1")]).await;
    if curator_lists_members {
        curator_lists(&mut peer, &[("java-1", b"j1"), ("rust-1", b"r1")]).await;
    }
    let (data, stat) = raw(&client, &join(GROUP, "rust-1")).await;
    assert_eq!(
        (data.as_slice(), stat.ephemeral_owner),
        (&b"r1"[..], client.session_id())
    );
    let (data, stat) = raw(&client, &join(GROUP, "java-1")).await;
    assert_eq!(data, b"j1");
    assert!(stat.ephemeral_owner != 0 && stat.ephemeral_owner != client.session_id());

    // Data changes, both ways.
    within("set data", ours.set_this_data(b"r2")).await.unwrap();
    if curator_lists_members {
        curator_lists(&mut peer, &[("java-1", b"j1"), ("rust-1", b"r2")]).await;
    }
    peer.ask(&format!("setdata {}", hex(b"j2")), "DATA_SET")
        .await;
    ours_lists(&ours, &mut events, &[("java-1", b"j2"), ("rust-1", b"r2")]).await;

    // Another Rust member joins and leaves: Curator sees both.
    let client2 = connect(&zk).await;
    let other = GroupMember::builder(&client2, GROUP)
        .id("rust-2")
        .start()
        .unwrap();
    within("start", other.initialized()).await.unwrap();
    if curator_lists_members {
        curator_lists(
            &mut peer,
            &[("java-1", b"j2"), ("rust-1", b"r2"), ("rust-2", b"")],
        )
        .await;
    }
    ours_lists(
        &ours,
        &mut events,
        &[("java-1", b"j2"), ("rust-1", b"r2"), ("rust-2", b"")],
    )
    .await;
    within("close", other.close()).await.unwrap();
    if curator_lists_members {
        curator_lists(&mut peer, &[("java-1", b"j2"), ("rust-1", b"r2")]).await;
    }

    // The Java member leaves: ours sees it go.
    peer.ask("close", "CLOSED").await;
    ours_lists(&ours, &mut events, &[("rust-1", b"r2")]).await;
    within("close", ours.close()).await.unwrap();
    children_until(&client, GROUP, "no member left", |c| c.is_empty()).await;
    peer.exit().await;
}
