//! Interop with the real Apache Curator: a Java peer (`tests/java/CuratorPeer.java`, compiled
//! by `tests/support` with javac against Debian's Curator 5.4.0 jars; the counters, barriers
//! and group membership are in `tests/curator_recipes.rs`) runs Curator's own recipes on the same
//! ZooKeeper server and the same paths as our Rust recipes. Each side must exclude, wait for,
//! order and name the other's nodes exactly as Curator does; each side's caches must follow
//! the other's writes to a fresh read of the server.
//!
//! Needs a JDK (javac) and Curator's jars; `scripts/install-zookeeper.sh` installs both. These
//! tests never skip: without Java or Curator they fail and say so. `ZKR_CURATOR_CLASSPATH`
//! (a complete classpath for Curator) and `ZKR_JAVAC` override the Debian layout.
//!
//! Every wait has a deadline (children are awaited with watches, peer lines with timeouts). "The
//! other side is still waiting" is shown by its contender node being there, behind the holder's,
//! and by the waiter staying silent (a Java peer) or unfinished (a Rust task) meanwhile.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{timeout, Instant};
use zkrs_client::{Client, CreateMode, ErrorCode, EventStream, Op, Stat};
use zkrs_recipes::cache::{
    CacheEvent, ChildData, CuratorCache, NodeCache, PathChildrenCache, Snapshot, StartMode,
    TreeCache,
};
use zkrs_recipes::counter::{decode_count, encode_count};
use zkrs_recipes::framework::{create_parents, join, node_name, parent, ParentMode};
use zkrs_recipes::sequence::{key_fn, rank, read_write_sort_key, sort_key, sorted};
use zkrs_recipes::{
    leader::{CloseMode, LeaderLatch, LeaderSelector},
    lock::{revoke, InterProcessMutex, InterProcessReadWriteLock, InterProcessSemaphoreV2},
};
use zkrs_testkit::TestingServer;

mod support;
use support::{children_until, connect, new_name, within, Peer, DEADLINE, START};

/// Curator's lock names.
const LOCK: &str = "lock-";
const LATCH: &str = "latch-";
const LEASE: &str = "lease-";

/// Checks Curator's protected sequential name `_c_<uuid>-<lock name><10 digits>` with a
/// lowercase version-4 UUID (what Java's `UUID.randomUUID().toString()` gives); returns the
/// sequence number.
fn assert_protected(name: &str, lock_name: &str) -> u32 {
    let rest = name
        .strip_prefix("_c_")
        .unwrap_or_else(|| panic!("{name}: no _c_ prefix"));
    assert!(rest.len() > 37, "{name}: too short");
    let (uuid, rest) = rest.split_at(36);
    for (i, c) in uuid.chars().enumerate() {
        let ok = match i {
            8 | 13 | 18 | 23 => c == '-',
            14 => c == '4',
            19 => matches!(c, '8' | '9' | 'a' | 'b'),
            _ => c.is_ascii_digit() || matches!(c, 'a'..='f'),
        };
        assert!(ok, "{name}: not a lowercase version-4 uuid: {uuid}");
    }
    let digits = rest
        .strip_prefix('-')
        .and_then(|r| r.strip_prefix(lock_name))
        .unwrap_or_else(|| panic!("{name}: no -{lock_name} after the uuid"));
    assert!(
        digits.len() == 10 && digits.bytes().all(|b| b.is_ascii_digit()),
        "{name}: not 10 sequence digits: {digits}"
    );
    digits.parse().expect("digits")
}

fn names_of(paths: &[String]) -> Vec<String> {
    paths.iter().map(|p| node_name(p).to_string()).collect()
}

// ----- Mutex -----

/// Rust holds, Curator waits (its node is there, behind ours, and it stays blocked); Rust
/// releases, Curator gets it; Curator holds, Rust cannot; Curator releases, Rust gets it.
/// The fencing tokens (the lock nodes' czxids) grow from holder to holder across languages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutex_excludes_both_ways() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let path = "/interop/mutex";
    let mutex = InterProcessMutex::builder(&client, path).build().unwrap();
    let guard = within("rust acquire", mutex.acquire()).await.unwrap();
    let ours = node_name(guard.path()).to_string();
    assert_protected(&ours, LOCK);
    let first_token = guard.fencing_token();

    let mut peer = Peer::start("java-mutex", &["mutex", &zk.connect_string(), path]).await;
    let names = children_until(&client, path, "curator's lock node", |c| c.len() == 2).await;
    let theirs = new_name(&names, &[&ours]);
    assert!(
        assert_protected(&theirs, LOCK) > assert_protected(&ours, LOCK),
        "{theirs} sorts after {ours}"
    );
    assert_eq!(
        mutex.participant_nodes().await.unwrap(),
        [join(path, &ours), join(path, &theirs)],
        "rust's view: rust holds, curator waits"
    );
    peer.assert_silent("curator acquired the mutex rust holds")
        .await;

    guard.release().await.unwrap();
    assert_eq!(peer.expect("ACQUIRED").await, join(path, &theirs));
    let curators_token = client
        .exists(&join(path, &theirs))
        .await
        .unwrap()
        .expect("curator's node")
        .czxid;
    assert!(
        curators_token > first_token.zxid(),
        "curator's token {curators_token} after ours {first_token}"
    );

    let started = Instant::now();
    let attempt = mutex.try_acquire(Duration::from_millis(300)).await.unwrap();
    assert!(attempt.is_none(), "rust acquired the mutex curator holds");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "gave up early"
    );
    // Our timed-out node is deleted; curator's view is just itself.
    children_until(&client, path, "rust's timed-out node gone", |c| {
        c.len() == 1
    })
    .await;
    assert_eq!(
        peer.ask("participants", "PARTICIPANTS").await,
        join(path, &theirs)
    );

    let waiter = {
        let mutex = mutex.clone();
        tokio::spawn(async move { mutex.acquire().await })
    };
    let names = children_until(&client, path, "rust's waiting node", |c| c.len() == 2).await;
    let rust_waiting = new_name(&names, &[&theirs]);
    assert_eq!(
        peer.ask_list("participants", "PARTICIPANTS").await,
        [join(path, &theirs), join(path, &rust_waiting)],
        "curator's view: curator holds, rust waits"
    );
    assert!(!waiter.is_finished(), "rust acquired while curator holds");
    assert_eq!(peer.ask("release", "RELEASED").await, "");
    let guard = within("rust acquire after curator", waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(guard.path(), join(path, &rust_waiting));
    assert!(
        guard.fencing_token().zxid() > curators_token,
        "{} after curator's {curators_token}",
        guard.fencing_token()
    );
    guard.release().await.unwrap();
    peer.exit().await;
    children_until(&client, path, "no node left", |c| c.is_empty()).await;
}

