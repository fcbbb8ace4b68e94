//! `barrier PATH --count N [--timeout MS] -- CMD...`: a Curator-compatible double barrier
//! around a command: CMD starts once N members (zkctl or Java) have entered, and zkctl
//! returns once all of them have left.

use std::time::Duration;

use zkr_recipes::barrier::DistributedDoubleBarrier;

use crate::args::Globals;
use crate::child::{exit_code, Supervised};
use crate::commands::{close, connect};
use crate::failure::{Failure, Outcome, EXIT_LOCK_TIMEOUT};
use crate::signals::Shutdown;

/// Enters, runs `argv`, leaves; the exit code is the command's (3 on a timeout).
pub async fn run(
    g: &Globals,
    path: &str,
    count: usize,
    timeout: Option<Duration>,
    grace: Duration,
    argv: &[String],
) -> Outcome {
    zkr_client::validate_path(path, false)?;
    let mut shutdown = Shutdown::install()?;
    let client = tokio::select! {
        client = connect(g) => client?,
        signal = shutdown.recv() => return Ok(signal.exit_code()),
    };
    let barrier = DistributedDoubleBarrier::new(&client, path, count);
    let timed_out = |what: &str| {
        Failure::Message(
            format!("{path}: not all {count} members {what} within the timeout"),
            EXIT_LOCK_TIMEOUT,
        )
    };
    // Dropping the enter on a signal is safe: the recipe deletes our member node.
    let entered = tokio::select! {
        entered = barrier.enter(timeout) => entered,
        signal = shutdown.recv() => {
            close(&client).await;
            return Ok(signal.exit_code());
        }
    };
    match entered {
        Ok(true) => {}
        Ok(false) => {
            close(&client).await;
            return Err(timed_out("entered"));
        }
        Err(e) => {
            close(&client).await;
            return Err(e.into());
        }
    }
    let ran = match Supervised::spawn(argv, &[]) {
        Err(e) => Err(e),
        Ok(mut child) => tokio::select! {
            status = child.wait() => status.map(exit_code).map_err(Failure::from),
            signal = shutdown.recv() => {
                eprintln!("zkctl: {}: stopping pid {}, then leaving {path}", signal.name, child.pid());
                child.stop(grace, Some(&mut shutdown)).await?;
                Ok(signal.exit_code())
            }
        },
    };
    let left = barrier.leave(timeout).await;
    close(&client).await;
    let code = ran?;
    match left {
        Ok(true) => Ok(code),
        Ok(false) => Err(timed_out("left")),
        Err(e) => Err(e.into()),
    }
}
