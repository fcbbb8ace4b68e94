//! Service discovery interop with the real Apache Curator 5.4 (`curator-x-discovery`): a Java
//! peer (`tests/java/CuratorDiscoveryPeer.java`) runs Curator's own `ServiceDiscovery`,
//! `JsonInstanceSerializer`, `ServiceCache` and `ServiceProvider` on the same server and base
//! path as ours ([`zkrs_recipes::discovery`]):
//! - the bytes: Curator's serializer and our `to_json` write the same instance (every field,
//!   control characters, non-ASCII text, a POJO payload with its `@class`, a String, a Map, no
//!   payload) byte for byte, in both of Curator's formats;
//! - both ways: what one side registers the other finds with every field equal (queries, the
//!   caches, the providers), the payload's Java class included;
//! - both caches follow the other side's registrations, updates and unregistrations, across a
//!   server restart, a server outage longer than the sessions (both instances come back by
//!   themselves) and an expiry of our session alone (ours comes back by itself).
//!
//! Needs a JDK and Curator's jars, curator-x-discovery included
//! (`scripts/install-zookeeper.sh`); never skips. Every wait has a deadline. Run with
//! `cargo test --features discovery --test curator_discovery`.

mod support;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::Path;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::task::block_in_place;
use tokio::time::{timeout_at, Instant};
use zkrs_client::{Client, ConnectionState, EventStream, StateChanges};
use zkrs_recipes::discovery::{
    from_json, to_json, Instances, JavaTyped, JsonFormat, ServiceCacheEvent, ServiceDiscovery,
    ServiceInstance, ServiceType, UriSpec,
};
use zkrs_testkit::{FaultyProxy, TestingServer};

use support::{connect, within, Peer, DEADLINE};

const PEER: &str = "CuratorDiscoveryPeer";
const BASE: &str = "/services";
/// The peer's own payload class (a nested class: Java's binary name has the `$`).
const DETAILS_CLASS: &str = "CuratorDiscoveryPeer$Details";
/// Text that JSON writers disagree on: control characters (with and without a short escape),
/// quotes, backslashes, a slash, DEL, U+2028, non-ASCII (2, 3 and 4 bytes in UTF-8).
const ODD: &str = "caf\u{e9} \u{0}\u{1}\u{7}\u{8}\t\n\u{c}\r\u{1f}\u{7f}\"\\/ \u{2028} 日本 😀";

/// A URI template with every variable Curator fills, literal braces, an unknown variable (which
/// Curator makes empty) and non-ASCII text.
const EVERY_VARIABLE: &str = "{scheme}://{address}:{port}/{ssl-port}/{name}/{id}\
     ?t={registration-time-utc}&k={service-type}&b={[}x{]}&u={unknown}/é";

/// The payload of `CuratorDiscoveryPeer$Details`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Details {
    zone: String,
    weight: i32,
    tags: Vec<String>,
}

type Typed = JavaTyped<Details>;
type JavaMap = JavaTyped<BTreeMap<String, Value>>;

/// A payload type as the Java peer knows it: the peer's KIND, the Java class Curator reads it
/// as, and its plain JSON (no `@class`).
trait JavaPayload:
    Serialize + DeserializeOwned + Clone + Debug + PartialEq + Send + Sync + 'static
{
    const KIND: &'static str;
    fn java_class(&self) -> String;
    fn plain_json(&self) -> Value;
}

impl JavaPayload for Typed {
    const KIND: &'static str = "details";
    fn java_class(&self) -> String {
        self.class.clone()
    }
    fn plain_json(&self) -> Value {
        serde_json::to_value(&self.value).unwrap()
    }
}

impl JavaPayload for String {
    const KIND: &'static str = "string";
    fn java_class(&self) -> String {
        "java.lang.String".into()
    }
    fn plain_json(&self) -> Value {
        Value::String(self.clone())
    }
}

impl JavaPayload for JavaMap {
    const KIND: &'static str = "map";
    fn java_class(&self) -> String {
        self.class.clone()
    }
    fn plain_json(&self) -> Value {
        serde_json::to_value(&self.value).unwrap()
    }
}

fn details(zone: &str, weight: i32) -> Typed {
    JavaTyped::new(
        DETAILS_CLASS,
        Details {
            zone: zone.into(),
            weight,
            tags: vec!["a".into(), "é".into()],
        },
    )
}

/// An instance of `name` with every field set.
fn full<P>(name: &str, id: &str, port: u16, payload: P) -> ServiceInstance<P> {
    ServiceInstance::builder(name)
        .id(id)
        .address(&format!("10.0.0.{}", port % 250))
        .port(port)
        .ssl_port(port + 1)
        .payload(payload)
        .registration_time_utc(1_795_665_187_978 + i64::from(port))
        .service_type(ServiceType::Dynamic)
        .uri_spec(UriSpec::parse("{scheme}://{address}:{ssl-port}/{name}/{id}").unwrap())
        .build()
        .unwrap()
}

// ----- The peer's line format (see the header of CuratorDiscoveryPeer.java) -----

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(hex: &str) -> Vec<u8> {
    assert!(hex.len() % 2 == 0, "odd hex {hex:?}");
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or_else(|e| panic!("{hex:?}: {e}")))
        .collect()
}

