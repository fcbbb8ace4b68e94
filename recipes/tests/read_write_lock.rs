//! InterProcessReadWriteLock against a real server: shared readers, exclusive writers,
//! fairness, downgrade, Curator's node names.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zkrs_client::Client;
use zkrs_recipes::lock::InterProcessReadWriteLock;
use zkrs_testkit::TestingServer;

mod support;
use support::*;

/// `<dir>/_c_<36-char uuid>-<lock name><10 digits>`: Curator's protected sequential name.
fn assert_curator_name(path: &str, dir: &str, lock_name: &str) {
    let name = path
        .strip_prefix(dir)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or_else(|| panic!("{path} not under {dir}"));
    let rest = name
        .strip_prefix("_c_")
        .unwrap_or_else(|| panic!("{name}: no protected prefix"));
    let (uuid, rest) = rest.split_at(36);
    assert!(
        uuid.bytes().all(|b| b == b'-' || b.is_ascii_hexdigit()),
        "{name}: bad uuid"
    );
    assert_eq!(uuid.matches('-').count(), 4, "{name}: bad uuid");
    let seq = rest
        .strip_prefix('-')
        .and_then(|r| r.strip_prefix(lock_name))
        .unwrap_or_else(|| panic!("{name}: no -{lock_name}"));
    assert!(
        seq.len() == 10 && seq.bytes().all(|b| b.is_ascii_digit()),
        "{name}: bad sequence"
    );
}

