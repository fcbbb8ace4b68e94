//! Service discovery against a real server: the registry's layout and bytes, registrations
//! kept across reconnects (writing nothing: CURATOR-320) and new sessions, unregister never
//! undone by a re-registration (CURATOR-164), permanent instances outliving close
//! (CURATOR-94), a register future dropped half-way leaving nothing, the cache and the
//! provider.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::task::block_in_place;
use zkrs_client::{Client, ConnectionState, CreateMode, ErrorCode, ErrorKind, EventType};
use zkrs_recipes::discovery::{
    to_json, DownInstancePolicy, JsonFormat, Random, ServiceCacheEvent, ServiceDiscovery,
    ServiceInstance, ServiceType, UriSpec,
};
use zkrs_testkit::{Direction, FaultyProxy, TestingServer};

mod support;
use support::*;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Details {
    zone: String,
    weight: u32,
}

fn instance(name: &str, id: &str, service_type: ServiceType) -> ServiceInstance<Details> {
    ServiceInstance::builder(name)
        .id(id)
        .address("10.0.0.5")
        .port(8080)
        .payload(Details {
            zone: "a".into(),
            weight: 1,
        })
        .service_type(service_type)
        .uri_spec(UriSpec::parse("{scheme}://{address}:{port}").unwrap())
        .build()
        .unwrap()
}

