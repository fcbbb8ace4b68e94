//! Typed nodes' interop with the real Apache Curator's `ModeledFramework` (`curator-x-async`;
//! feature `typed`): a Java peer (`tests/java/CuratorTypedPeer.java`, started by
//! `tests/support`) reads and writes the same znodes through `ModelSpec`,
//! `ZPath.parseWithIds`, `JacksonModelSerializer` (Curator's default mapper), `versioned()` and
//! `cached()`, with a POJO whose fields are our `Profile`'s, in the same order:
//! - both ways: a model Curator `set`s at a path resolved from a template with a parameter is
//!   read back equal by `TypedNode` (the same path from our `ZPath`, the same version), and
//!   what `TypedNode` creates or sets Curator's `read()` gives back equal; create modes too
//!   (an ephemeral node is owned by the writer's session, a sequential one is named by the
//!   server, either way);
//! - the bytes: for the same value each side's znode holds the same JSON byte for byte,
//!   except in two places where Jackson and serde_json escape differently and parse the same
//!   (see `JSON_CASES`);
//! - versions: each side's versioned write over a version the other has moved is refused
//!   (`BadVersion`), and each side's read-modify-write loop (our `update`, Curator's loop as
//!   its users write it over `versioned()`) retries and ends with both sides' changes, in a
//!   forced interleaving each way and under real contention;
//! - caches: our `TypedCache` tells Curator's writes, and Curator's `CachedModeledFramework`
//!   holds ours.
//!
//! Needs a JDK and Curator's jars, curator-x-async and jackson-databind included
//! (`scripts/install-zookeeper.sh`); Curator 5.9.0, or 5.4.0 with `ZKRS_TEST_CURATOR=5.4.0`;
//! never skips. Every wait has a deadline: our calls and events are awaited with timeouts, the
//! peer's lines too, and the peer waits on its cache with a deadline of its own (woken by the
//! cache's listener, not polling). Run with `cargo test --features typed --test curator_typed`.

mod support;

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use tokio::runtime::Handle;
use tokio::task::block_in_place;
use tokio::time::{timeout_at, Instant};
use zkrs_client::{Client, CreateMode, ErrorCode, EventStream};
use zkrs_recipes::typed::{
    TypedCache, TypedCacheEvent, TypedData, TypedNode, UpdateOutcome, ZPath,
};
use zkrs_testkit::{JavaPrograms, TestingServer};

use support::{connect, within, Peer, DEADLINE};

const PEER: &str = "CuratorTypedPeer";

/// The model, `CuratorTypedPeer$Model` in Java: public fields declared in this order (serde
/// writes a struct's fields in declaration order, Jackson a POJO's). `note` is Java's null.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Profile {
    name: String,
    count: i32,
    last: String,
    note: Option<String>,
}

fn profile(name: &str, count: i32, last: &str, note: Option<&str>) -> Profile {
    Profile {
        name: name.to_string(),
        count,
        last: last.to_string(),
        note: note.map(str::to_string),
    }
}

// ----- The peer's tokens -----

/// A text on the peer's line: `x<hex of its UTF-8>`, `-` for null.
fn token(text: Option<&str>) -> String {
    let mut s = String::from(if text.is_some() { "x" } else { "-" });
    for b in text.unwrap_or_default().bytes() {
        write!(s, "{b:02x}").unwrap();
    }
    s
}

fn untoken(token: &str) -> Option<String> {
    if token == "-" {
        return None;
    }
    let hex = token
        .strip_prefix('x')
        .unwrap_or_else(|| panic!("a text token is x<hex> or -: {token:?}"));
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect();
    Some(String::from_utf8(bytes).expect("UTF-8"))
}

/// The peer's FIELDS: `NAME COUNT LAST NOTE`.
fn fields(p: &Profile) -> String {
    format!(
        "{} {} {} {}",
        token(Some(&p.name)),
        p.count,
        token(Some(&p.last)),
        token(p.note.as_deref())
    )
}

/// The model of the peer's FIELDS (a null name or last fails: ours cannot hold one).
fn parse_fields(words: &[&str]) -> Profile {
    assert!(words.len() >= 4, "FIELDS: {words:?}");
    Profile {
        name: untoken(words[0]).expect("Curator's name is null"),
        count: words[1].parse().expect("count"),
        last: untoken(words[2]).expect("Curator's last is null"),
        note: untoken(words[3]),
    }
}

