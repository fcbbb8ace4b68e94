//! Sessions against a real standalone server from the test kit: expiry (the client's own rule
//! and the server's verdict), closing, dropping the last handle, and requests made while the
//! connection is down.
//!
//! A small TCP proxy in this file stands between some clients and the server, so a test can
//! partition them (the connection goes silent both ways and new ones are refused) or cut the
//! connection, at an exact moment and without touching the server.
//!
//! Every wait has a deadline; the test kit's blocking calls run in `block_in_place` so the
//! client's driver keeps running on the other worker.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::block_in_place;
use zkrs_client::*;
use zkrs_testkit::{ServerOptions, TestingServer};

const DEADLINE: Duration = Duration::from_secs(20);

async fn within<F: std::future::Future>(what: &str, limit: Duration, f: F) -> F::Output {
    tokio::time::timeout(limit, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {limit:?}"))
}

fn server(options: ServerOptions) -> TestingServer {
    block_in_place(|| TestingServer::start_with(options))
        .expect("start ZooKeeper (run scripts/install-zookeeper.sh)")
}

async fn connect(connect_string: &str, session_timeout: Duration) -> Client {
    let client = within(
        "connecting",
        DEADLINE,
        Client::builder(connect_string)
            .session_timeout(session_timeout)
            .connect(),
    )
    .await
    .unwrap();
    assert_eq!(
        client.session_timeout(),
        session_timeout,
        "negotiated timeout"
    );
    client
}

/// The next state change, with a deadline.
async fn next_state(states: &mut StateChanges, what: &str, limit: Duration) -> StateChange {
    within(what, limit, states.next())
        .await
        .unwrap_or_else(|| panic!("{what}: the client is gone"))
}

/// Polls `condition` every 10 ms until it holds, at most `DEADLINE`.
async fn wait_until(what: &str, condition: impl Fn() -> bool) {
    within(what, DEADLINE, async {
        while !condition() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

/// Waits until `path` does not exist (through `client`), with a deadline.
async fn wait_deleted(client: &Client, path: &str, limit: Duration) {
    let (stat, watch) = client.exists_and_watch(path).await.unwrap();
    if stat.is_some() {
        let event = within(&format!("{path} to be deleted"), limit, watch).await;
        assert_eq!(event.event_type, EventType::NodeDeleted, "{event:?}");
    }
}

// ----- A TCP proxy that can partition its connections -----

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Control {
    /// Existing connections forward nothing (in either direction, closes included); new ones
    /// are closed at once.
    partitioned: bool,
    /// Connections of an older generation are closed.
    generation: u64,
}

struct Proxy {
    addr: SocketAddr,
    control: watch::Sender<Control>,
    /// Bytes from clients thrown away while partitioned.
    discarded: Arc<AtomicUsize>,
    /// Connections refused while partitioned.
    refused: Arc<AtomicUsize>,
    accept: tokio::task::JoinHandle<()>,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (control, rx) = watch::channel(Control {
            partitioned: false,
            generation: 0,
        });
        let discarded = Arc::new(AtomicUsize::new(0));
        let refused = Arc::new(AtomicUsize::new(0));
        let (d, r) = (discarded.clone(), refused.clone());
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let now = *rx.borrow();
                if now.partitioned {
                    r.fetch_add(1, Ordering::SeqCst);
                    drop(client);
                    continue;
                }
                tokio::spawn(relay(
                    client,
                    upstream,
                    rx.clone(),
                    now.generation,
                    d.clone(),
                ));
            }
        });
        Proxy {
            addr,
            control,
            discarded,
            refused,
            accept,
        }
    }

    fn connect_string(&self) -> String {
        self.addr.to_string()
    }

    /// Silences existing connections and refuses new ones.
    fn partition(&self) {
        self.control.send_modify(|c| c.partitioned = true);
    }

    /// Closes every existing connection (both sides see it closed).
    fn cut(&self) {
        self.control.send_modify(|c| c.generation += 1);
    }

    /// Ends the partition: the silenced connections are closed, new ones go through.
    fn heal(&self) {
        self.control.send_modify(|c| {
            c.partitioned = false;
            c.generation += 1;
        });
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

async fn relay(
    mut client: TcpStream,
    upstream: SocketAddr,
    mut control: watch::Receiver<Control>,
    generation: u64,
    discarded: Arc<AtomicUsize>,
) {
    let Ok(mut server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut client_rx, mut client_tx) = client.split();
    let (mut server_rx, mut server_tx) = server.split();
    let (mut up, mut down) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    let (mut client_open, mut server_open) = (true, true);
    let probe = control.clone();
    loop {
        // Read when the data is in hand, not before the wait: a partition that began during
        // the wait must apply to it.
        let partitioned = || probe.borrow().partitioned;
        tokio::select! {
            changed = control.changed() => {
                if changed.is_err() || control.borrow().generation != generation {
                    return; // Both sockets close.
                }
            }
            n = client_rx.read(&mut up), if client_open => match n {
                Ok(n) if n > 0 => {
                    if partitioned() {
                        discarded.fetch_add(n, Ordering::SeqCst);
                    } else if server_tx.write_all(&up[..n]).await.is_err() {
                        return;
                    }
                }
                // Closed: a partition hides that from the other side.
                _ if partitioned() => client_open = false,
                _ => return,
            },
            n = server_rx.read(&mut down), if server_open => match n {
                Ok(n) if n > 0 => {
                    if !partitioned() && client_tx.write_all(&down[..n]).await.is_err() {
                        return;
                    }
                }
                _ if partitioned() => server_open = false,
                _ => return,
            },
        }
    }
}

// ----- Tests -----

/// The client's own rule: disconnected for longer than the session timeout means the session
/// is lost (Suspended, then Lost), and the next connection makes a new session, never the old
/// one back. Three rounds: the old-session-back bug (a handshake for the old session still
/// under way when Lost is declared, answered by the thawed server) showed up in about one
/// round in ten before it was fixed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_server_longer_than_the_session_timeout_loses_the_session() {
    const TIMEOUT: Duration = Duration::from_secs(2);
    let zk_server = server(ServerOptions::new());
    let zk = connect(&zk_server.connect_string(), TIMEOUT).await;
    let first = zk.session_id();
    zk.create("/eph", b"", CreateMode::Ephemeral).await.unwrap();
    let (_, _, mut watch) = zk.get_data_and_watch("/eph").await.unwrap();
    let mut states = zk.state_changes();

    for round in 0..3 {
        let old = zk.session_id();
        block_in_place(|| zk_server.pause()).unwrap();
        // Noticed after the read timeout (2/3 of the session timeout without a reply).
        let suspended = next_state(&mut states, "Suspended", TIMEOUT * 2).await;
        let suspended_at = Instant::now();
        assert_eq!(suspended.state, ConnectionState::Suspended, "round {round}");
        assert_eq!(suspended.session_id, old, "round {round}");
        // A request made now waits for a connection, and fails when the session is lost.
        let queued = tokio::spawn({
            let zk = zk.clone();
            async move { zk.get_data("/").await }
        });

        let lost = next_state(&mut states, "Lost", TIMEOUT * 2).await;
        let lost_after = suspended_at.elapsed();
        assert_eq!(lost.state, ConnectionState::Lost, "round {round}");
        assert!(
            lost_after + Duration::from_millis(500) >= TIMEOUT,
            "round {round}: Lost {lost_after:?} after Suspended, sooner than the session timeout"
        );
        // As soon as the server is back, the client makes a new session.
        block_in_place(|| zk_server.resume()).unwrap();
        let err = within("the queued request", DEADLINE, queued)
            .await
            .unwrap()
            .unwrap_err();
        assert!(err.is_session_expired(), "round {round}: {err}");
        if round == 0 {
            let event = within("the watch's session event", DEADLINE, &mut watch).await;
            assert_eq!(
                (event.event_type, event.state),
                (EventType::None, KeeperState::Expired)
            );
        }

        let back = next_state(&mut states, "Reconnected", DEADLINE).await;
        assert_eq!(back.state, ConnectionState::Reconnected, "round {round}");
        assert_ne!(back.session_id, 0, "round {round}");
        assert_ne!(
            back.session_id, old,
            "round {round}: the old session came back after Lost"
        );
        assert_eq!(zk.session_id(), back.session_id);
        zk.get_data("/").await.unwrap();
    }

    // The server expires the first session (its clock ran while it was paused) and deletes
    // its ephemeral node.
    wait_deleted(&zk, "/eph", TIMEOUT * 3).await;
    let path = zk.create("/eph", b"", CreateMode::Ephemeral).await.unwrap();
    let (_, stat) = zk.get_data(&path).await.unwrap();
    assert_ne!(stat.ephemeral_owner, first);
    assert_eq!(stat.ephemeral_owner, zk.session_id());
    assert_eq!(states.try_next(), None);
    zk.close().await.unwrap();
}

/// The server's verdict: partitioned from its only server, the client stays Suspended while
/// the server expires the session; when the partition heals, the server answers the
/// reconnect with "expired", the client reports Lost at once (before its own rule would have)
/// and makes a new session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_expires_the_session_during_a_partition() {
    // The server expires the session about TIMEOUT after the client's last ping; the client
    // gives up by itself 2/3 TIMEOUT + TIMEOUT after the last reply: 4 s apart.
    const TIMEOUT: Duration = Duration::from_secs(6);
    let zk_server = server(ServerOptions::new().max_session_timeout_ms(6_000));
    let proxy = Proxy::start(zk_server.address()).await;
    let zk = connect(&proxy.connect_string(), TIMEOUT).await;
    let monitor = connect(&zk_server.connect_string(), TIMEOUT).await;
    let old = zk.session_id();
    zk.create("/eph", b"", CreateMode::Ephemeral).await.unwrap();
    let (stat, gone) = monitor.exists_and_watch("/eph").await.unwrap();
    assert_eq!(stat.map(|s| s.ephemeral_owner), Some(old));
    let mut states = zk.state_changes();

    proxy.partition();
    let suspended = next_state(&mut states, "Suspended", TIMEOUT).await;
    let suspended_at = Instant::now();
    assert_eq!(suspended.state, ConnectionState::Suspended);
    // The server expires the session: its ephemeral node goes.
    let event = within("the server to expire the session", TIMEOUT * 2, gone).await;
    assert_eq!(event.event_type, EventType::NodeDeleted);
    assert_eq!(
        zk.state(),
        ConnectionState::Suspended,
        "the client must not have given up yet ({:?} after Suspended)",
        suspended_at.elapsed()
    );

    proxy.heal();
    let lost = next_state(&mut states, "Lost", TIMEOUT).await;
    assert_eq!(lost.state, ConnectionState::Lost);
    assert!(
        suspended_at.elapsed() < TIMEOUT,
        "Lost only {:?} after Suspended: the client's own rule, not the server's answer",
        suspended_at.elapsed()
    );
    let back = next_state(&mut states, "Reconnected", DEADLINE).await;
    assert_eq!(back.state, ConnectionState::Reconnected);
    assert_ne!(back.session_id, 0);
    assert_ne!(
        back.session_id, old,
        "a new session after the old one expired"
    );
    let path = zk.create("/eph", b"", CreateMode::Ephemeral).await.unwrap();
    let (_, stat) = monitor.get_data(&path).await.unwrap();
    assert_eq!(stat.ephemeral_owner, back.session_id);
    assert_eq!(states.try_next(), None);
    zk.close().await.unwrap();
    monitor.close().await.unwrap();
}

