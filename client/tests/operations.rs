//! Every operation and its error paths against a real standalone server from the test kit.

use std::time::Duration;

use zkrs_client::*;
use zkrs_testkit::TestingServer;

const DEADLINE: Duration = Duration::from_secs(10);

mod support;
use support::known_since;

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {DEADLINE:?}"))
}

fn server() -> TestingServer {
    TestingServer::start().expect("start ZooKeeper (run scripts/install-zookeeper.sh)")
}

#[tokio::test]
async fn create_get_set_delete() {
    let zk = server();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    assert_eq!(client.state(), ConnectionState::Connected);
    assert_ne!(client.session_id(), 0);

    let path = client
        .create("/a", b"one", CreateMode::Persistent)
        .await
        .unwrap();
    assert_eq!(path, "/a");
    let (data, stat) = client.get_data("/a").await.unwrap();
    assert_eq!(&data[..], b"one");
    assert_eq!(stat.version, 0);
    assert_eq!(stat.data_length, 3);

    let stat = client.set_data("/a", b"two", Some(0)).await.unwrap();
    assert_eq!(stat.version, 1);
    let err = client.set_data("/a", b"three", Some(0)).await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::BadVersion));
    assert_eq!(err.to_string(), "BadVersion: /a");

    let err = client
        .create("/a", b"", CreateMode::Persistent)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NodeExists));
    let err = client.get_data("/missing").await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NoNode));
    assert_eq!(err.to_string(), "NoNode: /missing");
    let err = client
        .create("/missing/child", b"", CreateMode::Persistent)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NoNode));

    assert!(client.exists("/a").await.unwrap().is_some());
    client
        .create("/a/child", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let err = client.delete("/a", None).await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NotEmpty));
    client.delete("/a/child", None).await.unwrap();
    let err = client.delete("/a", Some(0)).await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::BadVersion));
    client.delete("/a", Some(1)).await.unwrap();
    assert!(client.exists("/a").await.unwrap().is_none());
    client.close().await.unwrap();
    assert_eq!(client.state(), ConnectionState::Closed);
    let err = client.exists("/a").await.unwrap_err();
    assert!(err.is_closed(), "{err}");
}

#[tokio::test]
async fn create_modes_sequential_ephemeral_container_ttl() {
    let zk = server();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    client
        .create("/seq", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let a = client
        .create("/seq/n-", b"", CreateMode::PersistentSequential)
        .await
        .unwrap();
    let b = client
        .create("/seq/n-", b"", CreateMode::EphemeralSequential)
        .await
        .unwrap();
    assert_eq!(a, "/seq/n-0000000000");
    assert_eq!(b, "/seq/n-0000000001");
    let (_, stat) = client.get_data(&b).await.unwrap();
    assert_eq!(stat.ephemeral_owner, client.session_id());
    let err = client
        .create(&format!("{b}/x"), b"", CreateMode::Persistent)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NoChildrenForEphemerals));

    let (path, stat) = client
        .create_with("/box", b"", &CreateOptions::new(CreateMode::Container))
        .await
        .unwrap();
    assert_eq!(path, "/box");
    assert!(stat.is_some());
    let (path, stat) = client
        .create_with(
            "/ttl",
            b"x",
            &CreateOptions::new(CreateMode::PersistentWithTtl).ttl(Duration::from_secs(60)),
        )
        .await
        .unwrap();
    assert_eq!((path.as_str(), stat.unwrap().data_length), ("/ttl", 1));
    let (path, stat) = client
        .create_with(
            "/with-stat",
            b"abc",
            &CreateOptions::new(CreateMode::Persistent).with_stat(),
        )
        .await
        .unwrap();
    assert_eq!(
        (path.as_str(), stat.unwrap().data_length),
        ("/with-stat", 3)
    );

    let err = client
        .create("/ttl2", b"", CreateMode::PersistentWithTtl)
        .await
        .unwrap_err();
    assert!(
        err.is_invalid_input() && err.to_string().contains("TTL"),
        "{err}"
    );

    // Ephemerals of this session.
    let mine = client.get_ephemerals("/").await;
    if known_since(&zk, &client, (3, 6), &mine).await {
        assert_eq!(mine.unwrap(), vec![b.clone()]);
    }
    client.close().await.unwrap();
    let other = Client::connect(&zk.connect_string()).await.unwrap();
    assert!(
        other.exists(&b).await.unwrap().is_none(),
        "ephemeral gone with its session"
    );
}

