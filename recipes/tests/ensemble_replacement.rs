//! Issue 24's main check: a rolling replacement of every member of a real, reconfigurable
//! ZooKeeper 3.8 ensemble. Each of the three original members is replaced by a new one (new
//! ports), one at a time: the new member starts and is added by `reconfig`, then the old one
//! is removed by `reconfig` and killed.
//!
//! A client that follows the ensemble (`ClientBuilder::follow_ensemble`) keeps its session
//! through the whole replacement: its `InterProcessMutex` (Curator's standard policy) stays
//! held (its node still there, owned by its session). The followers are replaced first: the
//! client moves off each before it goes without being suspended at all (issue 36: make
//! before break), so the lock is never reported lost through them. The leader goes last:
//! its removal ends its term, and every member drops its clients while the next leader
//! takes over, a `Suspended` no client can avoid (it must still be shorter than the session
//! timeout). A client without the tracker, in the same test, loses its session once none of
//! its hosts is left (so the test can tell the two apart). Every wait has a deadline.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::block_in_place;
use zkrs_client::{Client, ClientBuilder, ConnectionState, ErrorCode, ErrorKind, Reconfig};
use zkrs_recipes::{framework::ConnectionStatePolicy, lock::InterProcessMutex};
use zkrs_testkit::{ServerOptions, TestingCluster, SUPERUSER};

const DEADLINE: Duration = Duration::from_secs(60);
const SESSION_TIMEOUT: Duration = Duration::from_secs(8);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {DEADLINE:?}"))
}

fn address(cluster: &TestingCluster, i: usize) -> String {
    format!("127.0.0.1:{}", cluster.member_port(i))
}

fn connect_string(cluster: &TestingCluster, members: &[usize]) -> String {
    members
        .iter()
        .map(|&i| address(cluster, i))
        .collect::<Vec<_>>()
        .join(",")
}