/// A text token: `x<hex of its UTF-8>`.
fn text(value: &str) -> String {
    format!("x{}", hex(value.as_bytes()))
}

fn opt_text(value: Option<&str>) -> String {
    value.map_or_else(|| "-".into(), text)
}

fn opt_number(value: Option<impl ToString>) -> String {
    value.map_or_else(|| "-".into(), |v| v.to_string())
}

fn read_text(token: &str) -> Option<String> {
    if token == "-" {
        return None;
    }
    let hex = token
        .strip_prefix('x')
        .unwrap_or_else(|| panic!("a text token: {token:?}"));
    Some(String::from_utf8(unhex(hex)).unwrap())
}

/// The template Curator parses into the same parts.
fn template(spec: &UriSpec) -> String {
    spec.parts
        .iter()
        .map(|p| {
            if p.variable {
                format!("{{{}}}", p.value)
            } else {
                p.value.clone()
            }
        })
        .collect()
}

/// `instance` as the peer's 10 tokens.
fn tokens<P: JavaPayload>(instance: &ServiceInstance<P>) -> String {
    [
        text(&instance.name),
        text(&instance.id),
        opt_text(instance.address.as_deref()),
        opt_number(instance.port),
        opt_number(instance.ssl_port),
        opt_text(
            instance
                .payload
                .as_ref()
                .map(|p| p.plain_json().to_string())
                .as_deref(),
        ),
        instance.registration_time_utc.to_string(),
        instance.service_type.as_str().to_string(),
        opt_text(instance.uri_spec.as_ref().map(template).as_deref()),
        instance.enabled.to_string(),
    ]
    .join(" ")
}

/// An instance as Curator holds it, every field (the payload as its Java class and plain
/// JSON), and the URI Curator builds from it.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    name: String,
    id: String,
    address: Option<String>,
    port: Option<u16>,
    ssl_port: Option<u16>,
    payload: Option<(String, Value)>,
    registration_time_utc: i64,
    service_type: String,
    uri_spec: Option<Vec<(String, bool)>>,
    enabled: bool,
    uri: Option<String>,
}

fn parse_seen(token: &str) -> Seen {
    let fields: Vec<&str> = token.split(';').collect();
    assert_eq!(fields.len(), 11, "an instance from the peer: {token:?}");
    let number = |f: &str| (f != "-").then(|| f.parse::<u16>().unwrap());
    let payload = (fields[5] != "-").then(|| {
        let (class, json) = fields[5].split_once(':').unwrap();
        let json = read_text(json).unwrap();
        (class.to_string(), serde_json::from_str(&json).unwrap())
    });
    let uri_spec = (fields[8] != "-").then(|| {
        let mut parts = fields[8].split(',');
        assert_eq!(parts.next(), Some("spec"), "{token:?}");
        parts
            .map(|p| {
                let (kind, value) = p.split_at(1);
                (read_text(value).unwrap(), kind == "v")
            })
            .collect()
    });
    Seen {
        name: read_text(fields[0]).unwrap(),
        id: read_text(fields[1]).unwrap(),
        address: read_text(fields[2]),
        port: number(fields[3]),
        ssl_port: number(fields[4]),
        payload,
        registration_time_utc: fields[6].parse().unwrap(),
        service_type: fields[7].to_string(),
        uri_spec,
        enabled: fields[9].parse().unwrap(),
        uri: read_text(fields[10]),
    }
}

fn parse_list(rest: &str) -> Vec<Seen> {
    rest.split_whitespace().map(parse_seen).collect()
}

/// What Curator must hold for our `instance` (with its `enabled` as written: callers write
/// disabled instances only in [`JsonFormat::WithEnabled`]).
fn seen<P: JavaPayload>(instance: &ServiceInstance<P>) -> Seen {
    Seen {
        name: instance.name.clone(),
        id: instance.id.clone(),
        address: instance.address.clone(),
        port: instance.port,
        ssl_port: instance.ssl_port,
        payload: instance
            .payload
            .as_ref()
            .map(|p| (p.java_class(), p.plain_json())),
        registration_time_utc: instance.registration_time_utc,
        service_type: instance.service_type.as_str().to_string(),
        uri_spec: instance.uri_spec.as_ref().map(|s| {
            s.parts
                .iter()
                .map(|p| (p.value.clone(), p.variable))
                .collect()
        }),
        enabled: instance.enabled,
        // Our UriSpec::build must agree with Curator's buildUriSpec.
        uri: instance.uri(),
    }
}

/// Sorted by id, as the peer lists.
fn seen_all<P: JavaPayload>(instances: &[&ServiceInstance<P>]) -> Vec<Seen> {
    let mut all: Vec<Seen> = instances.iter().map(|i| seen(i)).collect();
    all.sort_by(|a, b| a.id.cmp(&b.id));
    all
}

fn sorted<P: Clone>(instances: &[&ServiceInstance<P>]) -> Vec<ServiceInstance<P>> {
    let mut all: Vec<ServiceInstance<P>> = instances.iter().map(|i| (*i).clone()).collect();
    all.sort_by(|a, b| a.id.cmp(&b.id));
    all
}

