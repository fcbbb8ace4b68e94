//! What the commands that hold something while CMD runs share (`lock`, `elect`, `barrier`,
//! `member`, `service register`): the session they hold it in ([`with_session`]) and how
//! CMD's run ends ([`wait`], [`run_to_end`]).

use std::future::Future;
use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use zkrs_client::Client;

use crate::args::Globals;
use crate::child::{exit_code, Supervised};
use crate::connection::{close, connect};
use crate::failure::Outcome;
use crate::output::note;
use crate::signals::{Shutdown, Terminate};

/// Listens for termination requests, connects, runs `body` on the session, closes it.
///
/// The signals are listened to before connecting, so a request is handled from the start
/// and never kills zkctl outright (a signal while connecting exits with its code). Closing
/// the session deletes at once any ephemeral node the body left behind.
pub async fn with_session(
    g: &Globals,
    body: impl AsyncFnOnce(&Client, &mut Shutdown) -> Outcome,
) -> Outcome {
    let mut shutdown = Shutdown::install()?;
    let client = tokio::select! {
        client = connect(g) => client?,
        signal = shutdown.recv() => return Ok(signal.exit_code()),
    };
    let result = body(&client, &mut shutdown).await;
    close(&client).await;
    result
}

/// How CMD's run ended.
pub enum End {
    /// CMD exited on its own.
    Exited(io::Result<ExitStatus>),
    /// What was held (the lock, the leadership) was lost first.
    Lost,
    /// A termination request came first.
    Signal(Terminate),
}

/// Waits for CMD to exit, `lost` to complete or a termination request, whichever is first.
pub async fn wait(
    child: &mut Supervised,
    lost: impl Future<Output = ()>,
    shutdown: &mut Shutdown,
) -> End {
    tokio::select! {
        status = child.wait() => End::Exited(status),
        _ = lost => End::Lost,
        signal = shutdown.recv() => End::Signal(signal),
    }
}

/// How [`run_to_end`] ended.
pub enum Ran {
    /// CMD exited with this code.
    Exited(u8),
    /// A termination request came, and CMD was stopped.
    Stopped(Terminate),
}

/// Runs CMD to its end, for a command that holds nothing that can be lost. On a termination
/// request CMD is stopped (SIGTERM to its group, SIGKILL after `grace`) and a line on stderr
/// says so, then what zkctl does next (`then`).
pub async fn run_to_end(
    child: &mut Supervised,
    grace: Duration,
    shutdown: &mut Shutdown,
    then: &str,
) -> io::Result<Ran> {
    match wait(child, std::future::pending(), shutdown).await {
        End::Exited(status) => Ok(Ran::Exited(exit_code(status?))),
        End::Lost => unreachable!("nothing to lose: the future never completes"),
        End::Signal(signal) => {
            note!(
                "zkctl: {}: stopping pid {}, then {then}",
                signal.name,
                child.pid()
            );
            if let Err(e) = child.stop(grace, Some(shutdown)).await {
                note!("zkctl: stopping pid {}: {e}", child.pid());
            }
            Ok(Ran::Stopped(signal))
        }
    }
}