/// What Curator's `readAsZNode()` gives.
#[derive(Debug)]
struct CuratorRead {
    value: Profile,
    version: i32,
    ephemeral_owner: i64,
}

async fn start_peer(zk: &TestingServer) -> Peer {
    Peer::start_class(PEER, "curator", &[&zk.connect_string()]).await
}

/// Curator's `ModeledFramework.set(value)` at `template` resolved with `id` (`None`: no
/// parameter), created in `mode`; the path it wrote.
async fn curator_set(
    peer: &mut Peer,
    template: &str,
    id: Option<&str>,
    mode: &str,
    value: &Profile,
) -> String {
    let command = format!(
        "set {template} {} {mode} {}",
        id.unwrap_or("-"),
        fields(value)
    );
    peer.ask(&command, "SET").await
}

async fn curator_read(peer: &mut Peer, path: &str) -> CuratorRead {
    let answer = peer.ask(&format!("read {path}"), "MODEL").await;
    let words: Vec<&str> = answer.split(' ').collect();
    assert_eq!(words.len(), 6, "MODEL {answer}");
    CuratorRead {
        value: parse_fields(&words),
        version: words[4].parse().expect("version"),
        ephemeral_owner: u64::from_str_radix(words[5], 16).expect("owner") as i64,
    }
}

/// Curator's session id.
async fn curator_session(peer: &mut Peer) -> i64 {
    let hex = peer.ask("session", "SESSION").await;
    u64::from_str_radix(&hex, 16).expect("session id") as i64
}

/// `BUMPED <tries> <version>`: Curator's read-modify-write loop's tries and version written.
fn bumped(answer: &str) -> (u32, i32) {
    let (tries, version) = answer.split_once(' ').expect("BUMPED <tries> <version>");
    (tries.parse().unwrap(), version.parse().unwrap())
}

async fn read(node: &TypedNode<Profile>) -> TypedData<Profile> {
    within("read", node.read())
        .await
        .unwrap_or_else(|e| panic!("reading {}: {e:?}", node.path()))
        .unwrap_or_else(|| panic!("{} does not exist", node.path()))
}

async fn raw(client: &Client, path: &str) -> Vec<u8> {
    within("get_data", client.get_data(path))
        .await
        .unwrap_or_else(|e| panic!("raw data of {path}: {e}"))
        .0
        .to_vec()
}

// ----- The JSON -----

