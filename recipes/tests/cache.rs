//! The caches against a real server: the scenarios users start from (a config node, a
//! member list), identity across delete+recreate, start modes, depth and selector,
//! convergence after random changes, bounded events, and the lifecycle (start once; close
//! and drop remove every watch from the server and end the streams).

use zkrs_client::{CreateMode, EventStream, Op};
use zkrs_recipes::cache::{
    CacheEvent, CuratorCache, NodeCache, PathChildrenCache, StartMode, TreeCache, TreeCacheSelector,
};
use zkrs_testkit::TestingServer;

mod support;
use support::tree::*;
use support::*;

/// The next event, with a deadline.
async fn next(events: &mut EventStream<CacheEvent>, what: &str) -> CacheEvent {
    within(what, events.next())
        .await
        .unwrap_or_else(|| panic!("{what}: the stream ended"))
}

/// An event as a short line: `added /p 0`, `updated /p 1`, `removed /p`, or its name.
fn line(event: &CacheEvent) -> String {
    match event {
        CacheEvent::Added(d) => format!("added {} {}", d.path, d.stat.version),
        CacheEvent::Updated { new, .. } => format!("updated {} {}", new.path, new.stat.version),
        CacheEvent::Removed(d) => format!("removed {}", d.path),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// The next `n` events as lines.
async fn lines(events: &mut EventStream<CacheEvent>, n: usize, what: &str) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(line(&next(events, what).await));
    }
    out
}

/// Asserts nothing more is queued once the cache has caught up with a change made after
/// everything else (a marker under `marker_parent` watched by the same cache).
fn assert_no_more(events: &mut EventStream<CacheEvent>, what: &str) {
    if let Some(extra) = events.try_next() {
        panic!("{what}: unexpected event {}", line(&extra));
    }
}

