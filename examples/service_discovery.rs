//! Service discovery on Curator's registry (`ServiceDiscovery`, `ServiceCache`,
//! `ServiceProvider`; the layout and JSON are Curator 5.4's, so Java services using
//! `curator-x-discovery` see these instances and the other way round).
//!
//! Three instances of `api` register, each from a session of its own, with a typed payload
//! written with the `@class` a Java reader expects. A client picks instances round robin
//! from a live provider (no network per pick), notes errors against one until the
//! down-instance policy hides it, watches an instance disabled, and sees one go away when
//! its process dies (its session ends, its ephemeral node with it).
//!
//! Starts a local ZooKeeper with the test kit, or uses `ZK_SERVER` (a connect string).
//! Run: `cargo run --example service_discovery --features discovery`.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use zkrs::Client;
use zkrs_recipes::discovery::{
    DownInstancePolicy, JavaTyped, JsonFormat, ServiceCacheEvent, ServiceDiscovery,
    ServiceInstance, UriSpec,
};
use zkrs_testkit::TestingServer;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The payload, as a Java service would declare it (`com.example.ApiDetails`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ApiDetails {
    zone: String,
    version: String,
}

type Payload = JavaTyped<ApiDetails>;

/// How long to wait for the cache to show a change.
const WAIT: Duration = Duration::from_secs(10);

/// Registers instance `id` of `api` at `port` on a session of its own.
async fn start_instance(
    connect: &str,
    base: &str,
    id: &str,
    port: u16,
) -> Result<(Client, ServiceDiscovery<Payload>), Error> {
    let client = Client::connect(connect).await?;
    // With the `enabled` key, so readers can be told an instance is out of service.
    let discovery = ServiceDiscovery::builder(&client, base)
        .format(JsonFormat::WithEnabled)
        .build()
        .unwrap();
    let instance = ServiceInstance::builder("api")
        .id(id)
        .address("127.0.0.1")
        .port(port)
        .uri_spec(UriSpec::parse("{scheme}://{address}:{port}/v1")?)
        .payload(JavaTyped::new(
            "com.example.ApiDetails",
            ApiDetails {
                zone: format!("zone-{}", port % 2),
                version: "1.4".into(),
            },
        ))
        .build()?;
    discovery.register(&instance).await?;
    Ok((client, discovery))
}

/// Waits for the cache event `wanted` says is the one, printing every event on the way.
async fn until(
    events: &mut zkrs::EventStream<ServiceCacheEvent<Payload>>,
    wanted: impl Fn(&ServiceCacheEvent<Payload>) -> bool,
) -> Result<(), Error> {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let event = match tokio::time::timeout_at(deadline, events.next()).await {
            Ok(Some(event)) => event,
            Ok(None) => return Err("the cache's events ended".into()),
            Err(_) => return Err("the cache never showed the change".into()),
        };
        match &event {
            ServiceCacheEvent::Added(i) => {
                println!("  cache: + {} {}", i.id, i.uri().unwrap_or_default())
            }
            ServiceCacheEvent::Updated { new, .. } => {
                println!("  cache: ~ {} enabled={}", new.id, new.enabled)
            }
            ServiceCacheEvent::Removed(i) => println!("  cache: - {}", i.id),
            other => println!("  cache: {other:?}"),
        }
        if wanted(&event) {
            return Ok(());
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Error> {
    let (server, connect) = TestingServer::from_env_or_start("ZK_SERVER")?;
    if server.is_some() {
        println!("started ZooKeeper at {connect}");
    }
    let base = format!("/example/services-{}", std::process::id());

    let mut instances = Vec::new();
    for (id, port) in [("api-1", 8081), ("api-2", 8082), ("api-3", 8083)] {
        instances.push(start_instance(&connect, &base, id, port).await?);
        println!("registered {id} on port {port}");
    }

    // A caller of `api`: a provider over a live cache.
    let caller = Client::connect(&connect).await?;
    let discovery = ServiceDiscovery::<Payload>::builder(&caller, &base)
        .build()
        .unwrap();
    println!("services: {:?}", discovery.query_for_names().await?);
    let provider = discovery
        .provider("api")
        .down_instance_policy(DownInstancePolicy::new(Duration::from_secs(30), 2))
        .start()?;
    let mut events = provider.events();
    provider.initialized().await?;
    let picks: Vec<String> = (0..6)
        .filter_map(|_| provider.instance())
        .map(|i| i.id.clone())
        .collect();
    println!("round robin: {}", picks.join(" "));

    // api-2 fails twice: hidden from this provider for 30 s.
    let api_2 = provider
        .all_instances()
        .into_iter()
        .find(|i| i.id == "api-2")
        .ok_or("api-2 missing")?;
    provider.note_error(&api_2);
    provider.note_error(&api_2);
    let picks: Vec<String> = (0..4)
        .filter_map(|_| provider.instance())
        .map(|i| i.id.clone())
        .collect();
    println!("api-2 down: {}", picks.join(" "));

    // api-3 takes itself out of service: its node is written, the provider skips it.
    let (_, api_3) = &instances[2];
    let mut disabled = api_3.registered()[0].clone();
    disabled.enabled = false;
    api_3.update(&disabled).await?;
    until(
        &mut events,
        |e| matches!(e, ServiceCacheEvent::Updated { new, .. } if !new.enabled),
    )
    .await?;
    let picks: Vec<String> = (0..3)
        .filter_map(|_| provider.instance())
        .map(|i| i.id.clone())
        .collect();
    println!("api-3 disabled: {}", picks.join(" "));

    // api-1's process dies: its session ends, the server deletes its ephemeral node.
    let (api_1_client, api_1) = instances.remove(0);
    api_1_client.close().await?; // no unregister: as if the process were killed
    drop(api_1);
    until(
        &mut events,
        |e| matches!(e, ServiceCacheEvent::Removed(i) if i.id == "api-1"),
    )
    .await?;
    println!(
        "api-1 gone: a pick now gives {:?}",
        provider.instance().map(|i| i.id.clone())
    );

    provider.close().await;
    for (client, discovery) in instances {
        discovery.close().await?;
        client.close().await?;
    }
    println!(
        "instances left: {}",
        discovery.query_for_instances("api").await?.len()
    );
    caller.close().await?;
    Ok(())
}