/// Values whose JSON both sides write, and the relation of the bytes. Both write compact JSON
/// (no space, no newline), the fields in declaration order, `null` for a missing note, numbers
/// alike, non-ASCII text as raw UTF-8, the short escapes `\" \\ \b \t \n \f \r` and `\u00XX`
/// for the other control characters, and neither escapes `/`, DEL or U+2028. So the bytes are
/// the same, but:
/// - a control character without a short escape whose hex has a letter (U+000B, U+001F):
///   Jackson writes the hex in capitals (`\u001F`), serde_json in small letters (`\u001f`);
/// - a character beyond U+FFFF: Jackson writes it as an escaped UTF-16 surrogate pair in
///   capitals (`\uD83D\uDE00`, Jackson 2.10 and 2.18 alike), serde_json as its raw UTF-8.
///
/// Both are the same JSON string to any reader (RFC 8259, section 7), and each side reads the
/// other's bytes back to the same value, which the test checks too. That rules out any
/// byte-level comparison of such values across the two (a checksum, a compare-and-set on the
/// bytes), not the interop.
const JSON_CASES: &[(&str, i32, &str, Option<&str>, Bytes)] = &[
    ("Alice", 1, "rust", None, Bytes::Same),
    ("", i32::MIN, "", Some(""), Bytes::Same),
    (
        "caf\u{e9} \u{65e5}\u{672c} \"q\" \\ / \u{7f} \u{2028}",
        i32::MAX,
        "\u{0}\u{1}\u{7}\u{8}\t\n\u{c}\r",
        Some("{\"json\": [1, 2]} in a string"),
        Bytes::Same,
    ),
    ("tab\u{b}unit\u{1f}", -7, "x", None, Bytes::HexCase),
    (
        "smile \u{1f600}",
        0,
        "\u{10ffff}",
        Some("\u{1d11e}"),
        Bytes::Surrogates,
    ),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bytes {
    /// Byte for byte.
    Same,
    /// Jackson's `\u00XX` in capitals.
    HexCase,
    /// Jackson's surrogate pairs for characters beyond U+FFFF.
    Surrogates,
}

/// serde_json's JSON rewritten as Jackson writes it: `\uXXXX` escapes in capitals, characters
/// beyond U+FFFF as escaped surrogate pairs (both occur only inside strings).
fn as_jackson_writes(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut chars = json.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                let escaped = chars.next().expect("an escape");
                out.push(escaped);
                if escaped == 'u' {
                    for _ in 0..4 {
                        out.push(chars.next().expect("hex").to_ascii_uppercase());
                    }
                }
            }
            c if u32::from(c) > 0xffff => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    write!(out, "\\u{unit:04X}").unwrap();
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Both ways on the same znodes: Curator's `set` at a template's path read by `TypedNode`, ours
/// read by Curator's `read()`, the JSON each side stores, and the create modes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_nodes_and_modeled_framework_read_each_others_models() {
    println!("Curator {}", JavaPrograms::curator_version());
    let zk = block_in_place(TestingServer::start).unwrap();
    let client = connect(&zk).await;
    let mut peer = start_peer(&zk).await;
    let template = "/typed/users/{id}/profile";
    let profiles = TypedNode::<Profile>::builder(&client, template);

    // (1) Curator writes at the template's path for one id; we read it back equal.
    let alice = profiles.resolve(&["alice"]).unwrap();
    let first = profile("Alice", 1, "java", None);
    let path = curator_set(&mut peer, template, Some("alice"), "PERSISTENT", &first).await;
    assert_eq!(
        path,
        ZPath::parse(template).unwrap().resolve(&["alice"]).unwrap()
    );
    assert_eq!(path, alice.path(), "the same path from both templates");
    let ours = read(&alice).await;
    assert_eq!((&ours.value, ours.version()), (&first, 0));
    // `set` again: Curator's default options write over the existing node.
    let second = profile("Alice B.", 2, "java", Some("again"));
    curator_set(&mut peer, template, Some("alice"), "PERSISTENT", &second).await;
    let ours = read(&alice).await;
    assert_eq!((&ours.value, ours.version()), (&second, 1));

    // (2) We write, Curator's read() gives it back equal, at the version we see.
    let bob = profiles.resolve(&["bob"]).unwrap();
    let created = profile("Bob", 10, "rust", None);
    within("create", bob.create(&created)).await.unwrap();
    let theirs = curator_read(&mut peer, bob.path()).await;
    assert_eq!((&theirs.value, theirs.version), (&created, 0));
    let set = profile("Bob", 11, "rust", Some("set"));
    let stat = within("set", bob.set(&set, None)).await.unwrap();
    let theirs = curator_read(&mut peer, bob.path()).await;
    assert_eq!((&theirs.value, theirs.version), (&set, stat.version));

    // The JSON of the same value, written by each side on a node of its own.
    let json = TypedNode::<Profile>::builder(&client, "/typed/json/{id}");
    for (i, &(name, count, last, note, bytes)) in JSON_CASES.iter().enumerate() {
        let value = profile(name, count, last, note);
        let java_path = curator_set(
            &mut peer,
            "/typed/json/{id}",
            Some(&format!("java-{i}")),
            "PERSISTENT",
            &value,
        )
        .await;
        let rust = json.resolve(&[format!("rust-{i}")]).unwrap();
        within("create", rust.create(&value)).await.unwrap();
        // Each side reads the other's node back to the value.
        let java = json.resolve(&[format!("java-{i}")]).unwrap();
        assert_eq!(java.path(), java_path);
        assert_eq!(
            read(&java).await.value,
            value,
            "ours reading Curator's, case {i}"
        );
        let theirs = curator_read(&mut peer, rust.path()).await;
        assert_eq!(theirs.value, value, "Curator reading ours, case {i}");
        // The bytes.
        let by_jackson = String::from_utf8(raw(&client, java.path()).await).unwrap();
        let by_serde = String::from_utf8(raw(&client, rust.path()).await).unwrap();
        let parsed = |json: &str| serde_json::from_str::<serde_json::Value>(json).unwrap();
        assert_eq!(
            parsed(&by_jackson),
            parsed(&by_serde),
            "case {i}: the same JSON"
        );
        assert_eq!(
            by_jackson,
            as_jackson_writes(&by_serde),
            "case {i}: {bytes:?}"
        );
        assert_eq!(
            by_jackson == by_serde,
            bytes == Bytes::Same,
            "case {i}: {bytes:?}\n{by_jackson}\n{by_serde}"
        );
    }

    // Create modes. Ephemeral: owned by the writer's session, seen so by the other side.
    let curator_session = curator_session(&mut peer).await;
    let eph = profile("ephemeral", 0, "java", None);
    let path = curator_set(&mut peer, "/typed/modes/java-eph", None, "EPHEMERAL", &eph).await;
    let theirs = read(&TypedNode::builder(&client, &path).build().unwrap()).await;
    assert_eq!(theirs.value, eph);
    assert_eq!(theirs.stat.ephemeral_owner, curator_session);
    let ours = TypedNode::<Profile>::builder(&client, "/typed/modes/rust-eph")
        .create_mode(CreateMode::Ephemeral)
        .build()
        .unwrap();
    let eph = profile("ephemeral", 0, "rust", None);
    within("create", ours.create(&eph)).await.unwrap();
    let theirs = curator_read(&mut peer, ours.path()).await;
    assert_eq!(theirs.value, eph);
    assert_eq!(theirs.ephemeral_owner, client.session_id());
    // Sequential: the server names the node; each side reads the other's by that name.
    let seq = profile("sequential", 0, "java", None);
    let path = curator_set(
        &mut peer,
        "/typed/seq/item-",
        None,
        "PERSISTENT_SEQUENTIAL",
        &seq,
    )
    .await;
    assert_eq!(path, "/typed/seq/item-0000000000");
    let theirs = read(&TypedNode::builder(&client, &path).build().unwrap()).await;
    assert_eq!((theirs.value, theirs.stat.ephemeral_owner), (seq, 0));
    let items = TypedNode::<Profile>::builder(&client, "/typed/seq/item-")
        .create_mode(CreateMode::PersistentSequential)
        .build()
        .unwrap();
    let seq = profile("sequential", 1, "rust", None);
    let path = within("create", items.create(&seq)).await.unwrap();
    assert_eq!(path, "/typed/seq/item-0000000001");
    assert_eq!(curator_read(&mut peer, &path).await.value, seq);

    peer.exit().await;
    client.close().await.unwrap();
}

