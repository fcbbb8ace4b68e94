//! `lock PATH [--timeout MS] -- CMD...`: run a command while holding a Curator-compatible
//! `InterProcessMutex`.
//!
//! The one rule: CMD never runs without the lock. So CMD starts only after the acquire
//! succeeded, is stopped as soon as the lock may be lost (the guard's `lost()`: under the
//! default session-deadline policy, when a suspension reaches the instant the server could
//! have expired the session, less a tenth of the session timeout; under `--policy standard`,
//! as soon as the connection is suspended), is stopped before the lock is released on
//! SIGINT/SIGTERM/SIGHUP, and is killed by a watchdog if zkctl itself dies (see
//! [`crate::child`]). CMD gets the lock's fencing token in `ZKRS_FENCING_TOKEN`.

use std::time::Duration;

use zkrs_client::Client;
use zkrs_recipes::framework::ConnectionStatePolicy;
use zkrs_recipes::lock::{InterProcessMutex, LockGuard};

use crate::args::{Globals, HoldPolicy, LockArgs};
use crate::child::{exit_code, Supervised};
use crate::commands::hold::{wait, with_session, End};
use crate::failure::{Failure, Outcome, ZkMessage, EXIT_LOCK_LOST, EXIT_LOCK_TIMEOUT};
use crate::identity;
use crate::output::note;
use crate::signals::Shutdown;

/// Acquires the lock, runs `argv`, releases; the exit code is the command's.
pub async fn run(g: &Globals, a: &LockArgs) -> Outcome {
    let (path, timeout, argv) = (a.path.as_str(), a.timeout, &a.command);
    let grace = a.grace.or_default(g.session_timeout);
    // Check the path here: the recipes would report it with their node name appended (and
    // the latch retries a refused create forever).
    zkrs_client::validate_path(path)?;
    let policy = recipe_policy(a.policy.policy);
    with_session(g, async |client, shutdown| {
        hold(client, path, timeout, policy, grace, argv, shutdown).await
    })
    .await
}

/// The recipes' policy for `--policy`.
pub(crate) fn recipe_policy(policy: HoldPolicy) -> ConnectionStatePolicy {
    match policy {
        HoldPolicy::Standard => ConnectionStatePolicy::Standard,
        HoldPolicy::SessionDeadline => ConnectionStatePolicy::SessionDeadline,
        HoldPolicy::SessionOnly => ConnectionStatePolicy::SessionOnly,
    }
}

async fn hold(
    client: &Client,
    path: &str,
    timeout: Option<Duration>,
    policy: ConnectionStatePolicy,
    grace: Duration,
    argv: &[String],
    shutdown: &mut Shutdown,
) -> Outcome {
    // The node's data names the holder, for whoever lists the lock.
    let mutex = InterProcessMutex::builder(client, path)
        .data(identity::default_id())
        .policy(policy)
        .build()?;
    let acquire = async {
        match timeout {
            Some(t) => mutex.try_acquire(t).await,
            None => mutex.acquire().await.map(Some),
        }
    };
    // Dropping the acquire on a signal is safe: the recipe deletes its node.
    let guard = tokio::select! {
        got = acquire => got?,
        signal = shutdown.recv() => return Ok(signal.exit_code()),
    };
    let Some(guard) = guard else {
        let ms = timeout.unwrap_or_default().as_millis();
        return Err(Failure::Message(
            format!("timed out after {ms} ms waiting for the lock at {path}"),
            EXIT_LOCK_TIMEOUT,
        ));
    };
    if !guard.is_held() {
        // Lost between the acquire and now (the connection dropped): do not start at all.
        drop(guard);
        return Err(Failure::Message(
            format!("lost the lock at {path} before the command started"),
            EXIT_LOCK_LOST,
        ));
    }
    let token = guard.fencing_token().to_string();
    let env = [
        ("ZKCTL_LOCK_NODE", guard.path()),
        ("ZKRS_FENCING_TOKEN", &token),
    ];
    let mut child = match Supervised::spawn(argv, &env) {
        Ok(child) => child,
        Err(e) => {
            release(client, guard).await;
            return Err(e);
        }
    };
    match wait(&mut child, guard.lost(), shutdown).await {
        End::Exited(status) => {
            let status = status?;
            release(client, guard).await;
            Ok(exit_code(status))
        }
        End::Lost => {
            note!(
                "zkctl: lost the lock at {path} (connection down past the policy's limit, or session lost); stopping pid {}",
                child.pid()
            );
            child.stop(grace, Some(shutdown)).await?;
            // The node goes with the session (closed next) or is deleted on reconnect.
            drop(guard);
            Err(Failure::Message(
                format!("lost the lock at {path}; the command was stopped"),
                EXIT_LOCK_LOST,
            ))
        }
        End::Signal(signal) => {
            note!(
                "zkctl: {}: stopping pid {}, then releasing {path}",
                signal.name,
                child.pid()
            );
            child.stop(grace, Some(shutdown)).await?;
            release(client, guard).await;
            Ok(signal.exit_code())
        }
    }
}

/// Releases the lock, waiting at most a session timeout for the server: if it cannot be
/// reached, the node goes when the session expires anyway.
async fn release(client: &Client, guard: LockGuard) {
    let node = guard.path().to_string();
    match tokio::time::timeout(client.session_timeout(), guard.release()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => note!(
            "zkctl: releasing {node}: {} (it goes with the session)",
            ZkMessage(&e)
        ),
        Err(_) => {
            note!("zkctl: could not confirm the release of {node}; it goes when the session ends")
        }
    }
}
