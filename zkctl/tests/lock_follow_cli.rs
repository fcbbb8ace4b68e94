//! Issue 36 as an operator sees it: `zkctl --follow-ensemble lock PATH -- CMD` keeps CMD
//! running while members of a reconfigurable ZooKeeper 3.8 ensemble are replaced one at a
//! time (`reconfig` add, then remove, then the machine goes), its lock node unchanged, while
//! a second `zkctl lock PATH -- CMD2` waits in line and never runs CMD2; a `zkctl lock`
//! without `--follow-ensemble` on the same member loses its lock when the member goes.
//!
//! Every member is replaced, the followers first and the leader last: the leader's removal
//! ends its term, and every member drops its clients during the election that follows (0.3 to
//! 1.5 s here). The standard policy counts that as a loss (see
//! recipes/tests/ensemble_replacement.rs); `zkctl lock`'s default, the session-deadline
//! policy, rides it out, since the session cannot have expired yet. Every wait has a deadline.

mod support;

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use support::*;
use zkrs_client::{ClientBuilder, ErrorCode, ErrorKind, Reconfig};
use zkrs_testkit::{ServerOptions, TestingCluster, SUPERUSER};

const DEADLINE: Duration = Duration::from_secs(30);

fn address(cluster: &TestingCluster, i: usize) -> String {
    format!("127.0.0.1:{}", cluster.member_port(i))
}