/// Four contenders, alternating languages, in one directory: both sides list them in the
/// same order, with the same name format, and the lock is handed down in exactly that order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_queue_is_served_in_curators_order() {
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let path = "/interop/queue";
    let client = connect(&zk).await;
    let mutex = InterProcessMutex::builder(&client, path).build().unwrap();

    // rust-a holds, java-1 waits, rust-b waits, java-2 waits.
    let a = within("rust-a", mutex.acquire()).await.unwrap();
    let a_name = node_name(a.path()).to_string();
    let mut j1 = Peer::start("java-1", &["mutex", &cs, path]).await;
    let names = children_until(&client, path, "java-1's node", |c| c.len() == 2).await;
    let j1_name = new_name(&names, &[&a_name]);
    let client_b = connect(&zk).await;
    let b = {
        let mutex = InterProcessMutex::builder(&client_b, path).build().unwrap();
        tokio::spawn(async move { mutex.acquire().await })
    };
    let names = children_until(&client, path, "rust-b's node", |c| c.len() == 3).await;
    let b_name = new_name(&names, &[&a_name, &j1_name]);
    let mut j2 = Peer::start("java-2", &["mutex", &cs, path]).await;
    let names = children_until(&client, path, "java-2's node", |c| c.len() == 4).await;
    let j2_name = new_name(&names, &[&a_name, &j1_name, &b_name]);

    let arrival = [
        a_name.clone(),
        j1_name.clone(),
        b_name.clone(),
        j2_name.clone(),
    ];
    let seqs: Vec<u32> = arrival.iter().map(|n| assert_protected(n, LOCK)).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "sequences {seqs:?}");
    let rust_order = names_of(&mutex.participant_nodes().await.unwrap());
    let mut query = Peer::start("java-query", &["client", &cs]).await;
    let curator_order = query
        .ask_list(&format!("sorted {path} {LOCK}"), "SORTED")
        .await;
    assert_eq!(
        rust_order, curator_order,
        "rust and curator order the queue alike"
    );
    assert_eq!(rust_order, arrival, "first come, first served");

    // The lock goes down the queue, across languages, in that order.
    j1.assert_silent("java-1 acquired while rust-a holds").await;
    assert!(!b.is_finished(), "rust-b acquired while rust-a holds");
    a.release().await.unwrap();
    assert_eq!(j1.expect("ACQUIRED").await, join(path, &j1_name));
    j2.assert_silent("java-2 acquired while java-1 holds").await;
    assert!(!b.is_finished(), "rust-b acquired while java-1 holds");
    j1.ask("release", "RELEASED").await;
    let b = within("rust-b after java-1", b).await.unwrap().unwrap();
    assert_eq!(b.path(), join(path, &b_name));
    j2.assert_silent("java-2 acquired while rust-b holds").await;
    b.release().await.unwrap();
    assert_eq!(j2.expect("ACQUIRED").await, join(path, &j2_name));
    j2.ask("release", "RELEASED").await;
    for peer in [j1, j2, query] {
        peer.exit().await;
    }
}

/// Odd directory contents (foreign nodes, unprotected names, the lock name twice, short
/// sequences, ties, other lock names): our sort keys order them exactly as Curator's drivers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sort_order_agrees_with_curator_on_odd_names() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let dir = "/interop/odd";
    let names = [
        "_c_6f1e2b7a-1c2d-4e5f-8a9b-0c1d2e3f4a5b-lock-0000000005",
        "lock-0000000003",
        "_c_x-lock-lock-0000000001",
        "foreign",
        "0000000004",
        "-lock-0000000004", // ties with "0000000004" under lock-
        "_c_x-lock-000000002",
        "_c_x-lock-",
        "zzz-lock-0000000000",
        "Lock-0000000001",
        "lock-00000000010",
        "_c_y-latch-0000000002",
        "_c_z-latch-0000000007",
        "latch-latch-0000000003",
        "_c_r-__READ__0000000006",
        "_c_w-__WRIT__0000000008",
        "_c_q-__READ__0000000002",
        "_c_rw-__READ__x__WRIT__0000000009",
        "_c_wr-__WRIT__y__READ__0000000001",
        "_c_s-lease-0000000011",
    ];
    client
        .create("/interop", b"", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create(dir, b"", CreateMode::Persistent)
        .await
        .unwrap();
    for name in names {
        client
            .create(&join(dir, name), b"", CreateMode::Persistent)
            .await
            .unwrap();
    }
    let children = client.get_children(dir).await.unwrap();
    let mut peer = Peer::start("java-sorter", &["client", &zk.connect_string()]).await;
    for lock_name in [LOCK, LATCH, LEASE, "rw"] {
        let key = key_fn(|n| match lock_name {
            "rw" => read_write_sort_key(n),
            _ => sort_key(n, lock_name),
        });
        let ours = sorted(children.iter(), key);
        let curator = peer
            .ask_list(&format!("sorted {dir} {lock_name}"), "SORTED")
            .await;
        assert_eq!(ours, curator, "order under {lock_name}");
        // Where each contender stands (what it waits on) matches Curator's index, except
        // among equal keys, which Curator orders by listing position and we never wait on.
        for (index, name) in curator.iter().enumerate() {
            let r = rank(children.iter(), name, key).expect("listed");
            let equal_before = curator[..index]
                .iter()
                .filter(|n| key(n) == key(name))
                .count();
            assert_eq!(
                r.index + equal_before,
                index,
                "rank of {name} under {lock_name}"
            );
        }
    }
    peer.exit().await;
}

/// Names outside ASCII. Curator compares keys as Java strings (UTF-16 code units), we compare
/// UTF-8 bytes: the two orders differ only for characters above U+FFFF (surrogate pairs in
/// Java). ZooKeeper refuses those in paths (and the rest of U+D800..=U+F8FF), so no lock
/// directory can hold a name on which the orders differ; every name it accepts sorts alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sort_order_agrees_with_curator_outside_ascii() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let dir = "/interop-utf";
    client
        .create(dir, b"", CreateMode::Persistent)
        .await
        .unwrap();
    for refused in ["\u{1f600}", "\u{10000}-lock-0000000001", "\u{e000}"] {
        let err = client
            .create(&join(dir, refused), b"", CreateMode::Persistent)
            .await
            .expect_err("the server refuses the name");
        // Refused by the server (BadArguments), or by the client before sending.
        assert!(
            err.code() == Some(ErrorCode::BadArguments) || err.is_invalid_input(),
            "{refused:?}: {err}"
        );
    }
    let names = [
        "\u{ff21}",
        "\u{f900}",
        "\u{7ff}",
        "\u{e9}",
        "a",
        "\u{fc}-lock-0000000012",
        "_c_\u{3b1}-lock-0000000003",
        "x-lock-\u{ff10}",
        "x-lock-\u{a0}",
    ];
    for name in names {
        client
            .create(&join(dir, name), name.as_bytes(), CreateMode::Persistent)
            .await
            .unwrap();
    }
    let children = client.get_children(dir).await.unwrap();
    let mut peer = Peer::start("java-sorter", &["client", &zk.connect_string()]).await;
    let ours = sorted(children.iter(), key_fn(|n| sort_key(n, LOCK)));
    let curator = peer
        .ask_list(&format!("sorted {dir} {LOCK}"), "SORTED")
        .await;
    assert_eq!(ours, curator);
    peer.exit().await;
}

/// Revocation requests cross languages: Curator's `Revoker` reaches a Rust holder, our
/// `revoke` reaches a Curator holder (its `RevocationListener` fires).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revocation_requests_cross_languages() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let path = "/interop/revocable";
    let mutex = InterProcessMutex::builder(&client, path).build().unwrap();
    let guard = within("rust acquire", mutex.acquire()).await.unwrap();
    let mut peer = Peer::start("java-revocable", &["mutex", &zk.connect_string(), path]).await;
    children_until(&client, path, "curator's lock node", |c| c.len() == 2).await;
    // The peer waiting for the lock is blocked in Curator: another one sends the request.
    let mut revoker = Peer::start("java-revoker", &["client", &zk.connect_string()]).await;

    {
        let requested = guard.revocation_requested();
        tokio::pin!(requested);
        // Nothing asked yet (this also sets the watch).
        assert!(timeout(Duration::from_millis(200), &mut requested)
            .await
            .is_err());
        revoker
            .ask(&format!("revoke {}", guard.path()), "REVOKE_SENT")
            .await;
        within("rust sees curator's revocation request", requested)
            .await
            .unwrap();
    }
    guard.release().await.unwrap();

    let java_node = peer.expect("ACQUIRED").await;
    revoke(&client, &java_node).await.unwrap();
    peer.expect("REVOCATION_REQUESTED").await;
    peer.ask("release", "RELEASED").await;
    peer.exit().await;
    revoker.exit().await;
}

// ----- Leader latch -----

