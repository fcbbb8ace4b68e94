//! The `discovery` suite: service discovery on Curator's registry through the faults.
//! Three service instances of `svc` under `/inv-d`, each registered by its own
//! `ServiceDiscovery` on a session of its own (two `Dynamic`, ephemeral; one `Static`,
//! persistent), register, update their payload, unregister and register again while the
//! faults run; a `ServiceCache` and a `ServiceProvider`, each on a session of its own, follow
//! the service. Now and then a participant's session is ended by another client (resumed and
//! closed, as Curator's tests kill a session), so registrations and caches go through
//! session loss as well as the faults' reconnects (a 2 s session rarely expires otherwise).
//!
//! What the library promises (`ServiceDiscovery`'s docs): a registered instance is kept
//! across reconnects and sessions (made again if gone); unregister stops that keeping before
//! deleting, so an unregistered instance never comes back; a failed register keeps nothing
//! and, dropped or cut short, leaves no node behind. Violations, once the faults have healed,
//! within `CONVERGE` (30 s):
//! - an instance its owner holds registered that is not in the registry, or whose payload is
//!   not one its owner wrote (the last acknowledged one, or one written since whose outcome is
//!   unknown);
//! - an instance in the registry its owner does not hold registered;
//! - a watcher (the cache, the provider) whose instances differ from a fresh read of the
//!   registry (every field, in node-name order);
//! - and, at any time, an error a participant does not expect, or a step past
//!   [`STEP_DEADLINE`].

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::Client;
use zkrs_recipes::discovery::{
    ServiceCache, ServiceDiscovery, ServiceInstance, ServiceProvider, ServiceType,
};

use crate::data::{healed_flag, settle_briefly, trouble, Problems};
use crate::participant::{connect, STEP_DEADLINE};
use zkrs_sim::World;

/// The registry's base path.
const BASE: &str = "/inv-d";
/// The one service.
const SERVICE: &str = "svc";
/// Registering instances, each on its own session.
const INSTANCES: usize = 3;
/// Once the faults stop, how long the registry and the watchers may take to settle.
const CONVERGE: Duration = Duration::from_secs(30);

/// What one registering participant knows of its instance.
#[derive(Debug, Default, Clone)]
struct Owned {
    /// Whether its `ServiceDiscovery` holds the instance registered.
    registered: bool,
    /// Payloads the node may hold: the last acknowledged, then any written since whose
    /// outcome is unknown.
    payloads: Vec<String>,
    /// Counts for the summary line.
    registers: u64,
    unregisters: u64,
    updates: u64,
    refused: u64,
    sessions_killed: u64,
}

/// Instance `k`: `Static` for the last one, `Dynamic` for the others.
fn service_type(k: usize) -> ServiceType {
    if k == INSTANCES - 1 {
        ServiceType::Static
    } else {
        ServiceType::Dynamic
    }
}

fn instance(k: usize, payload: &str) -> Result<ServiceInstance<String>, String> {
    ServiceInstance::builder(SERVICE)
        .id(&format!("i{k}"))
        .address(&format!("10.0.0.{k}"))
        .port(8000 + k as u16)
        .payload(payload.to_string())
        .service_type(service_type(k))
        .build()
        .map_err(|e| format!("instance {k}: {e}"))
}

/// Ends `client`'s session from another client (the way Curator's tests kill a session:
/// the same session resumed, then closed); the server deletes its ephemeral nodes, and
/// `client` goes on with a new session. Through the faults it may not get through (traced).
async fn kill_session(world: &World, client: &Client, who: &str) {
    let session = client.session_id();
    if session == 0 {
        return;
    }
    let killer = world
        .client_builder()
        .resume(session, client.session_password())
        .connect();
    match tokio::time::timeout(STEP_DEADLINE, killer).await {
        Ok(Ok(killer)) => {
            let closed = tokio::time::timeout(STEP_DEADLINE, killer.close()).await;
            world.trace(&format!(
                "{who}: session {session:x} ended by another client ({})",
                if matches!(closed, Ok(Ok(()))) {
                    "closed"
                } else {
                    "close not acknowledged"
                }
            ));
        }
        Ok(Err(e)) => world.trace(&format!("{who}: session {session:x} not resumed: {e}")),
        Err(_) => world.trace(&format!("{who}: session {session:x} not resumed in time")),
    }
}