async fn start_peer<P: JavaPayload>(name: &str, zk: &TestingServer, mode: &str) -> Peer {
    Peer::start_class(PEER, name, &[&zk.connect_string(), BASE, P::KIND, mode]).await
}

async fn java_register<P: JavaPayload>(peer: &mut Peer, instance: &ServiceInstance<P>) {
    peer.ask(&format!("register {}", tokens(instance)), "REGISTERED")
        .await;
}

async fn java_update<P: JavaPayload>(peer: &mut Peer, instance: &ServiceInstance<P>) {
    peer.ask(&format!("update {}", tokens(instance)), "UPDATED")
        .await;
}

async fn java_unregister<P>(peer: &mut Peer, instance: &ServiceInstance<P>) {
    peer.ask(
        &format!("unregister {}", text(&instance.id)),
        "UNREGISTERED",
    )
    .await;
}

/// Waits until the peer's ServiceCache holds exactly `want` (sorted by id): its view now
/// (`cached`), then each `CACHE_CHANGED` it prints, until one matches (or the deadline).
async fn java_cache_until(peer: &mut Peer, what: &str, want: &[Seen]) {
    let now = parse_list(&peer.ask("cached", "CACHED").await);
    if now == want {
        return;
    }
    // Shown if the wait fails (the peer's message has only the raw lines).
    let ids: Vec<&str> = want.iter().map(|s| s.id.as_str()).collect();
    eprintln!("{what}: waiting for Curator's cache to hold {ids:?}; it holds {now:#?}");
    peer.expect_event("CACHE_CHANGED", |rest| parse_list(rest) == want)
        .await;
}

/// Waits until one of our caches (`snapshot`: a cache's, or a provider's) holds exactly
/// `want` (by id), woken by that cache's events.
async fn cache_until<P: JavaPayload>(
    snapshot: impl Fn() -> Instances<P>,
    events: &mut EventStream<ServiceCacheEvent<P>>,
    what: &str,
    want: &[ServiceInstance<P>],
) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let now: Vec<ServiceInstance<P>> = snapshot().iter().map(|i| (**i).clone()).collect();
        if now == want {
            return;
        }
        match timeout_at(deadline, events.next()).await {
            Ok(Some(_)) => {}
            Ok(None) => panic!("{what}: the cache's events ended; it holds {now:#?}"),
            Err(_) => panic!(
                "{what}: not within {DEADLINE:?}; the cache holds {now:#?}\nwanted {want:#?}"
            ),
        }
    }
}

async fn next_state(states: &mut StateChanges, want: ConnectionState) -> i64 {
    within(&format!("state {want:?}"), async {
        loop {
            match states.next().await {
                Some(c) if c.state == want => return c.session_id,
                Some(_) => {}
                None => panic!("the client is gone"),
            }
        }
    })
    .await
}

/// Waits (with watches) until the node at `path` was made again: its czxid is not `old`.
async fn until_made_again(client: &Client, path: &str, old: i64) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let (stat, watch) = client.exists_and_watch(path).await.unwrap();
        if stat.is_some_and(|s| s.czxid != old) {
            return;
        }
        if timeout_at(deadline, watch).await.is_err() {
            panic!("{path} not made again within {DEADLINE:?} (czxid {old})");
        }
    }
}

async fn czxid(client: &Client, path: &str) -> i64 {
    client
        .exists(path)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{path} is not there"))
        .czxid
}

// ----- The bytes -----

/// Curator's bytes for `instance` in `mode`, made by the peer (and kept in the tests'
/// temporary directory as golden files, `curator-discovery-golden/<case>-<mode>.json`).
async fn curator_bytes<P: JavaPayload>(
    peer: &mut Peer,
    case: &str,
    instance: &ServiceInstance<P>,
    format: JsonFormat,
) -> Vec<u8> {
    let mode = match format {
        JsonFormat::Compatible => "compatible",
        _ => "enabled",
    };
    let command = format!("serialize {} {mode} {}", P::KIND, tokens(instance));
    let bytes = unhex(&peer.ask(&command, "BYTES").await);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("curator-discovery-golden");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{case}-{mode}.json")), &bytes).unwrap();
    bytes
}

async fn same_bytes<P: JavaPayload>(peer: &mut Peer, case: &str, instance: &ServiceInstance<P>) {
    for format in [JsonFormat::Compatible, JsonFormat::WithEnabled] {
        let golden = curator_bytes(peer, case, instance, format).await;
        let ours = to_json(instance, format).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&golden),
            "{case} ({format:?}): our JSON (left) is not Curator's (right)"
        );
        assert_eq!(ours, golden, "{case} ({format:?}): the bytes");
        // And Curator's bytes read back to the same instance (a disabled instance reads as
        // enabled from the compatible format, which has no `enabled`).
        let mut expected = instance.clone();
        if format == JsonFormat::Compatible {
            expected.enabled = true;
        }
        let read: ServiceInstance<P> = from_json(&golden).unwrap();
        assert_eq!(read, expected, "{case} ({format:?}): read back");
    }
}

