//! `service register|unregister|list|watch|pick BASE ...`: Curator's service discovery
//! registry (`curator-x-discovery`) from a shell, on the recipes' `discovery` module.
//!
//! - `register` runs CMD as `member` does (see [`crate::child`]) while the instance is
//!   registered by a [`ServiceDiscovery`] (which keeps it across connection and session loss),
//!   then unregisters it; a permanent instance may be registered without CMD and stays.
//! - `unregister` deletes one instance's node.
//! - `list` reads the registry: one line per instance with its JSON as stored; a node that is
//!   not an instance is named on stderr, never hiding the others.
//! - `watch` prints a [`ServiceCache`](zkrs_recipes::discovery::ServiceCache)'s events as
//!   `cache` prints its own, then the instances.
//! - `pick` asks a started [`ServiceProvider`](zkrs_recipes::discovery::ServiceProvider).
//!
//! Instances are read as `ServiceInstance<serde_json::Value>` (any payload); `register`
//! writes `--payload` (any JSON value) as given, compact, its keys in the order given (a
//! `Value` would sort them: Jackson's `@class` is expected first).

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::Value;
use zkrs_client::{Client, ErrorCode, EventStream};
use zkrs_recipes::discovery::{
    self, JsonFormat, Random, RoundRobin, ServiceCacheEvent, ServiceDiscovery, ServiceInstance,
    ServiceType, UriSpec,
};

use crate::args::{Globals, PickStrategy, RegisterArgs, ServiceKind, ServiceSub};
use crate::child::Supervised;
use crate::commands::hold::{run_to_end, with_session, Ran};
use crate::connection::{close, connect};
use crate::failure::{without_code, Failure, Outcome, ZkMessage, EXIT_NO_INSTANCE};
use crate::json_records::{Happening, Instance};
use crate::output::{note, say};
use crate::output_json;
use crate::pipeline;
use crate::signals::Shutdown;

/// Runs one `service` command on the registry under its base path.
pub async fn run(g: &Globals, command: ServiceSub) -> Outcome {
    match command {
        ServiceSub::Register(a) => {
            zkrs_client::validate_path(&a.base)?;
            register(g, &a).await
        }
        ServiceSub::Watch(a) => {
            zkrs_client::validate_path(&a.base)?;
            watch(g, &a.base, &a.name, a.run_for).await
        }
        ServiceSub::Unregister(a) => {
            with_client(g, &a.base, async |client| {
                let path = child(&child(&a.base, &a.name), &a.id);
                client
                    .delete(&path, None)
                    .await
                    .map(|()| 0)
                    .map_err(Into::into)
            })
            .await
        }
        ServiceSub::List(a) => {
            with_client(g, &a.base, async |client| {
                list(client, &a.base, a.name.as_deref()).await
            })
            .await
        }
        ServiceSub::Pick(a) => {
            with_client(g, &a.base, async |client| {
                pick(client, &a.base, &a.name, a.strategy, a.count).await
            })
            .await
        }
    }
}

/// Checks the base path, connects, runs `body`, closes the session.
async fn with_client(
    g: &Globals,
    base: &str,
    body: impl AsyncFnOnce(&Client) -> Outcome,
) -> Outcome {
    zkrs_client::validate_path(base)?;
    let client = connect(g).await?;
    let result = body(&client).await;
    close(&client).await;
    result
}

/// `parent/name` (`/name` under the root).
fn child(parent: &str, name: &str) -> String {
    format!("{}/{name}", parent.trim_end_matches('/'))
}

/// `NAME ID ADDRESS:PORT`, `-` for a missing address or port.
fn identity<P>(instance: &ServiceInstance<P>) -> String {
    format!(
        "{} {} {}:{}",
        instance.name,
        instance.id,
        instance.address.as_deref().unwrap_or("-"),
        instance
            .port
            .map_or_else(|| "-".to_string(), |p| p.to_string())
    )
}

/// An instance as `list` and `pick` print it: `NAME ID ADDRESS:PORT JSON`, the JSON as stored
/// (a JSON text has line breaks only between tokens: they become spaces, so it stays one line).
fn instance_line<P>(instance: &ServiceInstance<P>, json: &[u8]) -> String {
    let text = String::from_utf8_lossy(json).replace(['\n', '\r'], " ");
    format!("{} {}", identity(instance), text.trim())
}