/// Ends the watchers' sessions now and then (every 3-15 s) until the faults have healed.
async fn watcher_session_killer(world: World, clients: Vec<Client>) {
    let healed = healed_flag(&world);
    let mut rng = world.rng(450);
    loop {
        tokio::time::sleep(Duration::from_millis(3000 + rng.below(12_000))).await;
        if healed.load(Ordering::Relaxed) {
            return;
        }
        let w = rng.below(clients.len() as u64) as usize;
        kill_session(&world, &clients[w], &format!("watcher {w}")).await;
    }
}

/// Registers, updates and unregisters instance `k` until the faults have healed.
async fn registrant(
    world: World,
    k: usize,
    problems: Arc<Problems>,
    owned: Arc<Mutex<Owned>>,
    discovery: Arc<ServiceDiscovery<String>>,
    client: Client,
) {
    let healed = healed_flag(&world);
    let mut rng = world.rng(400 + k as u64);
    let mut version = 0u64;
    while !healed.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(20 + rng.below(400))).await;
        let registered = owned.lock().unwrap().registered;
        let roll = rng.below(3);
        version += 1;
        let payload = format!("i{k}-v{version}");
        let me = match instance(k, &payload) {
            Ok(me) => me,
            Err(e) => {
                problems.add(e);
                return;
            }
        };
        if rng.below(12) == 0 {
            // The session lost (ended by another client): a registration is made again on
            // the new session.
            kill_session(&world, &client, &format!("i{k}")).await;
            owned.lock().unwrap().sessions_killed += 1;
            continue;
        }
        let (what, step) = match (registered, roll) {
            (false, _) => ("register", 0),
            (true, 0) => ("unregister", 1),
            (true, 1) => ("update", 2),
            (true, _) => continue,
        };
        world.trace(&format!("i{k}: {what} {payload}"));
        let outcome = match step {
            0 => tokio::time::timeout(STEP_DEADLINE, discovery.register(&me)).await,
            1 => tokio::time::timeout(STEP_DEADLINE, discovery.unregister(&me)).await,
            _ => tokio::time::timeout(STEP_DEADLINE, discovery.update(&me)).await,
        };
        let held = discovery.registered().iter().any(|i| i.id == me.id);
        let acknowledged = matches!(outcome, Ok(Ok(())));
        let mut settle = false;
        {
            let mut o = owned.lock().unwrap();
            match outcome {
                Err(_) => {
                    problems.add(format!("i{k}: {what} not done within {STEP_DEADLINE:?}"));
                    return;
                }
                Ok(Ok(())) => {
                    match step {
                        0 => o.registers += 1,
                        1 => o.unregisters += 1,
                        _ => o.updates += 1,
                    }
                    if step != 1 {
                        o.payloads = vec![payload];
                    }
                    world.trace(&format!("i{k}: {what} done"));
                }
                Ok(Err(e)) if trouble(&e) => {
                    o.refused += 1;
                    if step == 2 {
                        o.payloads.push(payload);
                    }
                    world.trace(&format!("i{k}: {what} failed: {e}"));
                    settle = true;
                }
                Ok(Err(e)) => {
                    problems.add(format!("i{k}: {what}: {e}"));
                    return;
                }
            }
            // The registry's own word on whether it keeps the instance.
            o.registered = held;
            if !held {
                o.payloads.clear();
            }
        }
        if acknowledged && step != 1 && !held {
            problems.add(format!(
                "i{k}: {what} acknowledged but the registry does not hold the instance"
            ));
        }
        if acknowledged && step == 1 && held {
            problems.add(format!(
                "i{k}: unregister acknowledged but the registry still holds the instance"
            ));
        }
        if settle {
            settle_briefly(&client).await;
        }
    }
}