/// The same instance, written by Curator's `JsonInstanceSerializer` and by our `to_json`, is
/// the same bytes in both formats: every field set (ports at their ends, a URI spec with
/// every variable, literal braces and an unknown one), text with control characters and
/// non-ASCII, the payload a POJO with its `@class`, a String, a Map with its `@class` and
/// nested values, or none; and Curator's bytes read back to the same instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curator_and_zkr_write_the_same_bytes() {
    let mut peer = Peer::start_class(PEER, "java-serializer", &["-"]).await;

    // A name and an id are node names: no '/'.
    let odd_name = ODD.replace('/', "|");
    let every_field = ServiceInstance::builder(&format!("api {odd_name}"))
        .id(&format!("id {odd_name}"))
        .address(ODD)
        .port(0)
        .ssl_port(65535)
        .payload(JavaTyped::new(
            DETAILS_CLASS,
            Details {
                zone: ODD.into(),
                weight: i32::MIN,
                tags: vec![ODD.into(), String::new()],
            },
        ))
        .registration_time_utc(i64::MAX)
        .service_type(ServiceType::Static)
        .uri_spec(UriSpec::parse(EVERY_VARIABLE).unwrap())
        .enabled(false)
        .build()
        .unwrap();
    same_bytes(&mut peer, "details-every-field", &every_field).await;

    let string = ServiceInstance::builder("api")
        .id("string-1")
        .address("::1")
        .port(8080)
        .payload(ODD.to_string())
        .registration_time_utc(0)
        .service_type(ServiceType::DynamicSequential)
        .build()
        .unwrap();
    same_bytes(&mut peer, "string", &string).await;

    let map: BTreeMap<String, Value> = [
        ("a", json!(ODD)),
        ("b", json!([1, -2, 2.5, true, null, "é"])),
        ("c", json!({"x": {"y": [ODD]}, "z": null})),
        ("d", json!(9_007_199_254_740_993_i64)),
        ("e \u{1}😀", json!({"😀": ODD})),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let map = ServiceInstance::builder("api")
        .id("map-1")
        .payload(JavaTyped::new("java.util.LinkedHashMap", map))
        .registration_time_utc(-1)
        .service_type(ServiceType::Permanent)
        .uri_spec(UriSpec::parse("").unwrap())
        .build()
        .unwrap();
    same_bytes(&mut peer, "map", &map).await;

    // Nothing but the name and id: nulls everywhere.
    let bare = ServiceInstance::<String>::builder("api")
        .id("bare")
        .registration_time_utc(1)
        .build()
        .unwrap();
    same_bytes(&mut peer, "bare", &bare).await;
    peer.exit().await;
}

// ----- Both ways -----

/// Instances Curator registers (either format; one disabled) are found by ours with every
/// field equal: the names, the instances, one instance, a cache, a provider's picks (never
/// the disabled one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn curator_instances_are_found_by_zkr_with_every_field() {
    let zk = block_in_place(TestingServer::start).unwrap();
    let client = connect(&zk).await;
    let mut peer = start_peer::<Typed>("java-registry", &zk, "enabled").await;
    let mut first = full("api", "java-1", 8080, details(ODD, 3));
    first.service_type = ServiceType::Static;
    let mut disabled = full("api", "java-2", 8090, details("b", -1));
    disabled.enabled = false;
    java_register(&mut peer, &first).await;
    java_register(&mut peer, &disabled).await;
    let mut other = full("web", "java-3", 80, details("c", 0));
    other.uri_spec = None;
    other.ssl_port = None;
    java_register(&mut peer, &other).await;
    let mut sequential = full("web", "java-seq", 81, details("s", 5));
    sequential.service_type = ServiceType::DynamicSequential;
    java_register(&mut peer, &sequential).await;

    let discovery = ServiceDiscovery::<Typed>::builder(&client, BASE)
        .build()
        .unwrap();
    assert_eq!(
        within("names", discovery.query_for_names()).await.unwrap(),
        ["api", "web"]
    );
    assert_eq!(
        within("instances", discovery.query_for_instances("api"))
            .await
            .unwrap(),
        sorted(&[&first, &disabled])
    );
    assert_eq!(
        within("one", discovery.query_for_instance("api", "java-1"))
            .await
            .unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        within("one", discovery.query_for_instance("web", "java-3"))
            .await
            .unwrap(),
        Some(other.clone())
    );
    // The sequential one: its node is its id and Curator's sequence number.
    assert_eq!(
        within("instances", discovery.query_for_instances("web"))
            .await
            .unwrap(),
        sorted(&[&other, &sequential])
    );
    let mut nodes: Vec<String> = client
        .get_children("/services/web")
        .await
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    nodes.sort();
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    let sequence = nodes[1].strip_prefix("java-seq").unwrap_or_default();
    assert!(
        sequence.len() == 10 && sequence.bytes().all(|b| b.is_ascii_digit()),
        "{nodes:?}"
    );
    let cache = discovery.service_cache("api").start().unwrap();
    within("cache", cache.initialized()).await.unwrap();
    let held: Vec<_> = cache.instances().iter().map(|i| (**i).clone()).collect();
    assert_eq!(held, sorted(&[&first, &disabled]));
    let provider = discovery.provider("api").start().unwrap();
    within("provider", provider.initialized()).await.unwrap();
    for _ in 0..3 {
        assert_eq!(provider.instance().as_deref(), Some(&first), "the pick");
    }
    let allowed: Vec<_> = provider
        .all_instances()
        .iter()
        .map(|i| (**i).clone())
        .collect();
    assert_eq!(allowed, [first.clone()], "the disabled one is never picked");
    provider.close().await;
    cache.close().await;
    peer.exit().await;
}

