//! [`FaultyProxy`]: a TCP relay between clients and a server that injects network faults on
//! command: lost replies, partitions, cut connections.
//!
//! Tests use it to put a connection loss exactly where it hurts (after a create reached the
//! server, before its reply came back) without touching the server.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often relay threads look at the fault switches while waiting for bytes.
const POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Default)]
struct Faults {
    /// Bytes from the server are thrown away (requests still arrive).
    mute_replies: AtomicBool,
    /// Bytes are thrown away both ways and new connections are closed at once.
    partitioned: AtomicBool,
    /// Connections of an older generation are closed.
    generation: AtomicU64,
    /// The proxy is going away.
    stopped: AtomicBool,
}

/// A TCP proxy to one upstream address whose faults a test switches on and off.
///
/// ```no_run
/// # fn demo(server: &zkr_testkit::TestingServer) -> std::io::Result<()> {
/// let proxy = zkr_testkit::FaultyProxy::start(server.address())?;
/// // Connect clients to `proxy.connect_string()`, then:
/// proxy.mute_replies(true); // requests reach the server, replies are lost
/// proxy.cut();              // ... and the connection drops
/// proxy.heal();             // back to normal for new connections
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct FaultyProxy {
    address: SocketAddr,
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
            .name("zkr-testkit-proxy".into())
            .spawn(move || accept_loop(listener, upstream, shared))?;
        Ok(FaultyProxy {
            address,
            faults,
            acceptor: Some(acceptor),
        })
    }

    /// The proxy's address.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `127.0.0.1:PORT` of the proxy.
    pub fn connect_string(&self) -> String {
        self.address.to_string()
    }

    /// Loses (or stops losing) every byte from the server: requests are applied, their
    /// replies never arrive.
    pub fn mute_replies(&self, mute: bool) {
        self.faults.mute_replies.store(mute, Ordering::SeqCst);
    }

    /// Silences existing connections both ways and closes new ones at once: to the client,
    /// the server is a black hole.
    pub fn partition(&self) {
        self.faults.partitioned.store(true, Ordering::SeqCst);
    }

    /// Closes every existing connection (both ends see it closed).
    pub fn cut(&self) {
        self.faults.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Ends every fault and closes the connections that suffered them: new connections
    /// work normally.
    pub fn heal(&self) {
        self.faults.mute_replies.store(false, Ordering::SeqCst);
        self.faults.partitioned.store(false, Ordering::SeqCst);
        self.cut();
    }
}

impl Drop for FaultyProxy {
    fn drop(&mut self) {
        self.faults.stopped.store(true, Ordering::SeqCst);
        self.cut();
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

fn accept_loop(listener: TcpListener, upstream: SocketAddr, faults: Arc<Faults>) {
    while !faults.stopped.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                if faults.partitioned.load(Ordering::SeqCst) {
                    continue; // dropped: closed at once
                }
                let faults = faults.clone();
                let _ = std::thread::Builder::new()
                    .name("zkr-testkit-proxy-conn".into())
                    .spawn(move || {
                        let _ = relay_connection(client, upstream, faults);
                    });
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(_) => std::thread::sleep(POLL),
        }
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
    }
    let up = {
        let (from, to, faults) = (client.try_clone()?, server.try_clone()?, faults.clone());
        std::thread::spawn(move || pump(from, to, &faults, generation, false))
    };
    pump(
        server.try_clone()?,
        client.try_clone()?,
        &faults,
        generation,
        true,
    );
    let _ = up.join();
    for s in [&client, &server] {
        let _ = s.shutdown(Shutdown::Both);
    }
    Ok(())
}

/// Copies `from` to `to` until either closes or the connection's generation is cut, dropping
/// what the faults say to drop.
fn pump(mut from: TcpStream, mut to: TcpStream, faults: &Faults, generation: u64, replies: bool) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if faults.generation.load(Ordering::SeqCst) != generation {
            break;
        }
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let dropped = faults.partitioned.load(Ordering::SeqCst)
                    || (replies && faults.mute_replies.load(Ordering::SeqCst));
                if !dropped && to.write_all(&buf[..n]).is_err() {
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
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}
