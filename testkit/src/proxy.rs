//! [`FaultyProxy`]: a TCP relay between clients and a server that injects network faults on
//! command, per direction: latency, black holes, lost replies, partitions, resets, and cuts
//! after a number of bytes.
//!
//! Tests use it to put a connection loss exactly where it hurts (after a create reached the
//! server, before its reply came back) without touching the server, and the
//! [`FaultSchedule`](crate::FaultSchedule) uses one per ensemble member to inject random
//! network faults.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often relay threads look at the fault switches while waiting for bytes.
const POLL: Duration = Duration::from_millis(20);

/// How long a write to a peer that does not read may block before the connection is closed.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// One direction of the bytes a [`FaultyProxy`] relays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the client to the server: requests (and pings).
    ToServer,
    /// From the server to the client: replies, notifications (and ping replies).
    ToClient,
    /// Both directions.
    Both,
}

impl Direction {
    fn applies_to(self, to_client: bool) -> bool {
        match self {
            Direction::ToServer => !to_client,
            Direction::ToClient => to_client,
            Direction::Both => true,
        }
    }
}

/// The switches of one direction.
#[derive(Debug, Default)]
struct Lane {
    /// Every chunk relayed this way is delayed by this much (µs).
    latency_us: AtomicU64,
    /// Bytes going this way are thrown away; the connection stays open.
    black_hole: AtomicBool,
}

#[derive(Debug, Default)]
struct Faults {
    to_server: Lane,
    to_client: Lane,
    /// New connections are closed at once (with both black holes: a partition).
    refuse: AtomicBool,
    /// Connections of an older generation are closed.
    generation: AtomicU64,
    /// The proxy is going away.
    stopped: AtomicBool,
    /// Connections currently relayed (for byte budgets and the count).
    connections: Mutex<Vec<Weak<Connection>>>,
    open: AtomicUsize,
}

impl Faults {
    fn lane(&self, to_client: bool) -> &Lane {
        if to_client {
            &self.to_client
        } else {
            &self.to_server
        }
    }

    fn each_lane(&self, direction: Direction, f: impl Fn(&Lane)) {
        if direction.applies_to(false) {
            f(&self.to_server);
        }
        if direction.applies_to(true) {
            f(&self.to_client);
        }
    }

    fn live_connections(&self) -> Vec<Arc<Connection>> {
        let mut all = self.connections.lock().unwrap_or_else(|e| e.into_inner());
        all.retain(|c| c.strong_count() > 0);
        all.iter().filter_map(Weak::upgrade).collect()
    }
}

/// One relayed connection: its byte budgets (`-1`: none) per direction.
#[derive(Debug)]
struct Connection {
    budget_to_server: AtomicI64,
    budget_to_client: AtomicI64,
}

impl Connection {
    fn budget(&self, to_client: bool) -> &AtomicI64 {
        if to_client {
            &self.budget_to_client
        } else {
            &self.budget_to_server
        }
    }
}

/// A TCP proxy to one upstream address whose faults a test switches on and off, at any
/// moment and per [`Direction`].
///
/// - [`latency`](Self::latency): every chunk relayed that way is delivered that much later
///   (in order).
/// - [`black_hole`](Self::black_hole): bytes going that way are dropped silently; connections
///   stay open while it lasts.
/// - [`pass`](Self::pass): that way relays normally again (no latency, no black hole); a
///   connection that lost bytes to the hole is closed.
/// - [`reset`](Self::reset): every open connection is closed (both peers see EOF or a reset).
/// - [`cut_after`](Self::cut_after): each open connection is closed after N more bytes that
///   way.
/// - [`mute_replies`](Self::mute_replies): black hole towards the client (requests still
///   arrive).
/// - [`partition`](Self::partition): black holes both ways, and new connections are closed at
///   once.
/// - [`heal`](Self::heal): every fault ends and every connection is closed.
/// - [`clear`](Self::clear): every fault ends; connections stay open.
///
/// ```no_run
/// # fn demo(server: &zkrs_testkit::TestingServer) -> std::io::Result<()> {
/// use std::time::Duration;
/// use zkrs_testkit::{Direction, FaultyProxy};
///
/// let proxy = FaultyProxy::start(server.address())?;
/// // Connect clients to `proxy.connect_string()`, then:
/// proxy.latency(Direction::ToClient, Duration::from_millis(300)); // slow replies
/// proxy.black_hole(Direction::ToServer); // requests vanish, the connection stays open
/// proxy.pass(Direction::Both);           // back to normal; connections that lost bytes close
/// proxy.cut_after(Direction::ToClient, 10); // cut in the middle of the next reply
/// proxy.mute_replies(true); // requests reach the server, replies are lost
/// proxy.cut();              // ... and the connection drops
/// proxy.heal();             // back to normal for new connections
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct FaultyProxy {
    address: SocketAddr,
    upstream: SocketAddr,
    faults: Arc<Faults>,
    acceptor: Option<JoinHandle<()>>,
}