/// Instances we register (in both formats; one disabled) are found by Curator's
/// `queryForNames`, `queryForInstances`, `queryForInstance` and `ServiceProvider` with every
/// field equal, the payload read as its Java class; Curator builds the same URI from them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zkr_instances_are_found_by_curator_with_every_field() {
    let zk = block_in_place(TestingServer::start).unwrap();
    let client = connect(&zk).await;
    let discovery = ServiceDiscovery::<Typed>::builder(&client, BASE)
        .build()
        .unwrap();
    let with_enabled = ServiceDiscovery::<Typed>::builder(&client, BASE)
        .format(JsonFormat::WithEnabled)
        .build()
        .unwrap();
    let first = full("api", "zkr-1", 8080, details(ODD, 7));
    let mut disabled = full("api", "zkr-2", 8090, details("b", 1));
    disabled.enabled = false;
    disabled.service_type = ServiceType::Static;
    let mut other = full("web", "zkr-3", 80, details("c", 2));
    other.address = None;
    other.port = None;
    let mut sequential = full("web", "zkr-seq", 81, details("s", 5));
    sequential.service_type = ServiceType::DynamicSequential;
    sequential.uri_spec = Some(UriSpec::parse(EVERY_VARIABLE).unwrap());
    within("register", discovery.register(&first))
        .await
        .unwrap();
    within("register", with_enabled.register(&disabled))
        .await
        .unwrap();
    within("register", discovery.register(&other))
        .await
        .unwrap();
    within("register", discovery.register(&sequential))
        .await
        .unwrap();
    let (data, _) = client.get_data("/services/api/zkr-1").await.unwrap();
    assert_eq!(
        &data[..],
        &to_json(&first, JsonFormat::Compatible).unwrap()[..]
    );

    let mut peer = start_peer::<Typed>("java-finder", &zk, "compatible").await;
    assert_eq!(peer.ask("names", "NAMES").await, "api,web");
    let both = seen_all(&[&first, &disabled]);
    assert_eq!(parse_list(&peer.ask("query api", "INSTANCES").await), both);
    // The sequential one too (its id from its JSON), and Curator builds the same URI from
    // every variable as ours.
    assert_eq!(
        parse_list(&peer.ask("query web", "INSTANCES").await),
        seen_all(&[&other, &sequential])
    );
    let one = peer
        .ask(&format!("queryone api {}", text("zkr-1")), "INSTANCE")
        .await;
    assert_eq!(parse_seen(&one), seen(&first));
    let none = peer
        .ask(&format!("queryone api {}", text("nobody")), "INSTANCE")
        .await;
    assert_eq!(none, "-");

    peer.ask("provider api", "PROVIDER_STARTED").await;
    for _ in 0..3 {
        let picked = peer.ask("pick", "PICKED").await;
        assert_eq!(
            parse_seen(&picked),
            seen(&first),
            "Curator never picks the disabled one"
        );
    }
    // getAllInstances goes through the provider's filters too (as our all_instances): the
    // enabled one only.
    assert_eq!(
        parse_list(&peer.ask("pickall", "ALL").await),
        [seen(&first)]
    );
    peer.exit().await;
    within("close", discovery.close()).await.unwrap();
    within("close", with_enabled.close()).await.unwrap();
}

/// One payload type both ways: ours registered is Curator's with every field, and Curator's
/// is ours.
async fn payload_both_ways<P: JavaPayload>(
    zk: &TestingServer,
    client: &Client,
    ours: ServiceInstance<P>,
    theirs: ServiceInstance<P>,
) {
    let discovery = ServiceDiscovery::<P>::builder(client, BASE)
        .build()
        .unwrap();
    within("register", discovery.register(&ours)).await.unwrap();
    let mut peer = start_peer::<P>(&format!("java-{}", P::KIND), zk, "compatible").await;
    java_register(&mut peer, &theirs).await;
    let name = &ours.name;
    assert_eq!(
        parse_list(&peer.ask(&format!("query {name}"), "INSTANCES").await),
        seen_all(&[&ours, &theirs]),
        "{}: Curator's view",
        P::KIND
    );
    assert_eq!(
        within("instances", discovery.query_for_instances(name))
            .await
            .unwrap(),
        sorted(&[&ours, &theirs]),
        "{}: our view",
        P::KIND
    );
    peer.exit().await;
    within("close", discovery.close()).await.unwrap();
}

/// String and Map payloads (and none) go both ways too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn string_and_map_payloads_go_both_ways() {
    let zk = block_in_place(TestingServer::start).unwrap();
    let client = connect(&zk).await;
    let mut bare = full("strings", "zkr-bare", 81, String::new());
    bare.payload = None;
    payload_both_ways(
        &zk,
        &client,
        full("strings", "zkr-s", 80, ODD.to_string()),
        full("strings", "java-s", 90, format!("java {ODD}")),
    )
    .await;
    payload_both_ways(
        &zk,
        &client,
        bare,
        full("strings", "java-bare", 91, String::new()),
    )
    .await;
    let map = |v: Value| -> JavaMap {
        let Value::Object(object) = v else {
            unreachable!()
        };
        JavaTyped::new("java.util.LinkedHashMap", object.into_iter().collect())
    };
    payload_both_ways(
        &zk,
        &client,
        full(
            "maps",
            "zkr-m",
            80,
            map(json!({"k": ODD, "n": [1, 2], "o": {"p": null}})),
        ),
        full(
            "maps",
            "java-m",
            90,
            map(json!({"a": true, "b": {"c": [ODD]}})),
        ),
    )
    .await;
}

