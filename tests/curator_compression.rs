//! Interop of compressed node data with the real Apache Curator 5.4 (feature `compression`): a
//! Java peer (`tests/java/CuratorCompressionPeer.java`, started by `tests/support`) writes with
//! Curator's `compressed()` and reads with `decompressed()` (its default
//! `GzipCompressionProvider`) on the same server as our client and recipes. Each side must read
//! what the other writes, in plain operations, transactions, a megabyte value, and the
//! recipes' `.compressed(true)`; Curator's short outputs must be ours byte for byte (but the
//! header's OS byte); a hostile node (a gzip bomb) must be refused with a clear error, without
//! allocating past the limit.
//!
//! Needs a JDK and Curator's jars (`scripts/install-zookeeper.sh`); never skips. Every wait has
//! a deadline: our events are awaited with timeouts, the peer's lines too, and Curator's
//! cache view is polled by asking the peer, with a deadline.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::{timeout_at, Instant};
use zkrs_client::compression::{self, DEFAULT_MAX_DECOMPRESSED_LEN};
use zkrs_client::{Client, CreateMode, CreateOptions, ErrorKind, EventStream, Op};
use zkrs_recipes::cache::{CacheEvent, CuratorCache, NodeCache, PathChildrenCache, TreeCache};
use zkrs_recipes::counter::{SharedValue, SharedValueEvent};
use zkrs_recipes::node::PersistentNode;
use zkrs_testkit::TestingServer;

mod support;
use support::{connect, within, Peer, DEADLINE};

/// The largest single allocation this test binary asked for (every test's, at once: the
/// others here allocate at most a few megabytes).
static LARGEST: AtomicUsize = AtomicUsize::new(0);

struct Largest;

// SAFETY: forwards to the system allocator; only records sizes.
unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Largest = Largest;