fn seq_of(path: &str) -> &str {
    &path[path.len() - 10..]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_share_writers_exclude() {
    let zk = TestingServer::start().unwrap();
    let readers_in = Arc::new(AtomicUsize::new(0));
    let writers_in = Arc::new(AtomicUsize::new(0));
    let most_readers = Arc::new(AtomicUsize::new(0));
    let writes = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..9 {
        let connect = zk.connect_string();
        let (readers_in, writers_in) = (readers_in.clone(), writers_in.clone());
        let (most_readers, writes) = (most_readers.clone(), writes.clone());
        tasks.push(tokio::spawn(async move {
            let client = Client::connect(&connect).await.unwrap();
            let lock = InterProcessReadWriteLock::builder(&client, "/rw/mixed")
                .build()
                .unwrap();
            for _ in 0..4 {
                if i % 3 == 0 {
                    let guard = lock.write_lock().acquire().await.unwrap();
                    assert_eq!(writers_in.fetch_add(1, Ordering::SeqCst), 0, "two writers");
                    assert_eq!(readers_in.load(Ordering::SeqCst), 0, "reader during write");
                    // A read-modify-write that loses updates without the lock.
                    let n = writes.load(Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    writes.store(n + 1, Ordering::SeqCst);
                    assert_eq!(readers_in.load(Ordering::SeqCst), 0, "reader during write");
                    writers_in.fetch_sub(1, Ordering::SeqCst);
                    guard.release().await.unwrap();
                } else {
                    let guard = lock.read_lock().acquire().await.unwrap();
                    let now = readers_in.fetch_add(1, Ordering::SeqCst) + 1;
                    most_readers.fetch_max(now, Ordering::SeqCst);
                    assert_eq!(writers_in.load(Ordering::SeqCst), 0, "write during read");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    assert_eq!(writers_in.load(Ordering::SeqCst), 0, "write during read");
                    readers_in.fetch_sub(1, Ordering::SeqCst);
                    guard.release().await.unwrap();
                }
            }
            client.close().await.unwrap();
        }));
    }
    for t in tasks {
        within("read/write task", t).await.unwrap();
    }
    assert_eq!(writes.load(Ordering::SeqCst), 12, "a write was lost");
    let checker = connect(&zk).await;
    let left = checker.get_children("/rw/mixed").await.unwrap();
    assert!(left.is_empty(), "nodes left: {:?}", left.to_vec());

    // Several readers hold at once, deterministically: each acquires while the others hold.
    let clients = [connect(&zk).await, connect(&zk).await, connect(&zk).await];
    let mut guards = Vec::new();
    for c in &clients {
        let lock = InterProcessReadWriteLock::builder(c, "/rw/shared")
            .build()
            .unwrap();
        let guard = within("a reader among readers", lock.read_lock().acquire())
            .await
            .unwrap();
        assert_curator_name(guard.path(), "/rw/shared", "__READ__");
        guards.push(guard);
    }
    assert!(guards.iter().all(|g| g.is_held()));
    let lock = InterProcessReadWriteLock::builder(&clients[0], "/rw/shared")
        .build()
        .unwrap();
    assert_eq!(lock.read_lock().participant_nodes().await.unwrap().len(), 3);
    assert!(lock
        .write_lock()
        .participant_nodes()
        .await
        .unwrap()
        .is_empty());
}

/// How long an attempt that must fail waits.
const SHORT: Duration = Duration::from_millis(300);

/// Whether a read of `lock` is refused for [`SHORT`].
async fn refused_read(lock: &InterProcessReadWriteLock) -> bool {
    lock.read_lock().try_acquire(SHORT).await.unwrap().is_none()
}

/// Whether a write of `lock` is refused for [`SHORT`].
async fn refused_write(lock: &InterProcessReadWriteLock) -> bool {
    lock.write_lock()
        .try_acquire(SHORT)
        .await
        .unwrap()
        .is_none()
}

#[tokio::test]
async fn writer_excludes_readers_and_writers() {
    let zk = TestingServer::start().unwrap();
    let (a, b) = (connect(&zk).await, connect(&zk).await);
    let lock_a = InterProcessReadWriteLock::builder(&a, "/rw/x")
        .build()
        .unwrap();
    let lock_b = InterProcessReadWriteLock::builder(&b, "/rw/x")
        .build()
        .unwrap();
    let write = lock_a.write_lock().acquire().await.unwrap();
    assert_curator_name(write.path(), "/rw/x", "__WRIT__");
    assert!(refused_read(&lock_b).await);
    assert!(refused_write(&lock_b).await);
    // Timed-out attempts leave nothing behind (their nodes go in the background).
    let only_writer = vec![write.path().to_string()];
    eventually("timed-out nodes deleted", || async {
        lock_b.participant_nodes().await.unwrap() == only_writer
    })
    .await;
    write.release().await.unwrap();

    // A reader excludes writers too.
    let read = lock_a.read_lock().acquire().await.unwrap();
    assert!(refused_write(&lock_b).await);
    // No upgrade: a write request of the reader itself waits for its own read node.
    assert!(refused_write(&lock_a).await);
    let other_read = lock_b.read_lock().try_acquire(SHORT).await.unwrap();
    assert!(other_read.is_some(), "readers share the lock");
    read.release().await.unwrap();
    other_read.unwrap().release().await.unwrap();
    let write = lock_b.write_lock().try_acquire(DEADLINE).await.unwrap();
    assert!(write.is_some(), "free again after the readers left");
}

#[tokio::test]
async fn reader_after_a_waiting_writer_waits_for_it() {
    let zk = TestingServer::start().unwrap();
    let (a, b, c) = (connect(&zk).await, connect(&zk).await, connect(&zk).await);
    let dir = "/rw/fair";
    let reader1 = InterProcessReadWriteLock::builder(&a, dir).build().unwrap();
    let writer = InterProcessReadWriteLock::builder(&b, dir).build().unwrap();
    let reader2 = InterProcessReadWriteLock::builder(&c, dir).build().unwrap();

    let first_read = reader1.read_lock().acquire().await.unwrap();
    let writer_in = Arc::new(AtomicUsize::new(0));
    let write_task = tokio::spawn({
        let writer = writer.write_lock();
        let writer_in = writer_in.clone();
        async move {
            let guard = writer.acquire().await.unwrap();
            writer_in.store(1, Ordering::SeqCst);
            guard
        }
    });
    let probe = writer.write_lock();
    eventually("the writer queued", || async {
        probe.participant_nodes().await.unwrap().len() == 1
    })
    .await;

    // A reader arriving now queues behind the waiting writer, though a reader holds.
    let late = reader2
        .read_lock()
        .try_acquire(Duration::from_millis(300))
        .await
        .unwrap();
    assert!(late.is_none(), "a reader overtook a waiting writer");
    let probe = reader2.read_lock();
    eventually("the timed-out read node deleted", || async {
        probe.participant_nodes().await.unwrap().len() == 1
    })
    .await;
    let read_task = tokio::spawn({
        let reader2 = reader2.read_lock();
        let writer_in = writer_in.clone();
        async move {
            let guard = reader2.acquire().await.unwrap();
            // The writer came first: it must have had its turn already.
            assert_eq!(writer_in.load(Ordering::SeqCst), 2, "reader before writer");
            guard
        }
    });
    eventually("the second reader queued", || async {
        probe.participant_nodes().await.unwrap().len() == 2
    })
    .await;

    first_read.release().await.unwrap();
    let write = within("writer after the first reader", write_task)
        .await
        .unwrap();
    assert!(!read_task.is_finished(), "reader in during the write");
    writer_in.store(2, Ordering::SeqCst);
    write.release().await.unwrap();
    let read = within("reader after the writer", read_task).await.unwrap();
    assert!(read.is_held());
}

#[tokio::test]
async fn downgrade_keeps_waiting_writers_out() {
    let zk = TestingServer::start().unwrap();
    let (a, b, c) = (connect(&zk).await, connect(&zk).await, connect(&zk).await);
    let dir = "/rw/down";
    let lock_a = InterProcessReadWriteLock::builder(&a, dir).build().unwrap();
    let lock_b = InterProcessReadWriteLock::builder(&b, dir).build().unwrap();

    let write = lock_a.write_lock().acquire().await.unwrap();
    // A writer waits behind us (bounded, long enough to span the downgrade).
    let waiting_writer = tokio::spawn({
        let w = lock_b.write_lock();
        async move { w.try_acquire(Duration::from_millis(1500)).await.unwrap() }
    });
    let probe = lock_b.write_lock();
    eventually("the other writer queued", || async {
        probe.participant_nodes().await.unwrap().len() == 2
    })
    .await;

    // The read lock is granted at once, though a writer waits.
    let read = within("read lock while writing", write.read_lock())
        .await
        .unwrap();
    assert_curator_name(read.path(), dir, "__READ__");
    // It carries the write node's sequence (Curator, CURATOR-621).
    assert_eq!(seq_of(read.path()), seq_of(write.path()));
    write.release().await.unwrap();
    assert!(read.is_held());

    // The waiting writer must not get in while we read.
    let got = within("waiting writer", waiting_writer).await.unwrap();
    assert!(got.is_none(), "a writer got in during the downgraded read");
    // Other readers may join, though.
    let lock_c = InterProcessReadWriteLock::builder(&c, dir).build().unwrap();
    let other = lock_c.read_lock().try_acquire(DEADLINE).await.unwrap();
    assert!(other.is_some());
    drop(other);
    read.release().await.unwrap();
    let w = lock_b.write_lock().try_acquire(DEADLINE).await.unwrap();
    let w = w.expect("writer after the downgraded read");

    // downgrade() does both steps.
    w.release().await.unwrap();
    let write = lock_a.write_lock().acquire().await.unwrap();
    let write_seq = seq_of(write.path()).to_string();
    let read = write.downgrade().await.unwrap();
    assert_eq!(seq_of(read.path()), write_seq);
    let nodes = lock_a.participant_nodes().await.unwrap();
    assert_eq!(
        nodes,
        vec![read.path().to_string()],
        "write node not released"
    );
    read.release().await.unwrap();
}