// ----- Caches -----

/// Our cache and Curator's follow the other side's registrations, updates and
/// unregistrations, each state with every field; our provider follows too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_cache_follows_the_other_side() {
    let zk = block_in_place(TestingServer::start).unwrap();
    let client = connect(&zk).await;
    let mut peer = start_peer::<Typed>("java-cache", &zk, "compatible").await;
    peer.ask("cache api", "CACHE_STARTED").await;
    let discovery = ServiceDiscovery::<Typed>::builder(&client, BASE)
        .build()
        .unwrap();
    let cache = discovery.service_cache("api").start().unwrap();
    let mut events = cache.events();
    within("cache", cache.initialized()).await.unwrap();
    let provider = discovery.provider("api").start().unwrap();
    // The provider has a cache of its own: waits on it go by its events.
    let mut provider_events = provider.events();
    within("provider", provider.initialized()).await.unwrap();
    assert!(provider.instance().is_none(), "an instance before any");

    // Curator registers: ours sees it, the event carrying it.
    let java = full("api", "java-1", 8080, details("a", 1));
    java_register(&mut peer, &java).await;
    match within("added", events.next()).await {
        Some(ServiceCacheEvent::Added(instance)) => assert_eq!(*instance, java),
        other => panic!("expected Added, got {other:?}"),
    }
    cache_until(
        || cache.instances(),
        &mut events,
        "Curator's registration",
        std::slice::from_ref(&java),
    )
    .await;
    java_cache_until(&mut peer, "Curator's own registration", &seen_all(&[&java])).await;

    // We register: Curator's cache sees it.
    let ours = full("api", "zkr-1", 9090, details(ODD, 2));
    within("register", discovery.register(&ours)).await.unwrap();
    java_cache_until(&mut peer, "our registration", &seen_all(&[&java, &ours])).await;
    cache_until(
        || cache.instances(),
        &mut events,
        "our registration",
        &sorted(&[&java, &ours]),
    )
    .await;

    // Curator updates: ours sees the new fields, told as an update.
    let mut java2 = java.clone();
    java2.port = Some(8081);
    java2.payload = Some(details("a2", 10));
    java2.address = Some("10.1.1.1".into());
    java_update(&mut peer, &java2).await;
    // The first event about it (events about ours may come first).
    let told = within("updated", async {
        loop {
            match events.next().await {
                Some(ServiceCacheEvent::Added(i)) if i.id == ours.id => {}
                other => return other,
            }
        }
    })
    .await;
    match told {
        Some(ServiceCacheEvent::Updated { old, new }) => {
            assert_eq!(*old, java);
            assert_eq!(*new, java2);
        }
        other => panic!("expected Updated, got {other:?}"),
    }
    cache_until(
        || cache.instances(),
        &mut events,
        "Curator's update",
        &sorted(&[&java2, &ours]),
    )
    .await;

    // We update: Curator's cache sees the new fields.
    let mut ours2 = ours.clone();
    ours2.ssl_port = None;
    ours2.payload = Some(details("z2", -2));
    ours2.uri_spec = Some(UriSpec::parse("{scheme}://{address}:{port}/v2").unwrap());
    within("update", discovery.update(&ours2)).await.unwrap();
    java_cache_until(&mut peer, "our update", &seen_all(&[&java2, &ours2])).await;
    cache_until(
        || provider.cached_instances(),
        &mut provider_events,
        "the provider, after the updates",
        &sorted(&[&java2, &ours2]),
    )
    .await;
    assert_eq!(provider.all_instances().len(), 2);

    // Curator unregisters: ours sees it go.
    java_unregister(&mut peer, &java2).await;
    cache_until(
        || cache.instances(),
        &mut events,
        "Curator's unregistration",
        std::slice::from_ref(&ours2),
    )
    .await;
    cache_until(
        || provider.cached_instances(),
        &mut provider_events,
        "the provider, after Curator's unregistration",
        std::slice::from_ref(&ours2),
    )
    .await;
    assert_eq!(provider.instance().as_deref(), Some(&ours2));

    // We unregister: Curator's cache sees it go.
    within("unregister", discovery.unregister(&ours2))
        .await
        .unwrap();
    java_cache_until(&mut peer, "our unregistration", &[]).await;
    cache_until(|| cache.instances(), &mut events, "our unregistration", &[]).await;
    cache_until(
        || provider.cached_instances(),
        &mut provider_events,
        "the provider, after our unregistration",
        &[],
    )
    .await;
    assert!(provider.instance().is_none());
    provider.close().await;
    cache.close().await;
    peer.exit().await;
}

// ----- Faults -----