fn hex(data: &[u8]) -> String {
    if data.is_empty() {
        return "-".to_string();
    }
    data.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// `size` bytes of JSON-like lines, the peer's `bigData`.
fn big_data(size: usize) -> Vec<u8> {
    let mut s = String::with_capacity(size + 64);
    let mut i = 0;
    while s.len() < size {
        s.push_str(&format!("{{\"key\":{i},\"value\":\"v{}\"}}\n", i % 977));
        i += 1;
    }
    s.truncate(size);
    s.into_bytes()
}

async fn peer(zk: &TestingServer) -> Peer {
    Peer::start_class("CuratorCompressionPeer", "curator", &[&zk.connect_string()]).await
}

/// What Curator's `getData().decompressed()` reads at `path`.
async fn curator_reads(peer: &mut Peer, path: &str) -> Vec<u8> {
    unhex(&peer.ask(&format!("get {path}"), "DATA").await)
}

async fn decompressed(client: &Client, path: &str) -> Vec<u8> {
    within("get_data_decompressed", client.get_data_decompressed(path))
        .await
        .unwrap_or_else(|e| panic!("reading {path} decompressed: {e}"))
        .0
        .to_vec()
}

/// The client: Curator's bytes for short data, both directions of create, setData and
/// transactions, empty data, a megabyte value, and a hostile node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_and_curator_read_each_others_compressed_data() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let mut peer = peer(&zk).await;
    client
        .create("/c", b"", CreateMode::Persistent)
        .await
        .unwrap();

    // Curator's own bytes, asked of its GzipCompressionProvider.
    for data in [
        &b""[..],
        b"a",
        b"hello, world",
        br#"{"replicas":3,"zone":"eu-1"}"#,
    ] {
        let curator = unhex(
            &peer
                .ask(&format!("compress {}", hex(data)), "COMPRESSED")
                .await,
        );
        assert_eq!(
            same_but_os(&compression::compress(data), &curator),
            Ok(()),
            "{data:?}"
        );
    }
    // Longer data: the same header and trailer, each side reads the other's.
    let long = big_data(20_000);
    let curator = unhex(
        &peer
            .ask(&format!("compress {}", hex(&long)), "COMPRESSED")
            .await,
    );
    let ours = compression::compress(&long);
    // The header but its OS byte (see `same_but_os`).
    assert_eq!(ours[..9], curator[..9]);
    assert_eq!(ours[ours.len() - 8..], curator[curator.len() - 8..]);
    assert_eq!(compression::decompress(&curator).unwrap(), long);

    // Curator writes, we read; and the bytes stored are what we would have written.
    peer.ask("create /c/one 68656c6c6f", "CREATED").await;
    assert_eq!(decompressed(&client, "/c/one").await, b"hello");
    let (stored, _) = client.get_data("/c/one").await.unwrap();
    assert_eq!(
        same_but_os(&compression::compress(b"hello"), &stored),
        Ok(())
    );
    peer.ask("set /c/one 776f726c64", "SET").await;
    assert_eq!(decompressed(&client, "/c/one").await, b"world");
    peer.ask("create /c/empty -", "CREATED").await;
    assert_eq!(decompressed(&client, "/c/empty").await, b"");

    // We write, Curator reads.
    let options = CreateOptions::new(CreateMode::Persistent).compressed();
    client
        .create_with("/c/two", b"from rust", &options)
        .await
        .unwrap();
    assert_eq!(curator_reads(&mut peer, "/c/two").await, b"from rust");
    client
        .set_data_compressed("/c/two", b"set from rust", None)
        .await
        .unwrap();
    assert_eq!(curator_reads(&mut peer, "/c/two").await, b"set from rust");
    client.create_with("/c/none", b"", &options).await.unwrap();
    assert_eq!(curator_reads(&mut peer, "/c/none").await, b"");

    // Transactions, both ways.
    client
        .multi(&[
            Op::create("/c/three", b"txn create".to_vec(), CreateMode::Persistent).compressed(),
            Op::set_data("/c/one", b"txn set".to_vec(), None).compressed(),
        ])
        .await
        .unwrap();
    assert_eq!(curator_reads(&mut peer, "/c/three").await, b"txn create");
    assert_eq!(curator_reads(&mut peer, "/c/one").await, b"txn set");
    peer.ask(
        &format!(
            "txn /c/four {} /c/two {}",
            hex(b"java create"),
            hex(b"java set")
        ),
        "COMMITTED",
    )
    .await;
    assert_eq!(decompressed(&client, "/c/four").await, b"java create");
    assert_eq!(decompressed(&client, "/c/two").await, b"java set");

    // A megabyte of text, both ways, stored well under the 1 MB packet limit.
    const BIG: usize = 1_000_000;
    let stored: usize = peer
        .ask(&format!("big /c/big-java {BIG}"), "BIG")
        .await
        .parse()
        .unwrap();
    assert!(stored < BIG / 4, "Curator stored {stored} bytes");
    assert_eq!(decompressed(&client, "/c/big-java").await, big_data(BIG));
    client
        .create_with("/c/big-rust", &big_data(BIG), &options)
        .await
        .unwrap();
    let answer = peer.ask(&format!("check /c/big-rust {BIG}"), "MATCH").await;
    assert_eq!(answer, format!("true {BIG}"));

    // Data that is not gzip: a clear error, by kind, naming the node.
    client
        .create("/c/plain", b"not gzip", CreateMode::Persistent)
        .await
        .unwrap();
    let e = client.get_data_decompressed("/c/plain").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidData, "{e}");
    assert!(e.to_string().contains("/c/plain"), "{e}");

    // A gzip bomb written raw by Java: 64 MiB of zeros (four times the limit) in 64 KB.
    let bomb_len: usize = peer.ask("bomb /c/bomb 64", "BOMB").await.parse().unwrap();
    assert!(bomb_len < 1 << 20, "{bomb_len} bytes");
    LARGEST.store(0, Ordering::Relaxed);
    let e = within("the bomb", client.get_data_decompressed("/c/bomb"))
        .await
        .unwrap_err();
    let largest = LARGEST.load(Ordering::Relaxed);
    assert_eq!(e.kind(), ErrorKind::InvalidData, "{e}");
    assert!(
        largest <= DEFAULT_MAX_DECOMPRESSED_LEN,
        "an allocation of {largest} bytes, past the limit of {DEFAULT_MAX_DECOMPRESSED_LEN}"
    );
    // A lower limit stops it sooner.
    let (raw, _) = client.get_data("/c/bomb").await.unwrap();
    let e = compression::decompress_with_limit(&raw, 1 << 20).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidData);

    peer.exit().await;
    client.close().await.unwrap();
}