/// How many read-modify-writes each side makes at once in the contention round.
const ROUNDS: i32 = 40;

/// Versions agree; a versioned write over a moved version is refused either way; each side's
/// read-modify-write loop retries after the other's write and ends with both changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versioned_writes_conflict_and_updates_keep_both_sides_changes() {
    let zk = block_in_place(TestingServer::start).unwrap();
    let client = connect(&zk).await;
    let mut peer = start_peer(&zk).await;
    let path = "/typed/counter";
    let counter = TypedNode::<Profile>::builder(&client, path)
        .build()
        .unwrap();
    let start = profile("java-0", 0, "none", None);
    curator_set(&mut peer, path, None, "PERSISTENT", &start).await;

    // The same version on both sides; a versioned write over it by one side moves it, and the
    // other side's write over it is refused.
    let ours = read(&counter).await;
    assert_eq!((&ours.value, ours.version()), (&start, 0));
    assert_eq!(curator_read(&mut peer, path).await.version, 0);
    let java_1 = profile("java-1", 0, "none", None);
    let updated = peer
        .ask(&format!("update {path} 0 {}", fields(&java_1)), "UPDATED")
        .await;
    assert_eq!(updated, "1");
    let e = counter.set(&start, Some(0)).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::BadVersion), "{e}");
    let stat = counter.set(&start, Some(1)).await.unwrap();
    assert_eq!(stat.version, 2);
    peer.ask(&format!("update {path} 1 {}", fields(&java_1)), "CONFLICT")
        .await;
    assert_eq!(
        read(&counter).await.value,
        start,
        "the refused write left nothing"
    );

    // (3a) Our `update` loses a race to Curator: between our read and our write (inside our
    // first call of the closure) Curator's own loop bumps the count and renames. Our write over
    // the version read is refused, `update` reads again and calls the closure again: both
    // changes are kept.
    let mut calls = 0;
    let outcome = within(
        "update",
        counter.update(|current| {
            calls += 1;
            let current = current.expect("the counter exists");
            if calls == 1 {
                let answer = block_in_place(|| {
                    Handle::current().block_on(
                        peer.ask(&format!("bump {path} {}", token(Some("java-a"))), "BUMPED"),
                    )
                });
                assert_eq!(bumped(&answer), (1, 3), "Curator's write, at once");
            }
            Some(Profile {
                count: current.count + 1,
                last: "rust-a".into(),
                ..current.clone()
            })
        }),
    )
    .await
    .unwrap();
    let want = profile("java-a", 2, "rust-a", None);
    match outcome {
        UpdateOutcome::Written(now) => assert_eq!((&now.value, now.version()), (&want, 4)),
        other => panic!("nothing declines here: {other:?}"),
    }
    assert_eq!(calls, 2, "one call lost the race, one went through");
    let theirs = curator_read(&mut peer, path).await;
    assert_eq!((&theirs.value, theirs.version), (&want, 4));

    // (3b) The other way: Curator reads (and holds what it read), our `update` writes, and
    // Curator's versioned update over what it held is refused; its loop reads again and
    // redoes its change: both changes kept.
    let held = peer.ask(&format!("hold {path}"), "HELD").await;
    assert_eq!(held, format!("{} 4", fields(&want)));
    within(
        "update",
        counter.update(|current| {
            let current = current.expect("the counter exists");
            Some(Profile {
                count: current.count + 1,
                last: "rust-b".into(),
                ..current.clone()
            })
        }),
    )
    .await
    .unwrap();
    let answer = peer
        .ask(&format!("finish {}", token(Some("java-b"))), "BUMPED")
        .await;
    assert_eq!(
        bumped(&answer),
        (2, 6),
        "one refused try, one that went through"
    );
    let want = profile("java-b", 4, "rust-b", None);
    assert_eq!(read(&counter).await.value, want);
    assert_eq!(curator_read(&mut peer, path).await.value, want);

    // (3c) Contention: Curator's loop and ours, ROUNDS read-modify-writes each, at the same
    // time. Nothing is lost: every one of the 2 * ROUNDS writes is there, each side's last
    // change too.
    peer.send(&format!("bumps {path} {} {ROUNDS}", token(Some("java-c"))));
    let mut calls = 0;
    for i in 0..ROUNDS {
        let outcome = within(
            "update",
            counter.update(|current| {
                calls += 1;
                let current = current.expect("the counter exists");
                Some(Profile {
                    count: current.count + 1,
                    last: format!("rust-c{i}"),
                    ..current.clone()
                })
            }),
        )
        .await
        .unwrap();
        assert!(matches!(outcome, UpdateOutcome::Written(_)), "{outcome:?}");
    }
    let answer = peer.expect("BUMPED_ALL").await;
    let (java_tries, _) = bumped(&answer);
    let want = profile(
        "java-c",
        4 + 2 * ROUNDS,
        &format!("rust-c{}", ROUNDS - 1),
        None,
    );
    let ours = read(&counter).await;
    assert_eq!((&ours.value, ours.version()), (&want, 6 + 2 * ROUNDS));
    assert_eq!(curator_read(&mut peer, path).await.value, want);
    println!(
        "contention: {ROUNDS} updates each; ours took {calls} calls of the closure, Curator's \
         loop {java_tries} tries"
    );

    peer.exit().await;
    client.close().await.unwrap();
}