/// Waits for the next cache event that is not a connection change.
async fn next_change<P: Send + Sync + 'static>(
    events: &mut zkrs_client::EventStream<ServiceCacheEvent<P>>,
) -> ServiceCacheEvent<P> {
    within("a cache event", async {
        loop {
            match events.next().await {
                Some(
                    ServiceCacheEvent::Suspended
                    | ServiceCacheEvent::Reconnected
                    | ServiceCacheEvent::Lost,
                ) => {}
                Some(event) => return event,
                None => panic!("the cache's stream ended"),
            }
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_query_update_unregister_on_curators_layout() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let other = connect(&zk).await;
    let discovery = ServiceDiscovery::<Details>::builder(&client, "/services")
        .build()
        .unwrap();
    assert!(discovery.query_for_names().await.unwrap().is_empty());

    let dynamic = instance("api", "d1", ServiceType::Dynamic);
    let fixed = instance("api", "s1", ServiceType::Static);
    discovery.register(&dynamic).await.unwrap();
    discovery.register(&fixed).await.unwrap();

    // The node's bytes are the instance's JSON as Curator writes it; the modes are Curator's.
    let (data, stat) = other.get_data("/services/api/d1").await.unwrap();
    assert_eq!(
        &data[..],
        &to_json(&dynamic, JsonFormat::Compatible).unwrap()[..]
    );
    assert_eq!(stat.ephemeral_owner, client.session_id());
    let (_, stat) = other.get_data("/services/api/s1").await.unwrap();
    assert_eq!(stat.ephemeral_owner, 0, "static: persistent");
    let (_, parent) = other.get_data("/services/api").await.unwrap();
    assert_eq!(parent.ephemeral_owner, 0);

    assert_eq!(discovery.query_for_names().await.unwrap(), ["api"]);
    let found = discovery.query_for_instances("api").await.unwrap();
    assert_eq!(found, vec![dynamic.clone(), fixed.clone()]);
    assert_eq!(
        discovery.query_for_instance("api", "d1").await.unwrap(),
        Some(dynamic.clone())
    );
    assert_eq!(
        discovery.query_for_instance("api", "nope").await.unwrap(),
        None
    );
    assert_eq!(found[0].uri().unwrap(), "http://10.0.0.5:8080");

    // Update: the same node written, not made again.
    let before = other.exists("/services/api/d1").await.unwrap().unwrap();
    let mut moved = dynamic.clone();
    moved.port = Some(9090);
    discovery.update(&moved).await.unwrap();
    let (data, stat) = other.get_data("/services/api/d1").await.unwrap();
    assert_eq!(stat.czxid, before.czxid);
    assert_eq!(
        &data[..],
        &to_json(&moved, JsonFormat::Compatible).unwrap()[..]
    );
    let unknown = instance("api", "ghost", ServiceType::Dynamic);
    let e = discovery.update(&unknown).await.unwrap_err();
    assert!(e.is_invalid_input(), "{e}");

    // A sequential instance is named `<id><10 digits>`.
    let sequential = instance("api", "q-", ServiceType::DynamicSequential);
    discovery.register(&sequential).await.unwrap();
    let names = other.get_children("/services/api").await.unwrap();
    let seq: Vec<&str> = names.iter().filter(|n| n.starts_with("q-")).collect();
    assert_eq!(seq.len(), 1, "{names:?}");
    assert!(seq[0].len() == 12 && seq[0][2..].bytes().all(|b| b.is_ascii_digit()));

    discovery.unregister(&moved).await.unwrap();
    assert!(other.exists("/services/api/d1").await.unwrap().is_none());
    discovery.unregister(&fixed).await.unwrap();
    assert!(other.exists("/services/api/s1").await.unwrap().is_none());
    // Not registered here: its node is deleted anyway (a permanent instance left by
    // another run, say).
    let permanent = instance("api", "p1", ServiceType::Permanent);
    discovery.register(&permanent).await.unwrap();
    let stale = ServiceDiscovery::<Details>::builder(&other, "/services")
        .build()
        .unwrap();
    stale.unregister(&permanent).await.unwrap();
    assert!(other.exists("/services/api/p1").await.unwrap().is_none());

    // Bad names are refused before anything is sent.
    let bad = ServiceInstance::<Details>::builder("a/b").build();
    assert!(bad.unwrap_err().is_invalid_input());
    discovery.close().await.unwrap();
    assert_eq!(children(&other, "/services/api").await, 0);
}

/// CURATOR-94: Curator deletes a `PERMANENT` instance on close. Ours stays; the dynamic and
/// static ones go, on close and on drop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permanent_instance_outlives_close_and_drop() {
    let zk = TestingServer::start().unwrap();
    let client = connect(&zk).await;
    let other = connect(&zk).await;
    for closing in [true, false] {
        let discovery = ServiceDiscovery::<Details>::builder(&client, "/reg")
            .build()
            .unwrap();
        for (id, kind) in [
            ("p", ServiceType::Permanent),
            ("d", ServiceType::Dynamic),
            ("s", ServiceType::Static),
        ] {
            discovery
                .register(&instance("svc", id, kind))
                .await
                .unwrap();
        }
        assert_eq!(children(&other, "/reg/svc").await, 3);
        if closing {
            discovery.close().await.unwrap();
        } else {
            drop(discovery);
        }
        eventually("the dynamic and static instances gone", || async {
            children(&other, "/reg/svc").await == 1
        })
        .await;
        let (_, stat) = other.get_data("/reg/svc/p").await.unwrap();
        assert_eq!(stat.ephemeral_owner, 0, "the permanent one stays");
    }
}

/// CURATOR-320 (and Curator's delete-and-create on every `RECONNECTED`): a reconnect to the
/// same session writes nothing; the node is the same one, and a watcher hears nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_to_the_same_session_writes_nothing() {
    let zk = TestingServer::start().unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let client = Client::connect(&proxy.connect_string()).await.unwrap();
    let other = connect(&zk).await;
    let discovery = ServiceDiscovery::<Details>::builder(&client, "/services")
        .build()
        .unwrap();
    discovery
        .register(&instance("api", "i1", ServiceType::Dynamic))
        .await
        .unwrap();
    let (before, watch) = other.exists_and_watch("/services/api/i1").await.unwrap();
    let before = before.unwrap();
    let (_, children_watch) = other.get_children_and_watch("/services/api").await.unwrap();
    let mut states = client.state_changes();
    let session = client.session_id();
    for _ in 0..3 {
        proxy.reset();
        next_state(&mut states, ConnectionState::Suspended).await;
        assert_eq!(
            next_state(&mut states, ConnectionState::Reconnected).await,
            session
        );
    }
    // Whatever a re-registration sends goes out right after the reconnect, before this
    // request on the same session: once it is answered, any write is applied.
    client.sync("/services/api/i1").await.unwrap();
    client.exists("/services/api/i1").await.unwrap();
    let after = other.exists("/services/api/i1").await.unwrap().unwrap();
    assert_eq!(
        (after.czxid, after.mzxid, after.version),
        (before.czxid, before.mzxid, before.version),
        "the node was made or written again"
    );
    other.sync("/").await.unwrap();
    for (what, watch) in [("data", watch), ("children", children_watch)] {
        assert!(
            tokio::time::timeout(Duration::from_millis(300), watch)
                .await
                .is_err(),
            "a {what} watch fired"
        );
    }
}

/// A new session: the instance is made again at once, owned by the new session, and the
/// old session's expiry does not take it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_comes_back_on_a_new_session() {
    const TIMEOUT: Duration = Duration::from_secs(2);
    let zk = TestingServer::start().unwrap();
    let client = connect_with_timeout(&zk, TIMEOUT).await;
    let discovery = ServiceDiscovery::<Details>::builder(&client, "/services")
        .build()
        .unwrap();
    let me = instance("api", "i1", ServiceType::Dynamic);
    discovery.register(&me).await.unwrap();
    let mut states = client.state_changes();
    block_in_place(|| zk.pause()).unwrap();
    next_state(&mut states, ConnectionState::Lost).await;
    block_in_place(|| zk.resume()).unwrap();
    next_state(&mut states, ConnectionState::Reconnected).await;
    let other = connect(&zk).await;
    eventually("registered on the new session", || async {
        match other.get_data("/services/api/i1").await {
            Ok((_, stat)) => stat.ephemeral_owner == client.session_id(),
            Err(e) if e.code() == Some(ErrorCode::NoNode) => false,
            Err(e) => panic!("{e}"),
        }
    })
    .await;
    let (data, _) = other.get_data("/services/api/i1").await.unwrap();
    assert_eq!(
        &data[..],
        &to_json(&me, JsonFormat::Compatible).unwrap()[..]
    );
    let (_, watch) = other.exists_and_watch("/services/api/i1").await.unwrap();
    assert!(
        tokio::time::timeout(TIMEOUT * 2, watch).await.is_err(),
        "the instance was deleted after the new session made it"
    );
}