/// A Curator latch leads; a Rust one and a second Curator one join: exactly one leads, and
/// both languages list the same participants in the same order. The leader leaves, the next
/// one (Rust) leads; the Rust leader leaves, Curator leads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_latch_elects_one_across_languages() {
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let client = connect(&zk).await;
    let path = "/interop/latch";

    let mut j1 = Peer::start("java-1", &["latch", &cs, path, "java-1"]).await;
    j1.expect("LEADER").await;
    let j1_path = j1.ask("path", "OUR_PATH").await;
    assert_protected(node_name(&j1_path), LATCH);

    let rust = LeaderLatch::builder(&client, path)
        .id("rust-1")
        .start()
        .unwrap();
    let names = children_until(&client, path, "rust's latch node", |c| c.len() == 2).await;
    let rust_name = new_name(&names, &[node_name(&j1_path)]);
    assert_protected(&rust_name, LATCH);
    let mut j2 = Peer::start("java-2", &["latch", &cs, path, "java-2"]).await;
    children_until(&client, path, "java-2's latch node", |c| c.len() == 3).await;
    assert_eq!(
        rust.node_path().as_deref(),
        Some(join(path, &rust_name).as_str())
    );

    let expected = ["java-1", "rust-1", "java-2"];
    let ours = rust.participants().await.unwrap();
    let ids: Vec<&str> = ours.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, expected, "rust's participants");
    let leaders: Vec<bool> = ours.iter().map(|p| p.is_leader).collect();
    assert_eq!(leaders, [true, false, false]);
    assert_eq!(j1.ask_list("participants", "PARTICIPANTS").await, expected);
    assert_eq!(j2.ask_list("participants", "PARTICIPANTS").await, expected);
    assert_eq!(j2.ask("leader", "LEADER_ID").await, "java-1");
    // Exactly one leads.
    assert_eq!(j1.ask("has", "HAS_LEADERSHIP").await, "true");
    assert_eq!(j2.ask("has", "HAS_LEADERSHIP").await, "false");
    assert!(!rust.is_leader(), "rust leads beside curator");

    // The Curator leader leaves: Rust, next in line, leads; java-2 still does not.
    let mut changes = rust.events();
    j1.ask("close", "CLOSED").await;
    assert_eq!(
        within("rust leads", changes.next()).await,
        Some(zkrs_recipes::leader::LeadershipEvent::Gained)
    );
    assert!(rust.is_leader());
    assert_eq!(j2.ask("has", "HAS_LEADERSHIP").await, "false");
    assert_eq!(
        j2.ask_list("participants", "PARTICIPANTS").await,
        ["rust-1", "java-2"]
    );
    assert_eq!(j2.ask("leader", "LEADER_ID").await, "rust-1");
    // java-1 comes back, at the end of the line.
    j1.ask("start", "STARTED").await;
    children_until(&client, path, "java-1's new node", |c| c.len() == 3).await;
    let ids: Vec<String> = rust
        .participants()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, ["rust-1", "java-2", "java-1"]);
    assert_eq!(j1.ask_list("participants", "PARTICIPANTS").await, ids);

    // The Rust leader leaves: java-2 leads (and only java-2).
    rust.close_with(CloseMode::Silent).await.unwrap();
    j2.expect("LEADER").await;
    assert_eq!(j1.ask("has", "HAS_LEADERSHIP").await, "false");
    assert_eq!(
        j1.ask_list("participants", "PARTICIPANTS").await,
        ["java-2", "java-1"]
    );
    for peer in [j1, j2] {
        peer.exit().await;
    }
    children_until(&client, path, "no latch node left", |c| c.is_empty()).await;
}

/// LeaderSelectors of both languages take turns: a Rust term, then the Curator participant
/// waiting in line, then Rust again after requeueing; both list the same participants.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_selectors_take_turns_across_languages() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let path = "/interop/selector";
    let (terms_tx, mut terms) = mpsc::unbounded_channel();
    let stop = Arc::new(tokio::sync::Notify::new());
    let selector = {
        let stop = stop.clone();
        LeaderSelector::builder(&client, path, move |ctx| {
            let (terms_tx, stop) = (terms_tx.clone(), stop.clone());
            async move {
                let _ = terms_tx.send(ctx.node_path().to_string());
                stop.notified().await;
            }
        })
        .id("rust-sel")
        .start()
        .unwrap()
    };
    let rust_node = within("rust's first term", terms.recv()).await.unwrap();
    assert_protected(node_name(&rust_node), LOCK);

    let mut peer = Peer::start(
        "java-selector",
        &["selector", &zk.connect_string(), path, "java-sel"],
    )
    .await;
    let names = children_until(&client, path, "curator's node", |c| c.len() == 2).await;
    let java_node = new_name(&names, &[node_name(&rust_node)]);
    assert_protected(&java_node, LOCK);
    let (data, _) = client.get_data(&join(path, &java_node)).await.unwrap();
    assert_eq!(data.as_ref(), b"java-sel", "curator's node holds its id");
    let expected = ["rust-sel", "java-sel"];
    assert_eq!(
        peer.ask_list("participants", "PARTICIPANTS").await,
        expected
    );
    let ours: Vec<String> = selector
        .participants()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ours, expected);
    assert_eq!(peer.ask("has", "HAS_LEADERSHIP").await, "false");
    assert!(selector.is_leader());

    // The Rust term ends: Curator's participant leads.
    stop.notify_one();
    peer.expect("LEADER").await;
    assert_eq!(peer.ask("leader", "LEADER_ID").await, "java-sel");
    assert!(selector.requeue(), "rust gets back in line");
    children_until(&client, path, "rust back in line", |c| c.len() == 2).await;
    assert_eq!(
        peer.ask_list("participants", "PARTICIPANTS").await,
        ["java-sel", "rust-sel"]
    );
    let ours: Vec<String> = selector
        .participants()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ours, ["java-sel", "rust-sel"]);
    assert!(!selector.is_leader(), "rust leads beside curator");

    // The Curator term ends: Rust leads again.
    peer.ask("relinquish", "RELINQUISHING").await;
    peer.expect("NOT_LEADER").await;
    let second = within("rust's second term", terms.recv()).await.unwrap();
    assert_ne!(second, rust_node, "a new node for a new term");
    assert_eq!(peer.ask("leader", "LEADER_ID").await, "rust-sel");
    stop.notify_one();
    selector.close().await.unwrap();
    peer.exit().await;
    children_until(&client, path, "no node left", |c| c.is_empty()).await;
}

// ----- Read/write lock -----