impl FaultyProxy {
    /// A proxy on a free 127.0.0.1 port, relaying to `upstream`.
    ///
    /// # Errors
    ///
    /// When the listening socket cannot be opened.
    pub fn start(upstream: SocketAddr) -> io::Result<FaultyProxy> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let faults = Arc::new(Faults::default());
        let shared = faults.clone();
        let acceptor = std::thread::Builder::new()
            .name("zkrs-testkit-proxy".into())
            .spawn(move || accept_loop(listener, upstream, shared))?;
        Ok(FaultyProxy {
            address,
            upstream,
            faults,
            acceptor: Some(acceptor),
        })
    }

    /// The proxy's address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The address bytes are relayed to.
    pub fn upstream(&self) -> SocketAddr {
        self.upstream
    }

    /// `127.0.0.1:PORT` of the proxy.
    pub fn connect_string(&self) -> String {
        self.address.to_string()
    }

    /// How many connections are relayed now.
    pub fn open_connections(&self) -> usize {
        self.faults.open.load(Ordering::SeqCst)
    }

    /// Delays every chunk relayed in `direction` by `delay` from now on (zero: no delay).
    /// Chunks keep their order; chunks already waiting keep their delay.
    pub fn latency(&self, direction: Direction, delay: Duration) {
        let us = u64::try_from(delay.as_micros()).unwrap_or(u64::MAX);
        self.faults.each_lane(direction, |lane| {
            lane.latency_us.store(us, Ordering::SeqCst)
        });
    }

    /// Drops every byte going in `direction`, silently: connections stay open and new ones
    /// are accepted (and black-holed too), so the peers see silence, not an error.
    ///
    /// When the hole heals ([`pass`](Self::pass), [`clear`](Self::clear),
    /// `mute_replies(false)`), each connection that lost bytes to it is closed, as TCP would
    /// end it: a stream never resumes with a gap in it. Connections that lost nothing carry
    /// on.
    pub fn black_hole(&self, direction: Direction) {
        self.faults.each_lane(direction, |lane| {
            lane.black_hole.store(true, Ordering::SeqCst)
        });
    }

    /// Relays `direction` normally again: no latency, no black hole. Open connections stay
    /// open, except those that lost bytes to the black hole: they are closed (within the
    /// proxy's poll interval), since a TCP stream cannot go on with a gap.
    pub fn pass(&self, direction: Direction) {
        self.faults.each_lane(direction, |lane| {
            lane.black_hole.store(false, Ordering::SeqCst);
            lane.latency_us.store(0, Ordering::SeqCst);
        });
        if direction == Direction::Both {
            self.faults.refuse.store(false, Ordering::SeqCst);
        }
    }

    /// Closes every open connection: both peers see it closed (EOF, or a reset if they
    /// write). New connections work as the current faults say.
    pub fn reset(&self) {
        self.faults.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Each connection open now is closed after `bytes` more bytes have been relayed in
    /// `direction` (with [`Direction::Both`]: in either direction, counted separately), e.g.
    /// in the middle of a frame. The bytes up to the budget are delivered first. New
    /// connections are not affected.
    pub fn cut_after(&self, direction: Direction, bytes: u64) {
        let budget = i64::try_from(bytes).unwrap_or(i64::MAX);
        for connection in self.faults.live_connections() {
            for to_client in [false, true] {
                if direction.applies_to(to_client) {
                    connection.budget(to_client).store(budget, Ordering::SeqCst);
                }
            }
        }
    }

    /// Loses (or stops losing) every byte from the server: requests are applied, their
    /// replies never arrive. The same as [`black_hole`](Self::black_hole) (or
    /// un-black-holing) [`Direction::ToClient`].
    pub fn mute_replies(&self, mute: bool) {
        self.faults
            .to_client
            .black_hole
            .store(mute, Ordering::SeqCst);
    }

    /// Silences existing connections both ways and closes new ones at once: to the client,
    /// the server is a black hole.
    pub fn partition(&self) {
        self.black_hole(Direction::Both);
        self.faults.refuse.store(true, Ordering::SeqCst);
    }

    /// Closes every existing connection (both ends see it closed). The same as
    /// [`reset`](Self::reset).
    pub fn cut(&self) {
        self.reset();
    }

    /// Ends every fault (latency, black holes, partition, byte budgets) without closing
    /// anything: open connections carry on (except those that lost bytes to a black hole,
    /// as [`pass`](Self::pass) says).
    pub fn clear(&self) {
        self.pass(Direction::Both);
        for connection in self.faults.live_connections() {
            connection.budget_to_server.store(-1, Ordering::SeqCst);
            connection.budget_to_client.store(-1, Ordering::SeqCst);
        }
    }

    /// Ends every fault and closes the connections that suffered them: new connections
    /// work normally.
    pub fn heal(&self) {
        self.clear();
        self.reset();
    }
}