/// CURATOR-164: an unregister racing a re-registration must not be undone by it. The
/// unregister is made while disconnected, so it and the reconnect's re-registration meet;
/// once it returns the node is gone, and stays gone across a further reconnect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unregister_racing_a_reregistration_stays_unregistered() {
    let zk = TestingServer::start().unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let client = Client::connect(&proxy.connect_string()).await.unwrap();
    let other = connect(&zk).await;
    let discovery = Arc::new(
        ServiceDiscovery::<Details>::builder(&client, "/services")
            .build()
            .unwrap(),
    );
    let me = instance("api", "i1", ServiceType::Dynamic);
    for round in 0..5 {
        discovery.register(&me).await.unwrap();
        let mut states = client.state_changes();
        proxy.partition();
        next_state(&mut states, ConnectionState::Suspended).await;
        let unregister = tokio::spawn({
            let discovery = discovery.clone();
            let me = me.clone();
            async move { discovery.unregister(&me).await }
        });
        proxy.heal();
        next_state(&mut states, ConnectionState::Reconnected).await;
        within("unregister", unregister).await.unwrap().unwrap();
        let (stat, watch) = other.exists_and_watch("/services/api/i1").await.unwrap();
        assert!(
            stat.is_none(),
            "round {round}: still there after unregister"
        );
        // Another reconnect: nothing may register it again.
        proxy.reset();
        next_state(&mut states, ConnectionState::Reconnected).await;
        client.sync("/services").await.unwrap();
        client.exists("/services/api/i1").await.unwrap();
        other.sync("/").await.unwrap();
        assert!(
            tokio::time::timeout(Duration::from_millis(200), watch)
                .await
                .is_err(),
            "round {round}: registered again after unregister"
        );
    }
}

