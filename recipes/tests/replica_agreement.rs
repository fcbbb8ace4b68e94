//! A probe of the server, run by hand: do the members of a 3-node ZooKeeper ensemble agree
//! on a directory's children after leader kills, pauses and members killed while they
//! resync, with three sessions creating and deleting ephemeral-sequential nodes through the
//! fault proxies the whole time? After each fault the sessions pause, and each member is read
//! on a direct session after a `sync`; a member that still differs after 10 s is a replica
//! that diverged (ZooKeeper 3.8.0 has known defects in the resync after a restart:
//! ZOOKEEPER-4394, ZOOKEEPER-4646, ZOOKEEPER-4785).
//!
//! Written after a CI soak left a lock node that the workers' own members evidently did not have
//! (docs/findings.md); 220 rounds on 3.8.0 found no divergence. Run it with `ZKR_AGREE_ROUNDS=80
//! cargo test -p zkrs-recipes --test replica_agreement -- --ignored --nocapture`.

#[path = "support/beliefs.rs"]
mod beliefs;
mod support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use beliefs::Rig;
use zkrs_client::{Client, CreateMode};

/// `dir`'s children as `member` has them, read after a `sync`.
async fn member_children(rig: &Rig, member: usize, dir: &str) -> Result<BTreeSet<String>, String> {
    let direct = beliefs::direct_session(rig, member)
        .await
        .map_err(|e| e.to_string())?;
    let listed = match direct.sync(dir).await {
        Ok(()) => direct.get_children(dir).await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let _ = direct.close().await;
    Ok(listed?.iter().map(str::to_string).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a probe of the server, run by hand"]
async fn members_agree_after_leader_faults() {
    let rounds = beliefs::env_number("ZKR_AGREE_ROUNDS", 20);
    let rig = Rig::start().await;
    let admin = rig.client().await;
    admin
        .create("/agree", b"", CreateMode::Persistent)
        .await
        .unwrap();
    let mut clients: Vec<Client> = Vec::new();
    for _ in 0..3 {
        clients.push(rig.client().await);
    }
    let hold = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let idle = Arc::new(AtomicU64::new(0));
    let ops = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for client in &clients {
        let client = client.clone();
        let (hold, stop, idle, ops) = (hold.clone(), stop.clone(), idle.clone(), ops.clone());
        workers.push(tokio::spawn(async move {
            let mut parked = false;
            while !stop.load(Ordering::Relaxed) {
                if hold.load(Ordering::Relaxed) {
                    if !parked {
                        parked = true;
                        idle.fetch_add(1, Ordering::SeqCst);
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
                if parked {
                    parked = false;
                    idle.fetch_sub(1, Ordering::SeqCst);
                }
                let step = async {
                    let path = client
                        .create("/agree/_c_x-lock-", b"", CreateMode::EphemeralSequential)
                        .await?;
                    client.delete(&path, None).await
                };
                if tokio::time::timeout(Duration::from_secs(10), step)
                    .await
                    .is_ok()
                {
                    ops.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    let mut divergences = Vec::new();
    for round in 0..rounds {
        tokio::time::sleep(Duration::from_millis(500 + (round * 397) % 1500)).await;
        let cluster = rig.cluster.clone();
        let what = tokio::task::spawn_blocking(move || {
            let leader = cluster.wait_for_leader(Duration::from_secs(60)).ok();
            let Some(l) = leader else {
                return "no leader".to_string();
            };
            let f = (l + 1 + (round as usize % 2)) % 3;
            let bounce = |m: usize, down_ms: u64| {
                let _ = cluster.kill(m);
                std::thread::sleep(Duration::from_millis(down_ms));
                let _ = cluster.restart(m);
            };
            let gap = Duration::from_millis((round * 97) % 400);
            let what = match round % 4 {
                // A follower is killed while it rejoins (during its sync, maybe).
                0 => {
                    let _ = cluster.kill(f);
                    std::thread::sleep(Duration::from_millis(300));
                    let _ = cluster.start_member(f);
                    let mid = 300 + (round * 211) % 2500;
                    std::thread::sleep(Duration::from_millis(mid));
                    bounce(f, 200);
                    format!("kill follower {f} {mid} ms into its restart")
                }
                // A follower rejoins, then the leader is killed.
                1 => {
                    let _ = cluster.kill(f);
                    std::thread::sleep(gap);
                    let _ = cluster.start_member(f);
                    let mid = 300 + (round * 211) % 2500;
                    std::thread::sleep(Duration::from_millis(mid));
                    bounce(l, 200 + (round * 131) % 1500);
                    let _ = cluster.wait_serving(f, Duration::from_secs(60));
                    format!("kill leader {l} {mid} ms into follower {f}'s restart")
                }
                2 => {
                    bounce(l, 200 + (round * 173) % 1500);
                    format!("bounce leader {l}")
                }
                _ => {
                    let _ = cluster.pause(l);
                    std::thread::sleep(Duration::from_millis(3000 + (round * 331) % 3000));
                    let _ = cluster.resume(l);
                    format!("pause leader {l}")
                }
            };
            for i in 0..3 {
                let _ = cluster.wait_serving(i, Duration::from_secs(60));
            }
            what
        })
        .await
        .unwrap();
        // Park the workers, let the members settle, compare.
        hold.store(true, Ordering::SeqCst);
        let _ = tokio::time::timeout(Duration::from_secs(20), async {
            while idle.load(Ordering::SeqCst) < 3 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await;
        let mut agreed = false;
        let mut last = Vec::new();
        for _ in 0..20 {
            let mut sets = Vec::new();
            for m in 0..3 {
                sets.push(member_children(&rig, m, "/agree").await);
            }
            agreed = sets.iter().all(|s| s.is_ok() && *s == sets[0]);
            last = sets;
            if agreed {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        println!(
            "round {round}: {what}; ops {}; agreed {agreed}",
            ops.load(Ordering::Relaxed)
        );
        if !agreed {
            let report = beliefs::lock_dir_report(&rig, &clients, "/agree").await;
            println!("  members: {last:?}\n{report}");
            divergences.push(format!("round {round} after {what}: {last:?}"));
        }
        hold.store(false, Ordering::SeqCst);
    }
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        let _ = w.await;
    }
    assert!(divergences.is_empty(), "{divergences:#?}");
}