/// Whether two gzip members are the same byte for byte but for the header's OS byte (the
/// tenth), which every reader ignores: ours and Curator 5.4's are 0, Curator 5.9's (on JDK
/// 17) is 255, "unknown", as the JDK's `GZIPOutputStream` has written since JDK 16.
fn same_but_os(ours: &[u8], curator: &[u8]) -> Result<(), String> {
    const OS: usize = 9;
    if ours.len() != curator.len() || ours.len() <= OS {
        return Err(format!("lengths {} and {}", ours.len(), curator.len()));
    }
    if ours[OS] != 0 || ![0, 255].contains(&curator[OS]) {
        return Err(format!("OS bytes {} and {}", ours[OS], curator[OS]));
    }
    let differ = |a: &[u8], b: &[u8]| a != b;
    if differ(&ours[..OS], &curator[..OS]) || differ(&ours[OS + 1..], &curator[OS + 1..]) {
        return Err(format!("{ours:?} against Curator's {curator:?}"));
    }
    Ok(())
}

/// Waits for the cache event whose node is `path` with `data` (others are skipped).
async fn cache_tells(events: &mut EventStream<CacheEvent>, path: &str, data: &[u8]) {
    let deadline = Instant::now() + DEADLINE;
    let mut seen = Vec::new();
    loop {
        let event = match timeout_at(deadline, events.next()).await {
            Ok(Some(event)) => event,
            Ok(None) => panic!("cache events ended waiting for {path} (saw {seen:?})"),
            Err(_) => panic!("no event for {path} = {data:?} (saw {seen:?})"),
        };
        let node = match &event {
            CacheEvent::Added(node) | CacheEvent::Updated { new: node, .. } => node.clone(),
            _ => {
                seen.push(event);
                continue;
            }
        };
        if node.path == path {
            assert_eq!(
                node.data.as_deref(),
                Some(data),
                "{path}: the first readable data told"
            );
            return;
        }
        seen.push(event);
    }
}

async fn value_changed_to(
    events: &mut EventStream<SharedValueEvent<zkrs_client::Bytes>>,
    want: &[u8],
) {
    let deadline = Instant::now() + DEADLINE;
    let mut seen = Vec::new();
    loop {
        match timeout_at(deadline, events.next()).await {
            Ok(Some(SharedValueEvent::Changed(v))) if v.value[..] == *want => return,
            Ok(Some(event)) => seen.push(event),
            Ok(None) => panic!("events ended waiting for {want:?} (saw {seen:?})"),
            Err(_) => panic!("no change to {want:?} (saw {seen:?})"),
        }
    }
}

