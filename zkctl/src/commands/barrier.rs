//! `barrier PATH --count N [--timeout MS] -- CMD...`: a Curator-compatible double barrier
//! around a command: CMD starts once N members (zkctl or Java) have entered, and zkctl
//! returns once all of them have left.
//!
//! CMD runs as under `lock` (see [`crate::child`]): in its own process group, stopped with
//! SIGTERM then SIGKILL after `--grace` when zkctl gets SIGINT/SIGTERM/SIGHUP, killed by a
//! watchdog if zkctl dies. A member that gives up (a signal, or CMD cannot start) does not wait
//! for the others: its node is deleted at once (the session is closed), so nobody waits for it.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use zkrs_client::Client;
use zkrs_recipes::barrier::DistributedDoubleBarrier;

use crate::args::Globals;
use crate::child::{exit_code, Supervised};
use crate::connection::{close, connect};
use crate::failure::{Failure, Outcome, EXIT_LOCK_TIMEOUT};
use crate::output::note;
use crate::signals::{Shutdown, Terminate};

/// Enters, runs `argv`, leaves; the exit code is the command's (3 on a timeout).
pub async fn run(
    g: &Globals,
    path: &str,
    count: usize,
    timeout: Option<Duration>,
    grace: Duration,
    argv: &[String],
) -> Outcome {
    zkrs_client::validate_path(path)?;
    // Listen first: from here on a termination request is handled, never fatal.
    let mut shutdown = Shutdown::install()?;
    let client = tokio::select! {
        client = connect(g) => client?,
        signal = shutdown.recv() => return Ok(signal.exit_code()),
    };
    let result = meet(&client, path, count, timeout, grace, argv, &mut shutdown).await;
    // Closing the session deletes our member node now if anything above left it behind.
    close(&client).await;
    result
}

/// How the command's run ended.
enum End {
    Exited(io::Result<ExitStatus>),
    Signal(Terminate),
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
    let end = tokio::select! {
        status = child.wait() => End::Exited(status),
        signal = shutdown.recv() => End::Signal(signal),
    };
    let code = match end {
        End::Exited(status) => exit_code(status?),
        End::Signal(signal) => {
            note!(
                "zkctl: {}: stopping pid {}, then leaving {path} without waiting for the others",
                signal.name,
                child.pid()
            );
            if let Err(e) = child.stop(grace, Some(shutdown)).await {
                note!("zkctl: stopping pid {}: {e}", child.pid());
            }
            return Ok(signal.exit_code());
        }
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