#[tokio::test]
async fn children_and_counts() {
    let zk = server();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    client
        .create("/p", b"", CreateMode::Persistent)
        .await
        .unwrap();
    for name in ["a", "b", "c"] {
        client
            .create(&format!("/p/{name}"), b"", CreateMode::Persistent)
            .await
            .unwrap();
    }
    client
        .create("/p/a/deep", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let children = client.get_children("/p").await.unwrap();
    let mut names = children.to_vec();
    names.sort();
    assert_eq!(names, ["a", "b", "c"]);
    assert!(children.stat().is_none());
    let children = client.get_children2("/p").await.unwrap();
    assert_eq!(children.len(), 3);
    assert_eq!(children.stat().unwrap().num_children, 3);
    let all = client.get_all_children_number("/p").await;
    if known_since(&zk, &client, (3, 6), &all).await {
        assert_eq!(all.unwrap(), 4);
    }
    let err = client.get_children("/nope").await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NoNode));
    client.sync("/p").await.unwrap();
}

#[tokio::test]
async fn acl_and_auth() {
    let zk = server();
    let client = ClientBuilder::new(zk.connect_string())
        .auth("digest", "alice:secret")
        .connect()
        .await
        .unwrap();
    let who = client.who_am_i().await;
    if known_since(&zk, &client, (3, 7), &who).await {
        let who = who.unwrap();
        assert!(
            who.contains(&("digest".to_string(), "alice".to_string())),
            "{who:?}"
        );
    }
    let creator_only = [AclEntry::creator_all()];
    client
        .create_with(
            "/secret",
            b"s",
            &CreateOptions::new(CreateMode::Persistent).acl(&creator_only),
        )
        .await
        .unwrap();
    let (acl, _) = client.get_acl("/secret").await.unwrap();
    assert_eq!(acl.len(), 1);
    assert_eq!(acl[0].scheme, "digest");
    assert!(acl[0].id.starts_with("alice:"));

    let stranger = Client::connect(&zk.connect_string()).await.unwrap();
    let err = stranger.get_data("/secret").await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NoAuth));
    stranger.add_auth("digest", b"alice:secret").await.unwrap();
    let (data, _) = stranger.get_data("/secret").await.unwrap();
    assert_eq!(&data[..], b"s");

    let stat = client
        .set_acl("/secret", &[AclEntry::open()], Some(0))
        .await
        .unwrap();
    assert_eq!(stat.aversion, 1);
    let err = client
        .set_acl("/secret", &[AclEntry::open()], Some(0))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::BadVersion));
}

#[tokio::test]
async fn multi_all_or_nothing_and_multi_read() {
    let zk = server();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    let results = client
        .multi(&[
            Op::create("/m", b"x".to_vec(), CreateMode::Persistent),
            Op::create("/m/c-", b"".to_vec(), CreateMode::PersistentSequential),
            Op::set_data("/m", b"y".to_vec(), Some(0)),
            Op::check("/m", 1),
        ])
        .await
        .unwrap();
    assert_eq!(results.len(), 4);
    assert_eq!(
        results[0],
        OpResult::Create {
            path: "/m".into(),
            stat: None
        }
    );
    assert_eq!(
        results[1],
        OpResult::Create {
            path: "/m/c-0000000000".into(),
            stat: None
        }
    );
    assert!(matches!(results[2], OpResult::SetData(s) if s.version == 1));
    assert_eq!(results[3], OpResult::Check);

    let err = client
        .multi(&[
            Op::create("/m2", b"".to_vec(), CreateMode::Persistent),
            Op::delete("/absent", None),
        ])
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NoNode));
    assert_eq!(err.path(), Some("/absent"));
    assert!(client.exists("/m2").await.unwrap().is_none(), "rolled back");

    let reads = client
        .multi_read(&[
            Op::get_data("/m"),
            Op::get_children("/m"),
            Op::get_data("/absent"),
        ])
        .await;
    if known_since(&zk, &client, (3, 6), &reads).await {
        let reads = reads.unwrap();
        assert!(matches!(&reads[0], OpResult::GetData { data, .. } if &data[..] == b"y"));
        assert_eq!(reads[1], OpResult::GetChildren(vec!["c-0000000000".into()]));
        assert_eq!(reads[2], OpResult::Error(ErrorCode::NoNode));
    }
    let err = client.multi(&[Op::get_data("/m")]).await.unwrap_err();
    assert!(err.is_invalid_input());
}