impl Drop for FaultyProxy {
    fn drop(&mut self) {
        self.faults.stopped.store(true, Ordering::SeqCst);
        self.reset();
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn accept_loop(listener: TcpListener, upstream: SocketAddr, faults: Arc<Faults>) {
    while !faults.stopped.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                if faults.refuse.load(Ordering::SeqCst) {
                    continue; // dropped: closed at once
                }
                let faults = faults.clone();
                let _ = std::thread::Builder::new()
                    .name("zkrs-testkit-proxy-conn".into())
                    .spawn(move || {
                        let _ = relay_connection(client, upstream, faults);
                    });
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

/// Decrements the open-connection count when a relay ends.
struct OpenGuard<'a>(&'a AtomicUsize);

impl Drop for OpenGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn relay_connection(
    client: TcpStream,
    upstream: SocketAddr,
    faults: Arc<Faults>,
) -> io::Result<()> {
    let generation = faults.generation.load(Ordering::SeqCst);
    let server = TcpStream::connect_timeout(&upstream, Duration::from_secs(5))?;
    client.set_nonblocking(false)?;
    for s in [&client, &server] {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(POLL))?;
        s.set_write_timeout(Some(WRITE_TIMEOUT))?;
    }
    faults.open.fetch_add(1, Ordering::SeqCst);
    let _open = OpenGuard(&faults.open);
    let connection = Arc::new(Connection {
        budget_to_server: AtomicI64::new(-1),
        budget_to_client: AtomicI64::new(-1),
    });
    faults
        .connections
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Arc::downgrade(&connection));
    let sockets = [client.try_clone()?, server.try_clone()?];
    let up = {
        let (from, to) = (client.try_clone()?, server.try_clone()?);
        let (faults, connection) = (faults.clone(), connection.clone());
        std::thread::Builder::new()
            .name("zkrs-testkit-proxy-up".into())
            .spawn(move || relay(from, to, &faults, &connection, generation, false))?
    };
    relay(server, client, &faults, &connection, generation, true);
    let _ = up.join();
    for s in &sockets {
        let _ = s.shutdown(Shutdown::Both);
    }
    Ok(())
}

