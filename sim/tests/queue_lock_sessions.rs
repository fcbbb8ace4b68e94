//! A queue consumer's lock is settled on the session that made it, or not at all: a
//! complete or release held back past the loss of that session must not go out on the
//! client's next session, where the lock's path is another consumer's lock by then.
//!
//! The schedule: consumer A (client 0, the one the plan cuts off) holds the only item under
//! a lock path; consumer B (client 1) waits for it. A is cut off for longer than the server
//! takes to expire its session (its lock goes, B takes the item) and shorter than A's client
//! takes to give up a request waiting for the next session. Meanwhile A settles the item,
//! and its request is held back in the client until A has lost the session.
//!
//! Held back where: a request waiting in the session core for a connection is failed by the
//! loss (`SessionExpired`), before the fix too, so a settle merely made late in the cut-off
//! never reaches the next session. What does is one held in the client before it reaches
//! the core, here by the bound on requests in flight: A's client allows one, a request made
//! while cut off holds it until the loss fails that request, and only then is the settle's
//! request handed to the core, which has no session then and keeps it for the next one
//! (a busy client whose places are all taken holds requests back the same way). Before the
//! fix (`sim/defects/queue-lock-settled-on-a-later-session.patch` puts it back) it went out
//! on A's new session and deleted B's lock, and, for a complete, the item under it, B's own
//! complete then succeeding too: the item handled twice. The `queues` suite's campaign
//! never lines this up (not in 3,000 seeds).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use tokio::sync::mpsc;
use zkrs_client::{Client, ConnectionState, StateChange};
use zkrs_recipes::queue::DistributedQueue;
use zkrs_sim::{Fault, FaultConfig, FaultKind, Finding, Simulation, World};

/// The session timeout of every client the world builds (`World::client_builder`; the run
/// checks that its clients have it).
const SESSION: Duration = Duration::from_secs(2);

const QUEUE: &str = "/jobs";
const LOCKS: &str = "/jobs-locks";

/// Single-client faults on client 0 only, and no other fault (the member faults' mean gap is
/// far past the run, skipped replies off): the cut-off is the only thing that happens.
fn config() -> FaultConfig {
    FaultConfig::for_duration(Duration::from_secs(30))
        .mean_gap(Duration::from_secs(100_000))
        .skip_reply_gap(None)
        .client_faults(1)
}

/// Whether a cut-off of client 0 lasting `length` lines the schedule up.
///
/// Long enough for the server to expire A's session and for B to take the item before A is
/// back: the server last heard from A at the cut's start at the latest, and expires the
/// session a timeout later, in the next tick bucket; B's take is a few round trips of at
/// most 4 ms, well within another tick.
///
/// Short enough for A to be back, with a new session, before its held settle has waited a
/// session timeout for one (then the client fails it, `fail_stale_waiting`, and nothing is
/// sent whatever the request's binding). A declares the loss a session timeout after it
/// noticed the cut, which is a read timeout (2/3 of the session timeout) after its last
/// reply, at most a ping interval (half the read timeout) before the cut; the settle's
/// request, made at the loss, then waits a session timeout at most. After the heal, A's
/// next attempt starts within one attempt's time (the session timeout shared among the
/// three members) and the longest back-off (1 s, `SessionConfig::backoff_max`).
fn fits(length: Duration) -> bool {
    // The members' tick (a simulation's default server configuration): the server expires
    // a session in the first tick bucket after its timeout has run out.
    let tick = zkrs_model::ServerConfig::default().tick_time;
    let expired = SESSION + 2 * tick;
    let read_timeout = SESSION * 2 / 3;
    let noticed = read_timeout - read_timeout / 2;
    let given_up = noticed + SESSION + SESSION;
    let reconnect = SESSION / 3 + Duration::from_secs(1);
    expired <= length && length + reconnect <= given_up
}

/// The first seed whose plan cuts client 0 off, first of all its faults, for a length that
/// [`fits`]; and that cut-off.
fn seed_with_cut() -> (u64, Fault) {
    (1..200)
        .find_map(|seed| {
            let plan = Simulation::new(seed).faults(config()).plan();
            let first = *plan.iter().min_by_key(|f| f.at)?;
            let cut = matches!(first.kind, FaultKind::IsolateClient { client: 0 });
            (cut && fits(first.length)).then_some((seed, first))
        })
        .expect("a seed whose first fault cuts client 0 off for a length that fits")
}

/// How A gives the item up.
#[derive(Debug, Clone, Copy)]
enum Settle {
    Complete,
    Release,
}

async fn connect(world: &World) -> Result<Client, String> {
    world
        .client_builder()
        .connect()
        .await
        .map_err(|e| e.to_string())
}

