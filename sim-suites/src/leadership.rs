//! The leadership suites (`latch`, `election`, `master`, `selector`), as the real-server
//! fault suite `recipes/tests/invariants_leadership.rs` runs them: 4 participants, each on
//! its own session (2 s timeout), contend for leadership while the faults run: the member
//! faults, an outage of every member in half the runs, and single-client faults on the
//! participants (cut off or paused, often for longer than the session timeout), so a
//! leader's session expires while it may still believe it leads.
//!
//! A participant's belief is the recipe's own word, under its standard connection-state
//! policy: the suite never ends a belief because it saw the connection suspended, so a
//! recipe that keeps leading through a suspension is caught (its session expires, another
//! leads, and the two beliefs overlap).
//!
//! - `latch`: 4 `LeaderLatch`es. A participant believes it leads from the moment the latch
//!   says so (`is_leader()`, looked at on each of its events and each connection change)
//!   until a "lost" event or `is_leader()` false. While the faults run, a leader steps down
//!   after 0.2-3 s (closes its latch, joins again at the back), so leadership keeps moving
//!   through the faults.
//! - `election` (`LeaderElection`; a belief ends at any event out of ELECTED) and `master`
//!   (`MasterElection`, one ephemeral node): the same, except that a leader stepping down
//!   either leaves and joins with a new recipe, or (one time in two) stops and starts the
//!   same election again, or resigns and rejoins the same master contender.
//! - `selector`: 4 `LeaderSelector`s with auto-requeue; a participant believes it leads while
//!   its leadership task runs (from its start, if the context says it leads, until its term
//!   ends or the selector drops its future, which is how the selector ends a cancelled term,
//!   a suspension's among them). Terms last 20-300 ms, so leadership moves all the time.
//!
//! Violations: two participants believing they lead at one instant; a step (leaving,
//! stepping down) past its deadline; and, once the faults have healed, not exactly one
//! leader within the session timeout + 10 s (in `latch`, `election` and `master` it must
//! also be the one the znodes say).

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{Client, ConnectionState, CreateMode, EventStream};
use zkrs_recipes::leader::{ElectionEvent, LeadershipEvent};
use zkrs_recipes::{
    framework::ConnectionStatePolicy,
    leader::{
        ElectionState, LeaderContext, LeaderElection, LeaderLatch, LeaderSelector, MasterElection,
    },
};

use crate::participant::{connect, settle, STEP_DEADLINE};
use zkrs_sim::check::Beliefs;
use zkrs_sim::{SimRng, World};

/// Participants, each on its own session.
pub const PARTICIPANTS: usize = 4;
/// The participants' session timeout ([`World::client_builder`]'s).
const SESSION: Duration = Duration::from_secs(2);
/// After healing, exactly one must lead within this.
pub const CONVERGENCE: Duration = Duration::from_secs(SESSION.as_secs() + 10);

/// Whether `state` ends a belief in leadership (the standard policy: suspended or lost).
pub fn suspended(state: ConnectionState) -> bool {
    ConnectionStatePolicy::Standard.is_error_state(state)
}

/// What the participants share: the beliefs (each start and end also goes to the trace),
/// the violations found on the way, and counts for the summary line.
struct Shared {
    world: World,
    beliefs: Beliefs,
    problems: Mutex<Vec<String>>,
    /// Leadership terms gained.
    gained: AtomicU64,
    /// Terms the recipe ended while the connection was suspended or lost.
    ended_on_suspension: AtomicU64,
    /// Leaders that stepped down (left or resigned) and joined again.
    stepped_down: AtomicU64,
}

impl Shared {
    fn new(world: &World) -> Shared {
        Shared {
            world: world.clone(),
            beliefs: Beliefs::new(),
            problems: Mutex::new(Vec::new()),
            gained: AtomicU64::new(0),
            ended_on_suspension: AtomicU64::new(0),
            stepped_down: AtomicU64::new(0),
        }
    }