/// What `register` writes as the payload: the JSON text given, compact.
type Payload = Box<RawValue>;

/// `--payload`: checked as JSON, then written as given without the whitespace between tokens
/// (as Jackson writes it); JSON `null` is no payload.
fn payload(text: &str) -> Result<Option<Payload>, Failure> {
    let not_json = |e: serde_json::Error| Failure::Usage(format!("--payload is not JSON ({e})"));
    if serde_json::from_str::<Value>(text)
        .map_err(not_json)?
        .is_null()
    {
        return Ok(None);
    }
    RawValue::from_string(compact(text))
        .map(Some)
        .map_err(not_json)
}

/// JSON text without whitespace outside strings.
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        out.push(c);
    }
    out
}

/// The instance `service register` was given; a payload that is not JSON or a bad URI
/// template is a usage error (the parser, std only, cannot tell).
fn instance(r: &RegisterArgs) -> Result<ServiceInstance<Payload>, Failure> {
    let mut builder = ServiceInstance::<Payload>::builder(&r.name)
        .address(&r.address)
        .service_type(match r.kind {
            ServiceKind::Dynamic => ServiceType::Dynamic,
            ServiceKind::Static => ServiceType::Static,
            ServiceKind::Permanent => ServiceType::Permanent,
        });
    if let Some(id) = &r.id {
        builder = builder.id(id);
    }
    if let Some(port) = r.port {
        builder = builder.port(port);
    }
    if let Some(port) = r.ssl_port {
        builder = builder.ssl_port(port);
    }
    if let Some(payload) = r.payload.as_deref().map(payload).transpose()?.flatten() {
        builder = builder.payload(payload);
    }
    if let Some(template) = &r.uri_spec {
        match UriSpec::parse(template) {
            Ok(spec) => builder = builder.uri_spec(spec),
            Err(e) => {
                return Err(Failure::Usage(format!("--uri-spec: {}", without_code(&e))));
            }
        }
    }
    if let Some(enabled) = r.enabled {
        builder = builder.enabled(enabled);
    }
    Ok(builder.build()?)
}

/// Registers, runs CMD, unregisters; the exit code is CMD's (0 without CMD).
async fn register(g: &Globals, r: &RegisterArgs) -> Outcome {
    let base = r.base.as_str();
    let grace = r.grace.or_default(g.session_timeout);
    let instance = instance(r)?;
    // `--enabled` is written only in Curator's second format (the default one has no key).
    let format = match r.enabled {
        Some(_) => JsonFormat::WithEnabled,
        None => JsonFormat::Compatible,
    };
    with_session(g, async |client, shutdown| {
        let discovery = ServiceDiscovery::<Payload>::builder(client, base)
            .format(format)
            .build()?;
        registered(client, &discovery, &instance, r, grace, shutdown).await
    })
    .await
}

async fn registered(
    client: &Client,
    discovery: &ServiceDiscovery<Payload>,
    instance: &ServiceInstance<Payload>,
    r: &RegisterArgs,
    grace: Duration,
    shutdown: &mut Shutdown,
) -> Outcome {
    // Dropping the registration on a signal is safe: the recipe deletes what it made.
    tokio::select! {
        done = discovery.register(instance) => done?,
        signal = shutdown.recv() => return Ok(signal.exit_code()),
    }
    let node = discovery.path_for(&instance.name, &instance.id);
    if r.command.is_empty() {
        // A permanent instance (the parser allows no other without CMD): it stays.
        if output_json::on() {
            output_json::say(&crate::json_records::PathOnly { path: &node })?;
        } else {
            say(&node)?;
        }
        return Ok(0);
    }
    note!("zkctl: registered {node}");
    let result = run_command(&node, instance, r, grace, shutdown).await;
    if r.kind == ServiceKind::Permanent {
        note!(
            "zkctl: {node} stays registered (permanent; `zkctl service unregister {} {} {}` \
             removes it)",
            discovery.base_path(),
            instance.name,
            instance.id
        );
    } else {
        unregister(client, discovery, instance, &node).await;
    }
    result
}