/// Waits for the cache's `Added` (`updated` false) or `Updated` of `path`, which must hold
/// `want`; returns it. Other events (`Initialized`, other paths) are passed over; a `Skipped`
/// of `path` (its data does not decode) fails at once.
async fn cache_tells(
    events: &mut EventStream<TypedCacheEvent<Profile>>,
    path: &str,
    updated: bool,
    want: &Profile,
) -> TypedData<Profile> {
    let deadline = Instant::now() + DEADLINE;
    let mut seen = Vec::new();
    loop {
        let event = match timeout_at(deadline, events.next()).await {
            Ok(Some(event)) => event,
            Ok(None) => panic!("the cache's events ended waiting for {path} (saw {seen:?})"),
            Err(_) => panic!("no event for {path} within {DEADLINE:?} (saw {seen:?})"),
        };
        let (node, was_update) = match &event {
            TypedCacheEvent::Added(node) => (node.clone(), false),
            TypedCacheEvent::Updated { new, .. } => (new.clone(), true),
            TypedCacheEvent::Skipped { path: p, error } if p == path => {
                panic!("{path} does not decode: {error:?}")
            }
            _ => {
                seen.push(event);
                continue;
            }
        };
        if node.path != path {
            seen.push(event);
            continue;
        }
        assert_eq!(
            (was_update, &node.value),
            (updated, want),
            "{path}: the first change told"
        );
        return (*node).clone();
    }
}