    /// `who` believes it leads from now (no-op if it does already).
    fn begin(&self, who: usize, session: i64) {
        if !self.beliefs.believes(who) {
            self.gained.fetch_add(1, Ordering::Relaxed);
            self.world
                .trace(&format!("p{who} leads (session {session:x})"));
            self.beliefs.begin(who, Instant::now(), session);
        }
    }

    /// `who` stops believing it leads (no-op if it did not).
    fn end(&self, who: usize, why: &'static str) {
        if self.beliefs.believes(who) {
            self.beliefs.end(who, Instant::now(), why);
            self.world.trace(&format!("p{who} stops leading ({why})"));
        }
    }

    fn problem(&self, text: String) {
        self.world.trace(&format!("violation: {text}"));
        self.problems.lock().unwrap().push(text);
    }

    /// Runs `step` of participant `who` under [`STEP_DEADLINE`]; past it, a violation.
    async fn within<F: Future>(&self, who: usize, what: &str, step: F) -> Option<F::Output> {
        let done = tokio::time::timeout(STEP_DEADLINE, step).await.ok();
        if done.is_none() {
            self.problem(format!(
                "participant {who}: {what} still pending after {STEP_DEADLINE:?}"
            ));
        }
        done
    }

    /// The suite's verdict: the overlaps, then the problems found on the way.
    fn verdict(&self, suite: &str, extra: String) -> Result<(), String> {
        let mut problems = self.beliefs.violations(1, Instant::now());
        problems.extend(self.problems.lock().unwrap().iter().cloned());
        self.world.trace(&format!(
            "{suite}: {} leadership terms, {} ended by the recipe on a suspended connection, {} step-downs, {extra}",
            self.gained.load(Ordering::Relaxed),
            self.ended_on_suspension.load(Ordering::Relaxed),
            self.stepped_down.load(Ordering::Relaxed),
        ));
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }
}

/// What the churn suites (latch, election, master) need of a leadership recipe.
pub trait Contender: Send + Sized + 'static {
    /// The suite's name.
    const NAME: &'static str;
    /// The recipe's path.
    const PATH: &'static str;
    /// Whether [`Contender::restart`] steps down and contends again with the same recipe.
    const RESTARTS: bool;
    /// Joins as the participant with id `id` (at the back of the line, for fair recipes).
    fn join(client: &Client, id: &str) -> Self;
    /// Whether the recipe says this participant leads now.
    fn leads(&self) -> bool;
    /// The recipe's next change: `Some(true)` to look again, `Some(false)` when it says
    /// leadership ended, `None` when it has stopped telling.
    fn changed(&mut self) -> impl Future<Output = Option<bool>> + Send;
    /// Leaves, deleting its node.
    fn leave(self) -> impl Future<Output = ()> + Send;
    /// Steps down and contends again with the same recipe (if [`Contender::RESTARTS`]).
    fn restart(&mut self) -> impl Future<Output = ()> + Send;
    /// The id of the participant the znodes say leads.
    fn leader_by_znodes(
        admin: &Client,
    ) -> impl Future<Output = zkrs_client::Result<Option<String>>> + Send;
}

/// A `LeaderLatch` at `/inv/latch`, and its events.
pub struct Latch(LeaderLatch, EventStream<LeadershipEvent>);

impl Contender for Latch {
    const NAME: &'static str = "latch";
    const PATH: &'static str = "/inv/latch";
    const RESTARTS: bool = false;
    fn join(client: &Client, id: &str) -> Self {
        let latch = LeaderLatch::builder(client, Self::PATH)
            .id(id)
            .start()
            .expect("a valid path");
        let changes = latch.events();
        Latch(latch, changes)
    }
    fn leads(&self) -> bool {
        self.0.is_leader()
    }
    async fn changed(&mut self) -> Option<bool> {
        // Lost ends leadership; anything else (gained, lagged) means look again.
        Some(self.1.next().await? != LeadershipEvent::Lost)
    }
    async fn leave(self) {
        let _ = self.0.close().await;
    }
    async fn restart(&mut self) {}
    async fn leader_by_znodes(admin: &Client) -> zkrs_client::Result<Option<String>> {
        let listed = zkrs_recipes::leader::participants(admin, Self::PATH).await?;
        Ok(listed.into_iter().next().map(|p| p.id))
    }
}