/// What the reader of one direction hands its writer.
enum Chunk {
    /// Bytes to write once `due`.
    Bytes(Instant, Vec<u8>),
    /// Write nothing more; close the connection once `due`.
    Close(Instant),
}

/// Copies `from` to `to` until either closes, the connection's generation is reset or its
/// byte budget runs out, dropping and delaying what the faults say. A writer thread delivers
/// the chunks when due, so a delay does not slow the reading down.
fn relay(
    mut from: TcpStream,
    to: TcpStream,
    faults: &Arc<Faults>,
    connection: &Connection,
    generation: u64,
    to_client: bool,
) {
    let (tx, rx) = mpsc::channel::<Chunk>();
    let writer = {
        let (faults, from) = (faults.clone(), from.try_clone());
        let to = to.try_clone();
        std::thread::Builder::new()
            .name("zkrs-testkit-proxy-write".into())
            .spawn(move || {
                if let (Ok(from), Ok(to)) = (from, to) {
                    write_when_due(rx, from, to, &faults, generation);
                }
            })
    };
    let lane = faults.lane(to_client);
    let budget = connection.budget(to_client);
    let mut buf = vec![0u8; 64 * 1024];
    let reset = |faults: &Faults| faults.generation.load(Ordering::SeqCst) != generation;
    // Whether a black hole dropped bytes of this connection. Once the hole heals, such a
    // connection is closed: a TCP stream never resumes with a gap (real TCP retransmits, or
    // gives up and resets), and carrying on would let a peer silently miss a frame, say a
    // watch notification, which no ZooKeeper client could ever notice.
    let mut lost = false;
    loop {
        if reset(faults) {
            break;
        }
        if lost && !lane.black_hole.load(Ordering::SeqCst) {
            let _ = tx.send(Chunk::Close(due(lane)));
            break;
        }
        match from.read(&mut buf) {
            Ok(0) => {
                // Deliver what is waiting, then close.
                let _ = tx.send(Chunk::Close(due(lane)));
                break;
            }
            Ok(n) => {
                if lane.black_hole.load(Ordering::SeqCst) {
                    lost = true;
                    continue;
                }
                let left = budget.load(Ordering::SeqCst);
                let take = if left >= 0 {
                    n.min(usize::try_from(left).unwrap_or(usize::MAX))
                } else {
                    n
                };
                if left >= 0 {
                    budget.fetch_sub(take as i64, Ordering::SeqCst);
                }
                let at = due(lane);
                if take > 0 && tx.send(Chunk::Bytes(at, buf[..take].to_vec())).is_err() {
                    break;
                }
                if left >= 0 && take as i64 >= left {
                    let _ = tx.send(Chunk::Close(at));
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    drop(tx);
    if let Ok(writer) = writer {
        let _ = writer.join();
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

/// When a chunk read now in this lane is to be written.
fn due(lane: &Lane) -> Instant {
    Instant::now() + Duration::from_micros(lane.latency_us.load(Ordering::SeqCst))
}

/// Writes each chunk to `to` when it is due, in order; on a reset or a close, shuts both
/// sockets down (which ends the reader of the other direction too).
fn write_when_due(
    rx: mpsc::Receiver<Chunk>,
    from: TcpStream,
    mut to: TcpStream,
    faults: &Faults,
    generation: u64,
) {
    let reset = || faults.generation.load(Ordering::SeqCst) != generation;
    let wait_until = |at: Instant| -> bool {
        // false: reset while waiting
        loop {
            if reset() {
                return false;
            }
            let now = Instant::now();
            if now >= at {
                return true;
            }
            std::thread::sleep((at - now).min(POLL));
        }
    };
    loop {
        match rx.recv_timeout(POLL) {
            Ok(Chunk::Bytes(at, bytes)) => {
                if !wait_until(at) || to.write_all(&bytes).is_err() {
                    break;
                }
            }
            Ok(Chunk::Close(at)) => {
                wait_until(at);
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if reset() {
                    break;
                }
            }
            // The reader stopped (reset or error) without asking for a close.
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server on a free port; runs until the test process ends.
    fn echo_server() -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut stream = stream;
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = stream.read(&mut buf) {
                        if n == 0 || stream.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        address
    }

    fn connect(proxy: &FaultyProxy) -> TcpStream {
        let stream = TcpStream::connect(proxy.address()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(400)))
            .unwrap();
        stream
    }

    /// Reads `n` bytes, or fewer if the stream is silent for the read timeout or closes.
    fn read_some(stream: &mut TcpStream, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while out.len() < n {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(k) => out.extend_from_slice(&buf[..k]),
            }
        }
        out
    }

    fn wait_for(what: &str, check: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !check() {
            assert!(Instant::now() < deadline, "{what}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn relays_delays_black_holes_and_passes_again() {
        let proxy = FaultyProxy::start(echo_server()).unwrap();
        let mut s = connect(&proxy);
        s.write_all(b"hello").unwrap();
        assert_eq!(read_some(&mut s, 5), b"hello");
        wait_for("one connection", || proxy.open_connections() == 1);

        proxy.latency(Direction::ToClient, Duration::from_millis(150));
        let sent = Instant::now();
        s.write_all(b"slow").unwrap();
        assert_eq!(read_some(&mut s, 4), b"slow");
        assert!(sent.elapsed() >= Duration::from_millis(150), "delayed");

        proxy.pass(Direction::Both);
        // A black hole that dropped nothing: the same connection carries on.
        proxy.black_hole(Direction::ToServer);
        std::thread::sleep(POLL * 3);
        proxy.pass(Direction::ToServer);
        s.write_all(b"back").unwrap();
        assert_eq!(
            read_some(&mut s, 4),
            b"back",
            "the same connection works again"
        );
        assert_eq!(proxy.open_connections(), 1);

        // One that dropped bytes: silence while it lasts, then the connection is closed,
        // never resumed with a gap.
        proxy.black_hole(Direction::ToServer);
        s.write_all(b"lost").unwrap();
        assert_eq!(read_some(&mut s, 4), b"", "silence, not an error");
        assert_eq!(proxy.open_connections(), 1, "open while the hole lasts");
        proxy.pass(Direction::ToServer);
        wait_for("closed once healed", || proxy.open_connections() == 0);
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut buf = [0u8; 1];
        let end = matches!(s.read(&mut buf), Ok(0) | Err(_));
        assert!(
            end,
            "the client sees the connection end, not the bytes after the gap"
        );
        let mut t = connect(&proxy);
        t.write_all(b"new").unwrap();
        assert_eq!(read_some(&mut t, 3), b"new", "new connections work");
    }

    #[test]
    fn cut_after_delivers_the_budget_then_closes() {
        let proxy = FaultyProxy::start(echo_server()).unwrap();
        let mut s = connect(&proxy);
        s.write_all(b"x").unwrap();
        assert_eq!(read_some(&mut s, 1), b"x");
        proxy.cut_after(Direction::ToClient, 3);
        s.write_all(b"abcdef").unwrap();
        assert_eq!(read_some(&mut s, 6), b"abc", "three bytes, then closed");
        wait_for("closed", || proxy.open_connections() == 0);
        // New connections are not affected.
        let mut t = connect(&proxy);
        t.write_all(b"abcdef").unwrap();
        assert_eq!(read_some(&mut t, 6), b"abcdef");
    }

    #[test]
    fn reset_closes_open_connections_and_heal_keeps_working() {
        let proxy = FaultyProxy::start(echo_server()).unwrap();
        let mut s = connect(&proxy);
        s.write_all(b"x").unwrap();
        assert_eq!(read_some(&mut s, 1), b"x");
        proxy.reset();
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut buf = [0u8; 1];
        let eof = matches!(s.read(&mut buf), Ok(0) | Err(_));
        assert!(eof, "the client sees the connection end");
        proxy.partition();
        proxy.heal();
        let mut t = connect(&proxy);
        t.write_all(b"ok").unwrap();
        assert_eq!(read_some(&mut t, 2), b"ok");
    }
}