#[tokio::test]
async fn one_shot_watches_fire_once() {
    let zk = server();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    let (stat, created) = client.exists_and_watch("/w").await.unwrap();
    assert!(stat.is_none());
    client
        .create("/w", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let event = within("exists watch", created).await;
    assert_eq!(
        (event.event_type, event.path.as_str()),
        (EventType::NodeCreated, "/w")
    );

    let (_, _, changed) = client.get_data_and_watch("/w").await.unwrap();
    let (_, children) = client.get_children_and_watch("/w").await.unwrap();
    client
        .create("/w/c", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let event = within("child watch", children).await;
    assert_eq!(
        (event.event_type, event.path.as_str()),
        (EventType::NodeChildrenChanged, "/w")
    );
    client.set_data("/w", b"new", None).await.unwrap();
    let event = within("data watch", changed).await;
    assert_eq!(event.event_type, EventType::NodeDataChanged);

    // A watch on a missing node via getData is refused with NoNode and leaves nothing.
    let err = client.get_data_and_watch("/nothing").await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NoNode));
}

#[tokio::test]
async fn persistent_and_recursive_watches() {
    let zk = server();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    client
        .create("/r", b"", CreateMode::Persistent)
        .await
        .unwrap();
    // The server keeps one mode per (session, path): a recursive watch added on the same
    // path by the same session replaces a persistent one. So two sessions here.
    let other = Client::connect(&zk.connect_string()).await.unwrap();
    let exact = client.add_watch("/r", AddWatchMode::Persistent).await;
    if !known_since(&zk, &client, (3, 6), &exact).await {
        return;
    }
    let mut exact = exact.unwrap();
    let mut tree = other
        .add_watch("/r", AddWatchMode::PersistentRecursive)
        .await
        .unwrap();
    client.set_data("/r", b"1", None).await.unwrap();
    client.set_data("/r", b"2", None).await.unwrap();
    client
        .create("/r/x", b"", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create("/r/x/y", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let e = within("persistent", exact.next()).await.unwrap().unwrap();
        seen.push((e.event_type, e.path));
    }
    assert_eq!(
        seen,
        [
            (EventType::NodeDataChanged, "/r".to_string()),
            (EventType::NodeDataChanged, "/r".to_string()),
            (EventType::NodeChildrenChanged, "/r".to_string()),
        ]
    );
    let mut seen = Vec::new();
    for _ in 0..4 {
        let e = within("recursive", tree.next()).await.unwrap().unwrap();
        seen.push((e.event_type, e.path));
    }
    assert_eq!(
        seen,
        [
            (EventType::NodeDataChanged, "/r".to_string()),
            (EventType::NodeDataChanged, "/r".to_string()),
            (EventType::NodeCreated, "/r/x".to_string()),
            (EventType::NodeCreated, "/r/x/y".to_string()),
        ]
    );
    client.remove_watches("/r", WatcherType::Any).await.unwrap();
    let e = within("removed", exact.next()).await.unwrap().unwrap();
    assert_eq!(e.event_type, EventType::PersistentWatchRemoved);
}

/// A persistent watch whose reader stops reading keeps at most its capacity of events, and
/// tells how many it dropped, before the newest ones.
#[tokio::test]
async fn a_persistent_watch_read_late_drops_its_oldest_events_and_says_so() {
    let zk = server();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    client
        .create("/lag", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let watch = client
        .add_watch_with_capacity("/lag", AddWatchMode::Persistent, 4)
        .await;
    if !known_since(&zk, &client, (3, 6), &watch).await {
        return;
    }
    let mut watch = watch.unwrap();
    for i in 0..10u8 {
        client.set_data("/lag", &[i], None).await.unwrap();
    }
    // The server sends a session its notifications before the reply to the write that
    // triggered them, so all ten events reached the watch before the last write returned.
    let first = within("lagged", watch.next()).await.unwrap();
    assert_eq!(first, Err(zkrs_client::Lagged { missed: 6 }));
    for _ in 0..4 {
        let e = within("kept", watch.next()).await.unwrap().unwrap();
        assert_eq!(e.event_type, EventType::NodeDataChanged);
    }
    // Nothing else was queued: the next write's event comes next, in order.
    client.set_data("/lag", b"x", None).await.unwrap();
    let e = within("after", watch.next()).await.unwrap().unwrap();
    assert_eq!(
        (e.event_type, e.path.as_str()),
        (EventType::NodeDataChanged, "/lag")
    );
    assert!(watch.try_next().is_none());
}

#[tokio::test]
async fn chroot_end_to_end() {
    let zk = server();
    let root = Client::connect(&zk.connect_string()).await.unwrap();
    root.create("/app", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let client = Client::connect(&format!("{}/app", zk.connect_string()))
        .await
        .unwrap();
    let path = client
        .create("/job-", b"j", CreateMode::PersistentSequential)
        .await
        .unwrap();
    assert_eq!(path, "/job-0000000000");
    assert!(root.exists("/app/job-0000000000").await.unwrap().is_some());
    let children = client.get_children("/").await.unwrap();
    assert_eq!(children.to_vec(), ["job-0000000000"]);
    let (_, _, watch) = client.get_data_and_watch(&path).await.unwrap();
    root.set_data("/app/job-0000000000", b"k", None)
        .await
        .unwrap();
    let event = within("chroot watch", watch).await;
    assert_eq!(event.path, "/job-0000000000");
    let results = client
        .multi(&[Op::create(
            "/m-",
            b"".to_vec(),
            CreateMode::EphemeralSequential,
        )])
        .await
        .unwrap();
    assert_eq!(
        results[0],
        OpResult::Create {
            path: "/m-0000000001".into(),
            stat: None
        }
    );
    let ephemerals = client.get_ephemerals("/").await;
    if known_since(&zk, &client, (3, 6), &ephemerals).await {
        assert_eq!(ephemerals.unwrap(), ["/m-0000000001"]);
    }
}

#[tokio::test]
async fn bad_input_is_refused_before_sending() {
    let zk = server();
    let client = Client::connect(&zk.connect_string()).await.unwrap();
    for bad in [
        "",
        "no-slash",
        "/trailing/",
        "/a//b",
        "/a/./b",
        "/a/../b",
        "/nul\0",
    ] {
        let err = client
            .create(bad, b"", CreateMode::Persistent)
            .await
            .unwrap_err();
        assert!(err.is_invalid_input(), "{bad:?}: {err}");
        let err = client.get_data(bad).await.unwrap_err();
        assert!(err.is_invalid_input(), "{bad:?}: {err}");
    }
    let big = vec![0u8; 1_100_000];
    let err = client
        .create("/big", &big, CreateMode::Persistent)
        .await
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
    assert!(
        err.to_string().contains("exceeds the packet limit"),
        "{err}"
    );
    // The connection is still good.
    assert!(client.exists("/big").await.unwrap().is_none());
    let err = client.delete("/", None).await.unwrap_err();
    assert!(err.is_invalid_input());
}

#[tokio::test]
async fn no_server_reachable_is_a_clear_error() {
    let port = zkrs_testkit::free_port().unwrap();
    let err = ClientBuilder::new(format!("127.0.0.1:{port}"))
        .connect_timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionLoss);
    assert!(
        err.to_string().contains("no ZooKeeper server reachable"),
        "{err}"
    );
}