/// A `LeaderElection` at `/inv/election`, and its events (and what it takes to start the
/// participant again: its client and id).
pub struct Election {
    /// `None` only while it restarts.
    election: Option<LeaderElection>,
    events: EventStream<ElectionEvent>,
    client: Client,
    id: String,
}

impl Election {
    /// A new election of this participant, and its events from START.
    fn start(client: &Client, id: &str) -> (LeaderElection, EventStream<ElectionEvent>) {
        let builder = LeaderElection::builder(client, Self::PATH).id(id);
        let events = builder.events();
        (builder.start().expect("a valid path"), events)
    }
}

impl Contender for Election {
    const NAME: &'static str = "election";
    const PATH: &'static str = "/inv/election";
    const RESTARTS: bool = true;
    fn join(client: &Client, id: &str) -> Self {
        let (election, events) = Election::start(client, id);
        Election {
            election: Some(election),
            events,
            client: client.clone(),
            id: id.to_string(),
        }
    }
    fn leads(&self) -> bool {
        self.election.as_ref().is_some_and(|e| e.is_leader())
    }
    async fn changed(&mut self) -> Option<bool> {
        // Any step out of ELECTED (FAILED, DETERMINE, STOP...) ends leadership.
        let event = self.events.next().await?;
        Some(event.state() == ElectionState::Elected)
    }
    async fn leave(self) {
        if let Some(election) = self.election {
            let _ = election.close().await;
        }
    }
    async fn restart(&mut self) {
        // Closed, then the same participant starts again: a new election with the same id,
        // whose events (from START) replace the old ones.
        if let Some(election) = self.election.take() {
            let _ = election.close().await;
        }
        let (election, events) = Election::start(&self.client, &self.id);
        self.election = Some(election);
        self.events = events;
    }
    async fn leader_by_znodes(admin: &Client) -> zkrs_client::Result<Option<String>> {
        let leader = zkrs_recipes::leader::election_leader(admin, Self::PATH).await?;
        Ok(leader.map(|p| p.id))
    }
}

/// A `MasterElection` at `/inv/master`, and its leadership.
pub struct Master(MasterElection, zkrs_client::Current<bool>);