/// A server restart: Curator registers its instance again (as it does on every reconnect),
/// ours stays registered; both caches hold both instances with every field, and go on
/// following the other side's updates and registrations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_and_caches_carry_on_across_a_server_restart() {
    let zk = block_in_place(TestingServer::start).unwrap();
    let client = connect(&zk).await;
    let mut peer = start_peer::<Typed>("java-restart", &zk, "compatible").await;
    let discovery = ServiceDiscovery::<Typed>::builder(&client, BASE)
        .build()
        .unwrap();
    let java = full("api", "java-1", 8080, details("j", 1));
    let ours = full("api", "zkr-1", 9090, details("z", 2));
    java_register(&mut peer, &java).await;
    within("register", discovery.register(&ours)).await.unwrap();
    peer.ask("cache api", "CACHE_STARTED").await;
    let cache = discovery.service_cache("api").start().unwrap();
    let mut events = cache.events();
    within("cache", cache.initialized()).await.unwrap();
    let both = sorted(&[&java, &ours]);
    cache_until(
        || cache.instances(),
        &mut events,
        "before the restart",
        &both,
    )
    .await;
    java_cache_until(&mut peer, "before the restart", &seen_all(&[&java, &ours])).await;

    let java_path = "/services/api/java-1";
    let java_czxid = czxid(&client, java_path).await;
    let mut states = client.state_changes();
    block_in_place(|| zk.restart()).unwrap();
    next_state(&mut states, ConnectionState::Reconnected).await;
    // Curator deletes and creates its node again on RECONNECTED: once it has, its
    // re-registration cannot overwrite the updates below.
    until_made_again(&client, java_path, java_czxid).await;
    java_cache_until(&mut peer, "after the restart", &seen_all(&[&java, &ours])).await;
    cache_until(
        || cache.instances(),
        &mut events,
        "after the restart",
        &both,
    )
    .await;
    let (data, _) = client.get_data("/services/api/zkr-1").await.unwrap();
    assert_eq!(
        &data[..],
        &to_json(&ours, JsonFormat::Compatible).unwrap()[..]
    );

    // Both sides go on: updates and new registrations, seen by the other's cache.
    let mut java2 = java.clone();
    java2.port = Some(8081);
    java_update(&mut peer, &java2).await;
    let java3 = full("api", "java-3", 8083, details("j3", 3));
    java_register(&mut peer, &java3).await;
    let mut ours2 = ours.clone();
    ours2.payload = Some(details("z2", 22));
    within("update", discovery.update(&ours2)).await.unwrap();
    let ours3 = full("api", "zkr-3", 9093, details("z3", 33));
    within("register", discovery.register(&ours3))
        .await
        .unwrap();
    let all = [&java2, &java3, &ours2, &ours3];
    cache_until(
        || cache.instances(),
        &mut events,
        "changes after the restart",
        &sorted(&all),
    )
    .await;
    java_cache_until(&mut peer, "changes after the restart", &seen_all(&all)).await;
    cache.close().await;
    peer.exit().await;
    within("close", discovery.close()).await.unwrap();
}

/// The server is down longer than the sessions' timeouts: both clients give their sessions up
/// (ours tells `Lost`, Curator's injects an expiry), and on the server's return each side
/// registers its instance again by itself on its new session; both caches hold both instances
/// with every field again, each node owned by its side's new session, and follow the other
/// side's changes from there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_instances_come_back_after_a_server_outage_longer_than_the_sessions() {
    let zk = block_in_place(TestingServer::start).unwrap();
    let client = within(
        "connect",
        Client::builder(&zk.connect_string())
            .session_timeout(Duration::from_secs(2))
            .connect(),
    )
    .await
    .unwrap();
    let mut peer = start_peer::<Typed>("java-outage", &zk, "compatible").await;
    let discovery = ServiceDiscovery::<Typed>::builder(&client, BASE)
        .build()
        .unwrap();
    let java = full("api", "java-1", 8080, details("j", 1));
    let ours = full("api", "zkr-1", 9090, details(ODD, 2));
    java_register(&mut peer, &java).await;
    within("register", discovery.register(&ours)).await.unwrap();
    peer.ask("cache api", "CACHE_STARTED").await;
    let cache = discovery.service_cache("api").start().unwrap();
    let mut events = cache.events();
    within("cache", cache.initialized()).await.unwrap();
    let both = sorted(&[&java, &ours]);
    cache_until(
        || cache.instances(),
        &mut events,
        "before the outage",
        &both,
    )
    .await;
    java_cache_until(&mut peer, "before the outage", &seen_all(&[&java, &ours])).await;
    let java_path = "/services/api/java-1";
    let our_path = "/services/api/zkr-1";
    let old_java = czxid(&client, java_path).await;
    let old_ours = czxid(&client, our_path).await;

    let old_session = client.session_id();
    let mut states = client.state_changes();
    block_in_place(|| zk.stop()).unwrap();
    // Down until both sides have given their sessions up.
    next_state(&mut states, ConnectionState::Lost).await;
    peer.expect_event("CACHE_STATE", |state| state == "LOST")
        .await;
    block_in_place(|| zk.restart()).unwrap();
    let new_session = next_state(&mut states, ConnectionState::Reconnected).await;
    assert_ne!(new_session, old_session, "a new session");

    // Each side made its node again, on its new session.
    until_made_again(&client, our_path, old_ours).await;
    until_made_again(&client, java_path, old_java).await;
    let observer = connect(&zk).await;
    let (data, stat) = observer.get_data(our_path).await.unwrap();
    assert_eq!(
        stat.ephemeral_owner,
        client.session_id(),
        "ours, on our new session"
    );
    assert_eq!(
        &data[..],
        &to_json(&ours, JsonFormat::Compatible).unwrap()[..]
    );
    java_cache_until(&mut peer, "after the outage", &seen_all(&[&java, &ours])).await;
    cache_until(|| cache.instances(), &mut events, "after the outage", &both).await;

    // And on from there.
    let mut java2 = java.clone();
    java2.payload = Some(details("j2", 20));
    java_update(&mut peer, &java2).await;
    let mut ours2 = ours.clone();
    ours2.port = Some(9091);
    within("update", discovery.update(&ours2)).await.unwrap();
    cache_until(
        || cache.instances(),
        &mut events,
        "Curator's update after the outage",
        &sorted(&[&java2, &ours2]),
    )
    .await;
    java_cache_until(
        &mut peer,
        "our update after the outage",
        &seen_all(&[&java2, &ours2]),
    )
    .await;
    cache.close().await;
    peer.exit().await;
    within("close", discovery.close()).await.unwrap();
}