/// Readers of both languages share; a Rust writer waits for a Curator reader; a Curator
/// writer waits for a Rust writer; Rust's downgrade keeps the waiting Curator writer out; a
/// Rust reader waits for a Curator writer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_write_lock_across_languages() {
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let client = connect(&zk).await;
    let path = "/interop/rw";
    let lock = InterProcessReadWriteLock::builder(&client, path)
        .build()
        .unwrap();
    let short = Duration::from_millis(300);

    // A Curator reader and a Rust reader hold it together.
    let mut reader = Peer::start("java-reader", &["read", &cs, path]).await;
    let java_read = reader.expect("ACQUIRED").await;
    assert_protected(node_name(&java_read), "__READ__");
    let rust_read = within("rust read beside curator's", lock.read_lock().acquire())
        .await
        .unwrap();
    assert_protected(node_name(rust_read.path()), "__READ__");

    // A Rust writer waits for both, then for the Curator reader alone.
    let writer = {
        let lock = InterProcessReadWriteLock::builder(&connect(&zk).await, path)
            .build()
            .unwrap();
        tokio::spawn(async move { lock.write_lock().acquire().await })
    };
    let names = children_until(&client, path, "rust writer's node", |c| c.len() == 3).await;
    let writer_name = new_name(
        &names,
        &[node_name(&java_read), node_name(rust_read.path())],
    );
    rust_read.release().await.unwrap();
    let settled = [node_name(&java_read).to_string(), writer_name.clone()];
    let is_settled = |c: &[String]| c.len() == 2 && settled.iter().all(|n| c.contains(n));
    children_until(&client, path, "rust reader gone", is_settled).await;
    let probe = lock.write_lock().try_acquire(short).await.unwrap();
    assert!(
        probe.is_none(),
        "a rust writer got in beside curator's reader"
    );
    children_until(&client, path, "the probe's node gone", is_settled).await;
    assert!(
        !writer.is_finished(),
        "the rust writer got in beside curator's reader"
    );
    reader.ask("release", "RELEASED").await;
    let write = within("rust writer after curator's reader", writer)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(write.path(), join(path, &writer_name));
    assert_protected(&writer_name, "__WRIT__");

    // A Curator writer waits for the Rust writer.
    let mut java_writer = Peer::start("java-writer", &["write", &cs, path]).await;
    let names = children_until(&client, path, "curator writer's node", |c| c.len() == 2).await;
    let java_write = new_name(&names, &[&writer_name]);
    assert_protected(&java_write, "__WRIT__");
    java_writer
        .assert_silent("curator's writer got in beside rust's")
        .await;
    assert!(lock.read_lock().try_acquire(short).await.unwrap().is_none());
    children_until(&client, path, "the probe's node gone", |c| c.len() == 2).await;

    // Rust downgrades: its read node takes the write node's place, ahead of the waiting
    // Curator writer, by Curator's own ordering.
    let read = within("downgrade", write.downgrade()).await.unwrap();
    let read_name = node_name(read.path()).to_string();
    assert_eq!(
        read_write_sort_key(&read_name),
        read_write_sort_key(&writer_name),
        "the downgraded read node carries the write node's sequence"
    );
    let downgraded = [read_name.clone(), java_write.clone()];
    children_until(&client, path, "write node gone", |c| {
        c.len() == 2 && downgraded.iter().all(|n| c.contains(n))
    })
    .await;
    let mut query = Peer::start("java-query", &["client", &cs]).await;
    let curator_order = query.ask_list(&format!("sorted {path} rw"), "SORTED").await;
    assert_eq!(
        curator_order, downgraded,
        "curator's order after the downgrade"
    );
    assert_eq!(
        names_of(&lock.participant_nodes().await.unwrap()),
        curator_order
    );
    java_writer
        .assert_silent("curator's writer got in beside rust's downgraded reader")
        .await;
    read.release().await.unwrap();
    assert_eq!(
        java_writer.expect("ACQUIRED").await,
        join(path, &java_write)
    );

    // A Rust reader waits for the Curator writer.
    assert!(lock.read_lock().try_acquire(short).await.unwrap().is_none());
    children_until(&client, path, "the probe's node gone", |c| c.len() == 1).await;
    let rust_reader = {
        let lock = lock.clone();
        tokio::spawn(async move { lock.read_lock().acquire().await })
    };
    children_until(&client, path, "rust reader's node", |c| c.len() == 2).await;
    assert_eq!(
        query.ask_list(&format!("sorted {path} rw"), "SORTED").await[0],
        java_write,
        "curator's writer first"
    );
    assert!(
        !rust_reader.is_finished(),
        "rust read beside curator's writer"
    );
    java_writer.ask("release", "RELEASED").await;
    let read = within("rust reader after curator's writer", rust_reader)
        .await
        .unwrap()
        .unwrap();
    read.release().await.unwrap();
    for peer in [reader, java_writer, query] {
        peer.exit().await;
    }
    children_until(&client, path, "no node left", |c| c.is_empty()).await;
}

// ----- Semaphore -----

/// Two leases, shared by a Curator semaphore and a Rust one: a third taker waits, whichever
/// its language, and gets in when either side returns one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_leases_are_shared_across_languages() {
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let client = connect(&zk).await;
    let path = "/interop/semaphore";
    let leases = join(path, "leases");
    let semaphore = InterProcessSemaphoreV2::builder(&client, path, 2)
        .build()
        .unwrap();
    let short = Duration::from_millis(300);

    let mut peer = Peer::start("java-semaphore", &["semaphore", &cs, path, "2"]).await;
    let java_lease = peer.ask("acquire", "LEASE").await;
    assert_protected(node_name(&java_lease), LEASE);
    let rust_lease = within("rust lease", semaphore.acquire_one()).await.unwrap();
    assert_protected(rust_lease.node_name(), LEASE);
    assert_eq!(node_name(parent(rust_lease.path())), "leases");

    // Both leases are out: Curator's next taker waits (holding the semaphore's mutex, its
    // lease node counted third) ...
    peer.send("acquire");
    let names = children_until(&client, &leases, "curator's waiting lease", |c| {
        c.len() == 3
    })
    .await;
    let waiting = new_name(&names, &[node_name(&java_lease), rust_lease.node_name()]);
    let locks = children_until(&client, &join(path, "locks"), "curator's mutex node", |c| {
        c.len() == 1
    })
    .await;
    assert_protected(&locks[0], LOCK);
    peer.assert_silent("curator took a third lease of two")
        .await;
    // ... and so does Rust's (behind Curator on the mutex).
    assert!(semaphore.try_acquire_one(short).await.unwrap().is_none());

    // Rust returns its lease: Curator's waiter gets it.
    rust_lease.release().await.unwrap();
    assert_eq!(peer.expect("LEASE").await, join(&leases, &waiting));
    assert!(semaphore.try_acquire_one(short).await.unwrap().is_none());
    // Curator returns one: Rust gets it.
    peer.ask("release", "RELEASED").await;
    let lease = within("rust lease after curator's", semaphore.acquire_one())
        .await
        .unwrap();
    let mut all = names_of(&semaphore.participant_nodes().await.unwrap());
    let mut curator_view = peer.ask_list("participants", "PARTICIPANTS").await;
    all.sort();
    curator_view.sort();
    assert_eq!(all, curator_view);
    assert_eq!(all.len(), 2);
    lease.release().await.unwrap();
    peer.ask("release", "RELEASED").await;
    peer.exit().await;
    children_until(&client, &leases, "no lease left", |c| c.is_empty()).await;
}

/// Curator threads and Rust tasks hammer a two-lease semaphore; every holder puts an
/// ephemeral marker up while it holds and counts the markers: never more than two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semaphore_never_exceeds_its_leases_under_contention() {
    const MAX: u32 = 2;
    const ROUNDS: usize = 12;
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let client = connect(&zk).await;
    let path = "/interop/busy";
    let markers = "/interop/markers";
    client
        .create("/interop", b"", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create(markers, b"", CreateMode::Persistent)
        .await
        .unwrap();

    let mut peer = Peer::start("java-stress", &["semaphore", &cs, path, &MAX.to_string()]).await;
    peer.send(&format!("stress 2 {ROUNDS} {markers} {MAX}"));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for t in 0..2u64 {
        let client = connect(&zk).await;
        tasks.push(tokio::spawn(async move {
            let semaphore = InterProcessSemaphoreV2::builder(&client, path, MAX)
                .build()
                .unwrap();
            let mut most = 0;
            for round in 0..ROUNDS as u64 {
                let lease = semaphore.acquire_one().await.unwrap();
                let marker = client
                    .create(
                        &join(markers, "rust-"),
                        b"",
                        CreateMode::EphemeralSequential,
                    )
                    .await
                    .unwrap();
                let holders = client.get_children(markers).await.unwrap().to_vec();
                assert!(
                    holders.len() <= MAX as usize,
                    "more holders than {MAX} leases: markers {holders:?}"
                );
                most = most.max(holders.len());
                // Hold a moment, so holders overlap.
                tokio::time::sleep(Duration::from_millis(1 + (t * 7 + round * 3) % 5)).await;
                client.delete(&marker, None).await.unwrap();
                lease.release().await.unwrap();
            }
            client.close().await.unwrap();
            most
        }));
    }
    let mut most = 0;
    for task in tasks {
        most = most.max(
            timeout(START, task)
                .await
                .expect("rust holders done")
                .unwrap(),
        );
    }
    let done = peer.expect_within("STRESS_DONE", START).await;
    let curator_most: usize = done.parse().unwrap_or_else(|_| {
        peer.fail(&format!(
            "curator's holders saw more markers than leases: {done}"
        ))
    });
    assert!(curator_most <= MAX as usize);
    let elapsed = started.elapsed();
    eprintln!(
        "semaphore contention: {} rounds each side, most holders seen: rust {most}, curator \
         {curator_most}, {elapsed:?}",
        2 * ROUNDS
    );
    peer.exit().await;
    children_until(&client, &join(path, "leases"), "no lease left", |c| {
        c.is_empty()
    })
    .await;
}