/// Waits for the cache's `Removed` of `path`.
async fn cache_removes(events: &mut EventStream<TypedCacheEvent<Profile>>, path: &str) {
    let deadline = Instant::now() + DEADLINE;
    let mut seen = Vec::new();
    loop {
        match timeout_at(deadline, events.next()).await {
            Ok(Some(TypedCacheEvent::Removed(node))) if node.path == path => return,
            Ok(Some(event)) => seen.push(event),
            Ok(None) => panic!("the cache's events ended waiting for {path} (saw {seen:?})"),
            Err(_) => panic!("{path} not removed within {DEADLINE:?} (saw {seen:?})"),
        }
    }
}

/// (4) Our `TypedCache` tells what Curator's `ModeledFramework` writes; Curator's
/// `CachedModeledFramework` holds what `TypedNode` writes; on the same template.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caches_follow_the_other_sides_writes() {
    let zk = block_in_place(TestingServer::start).unwrap();
    let client = connect(&zk).await;
    let mut peer = start_peer(&zk).await;
    let template = "/typed/cache/{id}";
    let cache = TypedCache::<Profile>::builder(&client, template)
        .start()
        .unwrap();
    let mut events = cache.events();
    within("the first read", cache.initialized()).await.unwrap();

    // Curator writes, our cache tells it: added, then updated.
    let alice = ZPath::parse(template).unwrap().resolve(&["alice"]).unwrap();
    let first = profile("Alice", 1, "java", None);
    curator_set(&mut peer, template, Some("alice"), "PERSISTENT", &first).await;
    let told = cache_tells(&mut events, &alice, false, &first).await;
    assert_eq!(told.version(), 0);
    let second = profile("Alice", 2, "java", Some("n"));
    curator_set(&mut peer, template, Some("alice"), "PERSISTENT", &second).await;
    let told = cache_tells(&mut events, &alice, true, &second).await;
    assert_eq!(told.version(), 1);
    assert_eq!(
        cache.get(&alice).map(|d| d.value.clone()),
        Some(second.clone())
    );

    // Curator's cache: its first read has Curator's own node; then it holds what we write.
    peer.ask(&format!("cache {template}"), "CACHE_READY").await;
    let version = peer
        .ask(&format!("cached {alice} {}", fields(&second)), "CACHED")
        .await;
    assert_eq!(version, "1");
    let bob = TypedNode::<Profile>::builder(&client, template)
        .resolve(&["bob"])
        .unwrap();
    let created = profile("Bob", 1, "rust", None);
    within("create", bob.create(&created)).await.unwrap();
    let version = peer
        .ask(
            &format!("cached {} {}", bob.path(), fields(&created)),
            "CACHED",
        )
        .await;
    assert_eq!(version, "0");
    cache_tells(&mut events, bob.path(), false, &created).await;
    let outcome = within(
        "update",
        bob.update(|current| {
            current.map(|p| Profile {
                count: p.count + 1,
                ..p.clone()
            })
        }),
    )
    .await
    .unwrap();
    let now = match outcome {
        UpdateOutcome::Written(now) => now,
        other => panic!("the update declined: {other:?}"),
    };
    let version = peer
        .ask(
            &format!("cached {} {}", bob.path(), fields(&now.value)),
            "CACHED",
        )
        .await;
    assert_eq!(version, now.version().to_string());
    cache_tells(&mut events, bob.path(), true, &now.value).await;
    within("delete", bob.delete(None)).await.unwrap();
    peer.ask(&format!("uncached {}", bob.path()), "UNCACHED")
        .await;
    cache_removes(&mut events, bob.path()).await;
    assert_eq!(cache.snapshot().keys().collect::<Vec<_>>(), [&alice]);

    within("close", cache.close()).await;
    peer.exit().await;
    client.close().await.unwrap();
}