/// The registry as a fresh read shows it, retrying through connection trouble.
async fn fresh(
    discovery: &ServiceDiscovery<String>,
    client: &Client,
) -> Result<Vec<ServiceInstance<String>>, String> {
    for _ in 0..20 {
        match discovery.query_for_instances(SERVICE).await {
            Ok(instances) => return Ok(instances),
            Err(e) if trouble(&e) => settle_briefly(client).await,
            Err(e) => return Err(format!("fresh read: {e}")),
        }
    }
    Err("fresh read: not done in 20 attempts".into())
}

/// A started watcher: a cache, or a provider.
enum Watcher {
    Cache(ServiceCache<String>),
    Provider(ServiceProvider<String>),
}

impl Watcher {
    fn name(&self) -> &'static str {
        match self {
            Watcher::Cache(_) => "ServiceCache",
            Watcher::Provider(_) => "ServiceProvider",
        }
    }

    fn view(&self) -> Vec<ServiceInstance<String>> {
        let all = match self {
            Watcher::Cache(c) => c.instances(),
            Watcher::Provider(p) => p.cached_instances(),
        };
        all.iter().map(|i| (**i).clone()).collect()
    }

    async fn close(self) {
        match self {
            Watcher::Cache(c) => c.close().await,
            Watcher::Provider(p) => p.close().await,
        }
    }
}

/// Starts a watcher on `discovery` (a provider if `provider`), making it again after a
/// start that failed on connection trouble.
async fn start_watcher(
    discovery: &ServiceDiscovery<String>,
    client: &Client,
    provider: bool,
) -> Result<Watcher, String> {
    let name = if provider {
        "ServiceProvider"
    } else {
        "ServiceCache"
    };
    for _ in 0..100 {
        let watcher = if provider {
            discovery.provider(SERVICE).start().map(Watcher::Provider)
        } else {
            discovery.service_cache(SERVICE).start().map(Watcher::Cache)
        }
        .map_err(|e| format!("{name}: start: {e}"))?;
        let started = match &watcher {
            Watcher::Cache(c) => tokio::time::timeout(STEP_DEADLINE, c.initialized()).await,
            Watcher::Provider(p) => tokio::time::timeout(STEP_DEADLINE, p.initialized()).await,
        };
        match started {
            Ok(Ok(())) => return Ok(watcher),
            Ok(Err(e)) if trouble(&e) => settle_briefly(client).await,
            Ok(Err(e)) => return Err(format!("{name}: start: {e}")),
            Err(_) => return Err(format!("{name}: start not done within {STEP_DEADLINE:?}")),
        }
    }
    Err("a watcher not started in 100 attempts".into())
}

fn ids(list: &[ServiceInstance<String>]) -> String {
    let shown: Vec<String> = list
        .iter()
        .map(|i| format!("{}={}", i.id, i.payload.as_deref().unwrap_or("-")))
        .collect();
    format!("[{}]", shown.join(" "))
}

/// What differs between the registry (`fresh`), the owners' knowledge and each watcher now;
/// empty if nothing.
fn differences(
    fresh: &[ServiceInstance<String>],
    owners: &[Owned],
    watchers: &[Watcher],
) -> Vec<String> {
    let mut diffs = Vec::new();
    for (k, owned) in owners.iter().enumerate() {
        let id = format!("i{k}");
        let found = fresh.iter().find(|i| i.id == id);
        match (owned.registered, found) {
            (true, None) => diffs.push(format!("{id} is registered but not in the registry")),
            (true, Some(i)) => {
                let payload = i.payload.clone().unwrap_or_default();
                if !owned.payloads.contains(&payload) {
                    diffs.push(format!(
                        "{id} holds payload {payload}, its owner wrote {:?}",
                        owned.payloads
                    ));
                }
            }
            (false, Some(i)) => diffs.push(format!(
                "{id} is not registered but in the registry ({})",
                i.payload.as_deref().unwrap_or("-")
            )),
            (false, None) => {}
        }
    }
    for watcher in watchers {
        let view = watcher.view();
        if view != fresh {
            diffs.push(format!(
                "{} holds {}, the registry {}",
                watcher.name(),
                ids(&view),
                ids(fresh)
            ));
        }
    }
    diffs
}