async fn run_command(
    node: &str,
    instance: &ServiceInstance<Payload>,
    r: &RegisterArgs,
    grace: Duration,
    shutdown: &mut Shutdown,
) -> Outcome {
    let mut child = Supervised::spawn(
        &r.command,
        &[
            ("ZKCTL_SERVICE_NODE", node),
            ("ZKCTL_SERVICE_ID", &instance.id),
        ],
    )?;
    match run_to_end(
        &mut child,
        grace,
        shutdown,
        &format!("unregistering {node}"),
    )
    .await?
    {
        Ran::Exited(code) => Ok(code),
        Ran::Stopped(signal) => Ok(signal.exit_code()),
    }
}

/// Unregisters, waiting at most a session timeout for the server.
async fn unregister(
    client: &Client,
    discovery: &ServiceDiscovery<Payload>,
    instance: &ServiceInstance<Payload>,
    node: &str,
) {
    let outcome =
        tokio::time::timeout(client.session_timeout(), discovery.unregister(instance)).await;
    let left_behind = match instance.service_type {
        ServiceType::Static => "it stays until `zkctl service unregister`",
        _ => "the node goes with the session",
    };
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(e)) => note!(
            "zkctl: unregistering {node}: {} ({left_behind})",
            ZkMessage(&e)
        ),
        Err(_) => note!("zkctl: could not confirm unregistering {node} ({left_behind})"),
    }
}

/// `list BASE [NAME]`.
async fn list(client: &Client, base: &str, name: Option<&str>) -> Outcome {
    match name {
        Some(name) => list_service(client, base, name).await?,
        None => {
            let discovery = ServiceDiscovery::<Value>::builder(client, base).build()?;
            for name in discovery.query_for_names().await? {
                if !output_json::on() {
                    say(&name)?; // in JSON, each instance has its name
                }
                list_service(client, base, &name).await?;
            }
        }
    }
    Ok(0)
}