/// `client`'s state changes, each with the (virtual) time it came, read by a task of its own
/// so that the times are right while the test waits for something else.
fn state_log(world: &World, client: &Client) -> mpsc::UnboundedReceiver<(Duration, StateChange)> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (world, mut changes) = (world.clone(), client.state_changes());
    tokio::spawn(async move {
        while let Some(change) = changes.next().await {
            if tx.send((world.now(), change)).is_err() {
                return;
            }
        }
    });
    rx
}

/// The next change of the log into `state`, and when it came.
async fn next_state(
    log: &mut mpsc::UnboundedReceiver<(Duration, StateChange)>,
    state: ConnectionState,
) -> Result<(Duration, StateChange), String> {
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some((at, change)) = log.recv().await {
            if change.state == state {
                return Some((at, change));
            }
        }
        None
    })
    .await;
    found
        .ok()
        .flatten()
        .ok_or_else(|| format!("client 0 did not go {state:?} within 30 s"))
}

/// `what` within 30 s of virtual time.
async fn within<T>(what: &str, f: impl Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .map_err(|_| format!("{what}: not within 30 s"))
}

/// Polls `f` once, so that it runs up to its first wait, where it must still be.
async fn poll_once<F: Future + Unpin>(what: &str, f: &mut F) -> Result<(), String> {
    let pending =
        std::future::poll_fn(|cx| std::task::Poll::Ready(Pin::new(&mut *f).poll(cx).is_pending()))
            .await;
    pending
        .then_some(())
        .ok_or_else(|| format!("{what} was done at once"))
}

type Outcome = Pin<Box<dyn Future<Output = zkrs_client::Result<()>> + Send>>;

