//! The `sessions` suite, as `recipes/tests/invariants.rs` (`sessions`) runs it against real
//! servers: 4 sessions issue sequential creates and listings of the bucket they create into,
//! through the faults (here with a short pause after each request, `PAUSE`). No request may
//! hang past its deadline (8 s), every request ends Ok or with an error, and no create is
//! applied twice: every id appears at most once on the server, and every acknowledged one
//! exactly once (each bucket checked when its session moves on, then removed; see
//! `check_bucket`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{Client, CreateMode, ErrorCode};

use crate::data::{healed_flag, make_node, settle_briefly, Problems};
use crate::participant::{connect, Sink, STEP_DEADLINE};
use zkrs_sim::World;

const SESSIONS: usize = 4;

/// No request may take longer: at worst it waits for the session to be declared lost
/// (the 2 s session timeout after the disconnect) and the reconnect attempts around it.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(8);

/// Ids per bucket: each session creates into a bucket of its own and moves to a new one
/// every `BUCKET` ids, checking and removing the one it leaves. The real suite uses 1,000
/// (a listing far below the 1 MiB frame limit); here every third request lists the bucket,
/// and with 1,000 the listings were half the run's time (`docs/sim-data-draft.md`). With
/// 100 a listing still named 50 nodes on average, each of them encoded by the model,
/// decoded by the client and by the trace and written into a trace line: 25 a bucket keeps
/// the same checks (every id once, every acknowledged id there) at a quarter of that.
const BUCKET: u64 = 25;

/// How long a session waits after each request before its next. The real suite sends the
/// next at once; here a request's round trip is some 4 ms, so a session without a pause
/// made about 300 requests a simulated second, 75,000 a seed over four sessions, and most
/// of a round of all suites' CPU. With a pause of half a round trip a session still has a
/// request in flight two thirds of the time, through every fault, at half the requests.
const PAUSE: Duration = Duration::from_millis(2);

/// What one session did and found.
#[derive(Debug, Default)]
pub struct Tally {
    /// Requests that succeeded.
    pub ok: u64,
    /// Requests that ended with an error.
    pub failed: u64,
    /// Creates acknowledged.
    pub acked: u64,
    /// Nodes found in the buckets checked.
    pub nodes: u64,
    /// Buckets checked.
    pub buckets: u64,
}

impl Tally {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Tally) {
        self.ok += other.ok;
        self.failed += other.failed;
        self.acked += other.acked;
        self.nodes += other.nodes;
        self.buckets += other.buckets;
    }
}

/// One session's loop (session `k`, under `/inv-s`, which must exist), until `stop`; then
/// it checks its last bucket. A bucket holds `bucket` ids; after each request the session
/// waits `pause` (zero: none, as the real-server suite runs it). Violations (a request past
/// [`REQUEST_DEADLINE`], a create applied twice or lost) go to `sink`, with a note per
/// failed request and per bucket checked.
pub async fn worker<S: Sink + ?Sized>(
    k: usize,
    client: Client,
    stop: Arc<AtomicBool>,
    bucket: u64,
    pause: Duration,
    sink: Arc<S>,
) -> Tally {
    let problems = &*sink;
    let mut tally = Tally::default();
    // The ids acknowledged in the current bucket.
    let mut acked = Vec::new();
    let mut i = 0u64;
    // The bucket made so far (see BUCKET).
    let mut made: Option<String> = None;
    while !stop.load(Ordering::Relaxed) {
        let dir = format!("/inv-s/c{k}-{}", (i + 1) / bucket);
        let t0 = Instant::now();
        let outcome = if made.as_deref() != Some(dir.as_str()) {
            if let Some(done) = made.take() {
                check_bucket(&client, &done, &mut acked, &mut tally, problems).await;
            }
            // A new bucket, made before the creates into it.
            tokio::time::timeout(
                REQUEST_DEADLINE,
                client.create(&dir, b"", CreateMode::Persistent),
            )
            .await
            .map(|r| match r {
                Err(e) if e.code() != Some(ErrorCode::NodeExists) => Err(e),
                _ => {
                    made = Some(dir.clone());
                    Ok(())
                }
            })
        } else {
            i += 1;
            let id = format!("c{k}-{i}");
            if i % 3 == 0 {
                tokio::time::timeout(REQUEST_DEADLINE, client.get_children(&dir))
                    .await
                    .map(|r| r.map(drop))
            } else {
                tokio::time::timeout(
                    REQUEST_DEADLINE,
                    client.create(
                        &format!("{dir}/n-"),
                        id.as_bytes(),
                        CreateMode::PersistentSequential,
                    ),
                )
                .await
                .map(|r| {
                    r.map(|_| {
                        acked.push(id.clone());
                        tally.acked += 1;
                    })
                })
            }
        };
        match outcome {
            Ok(Ok(())) => tally.ok += 1,
            Ok(Err(e)) => {
                tally.failed += 1;
                problems.note(&format!("c{k} request {i}: {e}"));
                settle_briefly(&client).await;
            }
            Err(_) => problems.violation(format!(
                "client {k} request {i} still pending after {:?}",
                t0.elapsed()
            )),
        }
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
    }
    if let Some(last) = made {
        check_bucket(&client, &last, &mut acked, &mut tally, problems).await;
    }
    tally
}