/// One service's instances, by node name; a node that is not an instance is named on stderr.
/// A service (or base) that does not exist has none.
async fn list_service(client: &Client, base: &str, name: &str) -> Result<(), Failure> {
    let parent = child(base, name);
    let mut ids = match client.get_children(&parent).await {
        Ok(children) => children.to_vec(),
        Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    ids.sort();
    let nodes: Vec<String> = ids.iter().map(|id| child(&parent, id)).collect();
    let data = pipeline::all_chunked(&nodes, |node| client.get_data(node)).await;
    for (node, read) in nodes.iter().zip(data) {
        match read {
            Ok((json, _)) => match discovery::from_json::<Value>(&json) {
                Ok(instance) => print_instance(&instance, &json)?,
                Err(e) => {
                    note!("zkctl: {node}: skipped: {}", without_code(&e));
                }
            },
            // Unregistered between the listing and the read.
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// `watch BASE NAME [--for MS]`: events until `run_for` has passed (once started) or a
/// signal comes, then the instances; exits 0.
async fn watch(g: &Globals, base: &str, name: &str, run_for: Option<Duration>) -> Outcome {
    let mut shutdown = Shutdown::install()?;
    let client = connect(g).await?;
    let result = follow(&client, base, name, run_for, &mut shutdown).await;
    close(&client).await;
    result
}

async fn follow(
    client: &Client,
    base: &str,
    name: &str,
    run_for: Option<Duration>,
    shutdown: &mut Shutdown,
) -> Outcome {
    let discovery = ServiceDiscovery::<Value>::builder(client, base).build()?;
    let cache = discovery.service_cache(name).start()?;
    // Taken right after the start, before the first read; that read tells only the nodes it
    // skipped, so the instances it found are printed from the snapshot (on this
    // current-thread runtime, nothing can change it between `initialized`'s return and the
    // read), then those skips.
    let mut events = cache.events();
    cache.initialized().await?;
    for instance in cache.instances().iter() {
        print_happening("added", instance)?;
    }
    print_queued(&mut events)?;
    if output_json::on() {
        output_json::say(&Happening::named("initialized"))?;
    } else {
        say("initialized")?;
    }
    let until_deadline = crate::connection::run_for(run_for);
    tokio::pin!(until_deadline);
    loop {
        tokio::select! {
            _ = shutdown.recv() => break,
            () = &mut until_deadline => break,
            event = events.next() => match event {
                Some(event) => {
                    print_event(&event)?;
                }
                None => return Err(Failure::msg(format!(
                    "the cache of {} stopped", cache.path()
                ))),
            },
        }
    }
    // The events already queued belong to the instances printed below.
    print_queued(&mut events)?;
    for instance in cache.instances().iter() {
        print_happening("instance", instance)?;
    }
    Ok(0)
}

/// Prints the events already queued, without waiting.
fn print_queued(events: &mut EventStream<ServiceCacheEvent<Value>>) -> Result<(), Failure> {
    while let Some(event) = events.try_next() {
        print_event(&event)?;
    }
    Ok(())
}

/// An instance as `list` and `pick` print it ([`instance_line`], or a JSON record).
fn print_instance<P>(instance: &ServiceInstance<P>, json: &[u8]) -> io::Result<()> {
    if !output_json::on() {
        return say(instance_line(instance, json));
    }
    let mut record = instance_record(instance);
    record.json = serde_json::from_slice(json).ok();
    output_json::say(&record)
}

/// The fields that name an instance ([`identity`]'s, as a record).
fn instance_record<P>(instance: &ServiceInstance<P>) -> Instance<'_> {
    Instance {
        name: &instance.name,
        id: &instance.id,
        address: instance.address.as_deref(),
        port: instance.port,
        json: None,
    }
}

/// `KIND NAME ID ADDRESS:PORT`, or its JSON record.
fn print_happening<P>(kind: &str, instance: &ServiceInstance<P>) -> io::Result<()> {
    if !output_json::on() {
        return say(format!("{kind} {}", identity(instance)));
    }
    output_json::say(&Happening {
        kind,
        instance: Some(instance_record(instance)),
        ..Happening::default()
    })
}

/// A cache event's line (or JSON record), if it has one.
fn print_event(event: &ServiceCacheEvent<Value>) -> io::Result<()> {
    if !output_json::on() {
        return match event_line(event) {
            Some(line) => say(line),
            None => Ok(()),
        };
    }
    match event {
        ServiceCacheEvent::Added(i) => print_happening("added", i),
        ServiceCacheEvent::Updated { new, .. } => print_happening("updated", new),
        ServiceCacheEvent::Removed(i) => print_happening("removed", i),
        ServiceCacheEvent::Skipped { path, error } => output_json::say(&Happening {
            path: Some(path),
            error: Some(without_code(error)),
            ..Happening::named("skipped")
        }),
        ServiceCacheEvent::Suspended => output_json::say(&Happening::named("suspended")),
        ServiceCacheEvent::Reconnected => output_json::say(&Happening::named("reconnected")),
        ServiceCacheEvent::Lost => output_json::say(&Happening::named("lost")),
        ServiceCacheEvent::Lagged { missed } => output_json::say(&Happening {
            missed: Some(*missed),
            ..Happening::named("lagged")
        }),
        _ => Ok(()),
    }
}

/// One event as a line (`added api 1 10.0.0.5:8080`); `None` for kinds this version does not
/// know.
fn event_line(event: &ServiceCacheEvent<Value>) -> Option<String> {
    Some(match event {
        ServiceCacheEvent::Added(i) => format!("added {}", identity(i)),
        ServiceCacheEvent::Updated { new, .. } => format!("updated {}", identity(new)),
        ServiceCacheEvent::Removed(i) => format!("removed {}", identity(i)),
        ServiceCacheEvent::Skipped { path, error } => {
            format!("skipped {path} {}", without_code(error))
        }
        ServiceCacheEvent::Suspended => "suspended".to_string(),
        ServiceCacheEvent::Reconnected => "reconnected".to_string(),
        ServiceCacheEvent::Lost => "lost".to_string(),
        ServiceCacheEvent::Lagged { missed } => format!("lagged {missed}"),
        _ => return None,
    })
}

/// `pick BASE NAME`: `count` picks from a started provider, each printed as `list` prints it
/// (the JSON read from its node once picked).
async fn pick(
    client: &Client,
    base: &str,
    name: &str,
    strategy: PickStrategy,
    count: usize,
) -> Outcome {
    let discovery = ServiceDiscovery::<Value>::builder(client, base).build()?;
    let provider = match strategy {
        PickStrategy::RoundRobin => discovery.provider(name).strategy(RoundRobin::new()),
        PickStrategy::Random => discovery.provider(name).strategy(Random::new()),
    }
    .start()?;
    provider.initialized().await?;
    let candidates = provider.all_instances();
    if candidates.is_empty() {
        let path = child(base, name);
        let cached = provider.cached_instances().len();
        let why = if cached == 0 {
            format!("no instance of service {name} is registered at {path}")
        } else {
            format!("none of the {cached} instances at {path} is enabled")
        };
        return Err(Failure::Message(
            format!("nothing to pick: {why}"),
            EXIT_NO_INSTANCE,
        ));
    }
    // Each candidate's JSON as stored, read once (pipelined) whatever the number of picks.
    let nodes: Vec<String> = candidates
        .iter()
        .map(|i| discovery.path_for(&i.name, &i.id))
        .collect();
    let reads = pipeline::all_chunked(&nodes, |node| client.get_data(node)).await;
    let mut stored: HashMap<&str, Vec<u8>> = HashMap::new();
    for (instance, read) in candidates.iter().zip(reads) {
        match read {
            Ok((json, _)) => {
                stored.insert(&instance.id, json.to_vec());
            }
            // Gone since (or a DYNAMIC_SEQUENTIAL node, named id + sequence): the instance
            // as the provider holds it, in Curator's format.
            Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
            Err(e) => return Err(e.into()),
        }
    }
    for _ in 0..count {
        let Some(instance) = provider.instance() else {
            return Err(Failure::Message(
                format!("nothing to pick: the instances of {name} went"),
                EXIT_NO_INSTANCE,
            ));
        };
        match stored.get(instance.id.as_str()) {
            Some(json) => print_instance(&instance, json)?,
            None => print_instance(&instance, &written(&instance)?)?,
        }
    }
    Ok(0)
}

/// The instance in Curator's default format.
fn written(instance: &Arc<ServiceInstance<Value>>) -> Result<Vec<u8>, Failure> {
    Ok(discovery::to_json(
        instance.as_ref(),
        JsonFormat::Compatible,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_written_as_given_without_whitespace() {
        let text = |json: &str| payload(json).unwrap().map(|p| p.get().to_string());
        assert_eq!(
            text("{ \"zone\" : \"a b\\\" }\",\n \"@class\":\"x.Y\", \"n\": [1, 2.50] }"),
            Some(r#"{"zone":"a b\" }","@class":"x.Y","n":[1,2.50]}"#.to_string())
        );
        assert_eq!(text(" \"plain\" "), Some(r#""plain""#.to_string()));
        assert_eq!(text("null"), None);
        for bad in ["{zone:1}", "", "[1,]", "1 2"] {
            assert!(matches!(payload(bad), Err(Failure::Usage(_))), "{bad}");
        }
    }

    #[test]
    fn lines() {
        let instance = ServiceInstance::<Value>::builder("api")
            .id("i-1")
            .address("10.0.0.5")
            .port(8080)
            .build()
            .unwrap();
        assert_eq!(identity(&instance), "api i-1 10.0.0.5:8080");
        assert_eq!(
            instance_line(&instance, b"{\"a\":\n1}\r\n"),
            "api i-1 10.0.0.5:8080 {\"a\": 1}"
        );
        let bare = ServiceInstance::<Value>::builder("api")
            .id("i-2")
            .ssl_port(8443)
            .build()
            .unwrap();
        assert_eq!(identity(&bare), "api i-2 -:-");
        let added = ServiceCacheEvent::Added(Arc::new(instance.clone()));
        assert_eq!(event_line(&added).unwrap(), "added api i-1 10.0.0.5:8080");
        let skipped = ServiceCacheEvent::<Value>::Skipped {
            path: "/s/api/x".into(),
            error: discovery::from_json::<Value>(b"").unwrap_err(),
        };
        assert_eq!(
            event_line(&skipped).unwrap(),
            "skipped /s/api/x not a service instance: EOF while parsing a value at line 1 column 0"
        );
        assert_eq!(
            event_line(&ServiceCacheEvent::<Value>::Lagged { missed: 3 }).unwrap(),
            "lagged 3"
        );
    }
}