impl Contender for Master {
    const NAME: &'static str = "master";
    const PATH: &'static str = "/inv/master";
    const RESTARTS: bool = true;
    fn join(client: &Client, id: &str) -> Self {
        let master = MasterElection::builder(client, Self::PATH)
            .id(id)
            .start()
            .expect("a valid path");
        let mastership = master.leadership();
        Master(master, mastership)
    }
    fn leads(&self) -> bool {
        self.0.is_leader()
    }
    async fn changed(&mut self) -> Option<bool> {
        self.1.changed().await
    }
    async fn leave(self) {
        let _ = self.0.close().await;
    }
    async fn restart(&mut self) {
        let _ = self.0.resign().await;
        self.0.rejoin();
    }
    async fn leader_by_znodes(admin: &Client) -> zkrs_client::Result<Option<String>> {
        match admin.get_data(Self::PATH).await {
            Ok((data, _)) => Ok(Some(String::from_utf8_lossy(&data).into_owned())),
            Err(e) if e.code() == Some(zkrs_client::ErrorCode::NoNode) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// How a participant's turn with one recipe ended.
enum Outcome {
    /// The suite is over (or the recipe stopped telling): leave for good.
    Stop,
    /// It led long enough while the faults run: step down and contend again.
    StepDown,
}

/// One participant's turn with `contender`: believes it leads while the recipe says so
/// (looked at on each of its events and each connection change, never ended on the
/// connection's word); while `churn` is set, a leader steps down after 0.2-3 s.
async fn turn<C: Contender>(
    who: usize,
    client: &Client,
    contender: &mut C,
    shared: &Shared,
    stop: &AtomicBool,
    churn: &AtomicBool,
    rng: &mut SimRng,
) -> Outcome {
    let mut states = client.state_changes();
    // Leadership gained before the subscription has no event: look once.
    let mut check = true;
    let mut step_down_at = Instant::now();
    loop {
        if stop.load(Ordering::Relaxed) {
            return Outcome::Stop;
        }
        if check {
            check = false;
            if contender.leads() {
                if !shared.beliefs.believes(who) {
                    step_down_at = Instant::now() + Duration::from_millis(rng.between(200, 3000));
                }
                shared.begin(who, client.session_id());
            } else {
                recipe_ended(who, client, shared, "recipe: not leader");
            }
        }
        // While the faults run, a leader steps down after a while and contends again, so
        // leadership keeps moving through the faults.
        let leading = shared.beliefs.believes(who);
        let churning = churn.load(Ordering::Relaxed);
        if leading && churning && Instant::now() >= step_down_at {
            shared.end(who, "stepped down");
            return Outcome::StepDown;
        }
        // Not `step_down_at - now` once the churn is over: that is zero for a leader past
        // its time, and a zero sleep in a loop keeps the virtual clock from ever moving.
        let wake = if leading && churning {
            step_down_at.saturating_duration_since(Instant::now())
        } else {
            Duration::from_millis(200)
        };
        tokio::select! {
            biased;
            change = contender.changed() => match change {
                Some(true) => check = true,
                Some(false) => recipe_ended(who, client, shared, "recipe: lost"),
                None => return Outcome::Stop,
            },
            // The connection's changes only make the participant look at the recipe again
            // (it may lead again without a new event): a belief ends on the recipe's word.
            change = states.next() => match change {
                Some(_) => check = true,
                None => return Outcome::Stop,
            },
            _ = tokio::time::sleep(wake.min(Duration::from_millis(200))) => {}
        }
    }
}

/// The recipe ended `who`'s leadership: ends the belief, counting it if the connection was
/// suspended or lost at the time (the standard policy's step-down).
fn recipe_ended(who: usize, client: &Client, shared: &Shared, why: &'static str) {
    if shared.beliefs.believes(who) && suspended(client.state()) {
        shared.ended_on_suspension.fetch_add(1, Ordering::Relaxed);
    }
    shared.end(who, why);
}

/// One participant of a churn suite: turns until the suite stops, stepping down between
/// them (a new recipe at the back of the line, or the same one restarted).
async fn contend<C: Contender>(
    who: usize,
    client: Client,
    shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    churn: Arc<AtomicBool>,
    mut rng: SimRng,
) {
    let id = format!("p{who}");
    let mut contender = C::join(&client, &id);
    loop {
        let outcome = turn(
            who,
            &client,
            &mut contender,
            &shared,
            &stop,
            &churn,
            &mut rng,
        )
        .await;
        shared.end(who, "left");
        match outcome {
            Outcome::Stop => {
                shared.world.trace(&format!("p{who} leaves"));
                shared.within(who, "leaving", contender.leave()).await;
                return;
            }
            Outcome::StepDown => {
                shared.stepped_down.fetch_add(1, Ordering::Relaxed);
                if C::RESTARTS && rng.below(2) == 0 {
                    shared
                        .world
                        .trace(&format!("p{who} restarts its {}", C::NAME));
                    if shared
                        .within(who, "stepping down", contender.restart())
                        .await
                        .is_none()
                    {
                        return;
                    }
                } else {
                    shared
                        .world
                        .trace(&format!("p{who} leaves and joins again"));
                    if shared
                        .within(who, "leaving", contender.leave())
                        .await
                        .is_none()
                    {
                        return;
                    }
                    contender = C::join(&client, &id);
                }
            }
        }
    }
}

/// The participants' sessions, made first: they are the world's clients 0 to
/// `PARTICIPANTS - 1`, the ones the single-client faults hit ([`super::fault_config`]).
async fn participants(world: &World) -> Result<Vec<Client>, String> {
    let mut clients = Vec::new();
    for _ in 0..PARTICIPANTS {
        clients.push(connect(world).await?);
    }
    Ok(clients)
}

/// The admin session, and `/inv` made.
async fn setup(world: &World) -> Result<Client, String> {
    let admin = connect(world).await?;
    while let Err(e) = admin.create("/inv", b"", CreateMode::Persistent).await {
        if e.code() == Some(zkrs_client::ErrorCode::NodeExists) {
            break;
        }
        settle(&admin).await;
    }
    Ok(admin)
}

/// Who the znodes say leads, read on `admin` (a read cut by a connection loss is retried).
async fn znodes_say<C: Contender>(world: &World, admin: &Client) -> Option<String> {
    for _ in 0..5 {
        match C::leader_by_znodes(admin).await {
            Ok(said) => return said,
            Err(e) => {
                world.trace(&format!("reading the {} znodes failed: {e}", C::NAME));
                settle(admin).await;
            }
        }
    }
    None
}

/// A churn suite: 4 participants of recipe `C` under the faults; after healing, exactly
/// one leads within the bound, and it is the one the znodes say.
async fn churn_suite<C: Contender>(world: World) -> Result<(), String> {
    let clients = participants(&world).await?;
    let admin = setup(&world).await?;
    let shared = Arc::new(Shared::new(&world));
    let stop = Arc::new(AtomicBool::new(false));
    let churn = Arc::new(AtomicBool::new(true));
    let mut tasks = Vec::new();
    for (who, client) in clients.iter().enumerate() {
        tasks.push(tokio::spawn(contend::<C>(
            who,
            client.clone(),
            shared.clone(),
            stop.clone(),
            churn.clone(),
            world.rng(100 + who as u64),
        )));
    }
    world.healed().await;
    world.trace("healed");
    churn.store(false, Ordering::Relaxed);

    // Healed: exactly one leads, within a bound, and it is the one the znodes say.
    let healed_at = Instant::now();
    let converged = shared.beliefs.wait_for_believers(1, CONVERGENCE).await;
    let leaders = shared.beliefs.believers();
    match converged {
        None => shared.problem(format!(
            "after healing, not exactly one leader within {CONVERGENCE:?}: {leaders:?} believe; {}; nodes: {}",
            listings(&world, C::PATH),
            owners(&admin, C::PATH, &clients).await
        )),
        Some(took) => {
            world.trace(&format!(
                "one leader, p{}, {} ms after healing",
                leaders[0],
                took.as_millis()
            ));
            let said = znodes_say::<C>(&world, &admin).await;
            let want = format!("p{}", leaders[0]);
            if said.as_deref() != Some(want.as_str()) {
                shared.problem(format!(
                    "after healing, participant {want} believes it leads, the znodes say {said:?}; {}",
                    listings(&world, C::PATH)
                ));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    }
    let extra = match converged {
        Some(took) => format!("one leader {} ms after healing", took.as_millis()),
        None => format!(
            "no single leader {} ms after healing",
            healed_at.elapsed().as_millis()
        ),
    };
    let verdict = shared.verdict(C::NAME, extra);
    for c in clients {
        let _ = c.close().await;
    }
    let _ = admin.close().await;
    verdict
}

/// Each child of `dir` (read on `admin`): its data and whose session owns it.
async fn owners(admin: &Client, dir: &str, clients: &[Client]) -> String {
    let Ok(children) = admin.get_children(dir).await else {
        return "(no listing)".into();
    };
    let mut out = Vec::new();
    for name in children.iter() {
        let path = format!("{dir}/{name}");
        let text = match admin.get_data(&path).await {
            Ok((data, stat)) => {
                let owner = clients
                    .iter()
                    .position(|c| c.session_id() == stat.ephemeral_owner)
                    .map_or(format!("session {:x}", stat.ephemeral_owner), |who| {
                        format!("p{who}'s session")
                    });
                format!("{name} {:?} ({owner})", String::from_utf8_lossy(&data))
            }
            Err(e) => format!("{name} ({e})"),
        };
        out.push(text);
    }
    out.join(", ")
}

/// Each member's children of `dir`, for a violation's report.
fn listings(world: &World, dir: &str) -> String {
    (0..world.members())
        .map(|m| format!("member {m}: {:?}", world.children_on(m, dir)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Ends the belief when the leadership task's future ends or is dropped.
struct EndOnDrop {
    who: usize,
    client: Client,
    shared: Arc<Shared>,
    why: &'static str,
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        recipe_ended(self.who, &self.client, &self.shared, self.why);
    }
}

/// One term of a selector's leadership: believes (if the context says it leads) until the
/// term is over or the selector drops the future (how it ends a cancelled term: no cancel
/// grace). The connection's state is not looked at: a suspension ends the belief only if
/// the selector cancels the term.
async fn term(ctx: LeaderContext, who: usize, shared: Arc<Shared>, length: Duration) {
    if !ctx.is_leader() {
        shared.world.trace(&format!(
            "p{who} term {} starts, but the context says it does not lead",
            ctx.term()
        ));
        return;
    }
    shared.begin(who, ctx.session_id());
    let mut end = EndOnDrop {
        who,
        client: ctx.client().clone(),
        shared,
        why: "cancelled (task dropped)",
    };
    // Unlike the real-server suite, no branch waits on `ctx.cancelled()`: with no cancel
    // grace the selector drops this future in the same step that cancels the term (before
    // it releases the lock), so the drop ends the belief at the same instant. Waiting on
    // the context's watch channel as well would make the trace depend on which of two tasks
    // that channel wakes first, and tokio picks that with its own unseeded random numbers.
    tokio::time::sleep(length).await;
    end.why = "term over";
}

/// The selector suite: 4 `LeaderSelector`s with auto-requeue and short terms; after
/// healing, a leader within the bound.
async fn selector_suite(world: World) -> Result<(), String> {
    let clients = participants(&world).await?;
    let _admin = setup(&world).await?;
    let shared = Arc::new(Shared::new(&world));
    let mut selectors = Vec::new();
    for (who, client) in clients.iter().enumerate() {
        let shared = shared.clone();
        let rng = Mutex::new(world.rng(100 + who as u64));
        selectors.push(
            LeaderSelector::builder(client, "/inv/selector", move |ctx| {
                let length = Duration::from_millis(rng.lock().unwrap().between(20, 300));
                term(ctx, who, shared.clone(), length)
            })
            .id(format!("p{who}"))
            .auto_requeue(true)
            .start()
            .expect("a valid path"),
        );
    }
    world.healed().await;
    world.trace("healed");

    // Healed: a leader within the bound (terms are short, so it changes hands all the
    // time; one at a time is the safety check).
    let converged = shared.beliefs.wait_for_believers(1, CONVERGENCE).await;
    match converged {
        None => shared.problem(format!(
            "after healing, no leader within {CONVERGENCE:?}: {:?} believe; {}",
            shared.beliefs.believers(),
            listings(&world, "/inv/selector")
        )),
        Some(took) => world.trace(&format!(
            "one leader, {:?}, {} ms after healing",
            shared.beliefs.believers(),
            took.as_millis()
        )),
    }
    for (who, selector) in selectors.into_iter().enumerate() {
        shared.world.trace(&format!("p{who} closes its selector"));
        shared.within(who, "closing", selector.close()).await;
    }
    let extra = match converged {
        Some(took) => format!("one leader {} ms after healing", took.as_millis()),
        None => "no leader after healing".to_string(),
    };
    let verdict = shared.verdict("selector", extra);
    for c in clients {
        let _ = c.close().await;
    }
    verdict
}

/// Runs leadership suite `name` (`latch`, `election`, `master`, `selector`) in `world`.
pub async fn run(world: World, name: &str) -> Result<(), String> {
    match name {
        "latch" => churn_suite::<Latch>(world).await,
        "election" => churn_suite::<Election>(world).await,
        "master" => churn_suite::<Master>(world).await,
        "selector" => selector_suite(world).await,
        other => Err(format!("no leadership suite named {other}")),
    }
}