/// The stream taken after `start` sees the cache's first events however long the caller
/// took to ask for it (here: until the cache had finished its first read).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_taken_after_start_sees_the_first_read() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    client
        .create("/config", b"v1", CreateMode::Persistent)
        .await
        .unwrap();
    let cache = NodeCache::builder(&client, "/config").start().unwrap();
    within("first read", cache.initialized()).await.unwrap();
    let mut events = cache.events();
    assert_eq!(
        lines(&mut events, 1, "first read's event").await,
        ["added /config 0"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_cache_follows_a_config_node_created_changed_deleted_and_created_again() {
    let zk = TestingServer::start().unwrap();
    let writer = connect(&zk).await;
    let client = connect(&zk).await;
    let cache = NodeCache::builder(&client, "/config")
        .start_mode(StartMode::BuildInitialCache)
        .start()
        .unwrap();
    let mut events = cache.events();
    within("initial build", cache.initialized()).await.unwrap();
    assert!(cache.current().is_none(), "the node does not exist yet");
    assert_no_more(&mut events, "a silent initial build");

    writer
        .create("/config", b"a=1", CreateMode::Persistent)
        .await
        .unwrap();
    assert_eq!(lines(&mut events, 1, "created").await, ["added /config 0"]);
    assert_eq!(cache.current().unwrap().bytes(), b"a=1");

    writer.set_data("/config", b"a=2", None).await.unwrap();
    assert_eq!(lines(&mut events, 1, "set").await, ["updated /config 1"]);
    writer.set_data("/config", b"a=2", None).await.unwrap();
    assert_eq!(
        lines(&mut events, 1, "same bytes written again").await,
        ["updated /config 2"]
    );

    writer.delete("/config", None).await.unwrap();
    assert_eq!(lines(&mut events, 1, "deleted").await, ["removed /config"]);
    assert!(cache.current().is_none());

    writer
        .create("/config", b"a=3", CreateMode::Persistent)
        .await
        .unwrap();
    assert_eq!(
        lines(&mut events, 1, "created again").await,
        ["added /config 0"]
    );
    // Deleted and created again in one step: same version, new identity.
    writer
        .multi(&[
            Op::delete("/config", None),
            Op::create("/config", b"a=4", CreateMode::Persistent),
        ])
        .await
        .unwrap();
    assert_eq!(
        lines(&mut events, 2, "replaced").await,
        ["removed /config", "added /config 0"]
    );
    assert_eq!(cache.current().unwrap().bytes(), b"a=4");
    converges("node cache", &writer, "/config", 0, || {
        view_of(&cache.snapshot())
    })
    .await;
    cache.close().await;
    assert!(within("stream end", events.next()).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_children_cache_build_initial_cache_over_members_that_come_and_go() {
    let zk = TestingServer::start().unwrap();
    let admin = connect(&zk).await;
    admin
        .create("/members", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let mut sessions = Vec::new();
    for i in 0..5 {
        let member = connect(&zk).await;
        member
            .create(
                &format!("/members/m{i}"),
                format!("host-{i}").as_bytes(),
                CreateMode::Ephemeral,
            )
            .await
            .unwrap();
        sessions.push(member);
    }
    let client = connect(&zk).await;
    let cache = PathChildrenCache::builder(&client, "/members")
        .start_mode(StartMode::BuildInitialCache)
        .start()
        .unwrap();
    let mut events = cache.events();
    within("build", cache.initialized()).await.unwrap();
    let names: Vec<String> = cache
        .current_data()
        .iter()
        .map(|c| format!("{}={}", c.name(), String::from_utf8_lossy(c.bytes())))
        .collect();
    assert_eq!(
        names,
        [
            "m0=host-0",
            "m1=host-1",
            "m2=host-2",
            "m3=host-3",
            "m4=host-4"
        ]
    );
    assert_no_more(
        &mut events,
        "BUILD_INITIAL_CACHE tells nothing of the initial members",
    );
    assert!(
        cache.current("/members").is_none(),
        "the parent is not in the view"
    );

    // A member leaves (its session closes), one joins, one changes its data.
    sessions.remove(2).close().await.unwrap();
    assert_eq!(
        lines(&mut events, 1, "leave").await,
        ["removed /members/m2"]
    );
    let newcomer = connect(&zk).await;
    newcomer
        .create("/members/m9", b"host-9", CreateMode::Ephemeral)
        .await
        .unwrap();
    assert_eq!(lines(&mut events, 1, "join").await, ["added /members/m9 0"]);
    sessions[0]
        .set_data("/members/m0", b"host-0b", None)
        .await
        .unwrap();
    assert_eq!(
        lines(&mut events, 1, "update").await,
        ["updated /members/m0 1"]
    );

    // A member replaced between two reads: removed then added, never updated.
    admin
        .multi(&[
            Op::delete("/members/m9", None),
            Op::create("/members/m9", b"host-9b", CreateMode::Persistent),
        ])
        .await
        .unwrap();
    assert_eq!(
        lines(&mut events, 2, "replace").await,
        ["removed /members/m9", "added /members/m9 0"]
    );
    children_converge("members", &admin, "/members", || view_of(&cache.snapshot())).await;

    // The parent deleted and created again.
    for s in sessions.drain(..) {
        s.close().await.unwrap();
    }
    newcomer.close().await.unwrap();
    admin.delete("/members/m9", None).await.unwrap();
    let mut gone: Vec<String> = lines(&mut events, 4, "everyone left").await;
    gone.sort();
    assert_eq!(
        gone,
        [
            "removed /members/m0",
            "removed /members/m1",
            "removed /members/m3",
            "removed /members/m4"
        ]
    );
    assert_eq!(lines(&mut events, 1, "m9").await, ["removed /members/m9"]);
    admin.delete("/members", None).await.unwrap();
    admin
        .create("/members", b"", CreateMode::Persistent)
        .await
        .unwrap();
    admin
        .create("/members/again", b"x", CreateMode::Persistent)
        .await
        .unwrap();
    assert_eq!(
        lines(&mut events, 1, "parent recreated").await,
        ["added /members/again 0"]
    );
    assert_eq!(cache.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_children_start_modes_and_stat_only() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    client
        .create("/p", b"", CreateMode::Persistent)
        .await
        .unwrap();
    for name in ["b", "a"] {
        client
            .create(
                &format!("/p/{name}"),
                name.as_bytes(),
                CreateMode::Persistent,
            )
            .await
            .unwrap();
    }

    let normal = PathChildrenCache::builder(&client, "/p").start().unwrap();
    let mut events = normal.events();
    let mut found = lines(&mut events, 2, "normal").await;
    found.sort();
    assert_eq!(found, ["added /p/a 0", "added /p/b 0"]);
    within("normal build", normal.initialized()).await.unwrap();
    client
        .create("/p/c", b"c", CreateMode::Persistent)
        .await
        .unwrap();
    assert_eq!(
        lines(&mut events, 1, "no Initialized in Normal mode").await,
        ["added /p/c 0"]
    );

    let posted = PathChildrenCache::builder(&client, "/p")
        .cache_data(false)
        .start_mode(StartMode::PostInitializedEvent)
        .start()
        .unwrap();
    let mut events = posted.events();
    let got = lines(&mut events, 4, "post initialized").await;
    assert_eq!(got[3], "initialized", "{got:?}");
    let mut added = got[..3].to_vec();
    added.sort();
    assert_eq!(added, ["added /p/a 0", "added /p/b 0", "added /p/c 0"]);
    assert!(posted.current_data().iter().all(|c| c.data.is_none()));
    assert_eq!(posted.current("/p/a").unwrap().stat.data_length, 1);

    // Starting twice, or starting a closed cache, cannot be written: a cache is only ever
    // obtained from its builder's start, and `close` takes it.
    posted.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_cache_keeps_to_its_depth_and_selector() {
    struct NoSecrets;
    impl TreeCacheSelector for NoSecrets {
        fn accept_child(&self, path: &str) -> bool {
            !path.ends_with("/secret")
        }
    }
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    for p in [
        "/t",
        "/t/a",
        "/t/a/b",
        "/t/a/b/c",
        "/t/secret",
        "/t/secret/x",
    ] {
        client
            .create(p, p.as_bytes(), CreateMode::Persistent)
            .await
            .unwrap();
    }
    let tree = TreeCache::builder(&client, "/t")
        .max_depth(2)
        .selector(NoSecrets)
        .start()
        .unwrap();
    let mut events = tree.events();
    within("tree build", tree.initialized()).await.unwrap();
    let got = lines(&mut events, 4, "tree build events").await;
    assert_eq!(got.last().unwrap(), "initialized");
    let paths: Vec<String> = tree.snapshot().keys().cloned().collect();
    assert_eq!(paths, ["/t", "/t/a", "/t/a/b"]);
    assert_eq!(tree.children("/t").len(), 1);

    client
        .create("/t/a/b/d", b"", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create("/t/e", b"", CreateMode::Persistent)
        .await
        .unwrap();
    assert_eq!(lines(&mut events, 1, "in depth").await, ["added /t/e 0"]);
    client.delete("/t/a/b/c", None).await.unwrap();
    client.delete("/t/a/b/d", None).await.unwrap();
    client.delete("/t/a/b", None).await.unwrap();
    assert_eq!(lines(&mut events, 1, "removed").await, ["removed /t/a/b"]);
    tree.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cache_converges_after_random_changes() {
    let zk = TestingServer::start().unwrap();
    let writer = connect(&zk).await;
    writer
        .create("/r", b"root", CreateMode::Persistent)
        .await
        .unwrap();
    // One session per cache: ZooKeeper before 3.9 keeps one watch mode per (connection,
    // path), so a one-shot watch on /r would turn the CuratorCache's recursive watch on /r
    // into a one-shot one (ZOOKEEPER-4466).
    let curator = CuratorCache::builder(&connect(&zk).await, "/r")
        .start()
        .unwrap();
    let mut curator_events = curator.events();
    let tree = TreeCache::builder(&connect(&zk).await, "/r")
        .start()
        .unwrap();
    let children = PathChildrenCache::builder(&connect(&zk).await, "/r")
        .start()
        .unwrap();
    let node = NodeCache::builder(&connect(&zk).await, "/r/a")
        .start()
        .unwrap();
    let mut rng = Rng::from_env("random changes");
    for _ in 0..300 {
        random_change(&writer, "/r", &mut rng).await.unwrap();
    }
    converges("CuratorCache", &writer, "/r", usize::MAX, || {
        view_of(&curator.snapshot())
    })
    .await;
    converges("TreeCache", &writer, "/r", usize::MAX, || {
        view_of(&tree.snapshot())
    })
    .await;
    converges("NodeCache", &writer, "/r/a", 0, || {
        view_of(&node.snapshot())
    })
    .await;
    children_converge("PathChildrenCache", &writer, "/r", || {
        view_of(&children.snapshot())
    })
    .await;

    // Replaying the events gives the final state: per path, identity and version. (Between
    // events the cache also keeps the child-related part of a node's Stat current, silently.)
    let mut replay = std::collections::BTreeMap::new();
    let key = |s: &zkrs_client::Stat| (s.czxid, s.mzxid, s.version);
    while let Some(event) = curator_events.try_next() {
        match event {
            CacheEvent::Added(d) => {
                let before = replay.insert(d.path.clone(), key(&d.stat));
                assert!(before.is_none(), "added twice: {}", d.path);
            }
            CacheEvent::Updated { old, new } => {
                assert_eq!(old.stat.czxid, new.stat.czxid, "an update keeps identity");
                assert!(new.stat.mzxid > old.stat.mzxid, "updates move forward");
                let before = replay.insert(new.path.clone(), key(&new.stat));
                assert_eq!(
                    before,
                    Some(key(&old.stat)),
                    "update of {} from an unseen state",
                    new.path
                );
            }
            CacheEvent::Removed(d) => {
                assert_eq!(
                    replay.remove(&d.path),
                    Some(key(&d.stat)),
                    "removed unseen {}",
                    d.path
                );
            }
            _ => {}
        }
    }
    let server = fresh_read(&writer, "/r", usize::MAX).await;
    let expected: std::collections::BTreeMap<String, (i64, i64, i32)> = server
        .iter()
        .map(|(p, (s, _))| (p.clone(), key(s)))
        .collect();
    assert_eq!(replay, expected);
    curator.close().await;
    tree.close().await;
    children.close().await;
    node.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_falls_behind_is_told_and_the_view_stays_whole() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    client
        .create("/lag", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let cache = CuratorCache::builder(&client, "/lag")
        .event_capacity(8)
        .start()
        .unwrap();
    let mut events = cache.events();
    within("build", cache.initialized()).await.unwrap();
    for i in 0..100 {
        client
            .create(&format!("/lag/n{i:03}"), b"x", CreateMode::Persistent)
            .await
            .unwrap();
    }
    converges("lagging cache", &client, "/lag", 1, || {
        view_of(&cache.snapshot())
    })
    .await;
    let first = next(&mut events, "lagged").await;
    assert!(
        matches!(first, CacheEvent::Lagged { missed } if missed > 90),
        "{first:?}"
    );
    assert!(events.len() <= 8, "the buffer stays bounded");
    cache.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_and_drop_remove_every_watch_and_end_the_streams() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    for p in ["/w", "/w/a", "/w/b", "/w/a/c"] {
        client.create(p, b"", CreateMode::Persistent).await.unwrap();
    }
    let session = client.session_id();
    let quiet = |what: &'static str| {
        let zk = &zk;
        async move {
            eventually(what, || async { server_watches(zk, session).is_empty() }).await;
        }
    };

    // One-shot watches (a tree), closed.
    let tree = TreeCache::builder(&client, "/w").start().unwrap();
    let mut events = tree.events();
    within("tree", tree.initialized()).await.unwrap();
    let watched = server_watches(&zk, session);
    assert!(watched.iter().any(|p| p == "/w/a/c"), "{watched:?}");
    tree.close().await;
    quiet("the tree's watches removed on close").await;
    while let Some(_event) = within("stream end", events.next()).await {}

    // A persistent recursive watch, dropped.
    let curator = CuratorCache::builder(&client, "/w").start().unwrap();
    let mut events = curator.events();
    within("curator", curator.initialized()).await.unwrap();
    if zk.version().unwrap().at_least(3, 6) {
        assert_eq!(server_watches(&zk, session), ["/w"]);
    } else {
        // Before 3.6, no persistent watch: CuratorCache falls back to one-shot watches on
        // every node, as README says.
        eventually("one-shot watches on every node, 3.5's fallback", || async {
            server_watches(&zk, session).iter().any(|p| p == "/w/a/c")
        })
        .await;
    }
    drop(curator);
    quiet("the persistent watch removed on drop").await;
    while let Some(_event) = within("stream end", events.next()).await {}

    // A PathChildrenCache dropped while building.
    let children = PathChildrenCache::builder(&client, "/w").start().unwrap();
    drop(children);
    quiet("the children cache's watches removed on drop").await;

    // The client still works and nothing else was removed.
    let (_stat, watch) = client.exists_and_watch("/w/b").await.unwrap();
    client.delete("/w/b", None).await.unwrap();
    within("an unrelated watch still fires", watch).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caches_rooted_at_the_root() {
    let zk = TestingServer::start().unwrap();
    let writer = connect(&zk).await;
    let tree = TreeCache::builder(&connect(&zk).await, "/")
        .max_depth(1)
        .start()
        .unwrap();
    let mut events = tree.events();
    let curator = CuratorCache::builder(&connect(&zk).await, "/")
        .start()
        .unwrap();
    within("builds", async {
        tree.initialized().await.unwrap();
        curator.initialized().await.unwrap();
    })
    .await;
    let mut built = Vec::new();
    loop {
        let l = line(&next(&mut events, "build").await);
        if l == "initialized" {
            break;
        }
        built.push(l);
    }
    assert!(built.contains(&"added / 0".to_string()), "{built:?}");
    assert!(!built.iter().any(|l| l.starts_with("removed")), "{built:?}");
    writer.set_data("/", b"root data", None).await.unwrap();
    assert_eq!(lines(&mut events, 1, "root written").await, ["updated / 1"]);
    writer
        .create("/flop", b"", CreateMode::Persistent)
        .await
        .unwrap();
    assert_eq!(lines(&mut events, 1, "child").await, ["added /flop 0"]);
    converges("TreeCache at /", &writer, "/", 1, || {
        view_of(&tree.snapshot())
    })
    .await;
    converges("CuratorCache at /", &writer, "/", usize::MAX, || {
        view_of(&curator.snapshot())
    })
    .await;
}