async fn scenario(world: World, cut: Fault, settle: Settle) -> Result<(), String> {
    // Client 0 first (the one the plan cuts off), with one request in flight at most.
    let a = world
        .client_builder()
        .max_in_flight(1)
        .connect()
        .await
        .map_err(|e| e.to_string())?;
    if a.session_timeout() != SESSION {
        return Err(format!(
            "the world's session timeout is {:?} now, not {SESSION:?}: the schedule is \
             planned for the latter (`fits`)",
            a.session_timeout()
        ));
    }
    let b = connect(&world).await?;
    let observer = connect(&world).await?;
    let queue = |client: &Client| {
        DistributedQueue::builder(client, QUEUE)
            .lock_path(LOCKS)
            .build()
            .map_err(|e| e.to_string())
    };
    queue(&observer)?
        .put(b"the only item")
        .await
        .map_err(|e| e.to_string())?;

    let mut a_log = state_log(&world, &a);
    let mut consumer_a = queue(&a)?.consumer();
    let message = within("A takes the item", consumer_a.take())
        .await?
        .map_err(|e| e.to_string())?;
    let lock = format!("{LOCKS}/{}", message.name());
    let a_session = a.session_id();
    if world.now() >= cut.at {
        return Err(format!(
            "A took the item only at {:?}, after the {cut}",
            world.now()
        ));
    }
    // B waits for the item: A's lock holds it until A's session goes.
    let mut consumer_b = queue(&b)?.consumer();
    // The consumer comes back with the message: kept, as its user would keep it.
    let b_takes = tokio::spawn(async move { (consumer_b.take().await, consumer_b) });

    // Cut off: once A knows (Suspended), its requests wait for a connection. The first one
    // holds A's only place in flight; A's settle, which still sees its session, waits for
    // that place. The loss fails the first, and the settle's request is made then, on no
    // session: before the fix it waited for the next one.
    let (suspended, _) = next_state(&mut a_log, ConnectionState::Suspended).await?;
    let waiting = a.clone();
    let mut blocker = Box::pin(async move { waiting.exists(QUEUE).await.map(drop) });
    poll_once("a request of A's while cut off", &mut blocker).await?;
    let mut settled: Outcome = match settle {
        Settle::Complete => Box::pin(message.complete()),
        Settle::Release => Box::pin(message.release()),
    };
    poll_once("A's settle", &mut settled).await?;
    let blocker = tokio::spawn(blocker);
    let settled = tokio::spawn(settled);

    // The server expires A's session, its lock goes, and B takes the item.
    within("A's session expires on the server", async {
        while let Ok((Some(_), gone)) = observer.exists_and_watch(&lock).await {
            gone.await;
        }
    })
    .await?;
    let expired = world.now();
    if settled.is_finished() {
        return Err(format!(
            "A's {settle:?} was done before its session expired"
        ));
    }
    let (b_message, _consumer_b) = within("B takes the item", b_takes)
        .await?
        .map_err(|e| e.to_string())?;
    let b_message = b_message.map_err(|e| format!("B's take: {e}"))?;
    let b_lock = observer
        .exists(&lock)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("B took the item without a lock")?;
    if b_lock.ephemeral_owner != b.session_id() {
        return Err(format!("the lock after the expiry is not B's: {b_lock:?}"));
    }

    // A declares its session lost (or hears so at its first reconnection), then makes a new
    // one once the cut heals.
    let (lost, _) = next_state(&mut a_log, ConnectionState::Lost).await?;
    let (back, now) = next_state(&mut a_log, ConnectionState::Reconnected).await?;
    world.trace(&format!(
        "A: suspended at {suspended:?}, expired on the server at {expired:?}, lost at \
         {lost:?}, new session {:#x} at {back:?}",
        now.session_id
    ));
    // The schedule, checked: the first request was failed by the loss (so the settle's
    // request was made after it), and A was back before a request made then had waited a
    // session timeout (so one not bound to the lost session would have been sent).
    let blocked = within("A's first request", blocker)
        .await?
        .map_err(|e| e.to_string())?;
    match blocked {
        Err(e) if e.is_session_expired() => {}
        other => {
            return Err(format!(
                "A's first request ended {other:?}, not with the loss"
            ))
        }
    }
    if now.session_id == a_session || back >= lost + SESSION {
        return Err(format!(
            "the schedule did not line up: A lost its session at {lost:?} and was back at \
             {back:?} with session {:#x} (the {cut})",
            now.session_id
        ));
    }
    let outcome = within("A's settle", settled)
        .await?
        .map_err(|e| e.to_string())?;

    // What A's settle did: B's lock and the item must be as B left them.
    let lock_now = observer.exists(&lock).await.map_err(|e| e.to_string())?;
    let item_now = observer
        .exists(&b_message.path())
        .await
        .map_err(|e| e.to_string())?;
    if lock_now.map(|s| s.ephemeral_owner) != Some(b_lock.ephemeral_owner) {
        // B, which still holds the item as far as it knows, settles it too: what it hears
        // says whether the item was handled twice.
        let b_outcome = within("B's complete", b_message.complete()).await?;
        return Err(format!(
            "A's {settle:?} of the lock it lost with session {a_session:#x} went out on its \
             new session {:#x} and deleted B's lock{} (A's {settle:?}: {:?}; then B's \
             complete: {:?}{})",
            now.session_id,
            if item_now.is_none() {
                " and the item under it"
            } else {
                ""
            },
            outcome.as_ref().map_err(ToString::to_string),
            b_outcome.as_ref().map_err(ToString::to_string),
            match (settle, &outcome, &b_outcome) {
                (Settle::Complete, Ok(()), Ok(())) => ": the item was handled twice",
                _ => "",
            }
        ));
    }
    if item_now.is_none() {
        return Err(format!(
            "the item went while B held it (A's {settle:?}: {outcome:?})"
        ));
    }
    // A hears that the lock went with its session: a release has nothing left to do, a
    // complete says the item was not settled.
    match (settle, &outcome) {
        (Settle::Release, Ok(())) => {}
        (Settle::Complete, Err(e)) if e.is_session_expired() => {}
        _ => return Err(format!("A's {settle:?} ended {outcome:?}")),
    }
    // B still holds the item, and completes it: handled once.
    b_message
        .complete()
        .await
        .map_err(|e| format!("B's complete: {e}"))?;
    let left = observer
        .get_children(QUEUE)
        .await
        .map_err(|e| e.to_string())?;
    if !left.is_empty() {
        return Err(format!(
            "{} nodes left in the queue after B's complete",
            left.len()
        ));
    }
    Ok(())
}

fn check(settle: Settle) {
    let (seed, cut) = seed_with_cut();
    let report = Simulation::new(seed)
        .faults(config())
        .run(move |world| async move { scenario(world, cut, settle).await.map_err(Finding::from) });
    assert!(
        report.passed(),
        "seed {seed} ({cut}): {}\nlast trace lines:\n{}",
        report.violation.map_or_else(String::new, |v| v.to_string()),
        report.trace[report.trace.len().saturating_sub(40)..].join("\n")
    );
}

/// A complete held back past the loss of the lock's session fails with `SessionExpired`;
/// before the fix it went out on the next session, deleted B's lock and the item, and both
/// consumers completed the item.
#[test]
fn a_complete_held_back_past_a_session_loss_leaves_the_next_consumer_alone() {
    check(Settle::Complete);
}

/// A release held back past the loss of the lock's session does nothing; before the fix it
/// went out on the next session and deleted B's lock (the item free for a third consumer
/// while B handled it).
#[test]
fn a_release_held_back_past_a_session_loss_leaves_the_next_consumer_alone() {
    check(Settle::Release);
}
