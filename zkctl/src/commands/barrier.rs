//! `barrier PATH --count N [--timeout MS] -- CMD...`: a Curator-compatible double barrier
//! around a command: CMD starts once N members (zkctl or Java) have entered, and zkctl
//! returns once all of them have left.
//!
//! CMD runs as under `lock` (see [`crate::child`]): in its own process group, stopped with
//! SIGTERM then SIGKILL after `--grace` when zkctl gets SIGINT/SIGTERM/SIGHUP, killed by a
//! watchdog if zkctl dies. A member that gives up (a signal, or CMD cannot start) does not wait
//! for the others: its node is deleted at once (the session is closed), so nobody waits for it.

use std::time::Duration;

use zkrs_client::Client;
use zkrs_recipes::barrier::DistributedDoubleBarrier;

use crate::args::{BarrierArgs, Globals};
use crate::child::Supervised;
use crate::commands::hold::{run_to_end, with_session, Ran};
use crate::failure::{Failure, Outcome, EXIT_LOCK_TIMEOUT};
use crate::output::note;
use crate::signals::Shutdown;

/// Enters, runs `argv`, leaves; the exit code is the command's (3 on a timeout).
pub async fn run(g: &Globals, a: &BarrierArgs) -> Outcome {
    let (path, count, timeout, argv) = (a.path.as_str(), a.count, a.timeout, &a.command);
    let grace = a.grace.or_default(g.session_timeout);
    zkrs_client::validate_path(path)?;
    with_session(g, async |client, shutdown| {
        meet(client, path, count, timeout, grace, argv, shutdown).await
    })
    .await
}

async fn meet(
    client: &Client,
    path: &str,
    count: usize,
    timeout: Option<Duration>,
    grace: Duration,
    argv: &[String],
    shutdown: &mut Shutdown,
) -> Outcome {
    let barrier = DistributedDoubleBarrier::builder(client, path, count).build()?;
    let timed_out = |what: &str| {
        let within = match timeout {
            Some(t) => format!(" within {} ms", t.as_millis()),
            None => String::new(),
        };
        Failure::Message(
            format!("{path}: not all {count} members {what}{within}"),
            EXIT_LOCK_TIMEOUT,
        )
    };
    // Dropping the enter on a signal is safe: the recipe deletes our member node.
    let entered = tokio::select! {
        entered = barrier.enter(timeout) => entered?,
        signal = shutdown.recv() => return Ok(signal.exit_code()),
    };
    if !entered {
        // The recipe deleted our node: the others do not count us.
        return Err(timed_out("entered"));
    }
    let node = format!("{}/{}", path.trim_end_matches('/'), barrier.node_name());
    // If CMD cannot start (exit 127) we leave at once, through the session's close.
    let mut child = Supervised::spawn(argv, &[("ZKCTL_BARRIER_NODE", &node)])?;
    let then = format!("leaving {path} without waiting for the others");
    let code = match run_to_end(&mut child, grace, shutdown, &then).await? {
        Ran::Exited(code) => code,
        Ran::Stopped(signal) => return Ok(signal.exit_code()),
    };
    // Leaving waits for every member to leave; a signal meanwhile leaves at once.
    let left = tokio::select! {
        left = barrier.leave(timeout) => left?,
        signal = shutdown.recv() => {
            note!("zkctl: {}: leaving {path} without waiting for the others", signal.name);
            return Ok(signal.exit_code());
        }
    };
    if left {
        Ok(code)
    } else {
        Err(timed_out("left"))
    }
}