/// Checks a bucket its session has finished with against what the session was told, then
/// removes it: every id in `acked` is there, and no id is there twice. Reads and deletes
/// retry through the faults and are not held to the request deadline; a sync first, so
/// whichever member answers has every acknowledged create.
async fn check_bucket<S: Sink + ?Sized>(
    client: &Client,
    dir: &str,
    acked: &mut Vec<String>,
    tally: &mut Tally,
    problems: &S,
) {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    loop {
        if let Err(e) = client.sync(dir).await {
            if e.code() != Some(ErrorCode::NoNode) {
                settle_briefly(client).await;
                continue;
            }
        }
        let children = match client.get_children(dir).await {
            Ok(c) => c.to_vec(),
            // Removed by an earlier round whose reply was lost.
            Err(e) if e.code() == Some(ErrorCode::NoNode) => break,
            Err(_) => {
                settle_briefly(client).await;
                continue;
            }
        };
        // Read then delete each child, 256 in flight (pipelined on the session).
        for chunk in children.chunks(256) {
            let mut work = tokio::task::JoinSet::new();
            for child in chunk {
                let (client, path) = (client.clone(), format!("{dir}/{child}"));
                work.spawn(async move {
                    let data = loop {
                        match client.get_data(&path).await {
                            Ok((data, _)) => break data,
                            Err(_) => settle_briefly(&client).await,
                        }
                    };
                    loop {
                        match client.delete(&path, None).await {
                            Ok(()) => break,
                            Err(e) if e.code() == Some(ErrorCode::NoNode) => break,
                            Err(_) => settle_briefly(&client).await,
                        }
                    }
                    data
                });
            }
            while let Some(data) = work.join_next().await {
                let data = data.expect("a bucket's reader does not panic");
                let id = String::from_utf8_lossy(&data).into_owned();
                *count.entry(id).or_default() += 1;
            }
        }
        match client.delete(dir, None).await {
            Ok(()) => break,
            Err(e) if e.code() == Some(ErrorCode::NoNode) => break,
            // NotEmpty: a create whose reply was lost landed since the listing. Either way,
            // list again.
            Err(e) if e.code() == Some(ErrorCode::NotEmpty) => {}
            Err(_) => settle_briefly(client).await,
        }
    }
    let nodes: usize = count.values().sum();
    problems.note(&format!(
        "checked {dir}: {nodes} nodes, {} acknowledged",
        acked.len()
    ));
    tally.buckets += 1;
    tally.nodes += nodes as u64;
    for (id, n) in &count {
        if *n > 1 {
            problems.violation(format!("{id} created {n} times"));
        }
    }
    for id in acked.drain(..) {
        if !count.contains_key(&id) {
            problems.violation(format!("{id} was acknowledged but is not on the server"));
        }
    }
}

/// Runs the suite in `world`; `Err` lists every violation.
pub async fn run(world: World) -> Result<(), String> {
    let admin = connect(&world).await?;
    make_node(&admin, "/inv-s", b"").await?;
    let problems = Arc::new(Problems::new(&world));
    let stop = healed_flag(&world);
    let mut clients = Vec::new();
    for _ in 0..SESSIONS {
        clients.push(connect(&world).await?);
    }
    let workers: Vec<_> = clients
        .iter()
        .enumerate()
        .map(|(k, client)| {
            tokio::spawn(worker(
                k,
                client.clone(),
                stop.clone(),
                BUCKET,
                PAUSE,
                problems.clone(),
            ))
        })
        .collect();
    world.healed().await;
    let mut all = Tally::default();
    for (k, mut w) in workers.into_iter().enumerate() {
        // Every worker stops once the faults have healed, then checks its last bucket: as
        // the real suite, each within 30 s.
        let Ok(joined) = tokio::time::timeout(STEP_DEADLINE, &mut w).await else {
            problems.add(format!(
                "client {k} did not finish its last bucket within {STEP_DEADLINE:?}"
            ));
            // Stopped before its client is closed below: its retries would then fail at
            // once, again and again, and never let the runtime go on.
            w.abort();
            continue;
        };
        let tally = joined.map_err(|e| format!("client {k}: {e}"))?;
        all.add(&tally);
    }
    world.trace(&format!(
        "sessions: operations {} (ok {}, errors {}, creates acknowledged {}, nodes {} in {} buckets), violations {}",
        all.ok + all.failed,
        all.ok,
        all.failed,
        all.acked,
        all.nodes,
        all.buckets,
        problems.len()
    ));
    for c in clients.into_iter().chain([admin]) {
        let _ = c.close().await;
    }
    problems.verdict()
}
