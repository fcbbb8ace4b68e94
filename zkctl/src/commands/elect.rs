//! `elect PATH [--id ID] [--once] -- CMD...`: run a command only while leading a
//! Curator-compatible `LeaderLatch`.
//!
//! The rule, as for `lock`: CMD never runs without the leadership. It starts when the latch
//! says we lead, is stopped as soon as the latch says we do not (under the default
//! session-deadline policy: when a suspension reaches the instant the server could have
//! expired the session, less a margin, before another participant can take over; under
//! `--policy standard`, as soon as the connection is suspended), is stopped before leaving on
//! SIGINT/SIGTERM/SIGHUP, and is killed by a watchdog if zkctl dies (see [`crate::child`]).
//! CMD gets the leadership's fencing token in `ZKRS_FENCING_TOKEN`.
//!
//! Leadership is followed through `LeaderLatch::events`, which delivers every transition in
//! order. This command runs on a current-thread runtime, so subscribing right after
//! the builder's `start()` happens before the latch's task first runs: no transition is
//! missed.

use std::process::ExitStatus;
use std::time::Duration;

use zkrs_client::Client;
use zkrs_client::EventStream;
use zkrs_recipes::leader::LeadershipEvent;
use zkrs_recipes::leader::{CloseMode, LeaderLatch};

use super::lock::recipe_policy;
use crate::args::{ElectArgs, Globals};
use crate::child::{exit_code, Supervised};
use crate::commands::hold::{wait, with_session, End};
use crate::failure::{Failure, Outcome, ZkMessage};
use crate::identity;
use crate::output::note;
use crate::signals::{Shutdown, Terminate};
use zkrs_recipes::framework::ConnectionStatePolicy;

/// After CMD exits on its own (without `--once`), how long zkctl waits before rejoining the
/// election, so a command that fails at once does not spin.
const REJOIN_DELAY: Duration = Duration::from_secs(1);

/// Takes part in the election until interrupted (or, with `once`, until CMD has run once).
pub async fn run(g: &Globals, a: &ElectArgs) -> Outcome {
    let (path, once, policy, argv) = (a.path.as_str(), a.once, a.policy.policy, &a.command);
    let grace = a.grace.or_default(g.session_timeout);
    // Check the path here: the recipes would report it with their node name appended (and
    // the latch retries a refused create forever).
    zkrs_client::validate_path(path)?;
    let id = a.id.clone().unwrap_or_else(identity::default_id);
    with_session(g, async |client, shutdown| {
        let mut election = Election {
            client,
            path,
            id: &id,
            policy: recipe_policy(policy),
            grace,
            argv,
            shutdown,
        };
        election.run(once).await
    })
    .await
}

struct Election<'a> {
    client: &'a Client,
    path: &'a str,
    id: &'a str,
    policy: ConnectionStatePolicy,
    grace: Duration,
    argv: &'a [String],
    shutdown: &'a mut Shutdown,
}

impl Election<'_> {
    /// One latch per membership: CMD exiting on its own ends a membership (leadership passes
    /// on), losing leadership does not (the latch stays in line).
    async fn run(&mut self, once: bool) -> Outcome {
        loop {
            let latch = LeaderLatch::builder(self.client, self.path)
                .id(self.id)
                .policy(self.policy)
                .start()?;
            let mut changes = latch.events();
            note!("zkctl: joined the election at {} as {}", self.path, self.id);
            match self.membership(&latch, &mut changes).await {
                Ok(status) => {
                    let code = exit_code(status);
                    self.leave(latch).await;
                    if once {
                        return Ok(code);
                    }
                    note!("zkctl: the command exited with {code}; rejoining the election");
                    tokio::select! {
                        _ = tokio::time::sleep(REJOIN_DELAY) => {}
                        signal = self.shutdown.recv() => return Ok(signal.exit_code()),
                    }
                }
                Err(Stop::Signal(signal)) => {
                    note!(
                        "zkctl: {}: leaving the election at {}",
                        signal.name,
                        self.path
                    );
                    self.leave(latch).await;
                    return Ok(signal.exit_code());
                }
                Err(Stop::Failed(e)) => {
                    self.leave(latch).await;
                    return Err(e);
                }
            }
        }
    }

    /// Waits for leadership and runs CMD while leading, as often as leadership comes back,
    /// until CMD exits on its own (its status) or zkctl must stop.
    async fn membership(
        &mut self,
        latch: &LeaderLatch,
        changes: &mut EventStream<LeadershipEvent>,
    ) -> Result<ExitStatus, Stop> {
        let mut leading = false;
        loop {
            while !leading {
                tokio::select! {
                    change = changes.next() => match change {
                        Some(LeadershipEvent::Lost) => leading = false,
                        // Gained, or transitions missed: look.
                        Some(_) => leading = latch.is_leader(),
                        None => return Err(Stop::Failed(Failure::msg(format!(
                            "the election at {} ended (the session was closed)", self.path
                        )))),
                    },
                    signal = self.shutdown.recv() => return Err(Stop::Signal(signal)),
                }
            }
            if !latch.is_leader() {
                // Lost again already: that transition is queued; do not start.
                leading = false;
                continue;
            }
            let node = latch.node_path().unwrap_or_default();
            let token = latch
                .fencing_token()
                .map(|t| t.to_string())
                .unwrap_or_default();
            note!(
                "zkctl: leading {} as {} ({node}); starting the command",
                self.path,
                self.id
            );
            let env = [
                ("ZKCTL_ELECTION_ID", self.id),
                ("ZKCTL_ELECTION_NODE", &node),
                ("ZKRS_FENCING_TOKEN", &token),
            ];
            let mut child = Supervised::spawn(self.argv, &env).map_err(Stop::Failed)?;
            match wait(&mut child, lost(changes), self.shutdown).await {
                End::Exited(status) => return status.map_err(|e| Stop::Failed(e.into())),
                End::Lost => {
                    note!(
                        "zkctl: lost the leadership of {}; stopping pid {} and staying in line",
                        self.path,
                        child.pid()
                    );
                    self.stop(&mut child).await?;
                    leading = false;
                }
                End::Signal(signal) => {
                    note!("zkctl: {}: stopping pid {}", signal.name, child.pid());
                    self.stop(&mut child).await?;
                    return Err(Stop::Signal(signal));
                }
            }
        }
    }

    async fn stop(&mut self, child: &mut Supervised) -> Result<ExitStatus, Stop> {
        child
            .stop(self.grace, Some(self.shutdown))
            .await
            .map_err(|e| Stop::Failed(e.into()))
    }

    /// Leaves the election: the node is deleted now, so the next participant leads at once.
    /// Bounded by the session timeout (an unreachable server expires the node anyway).
    async fn leave(&self, latch: LeaderLatch) {
        let closing = latch.close_with(CloseMode::Silent);
        match tokio::time::timeout(self.client.session_timeout(), closing).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => note!("zkctl: leaving {}: {}", self.path, ZkMessage(&e)),
            Err(_) => note!(
                "zkctl: could not confirm leaving {}; the node goes when the session ends",
                self.path
            ),
        }
    }
}

/// Why a membership stopped early.
enum Stop {
    Signal(Terminate),
    Failed(Failure),
}

/// Resolves when leadership is lost (or the latch is gone).
async fn lost(changes: &mut EventStream<LeadershipEvent>) {
    while let Some(event) = changes.next().await {
        if event == LeadershipEvent::Lost {
            return;
        }
    }
}
