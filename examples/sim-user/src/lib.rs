//! A service with a job that must run on one instance at a time, in two versions: the
//! careful one goes on duty while a `LeaderLatch` says it leads on a connection that is not
//! suspended; the hasty one goes on duty once its ephemeral node is made and never looks
//! again (after its session expires, another instance makes the node and both are on duty).

use std::time::Duration;

use zkrs_client::{Client, ConnectionState, CreateMode};
use zkrs_recipes::leader::LeaderLatch;

/// Runs instance `id` until its task is dropped: `on_duty(true)` when it may run the job,
/// `on_duty(false)` as soon as it may not.
pub async fn careful(client: Client, id: usize, on_duty: impl Fn(bool)) {
    let Ok(latch) = LeaderLatch::builder(&client, "/duty/latch")
        .id(format!("instance-{id}"))
        .start()
    else {
        return;
    };
    let mut leads = latch.leadership();
    let mut states = client.state_changes();
    loop {
        if leads.wait_for(|&l| l).await.is_none() {
            return;
        }
        if !matches!(
            client.state(),
            ConnectionState::Connected | ConnectionState::Reconnected
        ) {
            if states.next().await.is_none() {
                return;
            }
            continue;
        }
        on_duty(true);
        tokio::select! {
            biased;
            _ = states.next() => {}
            _ = leads.wait_for(|&l| !l) => {}
        }
        on_duty(false);
    }
}

/// The defect: on duty once its node is made, for good (it never notices that its session
/// expired and its node went with it).
pub async fn hasty(client: Client, _id: usize, on_duty: impl Fn(bool)) {
    let _ = client.create("/duty", b"", CreateMode::Persistent).await;
    loop {
        let made = match client
            .create("/duty/lease", b"", CreateMode::Ephemeral)
            .await
        {
            Ok(_) => true,
            // Made by an attempt whose reply was lost? Ours if our session owns it.
            Err(_) => matches!(
                client.exists("/duty/lease").await,
                Ok(Some(stat)) if stat.ephemeral_owner == client.session_id()
            ),
        };
        if made {
            on_duty(true);
            return std::future::pending().await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
