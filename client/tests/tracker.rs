//! The ensemble tracker (`ClientBuilder::follow_ensemble`, Curator's `EnsembleTracker`)
//! against a real reconfigurable ZooKeeper 3.8 ensemble: the client's hosts follow
//! `/zookeeper/config` (at connect, after each change), with its chroot kept, so it outlives
//! the member it started on. Every wait has a deadline.

use std::time::Duration;

use tokio::task::block_in_place;
use zkrs_client::*;
use zkrs_testkit::{ServerOptions, TestingCluster, SUPERUSER};

const DEADLINE: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {DEADLINE:?}"))
}

fn address(cluster: &TestingCluster, i: usize) -> String {
    format!("127.0.0.1:{}", cluster.member_port(i))
}

/// Waits until the client's hosts are exactly these members.
async fn wait_hosts(client: &Client, cluster: &TestingCluster, members: &[usize]) {
    let mut expected: Vec<String> = members.iter().map(|&i| address(cluster, i)).collect();
    expected.sort();
    let what = format!("the client's hosts becoming {expected:?}");
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
    .unwrap_or_else(|_| panic!("{what}: still {:?} after {DEADLINE:?}", client.hosts()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tracker_follows_members_joining_and_leaving_keeping_the_chroot() {
    let mut cluster =
        block_in_place(|| TestingCluster::start_with(3, ServerOptions::new().reconfig(true)))
            .expect("start ZooKeeper (run scripts/install-zookeeper.sh)");
    // The superuser reconfigures through members 2 and 3: member 1 leaves.
    let (user, password) = SUPERUSER;
    let admin = within(
        "connecting as the superuser",
        Client::builder(&format!(
            "{},{}",
            address(&cluster, 1),
            address(&cluster, 2)
        ))
        .auth("digest", format!("{user}:{password}"))
        .connect(),
    )
    .await
    .unwrap();
    admin
        .create("/app", b"", CreateMode::Persistent)
        .await
        .unwrap();

    // The client knows member 1 only; the tracker reads the rest at once.
    let client = within(
        "connecting with the tracker",
        ClientBuilder::new(format!("{}/app", address(&cluster, 0)))
            .session_timeout(Duration::from_secs(6))
            .follow_ensemble(true)
            .connect(),
    )
    .await
    .unwrap();
    let session = client.session_id();
    let mut states = client.state_changes();
    client
        .create("/owned", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    wait_hosts(&client, &cluster, &[0, 1, 2]).await;
    // The first reading completes the list without moving the client (no request of its
    // is cut short by a move right after connecting).
    assert_eq!(
        states.try_next(),
        None,
        "the first reading moved the client"
    );

    // A member joins.
    let four = block_in_place(|| cluster.add_member()).unwrap();
    let add = Reconfig::incremental().add_member(cluster.member_spec(four));
    within("adding member 4", admin.reconfig(&add))
        .await
        .unwrap();
    wait_hosts(&client, &cluster, &[0, 1, 2, four]).await;

    // The member the client started on leaves, and goes away.
    let remove = Reconfig::incremental().remove_member(1);
    within("removing member 1", admin.reconfig(&remove))
        .await
        .unwrap();
    wait_hosts(&client, &cluster, &[1, 2, four]).await;
    block_in_place(|| cluster.kill(0)).unwrap();

    // Same session, same chroot.
    let stat = within("reading through the chroot", client.exists("/owned"))
        .await
        .unwrap()
        .expect("the ephemeral node, under the chroot");
    assert_eq!(stat.ephemeral_owner, session);
    assert_eq!(client.session_id(), session);
    assert!(admin.exists("/app/owned").await.unwrap().is_some());
    client.close().await.unwrap();
    admin.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tracker_does_not_keep_a_dropped_client_alive() {
    let cluster =
        block_in_place(|| TestingCluster::start_with(3, ServerOptions::new().reconfig(true)))
            .expect("start ZooKeeper (run scripts/install-zookeeper.sh)");
    let observer = within("connecting", Client::connect(&cluster.connect_string()))
        .await
        .unwrap();
    let client = within(
        "connecting with the tracker",
        ClientBuilder::new(cluster.connect_string())
            .follow_ensemble(true)
            .connect(),
    )
    .await
    .unwrap();
    client
        .create("/mine", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    // The tracker has read the configuration and waits on its watch.
    wait_hosts(&client, &cluster, &[0, 1, 2]).await;
    // Every handle gone: the session closes (its ephemeral node goes at once, not at
    // expiry), the tracker's weak hold notwithstanding.
    drop(client);
    within("the ephemeral node going", async {
        while observer.exists("/mine").await.unwrap().is_some() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
}