/// Applies `change` as the superuser through `members`, until the configuration has
/// member `id` (or no longer has it). Removing the leader can cut the reply short
/// (`ConnectionLoss`, a new election): then the configuration is read back, as the docs say.
async fn reconfig(
    cluster: &TestingCluster,
    members: &[usize],
    change: Reconfig,
    id: u64,
    present: bool,
) {
    let (user, password) = SUPERUSER;
    let what = format!(
        "reconfig until member {id} is {}",
        if present { "in" } else { "out" }
    );
    within(&what, async {
        let mut applied = false;
        loop {
            let admin = match ClientBuilder::new(connect_string(cluster, members))
                .auth("digest", format!("{user}:{password}"))
                .connect()
                .await
            {
                Ok(admin) => admin,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let done = |admin: &Client| {
                let admin = admin.clone();
                async move {
                    matches!(admin.get_config().await, Ok((config, _)) if config.member(id).is_some() == present)
                }
            };
            if done(&admin).await {
                admin.close().await.ok();
                return;
            }
            if !applied {
                match admin.reconfig(&change).await {
                    Ok(_) => applied = true,
                    // Cut short, or another change under way: read back and try again.
                    Err(e) if e.kind() == ErrorKind::ConnectionLoss => {}
                    Err(e) if e.code() == Some(ErrorCode::ReconfigInProgress) => {}
                    // A change cut short may have been applied after all: then the
                    // configuration says so.
                    Err(e) if done(&admin).await => drop(e),
                    Err(e) => panic!("{what}: {e}"),
                }
            }
            admin.close().await.ok();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
}

/// Waits until the client's hosts are exactly these members.
async fn wait_hosts(client: &Client, cluster: &TestingCluster, members: &[usize]) {
    let mut expected: Vec<String> = members.iter().map(|&i| address(cluster, i)).collect();
    expected.sort();
    tokio::time::timeout(DEADLINE, async {
        loop {
            let mut hosts = client.hosts();
            hosts.sort();
            if hosts == expected {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the tracked client's hosts: still {:?}, not {expected:?}, after {DEADLINE:?}",
            client.hosts()
        )
    });
}

/// The session owning the lock node, read through `client`: a read that meets a
/// connection loss (the client's member just left) is tried again, as an application would;
/// any other error, or a lost session, is returned.
async fn lock_owner(client: &Client, path: &str) -> zkrs_client::Result<i64> {
    within("reading the lock node", async {
        loop {
            match client.exists(path).await {
                Ok(stat) => return Ok(stat.map_or(0, |s| s.ephemeral_owner)),
                Err(e) if e.kind() == ErrorKind::ConnectionLoss => {
                    tokio::time::sleep(Duration::from_millis(50)).await
                }
                Err(e) => return Err(e),
            }
        }
    })
    .await
}

/// Waits until member `old` no longer has a connection of session `session` (the tracked
/// client moved its session to a member of the new list, then closed its old connection).
async fn wait_moved_off(cluster: &TestingCluster, old: usize, session: i64) {
    let sid = format!("sid={session:#x}");
    within("the tracked client leaving the removed member", async {
        loop {
            let cons = block_in_place(|| {
                zkrs_testkit::four_letter_word(cluster.member_address(old), "cons", DEADLINE)
            });
            match cons {
                Ok(cons) if cons.lines().any(|l| l.contains(&sid)) => {}
                _ => return,
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
}

/// Every state change of `client`, with when it came.
fn record_states(client: &Client) -> Arc<Mutex<Vec<(Instant, ConnectionState)>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut states = client.state_changes();
    let kept = log.clone();
    tokio::spawn(async move {
        while let Some(change) = states.next().await {
            kept.lock().unwrap().push((Instant::now(), change.state));
        }
    });
    log
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tracked_client_keeps_its_session_and_lock_through_a_rolling_replacement() {
    let mut cluster =
        block_in_place(|| TestingCluster::start_with(3, ServerOptions::new().reconfig(true)))
            .expect("start ZooKeeper (run scripts/install-zookeeper.sh)");
    let original = connect_string(&cluster, &[0, 1, 2]);
    // Followers first, the leader last. Replacing a follower costs the tracked client no
    // suspension: it moves its session off the member before it goes (make before break).
    // Removing the leader ends its term: every member drops its clients while the next
    // leader takes over (ZooKeeper's election), so a suspension there is the ensemble's.
    let first_leader = block_in_place(|| cluster.wait_for_leader(DEADLINE)).unwrap();
    let mut order: Vec<usize> = (0..3).filter(|&m| m != first_leader).collect();
    order.push(first_leader);
    // The tracked client starts on the first member to go (its tracker's first reading
    // adds the others without moving it), so that it has to move at least once.
    let tracked = within(
        "connecting the tracked client",
        ClientBuilder::new(address(&cluster, order[0]))
            .session_timeout(SESSION_TIMEOUT)
            .follow_ensemble(true)
            .connect(),
    )
    .await
    .unwrap();
    let untracked = within(
        "connecting the untracked client",
        ClientBuilder::new(&original)
            .session_timeout(SESSION_TIMEOUT)
            .connect(),
    )
    .await
    .unwrap();
    let session = tracked.session_id();
    let untracked_session = untracked.session_id();
    let tracked_states = record_states(&tracked);
    let untracked_states = record_states(&untracked);

    wait_hosts(&tracked, &cluster, &[0, 1, 2]).await;

    let mutex = InterProcessMutex::builder(&tracked, "/locks/rolling")
        .policy(ConnectionStatePolicy::Standard)
        .build()
        .unwrap();
    let guard = within("taking the lock", mutex.acquire()).await.unwrap();

    let mut members = vec![0, 1, 2];
    let mut suspended_by_followers = Vec::new();
    for old in order {
        let leader = block_in_place(|| cluster.wait_for_leader(DEADLINE)).unwrap();
        let changes_before = tracked_states.lock().unwrap().len();
        // A new member (new ports) joins.
        let new = block_in_place(|| cluster.add_member()).unwrap();
        let add = Reconfig::incremental().add_member(cluster.member_spec(new));
        reconfig(&cluster, &members, add, new as u64 + 1, true).await;
        members.push(new);
        wait_hosts(&tracked, &cluster, &members).await;

        // The old one leaves, and goes away.
        members.retain(|&m| m != old);
        let remove = Reconfig::incremental().remove_member(old as u64 + 1);
        reconfig(&cluster, &members, remove, old as u64 + 1, false).await;
        wait_hosts(&tracked, &cluster, &members).await;
        // A decommissioned machine goes once its clients have moved (a removed member goes
        // on serving them until it is stopped).
        wait_moved_off(&cluster, old, session).await;
        block_in_place(|| cluster.kill(old)).unwrap();

        // The tracked client still works in its session, lock held.
        let owner = lock_owner(&tracked, guard.path())
            .await
            .unwrap_or_else(|e| panic!("after replacing member {}: {e}", old + 1));
        let log: Vec<ConnectionState> = tracked_states
            .lock()
            .unwrap()
            .iter()
            .map(|(_, s)| *s)
            .collect();
        assert_eq!(
            (owner, tracked.session_id()),
            (session, session),
            "the lock node's owner and the session after replacing member {}: {log:?}",
            old + 1
        );
        let leader_changed =
            block_in_place(|| cluster.wait_for_leader(DEADLINE)).unwrap() != leader;
        eprintln!(
            "member {} replaced by {} (leader {} -> {:?}); {} moves; states {:?}",
            old + 1,
            new + 1,
            leader + 1,
            cluster.leader().map(|l| l + 1),
            tracked.metrics().session_moves,
            log
        );
        if old != leader && !leader_changed {
            suspended_by_followers.extend(log[changes_before..].iter().copied());
        }
    }
    // Under the standard policy the lock was held (never `Suspended`) through every
    // replacement of a follower, the first of which moved the tracked client.
    assert!(
        suspended_by_followers.is_empty(),
        "state changes while followers were replaced: {suspended_by_followers:?}"
    );
    assert!(tracked.metrics().session_moves >= 1);
    // None of the untracked client's hosts is left: it loses its session.
    let untracked_lost = tokio::time::timeout(SESSION_TIMEOUT + DEADLINE, async {
        loop {
            if untracked_states
                .lock()
                .unwrap()
                .iter()
                .any(|(_, s)| *s == ConnectionState::Lost)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(
        untracked_lost.is_ok(),
        "the client without the tracker should have lost session {untracked_session:#x}: {:?}",
        untracked_states.lock().unwrap()
    );

    // The tracked client: same session, the lock held, its node owned by its session, and
    // every suspension shorter than the session timeout.
    assert_eq!(tracked.session_id(), session);
    assert!(guard.is_held());
    assert_eq!(lock_owner(&tracked, guard.path()).await.unwrap(), session);
    let log = tracked_states.lock().unwrap().clone();
    assert!(
        !log.iter().any(|(_, s)| *s == ConnectionState::Lost),
        "the tracked client lost its session: {log:?}"
    );
    let mut longest = Duration::ZERO;
    let mut suspended_at = None;
    for (at, state) in &log {
        match state {
            ConnectionState::Suspended => suspended_at = suspended_at.or(Some(*at)),
            s if s.is_connected() => {
                if let Some(since) = suspended_at.take() {
                    longest = longest.max(at.duration_since(since));
                }
            }
            _ => {}
        }
    }
    assert!(
        suspended_at.is_none(),
        "still suspended at the end: {log:?}"
    );
    eprintln!(
        "tracked client: {} state changes, longest suspension {longest:?}, {} moves: {:?}",
        log.len(),
        tracked.metrics().session_moves,
        log.iter().map(|(_, s)| *s).collect::<Vec<_>>()
    );
    assert!(longest < SESSION_TIMEOUT, "{longest:?}: {log:?}");
    guard.release().await.unwrap();
    tracked.close().await.unwrap();
}