/// Our session expires (a partition between us and the server, longer than the session
/// timeout): Curator's cache sees our instance go; meanwhile Curator updates and registers.
/// Back on a new session, our instance comes back by itself (owned by the new session, every
/// field as registered), Curator's cache sees it again, and our cache catches up with what
/// Curator did meanwhile. Then each side's unregistration is seen by the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_instance_comes_back_after_our_session_expires() {
    let zk = block_in_place(TestingServer::start).unwrap();
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let client = within(
        "connect",
        Client::builder(&proxy.connect_string())
            .session_timeout(Duration::from_secs(2))
            .connect(),
    )
    .await
    .unwrap();
    let observer = connect(&zk).await;
    let mut peer = start_peer::<Typed>("java-expiry", &zk, "compatible").await;
    let discovery = ServiceDiscovery::<Typed>::builder(&client, BASE)
        .build()
        .unwrap();
    let java = full("api", "java-1", 8080, details("j", 1));
    let ours = full("api", "zkr-1", 9090, details(ODD, 2));
    java_register(&mut peer, &java).await;
    within("register", discovery.register(&ours)).await.unwrap();
    peer.ask("cache api", "CACHE_STARTED").await;
    let cache = discovery.service_cache("api").start().unwrap();
    let mut events = cache.events();
    let mut told = cache.events();
    within("cache", cache.initialized()).await.unwrap();
    cache_until(
        || cache.instances(),
        &mut events,
        "before",
        &sorted(&[&java, &ours]),
    )
    .await;
    java_cache_until(&mut peer, "before", &seen_all(&[&java, &ours])).await;

    let old_session = client.session_id();
    let mut states = client.state_changes();
    proxy.partition();
    // The server expires our session: our ephemeral instance goes, Curator's cache sees it.
    java_cache_until(&mut peer, "our session expired", &seen_all(&[&java])).await;
    // Curator writes while we cannot see.
    let mut java2 = java.clone();
    java2.payload = Some(details("j2", 20));
    java2.port = Some(8081);
    java_update(&mut peer, &java2).await;
    let java3 = full("api", "java-3", 8083, details("j3", 3));
    java_register(&mut peer, &java3).await;

    proxy.heal();
    next_state(&mut states, ConnectionState::Lost).await;
    let new_session = next_state(&mut states, ConnectionState::Reconnected).await;
    assert_ne!(new_session, old_session, "a new session");

    // Ours comes back by itself; Curator's cache sees it with every field.
    let all = [&java2, &java3, &ours];
    java_cache_until(&mut peer, "our instance back", &seen_all(&all)).await;
    let (data, stat) = observer.get_data("/services/api/zkr-1").await.unwrap();
    assert_eq!(
        stat.ephemeral_owner,
        client.session_id(),
        "owned by the new session"
    );
    assert_eq!(
        &data[..],
        &to_json(&ours, JsonFormat::Compatible).unwrap()[..]
    );
    // Our cache catches up with Curator's writes.
    cache_until(
        || cache.instances(),
        &mut events,
        "after the expiry",
        &sorted(&all),
    )
    .await;
    let mut lost = false;
    while let Some(event) = told.try_next() {
        lost |= matches!(event, ServiceCacheEvent::Lost);
    }
    assert!(lost, "our cache told of the lost session");

    // And on from there: each side's unregistration reaches the other.
    within("unregister", discovery.unregister(&ours))
        .await
        .unwrap();
    java_cache_until(
        &mut peer,
        "our unregistration",
        &seen_all(&[&java2, &java3]),
    )
    .await;
    java_unregister(&mut peer, &java3).await;
    cache_until(
        || cache.instances(),
        &mut events,
        "Curator's unregistration",
        std::slice::from_ref(&java2),
    )
    .await;
    match observer.exists("/services/api/zkr-1").await {
        Ok(None) => {}
        other => panic!("our instance is still there: {other:?}"),
    }
    cache.close().await;
    peer.exit().await;
}
