//! Every leader recipe steps down on a suspension under the standard policy (Curator's
//! default), against a real server: each leads alone on a session of its own that reaches
//! the server through a `FaultyProxy`; the proxy cuts the session off (a partition: silence
//! both ways, new connections closed), and once the client says Suspended the recipe must
//! say it no longer leads, by its event and by `is_leader()`, within a bound well inside
//! the time the server gives the session (a third of the session timeout: the client is
//! suspended two thirds of the way in). The proxy then heals, and the recipe leads again,
//! never before the connection is back.
//!
//! The four recipes run at once, on one server with a short tick (session timeout 6 s):
//! about 5 s in all. Every wait has a deadline.

use std::time::Duration;

use tokio::time::Instant;
use zkrs_client::{Client, ClientBuilder, ConnectionState};
use zkrs_recipes::leader::{
    ElectionEvent, LeaderElection, LeaderLatch, LeaderSelector, LeadershipEvent, MasterElection,
};
use zkrs_testkit::{FaultyProxy, ServerOptions, TestingServer};

mod support;
use support::within;

/// The participants' session timeout: the server (tick 400 ms) allows up to 8 s.
const SESSION: Duration = Duration::from_secs(6);

/// How long after the client is suspended the recipe may take to step down: the server may
/// expire the session a third of the timeout after that (the read timeout is two thirds).
const STEP_DOWN: Duration = Duration::from_secs(2);

/// A leader recipe as this test drives it.
enum Recipe {
    Latch(LeaderLatch),
    Selector(LeaderSelector),
    Election(LeaderElection),
    Master(MasterElection),
}

impl Recipe {
    fn name(&self) -> &'static str {
        match self {
            Recipe::Latch(_) => "LeaderLatch",
            Recipe::Selector(_) => "LeaderSelector",
            Recipe::Election(_) => "LeaderElection",
            Recipe::Master(_) => "MasterElection",
        }
    }

    fn is_leader(&self) -> bool {
        match self {
            Recipe::Latch(r) => r.is_leader(),
            Recipe::Selector(r) => r.is_leader(),
            Recipe::Election(r) => r.is_leader(),
            Recipe::Master(r) => r.is_leader(),
        }
    }

    fn leadership(&self) -> zkrs_client::Current<bool> {
        match self {
            Recipe::Latch(r) => r.leadership(),
            Recipe::Selector(r) => r.leadership(),
            Recipe::Election(r) => r.leadership(),
            Recipe::Master(r) => r.leadership(),
        }
    }

    /// Resolves at the recipe's next event that says it no longer leads.
    async fn stepped_down(&self, events: &mut Events) {
        match events {
            Events::Leadership(stream) => loop {
                match stream.next().await {
                    Some(LeadershipEvent::Lost) => return,
                    Some(_) => {}
                    None => panic!("{}: its events ended", self.name()),
                }
            },
            // The stream holds every event since START (subscribed on the builder), so any
            // event but ELECTED would be the first election's OfferStart: the step-down is
            // the FAILED that ends the term (this test once passed without waiting for it,
            // and failed under load when the task had not yet seen the suspension).
            Events::Election(stream) => loop {
                match stream.next().await {
                    Some(ElectionEvent::Failed) => return,
                    Some(_) => {}
                    None => panic!("{}: its events ended", self.name()),
                }
            },
        }
    }

    async fn close(self) {
        let closed = match self {
            Recipe::Latch(r) => r.close().await,
            Recipe::Selector(r) => r.close().await,
            Recipe::Election(r) => r.close().await,
            Recipe::Master(r) => r.close().await,
        };
        closed.unwrap();
    }
}

/// A recipe's events.
enum Events {
    Leadership(zkrs_client::EventStream<LeadershipEvent>),
    Election(zkrs_client::EventStream<zkrs_recipes::leader::ElectionEvent>),
}

/// Starts recipe `kind` at `/suspension/<kind>` on `client`, with its events from the start.
fn start(kind: &str, client: &Client) -> (Recipe, Events) {
    let path = format!("/suspension/{kind}");
    match kind {
        "latch" => {
            let r = LeaderLatch::builder(client, &path).start().unwrap();
            let events = Events::Leadership(r.events());
            (Recipe::Latch(r), events)
        }
        "selector" => {
            let r = LeaderSelector::builder(client, &path, |ctx| async move {
                // Leads until the selector cancels the term.
                ctx.cancelled().await;
            })
            .auto_requeue(true)
            .start()
            .unwrap();
            let events = Events::Leadership(r.events());
            (Recipe::Selector(r), events)
        }
        "election" => {
            let builder = LeaderElection::builder(client, &path);
            let events = Events::Election(builder.events());
            (Recipe::Election(builder.start().unwrap()), events)
        }
        "master" => {
            let r = MasterElection::builder(client, &path).start().unwrap();
            let events = Events::Leadership(r.events());
            (Recipe::Master(r), events)
        }
        other => panic!("no recipe {other}"),
    }
}

/// Waits (with a deadline) for `state` on `client`'s changes.
async fn state(changes: &mut zkrs_client::StateChanges, want: fn(ConnectionState) -> bool) {
    within("a connection state", async {
        while let Some(change) = changes.next().await {
            if want(change.state) {
                return;
            }
        }
        panic!("the client is gone");
    })
    .await
}

/// One recipe: leads, is cut off, steps down within [`STEP_DOWN`] of the suspension, leads
/// again once healed (and not before the connection is back). Returns how long the step
/// down took after the suspension, and how the session came back.
async fn steps_down(kind: &'static str, zk: &TestingServer) -> String {
    let proxy = FaultyProxy::start(zk.address()).unwrap();
    let client = ClientBuilder::new(proxy.connect_string())
        .session_timeout(SESSION)
        .connect()
        .await
        .unwrap();
    assert_eq!(client.session_timeout(), SESSION);
    let (recipe, mut events) = start(kind, &client);
    let name = recipe.name();
    let mut leadership = recipe.leadership();
    within(&format!("{name} leads"), leadership.wait_for(|&l| l)).await;
    assert!(recipe.is_leader());

    let mut changes = client.state_changes();
    let session = client.session_id();
    proxy.partition();
    state(&mut changes, |s| s == ConnectionState::Suspended).await;
    let suspended = Instant::now();
    let stepped = tokio::time::timeout(STEP_DOWN, recipe.stepped_down(&mut events)).await;
    let took = suspended.elapsed();
    assert!(
        stepped.is_ok(),
        "{name}: still leading {STEP_DOWN:?} after the client was suspended (is_leader {})",
        recipe.is_leader()
    );
    assert!(!recipe.is_leader(), "{name}: stepped down, yet is_leader");

    proxy.heal();
    within(&format!("{name} leads again"), leadership.wait_for(|&l| l)).await;
    assert!(
        client.state().is_connected(),
        "{name}: leads again while the client is {:?}",
        client.state()
    );
    assert!(recipe.is_leader());
    let back = if client.session_id() == session {
        "the same session"
    } else {
        "a new session"
    };
    recipe.close().await;
    let _ = client.close().await;
    format!(
        "{name}: stepped down {} ms after Suspended; leads again on {back}",
        took.as_millis()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_leader_recipe_steps_down_on_suspension() {
    let zk = TestingServer::start_with(ServerOptions::new().tick_time_ms(400)).unwrap();
    let (latch, selector, election, master) = tokio::join!(
        steps_down("latch", &zk),
        steps_down("selector", &zk),
        steps_down("election", &zk),
        steps_down("master", &zk),
    );
    for line in [latch, selector, election, master] {
        println!("{line}");
    }
}