/// The registry under [`BASE`] on `client`.
fn registry(client: &Client) -> Result<ServiceDiscovery<String>, String> {
    ServiceDiscovery::builder(client, BASE)
        .build()
        .map_err(|e| format!("ServiceDiscovery: {e}"))
}

/// What each owner knows now.
fn snapshot(owners: &[Arc<Mutex<Owned>>]) -> Vec<Owned> {
    owners.iter().map(|o| o.lock().unwrap().clone()).collect()
}

/// After the faults: waits (within the bound) for the registry, the owners and the watchers
/// to agree. When they did and the registry then, or `None`; the last differences seen.
async fn converge(
    reader: &ServiceDiscovery<String>,
    admin: &Client,
    owners: &[Arc<Mutex<Owned>>],
    watchers: &[Watcher],
) -> (
    Option<(Duration, Vec<ServiceInstance<String>>)>,
    Vec<String>,
) {
    let settled = Instant::now();
    let mut last = Vec::new();
    let mut converged = None;
    while settled.elapsed() < CONVERGE {
        let registry = match fresh(reader, admin).await {
            Ok(registry) => registry,
            Err(e) => {
                last = vec![e];
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        last = differences(&registry, &snapshot(owners), watchers);
        if last.is_empty() {
            converged = Some((settled.elapsed(), registry));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (converged, last)
}

/// Runs the suite in `world`; `Err` lists every violation.
pub async fn run(world: World) -> Result<(), String> {
    let problems = Arc::new(Problems::new(&world));
    let admin = connect(&world).await?;
    let reader = registry(&admin)?;
    let (w1, w2) = (connect(&world).await?, connect(&world).await?);
    let (d1, d2) = (registry(&w1)?, registry(&w2)?);
    let watchers = vec![
        start_watcher(&d1, &w1, false).await?,
        start_watcher(&d2, &w2, true).await?,
    ];
    world.trace("watchers started");
    let killer = tokio::spawn(watcher_session_killer(
        world.clone(),
        vec![w1.clone(), w2.clone()],
    ));

    let mut owners = Vec::new();
    let mut tasks = Vec::new();
    let mut keep = Vec::new();
    for k in 0..INSTANCES {
        let client = connect(&world).await?;
        let discovery = Arc::new(registry(&client)?);
        let owned = Arc::new(Mutex::new(Owned::default()));
        owners.push(owned.clone());
        keep.push((client.clone(), discovery.clone()));
        tasks.push(tokio::spawn(registrant(
            world.clone(),
            k,
            problems.clone(),
            owned,
            discovery,
            client,
        )));
    }
    for task in tasks {
        if let Err(e) = task.await {
            problems.add(format!("a registrant failed: {e}"));
        }
    }
    world.healed().await;
    if let Err(e) = killer.await {
        problems.add(format!("the session killer failed: {e}"));
    }
    world.trace("healed; registrants stopped");

    let (converged, last) = converge(&reader, &admin, &owners, &watchers).await;
    let owned = snapshot(&owners);
    let sum = |f: fn(&Owned) -> u64| owned.iter().map(f).sum::<u64>();
    match &converged {
        Some((took, registry)) => world.trace(&format!(
            "registry and watchers agree after {} ms: {}",
            took.as_millis(),
            ids(registry)
        )),
        None => {
            for diff in &last {
                problems.add(format!("{CONVERGE:?} after the faults: {diff}"));
            }
        }
    }
    world.trace(&format!(
        "discovery: registers {}, unregisters {}, updates {}, refused {}, sessions ended {}, violations {}",
        sum(|o| o.registers),
        sum(|o| o.unregisters),
        sum(|o| o.updates),
        sum(|o| o.refused),
        sum(|o| o.sessions_killed),
        problems.len()
    ));
    for watcher in watchers {
        watcher.close().await;
    }
    for (client, discovery) in keep {
        // The registrants are done: this is the last handle.
        if let Ok(discovery) = Arc::try_unwrap(discovery) {
            let _ = tokio::time::timeout(STEP_DEADLINE, discovery.close()).await;
        }
        let _ = client.close().await;
    }
    for c in [admin, w1, w2] {
        let _ = c.close().await;
    }
    problems.verdict()
}