/// Applies `change` as the superuser through `members`, until the configuration has member
/// `id` (or no longer has it). Removing the leader can cut the reply short (a connection loss,
/// a new election): then the configuration is read back, as the docs say.
fn reconfig(
    rt: &tokio::runtime::Runtime,
    cluster: &TestingCluster,
    members: &[usize],
    change: Reconfig,
    (id, present): (u64, bool),
) {
    let hosts: Vec<String> = members.iter().map(|&m| address(cluster, m)).collect();
    let (user, password) = SUPERUSER;
    let applied_in_time = rt.block_on(async {
        tokio::time::timeout(DEADLINE, async {
            let mut sent = false;
            loop {
                let Ok(admin) = ClientBuilder::new(hosts.join(","))
                    .auth("digest", format!("{user}:{password}"))
                    .connect()
                    .await
                else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                let done = matches!(admin.get_config().await,
                Ok((config, _)) if config.member(id).is_some() == present);
                if !done && !sent {
                    match admin.reconfig(&change).await {
                        Ok(_) => sent = true,
                        Err(e) if e.kind() == ErrorKind::ConnectionLoss => {}
                        Err(e) if e.code() == Some(ErrorCode::ReconfigInProgress) => {}
                        Err(e) => panic!("reconfig: {e}"),
                    }
                }
                admin.close().await.ok();
                if done {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await
    });
    assert!(
        applied_in_time.is_ok(),
        "member {id} not {} within {DEADLINE:?}",
        if present { "in" } else { "out" }
    );
}

/// Whether member `member` has a connection of session `session` (its `cons`).
fn connected_to(cluster: &TestingCluster, member: usize, session: i64) -> bool {
    let sid = format!("sid={session:#x}");
    zkrs_testkit::four_letter_word(cluster.member_address(member), "cons", DEADLINE)
        .map(|cons| cons.lines().any(|l| l.contains(&sid)))
        .unwrap_or(false)
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// `sh -c SCRIPT` under `zkctl [--follow-ensemble] --server SERVER lock PATH`: the script
/// writes the lock node's path to `node`, then sleeps.
fn holder(server: &str, follow: bool, path: &str, node: &Path) -> Child {
    let script = format!(
        "echo \"$ZKCTL_LOCK_NODE\" > {}; exec sleep 1000",
        node.display()
    );
    let mut args = Vec::new();
    if follow {
        args.push("--follow-ensemble");
    }
    args.extend(["lock", path, "--", "sh", "-c", &script]);
    zkctl_on(server, &args).spawn().expect("spawn zkctl")
}

#[test]
fn a_following_lock_keeps_its_command_through_member_replacements() {
    let mut cluster = TestingCluster::start_with(3, ServerOptions::new().reconfig(true))
        .expect("ZooKeeper (scripts/install-zookeeper.sh)");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dir: PathBuf = cluster.temp_dir().join("lock-follow");
    std::fs::create_dir_all(&dir).unwrap();
    let leader = cluster.wait_for_leader(DEADLINE).unwrap();
    let followers: Vec<usize> = (0..3).filter(|&m| m != leader).collect();
    // Both holders start on the first member to go.
    let first = address(&cluster, followers[0]);

    let node = dir.join("node");
    let followed = holder(&first, true, "/locks/rolling", &node);
    wait_until("the following holder's command", DEADLINE, || {
        read(&node).is_some()
    });
    let lock_node = read(&node).unwrap();
    let other_node = dir.join("other-node");
    let unfollowed = holder(&first, false, "/locks/other", &other_node);
    wait_until("the other holder's command", DEADLINE, || {
        read(&other_node).is_some()
    });
    // In line behind the first: its command must not run while the first holds the lock.
    // It starts on the leader, the last member to be replaced.
    let ran = dir.join("ran");
    let waiter = zkctl_on(
        &address(&cluster, leader),
        &[
            "--follow-ensemble",
            "lock",
            "/locks/rolling",
            "--",
            "sh",
            "-c",
            &format!("touch {}", ran.display()),
        ],
    )
    .spawn()
    .expect("spawn zkctl");

    // The observer follows the ensemble too (every original member goes), and reads again
    // after a connection loss (the leader's replacement drops every client for a moment).
    let observer = rt
        .block_on(
            ClientBuilder::new(cluster.connect_string())
                .follow_ensemble(true)
                .connect(),
        )
        .unwrap();
    let owner = |path: &str| {
        rt.block_on(async {
            tokio::time::timeout(DEADLINE, async {
                loop {
                    match observer.exists(path).await {
                        Err(e) if e.kind() == ErrorKind::ConnectionLoss => {
                            tokio::time::sleep(Duration::from_millis(100)).await
                        }
                        found => return found.unwrap().map(|s| s.ephemeral_owner),
                    }
                }
            })
            .await
            .expect("reading the lock node in time")
        })
    };
    let session = owner(&lock_node).expect("the lock node");
    wait_until("the waiter's node in line", DEADLINE, || {
        rt.block_on(observer.get_children("/locks/rolling"))
            .map(|c| c.len() == 2)
            .unwrap_or(false)
    });

    let mut members = vec![0, 1, 2];
    let replaced: Vec<usize> = followers.iter().copied().chain([leader]).collect();
    for &old in &replaced {
        let new = cluster.add_member().unwrap();
        let add = Reconfig::incremental().add_member(cluster.member_spec(new));
        reconfig(&rt, &cluster, &members, add, (new as u64 + 1, true));
        members.push(new);
        members.retain(|&m| m != old);
        let remove = Reconfig::incremental().remove_member(old as u64 + 1);
        reconfig(&rt, &cluster, &members, remove, (old as u64 + 1, false));
        // The machine goes once the following holder has moved off it.
        wait_until(
            "the following holder leaving the removed member",
            DEADLINE,
            || !connected_to(&cluster, old, session),
        );
        cluster.kill(old).unwrap();
        assert_eq!(
            owner(&lock_node),
            Some(session),
            "after replacing member {}",
            old + 1
        );
        eprintln!("member {} replaced by {}", old + 1, new + 1);
    }

    // The following holder: its command still running, its node the same, the waiter's
    // command never run.
    assert!(
        read(&ran).is_none(),
        "the waiter ran while the lock was held"
    );
    let mut followed = followed;
    assert!(
        followed.try_wait().unwrap().is_none(),
        "the following zkctl ended: {}",
        stderr(&finish(followed, DEADLINE))
    );
    assert_eq!(read(&node).as_deref(), Some(lock_node.as_str()));
    // The other holder, on the first member only, lost its lock when the member went.
    let lost = finish(unfollowed, DEADLINE);
    assert_eq!(exit_code(lost.status), 123, "{}", stderr(&lost));
    assert!(stderr(&lost).contains("lost the lock"), "{}", stderr(&lost));

    // The holder lets go: the waiter runs its command then.
    signal(followed.id(), "TERM");
    finish(followed, DEADLINE);
    let waited = finish(waiter, DEADLINE);
    assert!(waited.status.success(), "{}", stderr(&waited));
    assert!(ran.exists(), "the waiter ran once the lock was free");
    rt.block_on(observer.close()).unwrap();
}