/// A semaphore whose maximum is a SharedCount: Curator reads the count Rust seeded and
/// writes, Rust reads the count Curator writes (4 bytes, big-endian), and both follow changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_count_semaphore_follows_either_side() {
    let zk = TestingServer::start().unwrap();
    let cs = zk.connect_string();
    let client = connect(&zk).await;
    let path = "/interop/counted";
    let count = "/interop/count";
    let leases = join(path, "leases");
    let semaphore = InterProcessSemaphoreV2::builder(
        &client,
        path,
        zkrs_recipes::lock::MaxLeases::shared_count(count, 1),
    )
    .build()
    .unwrap();
    assert_eq!(semaphore.max_leases().await.unwrap(), 1);
    let (data, _) = client.get_data(count).await.unwrap();
    assert_eq!(
        data.as_ref(),
        [0, 0, 0, 1],
        "rust seeds the count as curator stores it"
    );

    // Curator's seed is ignored: the count exists.
    let mut peer = Peer::start("java-counted", &["counted", &cs, path, count, "5"]).await;
    assert_eq!(peer.ask("count", "COUNT").await, "1");
    let java_lease = peer.ask("acquire", "LEASE").await;

    // One lease of one is out: Rust waits, until Curator raises the count.
    let waiter = {
        let semaphore = semaphore.clone();
        tokio::spawn(async move { semaphore.acquire_one().await })
    };
    let names = children_until(&client, &leases, "rust's waiting lease", |c| c.len() == 2).await;
    let rust_waiting = new_name(&names, &[node_name(&java_lease)]);
    assert!(!waiter.is_finished(), "rust took a second lease of one");
    peer.ask("setcount 2", "COUNT_SET").await;
    let (data, _) = client.get_data(count).await.unwrap();
    assert_eq!(
        decode_count(&data),
        Some(2),
        "curator's count as rust reads it"
    );
    let lease = within("rust lease after curator raised the count", waiter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(lease.node_name(), rust_waiting);

    // Rust raises the count to 3: Curator follows, takes the third lease, not a fourth.
    client
        .set_data(count, &encode_count(3), None)
        .await
        .unwrap();
    let deadline = Instant::now() + DEADLINE;
    while peer.ask("count", "COUNT").await != "3" {
        assert!(Instant::now() < deadline, "curator never saw rust's count");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    peer.ask("acquire", "LEASE").await;
    assert_eq!(peer.ask("try 300", "TIMEOUT").await, "");
    assert!(semaphore
        .try_acquire_one(Duration::from_millis(300))
        .await
        .unwrap()
        .is_none());

    lease.release().await.unwrap();
    peer.ask("release", "RELEASED").await;
    peer.ask("release", "RELEASED").await;
    peer.exit().await;
    children_until(&client, &leases, "no lease left", |c| c.is_empty()).await;
}

// ----- Caches -----
//
// Curator writes while our caches watch, and we write while Curator's caches watch (and ours
// too), over one script of writes: the layout, then back-to-back changes (sets, deletes of
// subtrees, delete and create again both in one transaction and in two steps, of children, of
// nested nodes and of the node a NodeCache watches) and seeded random ones. A model of the
// script says what the server must hold after it (data and version per path), which also
// checks the writer. Every cache must end equal to a fresh read, and replaying our caches'
// events must give that read: a path whose czxid changed between two reads is Removed then
// Added, never Updated.

/// Where the cache tests write, and the node the NodeCaches watch.
const CACHE_ROOT: &str = "/caches";
const CACHED_NODE: &str = "/caches/node";
/// What the random writes pick from, below the root (never `same`: see `IDENTITY`).
const POOL: &[&str] = &[
    "a", "b", "c", "node", "a/x", "a/y", "b/x", "b/y", "c/x", "a/x/deep",
];
/// A node only ever replaced by one with the same data and version: only its czxid tells.
const IDENTITY: &str = "same";
/// Our caches, in the order of [`OurCaches::streams`].
const OUR_CACHES: [&str; 4] = [
    "our CuratorCache",
    "our TreeCache",
    "our PathChildrenCache",
    "our NodeCache",
];

/// A subtree as the server has it: path -> (Stat, data).
type Tree = BTreeMap<String, (Stat, Vec<u8>)>;
/// What the event replay compares: identity, version and data.
type Key = (i64, i64, i32, Vec<u8>);

fn key(stat: &Stat, data: &[u8]) -> Key {
    (stat.czxid, stat.mzxid, stat.version, data.to_vec())
}

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

/// One write, run by Curator (the peer's `ops`) or by our client.
#[derive(Debug, Clone)]
enum Step {
    /// Create with any missing parents (persistent, empty data).
    Create(String, Vec<u8>),
    Set(String, Vec<u8>),
    /// Delete with everything below, deepest first, one request each (Curator's
    /// `deletingChildrenIfNeeded`).
    Delete(String),
    /// Delete and create again in one transaction: a new czxid, version 0.
    Replace(String, Vec<u8>),
    /// Delete with everything below, in one transaction.
    Prune(String),
}

/// The peer's `ops` command for `steps`.
fn ops_command(steps: &[Step]) -> String {
    let data = |d: &[u8]| {
        if d.is_empty() {
            "-".to_string()
        } else {
            hex(d)
        }
    };
    let mut command = String::from("ops");
    for step in steps {
        let op = match step {
            Step::Create(p, d) => format!(" create {p} {}", data(d)),
            Step::Set(p, d) => format!(" set {p} {}", data(d)),
            Step::Delete(p) => format!(" delete {p}"),
            Step::Replace(p, d) => format!(" replace {p} {}", data(d)),
            Step::Prune(p) => format!(" prune {p}"),
        };
        command.push_str(&op);
    }
    command
}

/// Curator runs `steps`, back to back.
async fn run_in_peer(peer: &mut Peer, steps: &[Step]) {
    let done = peer.ask(&ops_command(steps), "DONE").await;
    assert_eq!(done, steps.len().to_string(), "ops run by curator");
}

/// Our client runs `steps`, back to back.
async fn run_ours(client: &Client, steps: &[Step]) {
    for step in steps {
        let result = match step {
            Step::Create(path, data) => {
                match create_parents(client, parent(path), ParentMode::Persistent).await {
                    Ok(()) => client.create(path, data, CreateMode::Persistent).await,
                    Err(e) => Err(e),
                }
                .map(drop)
            }
            Step::Set(path, data) => client.set_data(path, data, None).await.map(drop),
            Step::Delete(path) => delete_one_by_one(client, path).await,
            Step::Prune(path) => match subtree(client, path).await {
                Ok(nodes) => {
                    let deletes: Vec<Op> = nodes
                        .iter()
                        .rev()
                        .map(|n| Op::delete(n.as_str(), None))
                        .collect();
                    client.multi(&deletes).await.map(drop)
                }
                Err(e) => Err(e),
            },
            Step::Replace(path, data) => client
                .multi(&[
                    Op::delete(path.as_str(), None),
                    Op::create(path.as_str(), data.as_slice(), CreateMode::Persistent),
                ])
                .await
                .map(drop),
        };
        result.unwrap_or_else(|e| panic!("{step:?}: {e}"));
    }
}

/// `path` and everything below it, parents before children.
async fn subtree(client: &Client, path: &str) -> zkrs_client::Result<Vec<String>> {
    let mut order = vec![path.to_string()];
    let mut i = 0;
    while i < order.len() {
        let children = client.get_children(&order[i]).await?;
        let below: Vec<String> = children.iter().map(|n| join(&order[i], n)).collect();
        order.extend(below);
        i += 1;
    }
    Ok(order)
}

/// Deletes `path` and everything below it, deepest first, one request each.
async fn delete_one_by_one(client: &Client, path: &str) -> zkrs_client::Result<()> {
    for node in subtree(client, path).await?.iter().rev() {
        client.delete(node, None).await?;
    }
    Ok(())
}

/// A script of writes under [`CACHE_ROOT`] and a model of what they leave: (data, version)
/// per path. Steps are recorded in the model as they are made, so each is valid when run.
struct Script {
    model: BTreeMap<String, (Vec<u8>, i32)>,
    rng: u64,
    written: usize,
}

impl Script {
    /// Seeded from `ZKR_SEED`, else the clock; prints the seed.
    fn new(what: &str) -> Script {
        let seed = std::env::var("ZKR_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            })
            | 1;
        eprintln!("{what}: seed {seed} (replay with ZKR_SEED={seed})");
        Script {
            model: BTreeMap::new(),
            rng: seed,
            written: 0,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng % n as u64) as usize
    }

    /// Fresh data for `rel` (every seventh value empty).
    fn data(&mut self, rel: &str) -> Vec<u8> {
        self.written += 1;
        if self.written % 7 == 0 {
            Vec::new()
        } else {
            format!("{}-{}", rel.replace('/', "."), self.written).into_bytes()
        }
    }

    fn has(&self, rel: &str) -> bool {
        self.model.contains_key(&at(rel))
    }

    fn is_leaf(&self, rel: &str) -> bool {
        let below = format!("{}/", at(rel));
        !self.model.keys().any(|p| p.starts_with(&below))
    }

    /// Records `step` in the model and returns it; panics if the server would refuse it.
    fn step(&mut self, step: Step) -> Step {
        match &step {
            Step::Create(path, data) => {
                for (i, _) in path.match_indices('/') {
                    if i >= CACHE_ROOT.len() {
                        self.model
                            .entry(path[..i].to_string())
                            .or_insert((Vec::new(), 0));
                    }
                }
                let before = self.model.insert(path.clone(), (data.clone(), 0));
                assert!(before.is_none(), "script: create of existing {path}");
            }
            Step::Set(path, data) => {
                let node = self
                    .model
                    .get_mut(path)
                    .expect("script: set of a missing node");
                *node = (data.clone(), node.1 + 1);
            }
            Step::Delete(path) | Step::Prune(path) => {
                assert!(
                    self.model.remove(path).is_some(),
                    "script: delete of {path}"
                );
                let below = format!("{path}/");
                self.model.retain(|p, _| !p.starts_with(&below));
            }
            Step::Replace(path, data) => {
                assert!(self.model.contains_key(path), "script: replace of {path}");
                self.model.insert(path.clone(), (data.clone(), 0));
            }
        }
        step
    }

    fn create(&mut self, rel: &str) -> Step {
        let data = self.data(rel);
        self.step(Step::Create(at(rel), data))
    }

    fn set(&mut self, rel: &str) -> Step {
        let data = self.data(rel);
        self.step(Step::Set(at(rel), data))
    }

    fn delete(&mut self, rel: &str) -> Step {
        self.step(Step::Delete(at(rel)))
    }

    fn prune(&mut self, rel: &str) -> Step {
        self.step(Step::Prune(at(rel)))
    }

    fn replace(&mut self, rel: &str) -> Step {
        let data = self.data(rel);
        self.step(Step::Replace(at(rel), data))
    }

    /// Replaced if it is a leaf, set if it has children, created if missing.
    fn rewrite(&mut self, rel: &str) -> Step {
        match (self.has(rel), self.is_leaf(rel)) {
            (false, _) => self.create(rel),
            (true, true) => self.replace(rel),
            (true, false) => self.set(rel),
        }
    }

    /// The layout: the root, children, nested nodes (some made as parents: empty data).
    fn layout(&mut self) -> Vec<Step> {
        let mut steps = vec![self.step(Step::Create(CACHE_ROOT.into(), b"root".to_vec()))];
        for rel in ["a", "a/x/deep", "b/y", "c", "node"] {
            steps.push(self.create(rel));
        }
        steps.push(self.step(Step::Create(at(IDENTITY), IDENTITY.into())));
        steps
    }

    /// Back-to-back changes: the fixed ones, then `random` seeded ones.
    fn changes(&mut self, random: usize) -> Vec<Step> {
        // Same data, same version, new czxid: only identity tells these apart.
        let mut steps = vec![
            self.step(Step::Replace(at(IDENTITY), IDENTITY.into())),
            self.step(Step::Replace(at("node"), self.model[&at("node")].0.clone())),
        ];
        steps.extend([
            self.set("node"),
            self.delete("node"),
            self.create("node"),
            self.set("a"),
        ]);
        // The same bytes again: a new version.
        let again = self.model[&at("a")].0.clone();
        steps.push(self.step(Step::Set(at("a"), again)));
        steps.extend([
            self.delete("c"),
            self.create("c"),
            self.replace("b/y"),
            self.create("n/x/y/z"),
            self.set("n/x/y"),
            self.delete("n"),
            // Three levels gone at once.
            self.prune("a"),
        ]);
        for _ in 0..random {
            let rel = POOL[self.below(POOL.len())];
            if !self.has(rel) {
                steps.push(self.create(rel));
                continue;
            }
            match self.below(5) {
                0 => steps.push(self.set(rel)),
                1 => steps.push(self.delete(rel)),
                2 => steps.push(self.rewrite(rel)),
                3 => steps.push(self.prune(rel)),
                _ => {
                    // Deleted and created again in two steps.
                    steps.push(self.delete(rel));
                    steps.push(self.create(rel));
                }
            }
        }
        steps
    }

    /// The whole tree deleted in one transaction, then part of it made again.
    fn wipe(&mut self) -> Vec<Step> {
        vec![
            self.step(Step::Prune(CACHE_ROOT.into())),
            self.create("node"),
            self.create("a/x"),
        ]
    }

    /// The server holds what the script says (data and version per path).
    fn check(&self, server: &Tree, what: &str) {
        let held: BTreeMap<String, (Vec<u8>, i32)> = server
            .iter()
            .map(|(p, (s, d))| (p.clone(), (d.clone(), s.version)))
            .collect();
        assert_eq!(
            held, self.model,
            "{what}: the server does not hold what was written"
        );
    }
}

/// A path below [`CACHE_ROOT`].
fn at(rel: &str) -> String {
    join(CACHE_ROOT, rel)
}

/// Reads the subtree at `root` to `max_depth` (the root included, if it exists).
async fn fresh_read(client: &Client, root: &str, max_depth: usize) -> Tree {
    let mut tree = Tree::new();
    let mut todo = vec![(root.to_string(), 0usize)];
    while let Some((path, depth)) = todo.pop() {
        match client.get_data(&path).await {
            Ok((data, stat)) => tree.insert(path.clone(), (stat, data.to_vec())),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => continue,
            Err(e) => panic!("reading {path}: {e}"),
        };
        if depth < max_depth {
            match client.get_children(&path).await {
                Ok(children) => todo.extend(children.iter().map(|n| (join(&path, n), depth + 1))),
                Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
                Err(e) => panic!("listing {path}: {e}"),
            }
        }
    }
    tree
}

fn view_of(snapshot: &Snapshot) -> Tree {
    snapshot
        .iter()
        .map(|(p, d)| (p.clone(), (d.stat, d.bytes().to_vec())))
        .collect()
}

/// Nodes as the peer prints them: `path:czxid:mzxid:version:hex`, by path (Java's order of
/// ASCII paths is ours).
fn entries<'a>(nodes: impl IntoIterator<Item = (&'a String, &'a (Stat, Vec<u8>))>) -> Vec<String> {
    let mut nodes: Vec<_> = nodes.into_iter().collect();
    nodes.sort_by(|a, b| a.0.cmp(b.0));
    nodes
        .into_iter()
        .map(|(p, (s, d))| format!("{p}:{}:{}:{}:{}", s.czxid, s.mzxid, s.version, hex(d)))
        .collect()
}

fn is_child_of_root(path: &str) -> bool {
    path != CACHE_ROOT && parent(path) == CACHE_ROOT
}

/// An event as a line: `added /p v0 c<czxid>`, `updated /p v1 c<czxid>`, `removed /p v0
/// c<czxid>` (what was removed), or its name.
fn line(event: &CacheEvent) -> String {
    let node = |kind: &str, d: &ChildData| {
        format!("{kind} {} v{} c{}", d.path, d.stat.version, d.stat.czxid)
    };
    match event {
        CacheEvent::Added(d) => node("added", d),
        CacheEvent::Updated { new, .. } => node("updated", new),
        CacheEvent::Removed(d) => node("removed", d),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn path_of(event: &CacheEvent) -> Option<&str> {
    match event {
        CacheEvent::Added(d) | CacheEvent::Removed(d) => Some(&d.path),
        CacheEvent::Updated { new, .. } => Some(&new.path),
        _ => None,
    }
}

/// Waits until `view()` equals a fresh read of `root` to `max_depth`: paths, data and the
/// whole Stat, except at the cache's last level the child-related part (`num_children`,
/// `cversion`, `pzxid`), which no cache follows there (as in Curator).
async fn converges(
    what: &str,
    reader: &Client,
    root: &str,
    max_depth: usize,
    with_root: bool,
    view: impl Fn() -> Tree,
) {
    let depth = |path: &str| {
        if path == root {
            0
        } else {
            path[root.len()..].matches('/').count()
        }
    };
    let deadline = Instant::now() + DEADLINE;
    loop {
        let mut server = fresh_read(reader, root, max_depth).await;
        if !with_root {
            server.remove(root);
        }
        let mut cache = view();
        for tree in [&mut server, &mut cache] {
            for (path, (stat, _)) in tree.iter_mut() {
                if depth(path) == max_depth {
                    (stat.num_children, stat.cversion, stat.pzxid) = (0, 0, 0);
                }
            }
        }
        if cache == server {
            return;
        }
        if Instant::now() >= deadline {
            let only_in = |a: &Tree, b: &Tree| -> Vec<String> {
                a.iter()
                    .filter(|(p, n)| b.get(*p) != Some(*n))
                    .map(|(p, n)| format!("{p}: {n:?}"))
                    .collect()
            };
            let (missing, extra) = (only_in(&server, &cache), only_in(&cache, &server));
            panic!(
                "{what}: not equal to a fresh read within {DEADLINE:?}\nserver has: \
                 {missing:#?}\ncache has: {extra:#?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Replays `events` from an empty view: every Added of an absent path, every Updated and
/// Removed of the state last told, an update never across identities (czxid) and always
/// forward (mzxid). Returns the state replayed and how many `Initialized` were told.
fn replay(
    cache: &str,
    events: &[CacheEvent],
    reconnects_allowed: bool,
) -> (BTreeMap<String, Key>, usize) {
    let mut state = BTreeMap::new();
    let mut initialized = 0;
    for (n, event) in events.iter().enumerate() {
        let at = format!("{cache}, event {n} ({})", line(event));
        match event {
            CacheEvent::Added(d) => {
                let before = state.insert(d.path.clone(), key(&d.stat, d.bytes()));
                assert!(before.is_none(), "{at}: added while present as {before:?}");
            }
            CacheEvent::Updated { old, new } => {
                assert_eq!(old.path, new.path, "{at}");
                assert_eq!(
                    old.stat.czxid, new.stat.czxid,
                    "{at}: an update across identities (deleted and created again must be \
                     Removed then Added)"
                );
                assert!(new.stat.mzxid > old.stat.mzxid, "{at}: not forward");
                let before = state.insert(new.path.clone(), key(&new.stat, new.bytes()));
                assert_eq!(
                    before,
                    Some(key(&old.stat, old.bytes())),
                    "{at}: from a state never told"
                );
            }
            CacheEvent::Removed(d) => {
                let before = state.remove(&d.path);
                assert_eq!(
                    before,
                    Some(key(&d.stat, d.bytes())),
                    "{at}: a state never told"
                );
            }
            CacheEvent::Initialized => initialized += 1,
            CacheEvent::Suspended | CacheEvent::Reconnected if reconnects_allowed => {}
            other => panic!("{at}: unexpected {other:?}"),
        }
    }
    (state, initialized)
}

/// Our CuratorCache, TreeCache and PathChildrenCache on [`CACHE_ROOT`] and NodeCache on
/// [`CACHED_NODE`], each on a session of its own (a one-shot watch on the CuratorCache's
/// root from its session would make its recursive watch one-shot: ZOOKEEPER-4466), with
/// every event they told.
struct OurCaches {
    curator: CuratorCache,
    tree: TreeCache,
    children: PathChildrenCache,
    node: NodeCache,
    streams: [EventStream<CacheEvent>; 4],
    told: [Vec<CacheEvent>; 4],
    /// A server before 3.6: the CuratorCache's first addWatch costs its client a reconnect
    /// (the server closes the connection that asked), told as Suspended then Reconnected.
    fallback_reconnects: bool,
}

impl OurCaches {
    /// Starts them (their builds go on in the background).
    async fn start(zk: &TestingServer) -> OurCaches {
        // Each stream is taken right after its start, before the next connect waits.
        let curator = CuratorCache::builder(&connect(zk).await, CACHE_ROOT)
            .start()
            .unwrap();
        let curator_events = curator.events();
        let tree = TreeCache::builder(&connect(zk).await, CACHE_ROOT)
            .start()
            .unwrap();
        let tree_events = tree.events();
        let children = PathChildrenCache::builder(&connect(zk).await, CACHE_ROOT)
            .start_mode(StartMode::PostInitializedEvent)
            .start()
            .unwrap();
        let children_events = children.events();
        let node = NodeCache::builder(&connect(zk).await, CACHED_NODE)
            .start()
            .unwrap();
        let streams = [curator_events, tree_events, children_events, node.events()];
        OurCaches {
            curator,
            tree,
            children,
            node,
            streams,
            told: Default::default(),
            fallback_reconnects: !zk.version().unwrap().at_least(3, 6),
        }
    }

    /// Waits for every initial build.
    async fn built(self) -> OurCaches {
        within("our CuratorCache built", self.curator.initialized())
            .await
            .unwrap();
        within("our TreeCache built", self.tree.initialized())
            .await
            .unwrap();
        within("our PathChildrenCache built", self.children.initialized())
            .await
            .unwrap();
        within("our NodeCache built", self.node.initialized())
            .await
            .unwrap();
        self
    }

    /// Waits until each cache equals a fresh read; returns the events each told since the
    /// last call (in [`OUR_CACHES`] order).
    async fn converge(&mut self, reader: &Client, what: &str) -> [Vec<CacheEvent>; 4] {
        let [curator, tree, children, node] = OUR_CACHES.map(|c| format!("{what}: {c}"));
        converges(&curator, reader, CACHE_ROOT, usize::MAX, true, || {
            view_of(&self.curator.snapshot())
        })
        .await;
        converges(&tree, reader, CACHE_ROOT, usize::MAX, true, || {
            view_of(&self.tree.snapshot())
        })
        .await;
        converges(&children, reader, CACHE_ROOT, 1, false, || {
            view_of(&self.children.snapshot())
        })
        .await;
        converges(&node, reader, CACHED_NODE, 0, true, || {
            view_of(&self.node.snapshot())
        })
        .await;
        let mut told: [Vec<CacheEvent>; 4] = Default::default();
        for (i, stream) in self.streams.iter_mut().enumerate() {
            while let Some(event) = stream.try_next() {
                told[i].push(event.clone());
                self.told[i].push(event);
            }
        }
        told
    }

    /// Replaying each cache's events from the start gives a fresh read of what it covers.
    async fn replay_gives(&self, reader: &Client) {
        let server = fresh_read(reader, CACHE_ROOT, usize::MAX).await;
        let scopes: [fn(&str) -> bool; 4] =
            [|_| true, |_| true, is_child_of_root, |p| p == CACHED_NODE];
        for (i, events) in self.told.iter().enumerate() {
            let expected: BTreeMap<String, Key> = server
                .iter()
                .filter(|(p, _)| scopes[i](p))
                .map(|(p, (s, d))| (p.clone(), key(s, d)))
                .collect();
            let (replayed, initialized) =
                replay(OUR_CACHES[i], events, self.fallback_reconnects && i == 0);
            assert_eq!(
                replayed,
                expected,
                "{}: replaying its {} events does not give a fresh read",
                OUR_CACHES[i],
                events.len()
            );
            assert_eq!(
                initialized,
                [1, 1, 1, 0][i],
                "{}: Initialized",
                OUR_CACHES[i]
            );
        }
    }

    async fn close(self) {
        self.curator.close().await;
        self.tree.close().await;
        self.children.close().await;
        self.node.close().await;
    }
}

/// Curator's caches in `peer` (CuratorCache, PathChildrenCache, NodeCache) come to a fresh
/// read (path, czxid, mzxid, version, data of every node), and ours (converged before) hold
/// the same: our CuratorCache and TreeCache are compared with Curator's CuratorCache.
async fn curator_agrees(peer: &mut Peer, reader: &Client, ours: &OurCaches, what: &str) {
    let server = fresh_read(reader, CACHE_ROOT, usize::MAX).await;
    let checks = [
        (
            OUR_CACHES[0],
            "view",
            "VIEW",
            entries(&server),
            entries(&view_of(&ours.curator.snapshot())),
        ),
        (
            OUR_CACHES[1],
            "view",
            "VIEW",
            entries(&server),
            entries(&view_of(&ours.tree.snapshot())),
        ),
        (
            OUR_CACHES[2],
            "children",
            "CHILDREN",
            entries(server.iter().filter(|(p, _)| is_child_of_root(p))),
            entries(&view_of(&ours.children.snapshot())),
        ),
        (
            OUR_CACHES[3],
            "node",
            "NODE",
            entries(server.iter().filter(|(p, _)| *p == CACHED_NODE)),
            entries(&view_of(&ours.node.snapshot())),
        ),
    ];
    for (our_cache, command, keyword, want, our_view) in checks {
        assert_eq!(our_view, want, "{what}: {our_cache} (converged before)");
        let deadline = Instant::now() + DEADLINE;
        loop {
            let curator_view = peer.ask_list(command, keyword).await;
            if curator_view == want {
                break;
            }
            if Instant::now() >= deadline {
                peer.fail(&format!(
                    "{what}: curator's {command} is not a fresh read within {DEADLINE:?}\n\
                     curator: {curator_view:#?}\nserver: {want:#?}"
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Curator writes (its `creatingParentsIfNeeded`, `deletingChildrenIfNeeded`, transactions),
/// our caches watch: each ends equal to a fresh read after every phase, a node replaced by
/// one with the same data and version is told as Removed then Added, and replaying every
/// event gives the final state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_caches_follow_curators_writes() {
    let zk = TestingServer::start().unwrap();
    let reader = connect(&zk).await;
    let mut script = Script::new("our caches follow curator's writes");
    // Our caches start before the root exists.
    let mut ours = OurCaches::start(&zk).await.built().await;
    let mut peer = Peer::start("java-writer", &["client", &zk.connect_string()]).await;

    run_in_peer(&mut peer, &script.layout()).await;
    let before = fresh_read(&reader, CACHE_ROOT, usize::MAX).await;
    script.check(&before, "curator's layout");
    ours.converge(&reader, "curator's layout").await;

    // A second set starts as the changes do: their builds race Curator's writes.
    let late = OurCaches::start(&zk).await;
    let steps = script.changes(40);
    run_in_peer(&mut peer, &steps).await;
    let mut late = late.built().await;
    let after = fresh_read(&reader, CACHE_ROOT, usize::MAX).await;
    script.check(&after, "curator's changes");
    let told = ours.converge(&reader, "curator's changes").await;
    late.converge(&reader, "curator's changes (started late)")
        .await;
    eprintln!(
        "curator wrote {} steps; our caches told {:?} events",
        steps.len(),
        told.each_ref().map(Vec::len)
    );
    // Replaced in one transaction by the same data at the same version: only the czxid
    // differs, and every cache that holds it says Removed then Added.
    let same = at(IDENTITY);
    let identity = [
        format!("removed {same} v0 c{}", before[&same].0.czxid),
        format!("added {same} v0 c{}", after[&same].0.czxid),
    ];
    for (i, events) in told[..3].iter().enumerate() {
        let lines: Vec<String> = events
            .iter()
            .filter(|e| path_of(e) == Some(same.as_str()))
            .map(line)
            .collect();
        assert_eq!(lines, identity, "{}: {same} replaced", OUR_CACHES[i]);
    }
    // The watched node was first replaced the same way: whatever followed, that is a Removed.
    assert_eq!(
        told[3].first().map(line),
        Some(format!(
            "removed {CACHED_NODE} v0 c{}",
            before[CACHED_NODE].0.czxid
        )),
        "our NodeCache: its node replaced; told {:?}",
        told[3].iter().map(line).collect::<Vec<_>>()
    );

    run_in_peer(&mut peer, &script.wipe()).await;
    script.check(
        &fresh_read(&reader, CACHE_ROOT, usize::MAX).await,
        "curator's wipe",
    );
    ours.converge(&reader, "curator's wipe").await;
    late.converge(&reader, "curator's wipe (started late)")
        .await;
    ours.replay_gives(&reader).await;
    late.replay_gives(&reader).await;
    ours.close().await;
    late.close().await;
    peer.exit().await;
}

/// We write, Curator's caches (and ours) watch: Curator's CuratorCache, PathChildrenCache
/// and NodeCache each end equal to a fresh read and to ours. Then both sides write, and each
/// side's caches see the other's nodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curators_caches_follow_our_writes() {
    let zk = TestingServer::start().unwrap();
    if !zk.version().unwrap().at_least(3, 6) {
        // Curator's CuratorCache needs persistent watches, and the peer reads its view:
        // Curator builds none before 3.6 (its bridge is a TreeCache without that view).
        // Our caches against Curator's writes run on every version (the test above).
        eprintln!(
            "Curator's CuratorCache needs ZooKeeper 3.6: not run on {}",
            zk.version().unwrap()
        );
        return;
    }
    let writer = connect(&zk).await;
    let mut script = Script::new("curator's caches follow our writes");
    // The layout first: Curator's PathChildrenCache would make a missing root a container.
    run_ours(&writer, &script.layout()).await;
    let mut peer = Peer::start(
        "java-caches",
        &["cache", &zk.connect_string(), CACHE_ROOT, CACHED_NODE],
    )
    .await;
    peer.expect_within("CACHES_READY", START).await;
    let mut ours = OurCaches::start(&zk).await.built().await;
    ours.converge(&writer, "built").await;
    curator_agrees(&mut peer, &writer, &ours, "built").await;

    let steps = script.changes(40);
    run_ours(&writer, &steps).await;
    script.check(
        &fresh_read(&writer, CACHE_ROOT, usize::MAX).await,
        "our changes",
    );
    ours.converge(&writer, "our changes").await;
    curator_agrees(&mut peer, &writer, &ours, "our changes").await;

    // Curator creates a node and replaces the watched one; we create one and write to
    // Curator's.
    let java = [script.create("from-java"), script.rewrite("node")];
    run_in_peer(&mut peer, &java).await;
    let rust = [script.create("from-rust"), script.set("from-java")];
    run_ours(&writer, &rust).await;
    script.check(
        &fresh_read(&writer, CACHE_ROOT, usize::MAX).await,
        "both sides' writes",
    );
    let told = ours.converge(&writer, "both sides' writes").await;
    assert!(
        told[0]
            .iter()
            .any(|e| matches!(e, CacheEvent::Added(d) if d.path == at("from-java"))),
        "our CuratorCache told curator's node: {:?}",
        told[0].iter().map(line).collect::<Vec<_>>()
    );
    curator_agrees(&mut peer, &writer, &ours, "both sides' writes").await;
    ours.replay_gives(&writer).await;
    ours.close().await;
    peer.exit().await;
}