/// `close()` deletes the session's ephemeral nodes before it returns; dropping the last handle
/// closes the session too (long before it would expire) and ends the driver task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_and_drop_end_the_session_at_once() {
    const TIMEOUT: Duration = Duration::from_secs(10);
    let zk_server = server(ServerOptions::new().max_session_timeout_ms(10_000));
    let cs = zk_server.connect_string();
    let other = connect(&cs, TIMEOUT).await;

    let zk = connect(&cs, TIMEOUT).await;
    zk.create("/closed", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    let mut states = zk.state_changes();
    within("close", DEADLINE, zk.close()).await.unwrap();
    assert_eq!(zk.state(), ConnectionState::Closed);
    assert!(
        other.exists("/closed").await.unwrap().is_none(),
        "the ephemeral node is gone when close() returns"
    );
    let closed = next_state(&mut states, "Closed", DEADLINE).await;
    assert_eq!(closed.state, ConnectionState::Closed);
    let err = zk.exists("/").await.unwrap_err();
    assert!(err.is_closed(), "{err}");
    drop(zk);
    assert_eq!(
        within("the driver to end after close", DEADLINE, states.next()).await,
        None
    );

    let zk = connect(&cs, TIMEOUT).await;
    let clone = zk.clone();
    zk.create("/dropped", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    let (stat, gone) = other.exists_and_watch("/dropped").await.unwrap();
    assert!(stat.is_some());
    let mut states = zk.state_changes();
    drop(zk);
    // One handle is left: nothing happens.
    clone.exists("/dropped").await.unwrap().unwrap();
    drop(clone);
    let limit = TIMEOUT / 5;
    let event = within("the ephemeral node of a dropped client", limit, gone).await;
    assert_eq!(event.event_type, EventType::NodeDeleted);
    let closed = next_state(&mut states, "Closed after drop", limit).await;
    assert_eq!(closed.state, ConnectionState::Closed);
    // Every sender of the subscription lives in state the driver shares: `None` means the
    // driver task has ended.
    assert_eq!(
        within("the driver to end after drop", limit, states.next()).await,
        None
    );
    other.close().await.unwrap();
}

/// A request in flight when the connection drops fails with ConnectionLoss and is never sent
/// again; a request made while Suspended waits and is sent after the reconnect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_while_disconnected() {
    const TIMEOUT: Duration = Duration::from_secs(10);
    let zk_server = server(ServerOptions::new().max_session_timeout_ms(10_000));
    let proxy = Proxy::start(zk_server.address()).await;
    let zk = connect(&proxy.connect_string(), TIMEOUT).await;
    let sid = zk.session_id();
    let mut states = zk.state_changes();

    // In flight: the request reaches the proxy, which throws it away; then the connection
    // drops.
    proxy.partition();
    let in_flight = tokio::spawn({
        let zk = zk.clone();
        async move { zk.create("/in-flight", b"", CreateMode::Persistent).await }
    });
    wait_until("the request to be sent", || {
        proxy.discarded.load(Ordering::SeqCst) > 0
    })
    .await;
    assert!(!in_flight.is_finished());
    proxy.cut();
    let err = within("the in-flight request", DEADLINE, in_flight)
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionLoss, "{err}");
    assert!(err.is_retryable() && !err.is_closed(), "{err}");
    let suspended = next_state(&mut states, "Suspended", DEADLINE).await;
    assert_eq!(suspended.state, ConnectionState::Suspended);

    // Made while Suspended: it waits through failed reconnect attempts.
    let queued = tokio::spawn({
        let zk = zk.clone();
        async move { zk.create("/queued", b"q", CreateMode::Persistent).await }
    });
    let refused = proxy.refused.load(Ordering::SeqCst);
    wait_until("two reconnect attempts", || {
        proxy.refused.load(Ordering::SeqCst) >= refused + 2
    })
    .await;
    assert!(!queued.is_finished(), "a request waits while Suspended");
    assert_eq!(zk.state(), ConnectionState::Suspended);

    proxy.heal();
    let back = next_state(&mut states, "Reconnected", DEADLINE).await;
    assert_eq!(back.state, ConnectionState::Reconnected);
    assert_eq!(back.session_id, sid, "the session survives");
    let path = within("the queued request", DEADLINE, queued)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(path, "/queued");
    let (data, _) = zk.get_data("/queued").await.unwrap();
    assert_eq!(&data[..], b"q");
    // The request that was in flight never reached the server and was not sent again.
    assert!(zk.exists("/in-flight").await.unwrap().is_none());
    assert_eq!(states.try_next(), None);
    zk.close().await.unwrap();
}