/// The recipes' `.compressed(true)` against Curator's `compressed()` / `decompressed()`:
/// PersistentNode, NodeCache (through a hostile node), CuratorCache both ways,
/// PathChildrenCache and TreeCache, SharedValue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recipes_share_compressed_data_with_curator() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let mut peer = peer(&zk).await;

    // PersistentNode: Curator reads what it writes; `data()` stays as given.
    let node = PersistentNode::builder(&client, "/r/node", CreateMode::Ephemeral)
        .data(b"persistent")
        .compressed(true)
        .start()
        .unwrap();
    assert!(node.wait_for_initial_create(DEADLINE).await.unwrap());
    assert_eq!(curator_reads(&mut peer, "/r/node").await, b"persistent");
    node.set_data(b"changed").await.unwrap();
    assert_eq!(node.data(), b"changed");
    assert_eq!(curator_reads(&mut peer, "/r/node").await, b"changed");

    // NodeCache: a hostile node first (left out, the cache carries on), then Curator's
    // compressed write, told decompressed.
    let cache = NodeCache::builder(&client, "/r/watched")
        .compressed(true)
        .start()
        .unwrap();
    let mut events = cache.events();
    cache.initialized().await.unwrap();
    peer.ask("bomb /r/watched 64", "BOMB").await;
    peer.ask(&format!("set /r/watched {}", hex(b"readable")), "SET")
        .await;
    cache_tells(&mut events, "/r/watched", b"readable").await;
    cache.close().await;

    // CuratorCache: Curator writes, we read; we write, Curator's cache reads.
    // The root compressed too: Curator's compressed cache fails on a root without data and
    // then lists nothing under it.
    let options = CreateOptions::new(CreateMode::Persistent).compressed();
    client.create_with("/r/tree", b"", &options).await.unwrap();
    let tree = CuratorCache::builder(&client, "/r/tree")
        .compressed(true)
        .start()
        .unwrap();
    let mut events = tree.events();
    tree.initialized().await.unwrap();
    // The one-shot-watch caches share the engine: each reads the same nodes decompressed.
    // On a session of their own: on one session, the CuratorCache's recursive watch keeps
    // the server (3.8) from firing their child watches on the same path (ZOOKEEPER-4466).
    let other = connect(&zk).await;
    let children = PathChildrenCache::builder(&other, "/r/tree")
        .compressed(true)
        .start()
        .unwrap();
    let subtree = TreeCache::builder(&other, "/r/tree")
        .compressed(true)
        .start()
        .unwrap();
    let mut others = [children.events(), subtree.events()];
    children.initialized().await.unwrap();
    subtree.initialized().await.unwrap();
    peer.ask(
        &format!("create /r/tree/java {}", hex(b"from java")),
        "CREATED",
    )
    .await;
    cache_tells(&mut events, "/r/tree/java", b"from java").await;
    for events in &mut others {
        cache_tells(events, "/r/tree/java", b"from java").await;
    }
    // Curator's CuratorCache needs persistent watches (3.6 on): before, Curator builds none
    // (its bridge gives a TreeCache without the view the peer reads), so its side of the
    // cache is left out there.
    let curator_cache = zk.version().unwrap().at_least(3, 6);
    if curator_cache {
        peer.ask("cache /r/tree", "CACHE_READY").await;
    }
    client
        .create_with("/r/tree/rust", b"from rust", &options)
        .await
        .unwrap();
    cache_tells(&mut events, "/r/tree/rust", b"from rust").await;
    for events in &mut others {
        cache_tells(events, "/r/tree/rust", b"from rust").await;
    }
    assert_eq!(
        subtree
            .get("/r/tree")
            .and_then(|root| root.data.clone())
            .as_deref(),
        Some(&b""[..]),
        "the root, compressed empty data"
    );
    children.close().await;
    subtree.close().await;
    other.close().await.unwrap();
    let want = format!(
        "/r/tree=-,/r/tree/java={},/r/tree/rust={}",
        hex(b"from java"),
        hex(b"from rust")
    );
    if curator_cache {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let view = peer.ask("view", "VIEW").await;
            if view == want {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "Curator's cache: {view}, not {want}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    tree.close().await;

    // SharedValue: the seed, Curator's write, ours.
    let value = SharedValue::builder(&client, "/r/value")
        .seed(b"seed")
        .compressed(true)
        .start()
        .unwrap();
    let mut changes = value.events();
    value.initialized().await.unwrap();
    assert_eq!(curator_reads(&mut peer, "/r/value").await, b"seed");
    peer.ask(&format!("set /r/value {}", hex(b"java value")), "SET")
        .await;
    value_changed_to(&mut changes, b"java value").await;
    value.set_value(b"rust value").await.unwrap();
    assert_eq!(curator_reads(&mut peer, "/r/value").await, b"rust value");
    value.close().await;

    node.close().await.unwrap();
    peer.exit().await;
    client.close().await.unwrap();
}