/// A register future dropped with its create in flight leaves no node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_register_dropped_half_way_leaves_nothing() {
    let zk = TestingServer::start().unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let client = Client::connect(&proxy.connect_string()).await.unwrap();
    let other = connect(&zk).await;
    other
        .create("/services", b"", CreateMode::Persistent)
        .await
        .unwrap();
    other
        .create("/services/api", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let discovery = ServiceDiscovery::<Details>::builder(&client, "/services")
        .build()
        .unwrap();
    let (_, watch) = other.exists_and_watch("/services/api/s1").await.unwrap();
    // Replies are slow: the create reaches the server, its answer does not reach us in time.
    proxy.latency(Direction::ToClient, Duration::from_millis(300));
    let dropped = tokio::time::timeout(
        Duration::from_millis(100),
        discovery.register(&instance("api", "s1", ServiceType::Static)),
    )
    .await;
    assert!(
        dropped.is_err(),
        "the register finished before it was dropped"
    );
    // It was made (the watch says so), then deleted by the dropped future's guard.
    let made = within("the create", watch).await;
    assert_eq!(made.event_type, EventType::NodeCreated);
    eventually("the node deleted again", || async {
        other.exists("/services/api/s1").await.unwrap().is_none()
    })
    .await;
    proxy.clear();
    client.sync("/").await.unwrap();
    other.sync("/").await.unwrap();
    assert!(other.exists("/services/api/s1").await.unwrap().is_none());
    assert!(discovery.registered().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_follows_and_the_provider_picks() {
    let zk = TestingServer::start().unwrap();
    let writer = connect(&zk).await;
    let reader = connect(&zk).await;
    let registry = ServiceDiscovery::<Details>::builder(&writer, "/services")
        .format(JsonFormat::WithEnabled)
        .build()
        .unwrap();
    let a = instance("api", "a", ServiceType::Dynamic);
    registry.register(&a).await.unwrap();

    // A node that is not an instance before the cache starts: told as skipped.
    writer
        .create("/services/api/early-junk", b"[]", CreateMode::Ephemeral)
        .await
        .unwrap();
    let discovery = ServiceDiscovery::<Details>::builder(&reader, "/services")
        .build()
        .unwrap();
    let cache = discovery.service_cache("api").start().unwrap();
    let mut events = cache.events();
    cache.initialized().await.unwrap();
    assert_eq!(cache.instances().len(), 1);
    match next_change(&mut events).await {
        ServiceCacheEvent::Skipped { path, .. } => assert_eq!(path, "/services/api/early-junk"),
        other => panic!("{other:?}"),
    }
    assert_eq!(*cache.instances()[0], a);

    let b = instance("api", "b", ServiceType::Dynamic);
    registry.register(&b).await.unwrap();
    match next_change(&mut events).await {
        ServiceCacheEvent::Added(added) => assert_eq!(*added, b),
        other => panic!("{other:?}"),
    }
    let mut b2 = b.clone();
    b2.port = Some(1);
    registry.update(&b2).await.unwrap();
    match next_change(&mut events).await {
        ServiceCacheEvent::Updated { old, new } => assert_eq!((&*old, &*new), (&b, &b2)),
        other => panic!("{other:?}"),
    }

    // A node that is not an instance is skipped and told; the others stay.
    writer
        .create("/services/api/junk", b"{not json", CreateMode::Ephemeral)
        .await
        .unwrap();
    match next_change(&mut events).await {
        ServiceCacheEvent::Skipped { path, error } => {
            assert_eq!(path, "/services/api/junk");
            assert_eq!(error.kind(), ErrorKind::InvalidData, "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(cache.instances().len(), 2);
    let queried = discovery.query_for_instances("api").await.unwrap();
    assert_eq!(queried.len(), 2, "query skips the junk node too");

    // The provider: round robin over the enabled, filtered, not-down instances.
    let provider = discovery.provider("api").start().unwrap();
    provider.initialized().await.unwrap();
    let picks: Vec<String> = (0..4)
        .map(|_| provider.instance().unwrap().id.clone())
        .collect();
    assert_eq!(picks, ["a", "b", "a", "b"]);
    let b_now = provider
        .all_instances()
        .into_iter()
        .find(|i| i.id == "b")
        .unwrap();
    provider.note_error(&b_now);
    assert_eq!(
        provider.all_instances().len(),
        2,
        "one error is below the threshold"
    );
    provider.note_error(&b_now);
    assert!(
        (0..4).all(|_| provider.instance().unwrap().id == "a"),
        "b is down after two errors"
    );
    let short = discovery
        .provider("api")
        .down_instance_policy(DownInstancePolicy::new(Duration::from_millis(50), 1))
        .filter(|i| i.id != "a")
        .strategy(Random::with_seed(1))
        .start()
        .unwrap();
    short.initialized().await.unwrap();
    let only_b = short.instance().unwrap();
    assert_eq!(only_b.id, "b");
    short.note_error(&only_b);
    assert!(short.instance().is_none(), "down, and a filtered out");
    eventually("b up again after the timeout", || async {
        short.instance().is_some()
    })
    .await;

    // Disabled (written with the enabled key): no provider picks it; the cache still has it.
    let mut off = a.clone();
    off.enabled = false;
    registry.update(&off).await.unwrap();
    match next_change(&mut events).await {
        ServiceCacheEvent::Updated { new, .. } => assert!(!new.enabled),
        other => panic!("{other:?}"),
    }
    eventually("the provider's cache has the update", || async {
        provider.cached_instances().iter().any(|i| !i.enabled)
    })
    .await;
    assert!((0..3).all(|_| provider.instance().is_none_or(|i| i.id != "a")));

    registry.unregister(&b2).await.unwrap();
    match next_change(&mut events).await {
        ServiceCacheEvent::Removed(gone) => assert_eq!(gone.id, "b"),
        other => panic!("{other:?}"),
    }
    // A restart of the server: the cache and the registration both carry on.
    let mut states = writer.state_changes();
    block_in_place(|| zk.restart()).unwrap();
    next_state(&mut states, ConnectionState::Reconnected).await;
    let mut back = off.clone();
    back.enabled = true;
    within("update after restart", registry.update(&back))
        .await
        .unwrap();
    eventually("the cache sees the update after the restart", || async {
        cache.instances().iter().any(|i| i.id == "a" && i.enabled)
    })
    .await;
    provider.close().await;
    short.close().await;
    cache.close().await;
    within("the cache's stream ends", async {
        while events.next().await.is_some() {}
    })
    .await;
}
