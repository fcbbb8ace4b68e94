//! The TCP adapter: the model served on TCP (127.0.0.1 unless told) with tokio, so any client
//! (zkrs, Curator, zkCli.sh) can connect. One task owns the sans-I/O core (a [`Server`], or an
//! [`WireEnsemble`] with one listener per member); each connection has a reader task feeding
//! it bytes and a writer task sending what it answers. Time is tokio's clock, fed into the
//! deterministic core (so a paused tokio clock drives it too).

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant as StdInstant};

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::config::ServerConfig;
use crate::connection_id::ConnectionId;
use crate::server::{Server, Transmit};
use crate::wire_ensemble::WireEnsemble;

type Call<S> = Box<dyn FnOnce(&mut S, StdInstant) + Send>;

/// What the adapter needs of a sans-I/O core, per listener.
pub(crate) trait Served: Send + 'static {
    fn accept(&mut self, listener: usize, ip: &str, now: StdInstant) -> ConnectionId;
    fn peer(&mut self, listener: usize, conn: ConnectionId, peer: SocketAddr);
    fn input(&mut self, listener: usize, conn: ConnectionId, bytes: &[u8], now: StdInstant);
    fn gone(&mut self, listener: usize, conn: ConnectionId, now: StdInstant);
    fn timeout(&mut self, now: StdInstant);
    fn next_timeout(&self) -> Option<StdInstant>;
    fn transmit(&mut self) -> Option<(usize, Transmit)>;
    /// Whether `conn` still waits for its `ConnectRequest`.
    fn handshaking(&self, listener: usize, conn: ConnectionId) -> bool;
    /// The settings the adapter applies.
    fn config(&self) -> &ServerConfig;
}

impl Served for Server {
    fn accept(&mut self, _: usize, ip: &str, now: StdInstant) -> ConnectionId {
        Server::accept(self, ip, now)
    }
    fn peer(&mut self, _: usize, conn: ConnectionId, peer: SocketAddr) {
        self.set_peer(conn, peer)
    }
    fn input(&mut self, _: usize, conn: ConnectionId, bytes: &[u8], now: StdInstant) {
        self.handle_input(conn, bytes, now)
    }
    fn gone(&mut self, _: usize, conn: ConnectionId, now: StdInstant) {
        self.handle_disconnect(conn, now)
    }
    fn timeout(&mut self, now: StdInstant) {
        self.handle_timeout(now)
    }
    fn next_timeout(&self) -> Option<StdInstant> {
        self.poll_timeout()
    }
    fn transmit(&mut self) -> Option<(usize, Transmit)> {
        self.poll_transmit().map(|t| (0, t))
    }
    fn handshaking(&self, _: usize, conn: ConnectionId) -> bool {
        self.is_handshaking(conn)
    }
    fn config(&self) -> &ServerConfig {
        &self.config
    }
}

impl Served for WireEnsemble {
    fn accept(&mut self, member: usize, ip: &str, now: StdInstant) -> ConnectionId {
        WireEnsemble::accept(self, member, ip, now)
    }
    fn peer(&mut self, member: usize, conn: ConnectionId, peer: SocketAddr) {
        self.set_peer(member, conn, peer)
    }
    fn input(&mut self, member: usize, conn: ConnectionId, bytes: &[u8], now: StdInstant) {
        self.handle_input(member, conn, bytes, now)
    }
    fn gone(&mut self, member: usize, conn: ConnectionId, now: StdInstant) {
        self.handle_disconnect(member, conn, now)
    }
    fn timeout(&mut self, now: StdInstant) {
        self.handle_timeout(now)
    }
    fn next_timeout(&self) -> Option<StdInstant> {
        self.poll_timeout()
    }
    fn transmit(&mut self) -> Option<(usize, Transmit)> {
        self.poll_transmit()
    }
    fn handshaking(&self, member: usize, conn: ConnectionId) -> bool {
        self.is_handshaking(member, conn)
    }
    fn config(&self) -> &ServerConfig {
        self.server_config()
    }
}

enum Input<S> {
    Accepted(usize, TcpStream, SocketAddr),
    Bytes(usize, ConnectionId, Bytes),
    Gone(usize, ConnectionId),
    Call(Call<S>),
    /// Close every connection and hand the core back.
    Stop(oneshot::Sender<S>),
}

enum Output {
    Data(Bytes),
    Close,
}

/// Inputs waiting for the core, every connection's together: a reader waits for room (and
/// so stops reading its socket) rather than queue without bound.
const INPUT_QUEUE: usize = 64;

/// Reads of one connection's socket, at most.
const READ_CHUNK: usize = 64 * 1024;

/// Bytes queued for one connection's socket, at least, before the connection is closed as
/// one that does not read (the bound is also twice the largest frame).
const OUTPUT_QUEUE: usize = 4 * 1024 * 1024;

/// The first and the longest pause after a failed accept (out of file descriptors: the
/// pause lets connections close).
const ACCEPT_BACKOFF: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(1));

/// A served core: its input channel and tasks (stopped on drop).
struct Serving<S> {
    inputs: mpsc::Sender<Input<S>>,
    tasks: Vec<JoinHandle<()>>,
}

impl<S> std::fmt::Debug for Serving<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving")
            .field("tasks", &self.tasks.len())
            .finish()
    }
}

impl<S> Drop for Serving<S> {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl<S: Served> Serving<S> {
    /// Serves `core`, listener `i` of `listeners` being its listener `i`, on tokio's clock.
    fn start(core: S, listeners: Vec<TcpListener>) -> Self {
        let (inputs, rx) = mpsc::channel(INPUT_QUEUE);
        let mut tasks = Vec::new();
        for (index, listener) in listeners.into_iter().enumerate() {
            tasks.push(tokio::spawn(accept_loop(index, listener, inputs.clone())));
        }
        tasks.push(tokio::spawn(run_core(core, inputs.clone(), rx)));
        Serving { inputs, tasks }
    }

    async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut S, StdInstant) -> R + Send + 'static,
    ) -> Option<R> {
        let (tx, rx) = oneshot::channel();
        let call: Call<S> = Box::new(move |core, now| {
            let _ = tx.send(f(core, now));
        });
        self.inputs.send(Input::Call(call)).await.ok()?;
        rx.await.ok()
    }

    /// Closes every connection, then the listeners, and gives the core back (`None` if its
    /// task is gone). The listeners' ports are free when this returns.
    async fn stop(mut self) -> Option<S> {
        let (tx, rx) = oneshot::channel();
        let core = match self.inputs.send(Input::Stop(tx)).await {
            Ok(()) => rx.await.ok(),
            Err(_) => None,
        };
        for task in self.tasks.drain(..) {
            task.abort();
            let _ = task.await;
        }
        core
    }
}

/// A model [`Server`] served on TCP (the tokio adapter), listening on 127.0.0.1 unless started
/// with [`start_at`](Self::start_at). Dropping it stops the server and closes every connection.
///
/// [`stop`](Self::stop) and [`restart`](Self::restart) model a server going down and coming
/// back on the same port with its state (tree, sessions, watches of sessions that reconnect):
/// the model's clock keeps running meanwhile, so a session whose timeout passes while the
/// server is down expires when it comes back.
#[derive(Debug)]
pub struct TcpServer {
    addr: SocketAddr,
    state: State,
}

#[derive(Debug)]
enum State {
    Serving(Serving<Server>),
    Stopped(Box<Server>),
    /// Only while switching between the two.
    Gone,
}

impl TcpServer {
    /// Starts a server with the default settings on a free port (inside a tokio runtime).
    pub async fn start() -> io::Result<Self> {
        Self::start_with(ServerConfig::default()).await
    }

    /// Starts a server with `config` on a free port.
    pub async fn start_with(config: ServerConfig) -> io::Result<Self> {
        Self::start_on(0, config).await
    }

    /// Starts a server with `config` on 127.0.0.1:`port` (0: a free port).
    pub async fn start_on(port: u16, config: ServerConfig) -> io::Result<Self> {
        Self::start_at(SocketAddr::from((Ipv4Addr::LOCALHOST, port)), config).await
    }

    /// Starts a server with `config` listening on `addr` (port 0: a free port), e.g.
    /// `0.0.0.0:2181` for every interface.
    ///
    /// # Errors
    ///
    /// When `addr` cannot be bound (taken, or not an address of this host).
    pub async fn start_at(addr: SocketAddr, config: ServerConfig) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let mut server = Server::new(config, Instant::now().into_std());
        server.client_port = addr.port();
        Ok(TcpServer {
            addr,
            state: State::Serving(Serving::start(server, vec![listener])),
        })
    }

    /// The listening address (kept across [`restart`](Self::restart)).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `host:port`, for a client's connect string: the listening address, with loopback for
    /// an unspecified one (`0.0.0.0` or `::`).
    pub fn connect_string(&self) -> String {
        reachable(self.addr).to_string()
    }

    /// Whether the server listens (not [`stop`](Self::stop)ped).
    pub fn is_serving(&self) -> bool {
        matches!(self.state, State::Serving(_))
    }

    /// Stops serving: closes every connection (as a disconnect: sessions stay until they
    /// expire) and the listener, so clients get "connection refused". The model keeps its
    /// state for [`restart`](Self::restart). No-op when stopped.
    pub async fn stop(&mut self) {
        if let State::Serving(_) = self.state {
            let State::Serving(served) = std::mem::replace(&mut self.state, State::Gone) else {
                unreachable!()
            };
            let server = served
                .stop()
                .await
                .expect("the model's task ended on its own");
            self.state = State::Stopped(Box::new(server));
        }
    }

    /// Stops the server if it serves, then listens again on the same address with the same
    /// state.
    ///
    /// # Errors
    ///
    /// When the port cannot be bound again (another process took it); the server then stays
    /// stopped.
    pub async fn restart(&mut self) -> io::Result<()> {
        self.stop().await;
        let listener = TcpListener::bind(self.addr).await?;
        let State::Stopped(server) = std::mem::replace(&mut self.state, State::Gone) else {
            unreachable!("stopped above")
        };
        self.state = State::Serving(Serving::start(*server, vec![listener]));
        Ok(())
    }

    /// Runs `f` on the model between two inputs (to inspect the tree, or expire a session),
    /// with the model's current time. `None` while stopped.
    pub async fn with_server<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Server, StdInstant) -> R + Send + 'static,
    ) -> Option<R> {
        match &self.state {
            State::Serving(served) => served.call(f).await,
            State::Stopped(_) | State::Gone => None,
        }
    }
}

/// A [`WireEnsemble`] served on TCP (the tokio adapter), one port per member, on 127.0.0.1
/// unless started with [`start_at`](Self::start_at). Dropping it stops it.
#[derive(Debug)]
pub struct TcpEnsemble {
    addrs: Vec<SocketAddr>,
    served: Serving<WireEnsemble>,
}

impl TcpEnsemble {
    /// Starts `n` members on free ports of 127.0.0.1.
    ///
    /// # Errors
    ///
    /// When no port can be bound, or `n` is 0 ([`io::ErrorKind::InvalidInput`]).
    pub async fn start(n: usize, config: ServerConfig) -> io::Result<Self> {
        let free = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        Self::start_at(&vec![free; n], config).await
    }

    /// Starts one member listening on each of `addrs` (port 0: a free port); member `m` on
    /// `addrs[m]`.
    ///
    /// # Errors
    ///
    /// When an address cannot be bound, or `addrs` is empty ([`io::ErrorKind::InvalidInput`]).
    pub async fn start_at(addrs: &[SocketAddr], config: ServerConfig) -> io::Result<Self> {
        if addrs.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an ensemble needs at least one member",
            ));
        }
        let mut listeners = Vec::new();
        let mut bound = Vec::new();
        for addr in addrs {
            let listener = TcpListener::bind(addr).await?;
            bound.push(listener.local_addr()?);
            listeners.push(listener);
        }
        let addrs = bound;
        let mut ensemble = WireEnsemble::new(addrs.len(), config, Instant::now().into_std());
        let ports: Vec<u16> = addrs.iter().map(SocketAddr::port).collect();
        ensemble.set_client_ports(&ports);
        Ok(TcpEnsemble {
            addrs,
            served: Serving::start(ensemble, listeners),
        })
    }

    /// Member `m`'s address.
    pub fn addr(&self, m: usize) -> SocketAddr {
        self.addrs[m]
    }

    /// Every member, `host:port,host:port,...`, for a client's connect string (loopback for
    /// an unspecified listening address, as [`TcpServer::connect_string`]).
    pub fn connect_string(&self) -> String {
        let all: Vec<String> = self
            .addrs
            .iter()
            .map(|a| reachable(*a).to_string())
            .collect();
        all.join(",")
    }

    /// Runs `f` on the ensemble between two inputs (hold or release a member, partition,
    /// crash, restart, inspect), with its current time.
    pub async fn with_ensemble<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut WireEnsemble, StdInstant) -> R + Send + 'static,
    ) -> Option<R> {
        self.served.call(f).await
    }
}

/// Where a client on this host reaches a listener bound to `addr`: loopback for `0.0.0.0` and
/// `::` (they name no host to connect to).
fn reachable(addr: SocketAddr) -> SocketAddr {
    let ip = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, addr.port())
}

/// Accepts connections until the core is gone. A failed accept (no file descriptor left,
/// a connection reset before it was taken) is waited out with a growing pause, never the
/// end of the listener.
async fn accept_loop<S>(index: usize, listener: TcpListener, to_core: mpsc::Sender<Input<S>>) {
    let mut pause = ACCEPT_BACKOFF.0;
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                pause = ACCEPT_BACKOFF.0;
                let _ = stream.set_nodelay(true);
                if to_core
                    .send(Input::Accepted(index, stream, peer))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Err(_) => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(ACCEPT_BACKOFF.1);
            }
        }
    }
}

/// One connection's tasks, seen from the core.
struct Link {
    out: mpsc::UnboundedSender<Output>,
    /// Bytes sent to the writer and not yet written to the socket.
    queued: Arc<AtomicUsize>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
    ip: IpAddr,
}

/// The core's connections and what bounds them.
struct Links {
    links: HashMap<(usize, ConnectionId), Link>,
    per_ip: HashMap<IpAddr, u32>,
    /// Connections still to shake hands, by deadline (accept order is deadline order).
    handshakes: VecDeque<(Instant, (usize, ConnectionId))>,
    max_per_ip: u32,
    handshake_timeout: Duration,
    max_output: usize,
}

impl Links {
    fn new(config: &ServerConfig) -> Self {
        Links {
            links: HashMap::new(),
            per_ip: HashMap::new(),
            handshakes: VecDeque::new(),
            max_per_ip: config.max_client_cnxns,
            handshake_timeout: config.handshake_timeout,
            max_output: OUTPUT_QUEUE.max(config.max_frame_len.saturating_mul(2)),
        }
    }

    /// Whether `ip` has a connection left under `maxClientCnxns`.
    fn admits(&self, ip: IpAddr) -> bool {
        self.max_per_ip == 0 || self.per_ip.get(&ip).copied().unwrap_or(0) < self.max_per_ip
    }

    fn insert(&mut self, key: (usize, ConnectionId), link: Link) {
        *self.per_ip.entry(link.ip).or_default() += 1;
        self.handshakes
            .push_back((Instant::now() + self.handshake_timeout, key));
        self.links.insert(key, link);
    }

    /// Forgets a connection: its place under `maxClientCnxns` is free again.
    fn remove(&mut self, key: &(usize, ConnectionId)) -> Option<Link> {
        let link = self.links.remove(key)?;
        if let Some(n) = self.per_ip.get_mut(&link.ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&link.ip);
            }
        }
        Some(link)
    }

    /// The next handshake deadline.
    fn next_deadline(&self) -> Option<Instant> {
        self.handshakes.front().map(|(at, _)| *at)
    }

    /// The connections whose handshake time is up at `now` (some may be gone or done).
    fn due(&mut self, now: Instant) -> Vec<(usize, ConnectionId)> {
        let mut due = Vec::new();
        while let Some((at, key)) = self.handshakes.front() {
            if *at > now {
                break;
            }
            due.push(*key);
            self.handshakes.pop_front();
        }
        due
    }
}

impl Link {
    /// Ends both tasks at once, queued bytes unsent: the socket closes.
    fn cut(self) {
        self.reader.abort();
        self.writer.abort();
    }
}

/// Cuts a connection the server gives up on (a full output queue, no handshake in time):
/// the core sees it as a disconnect.
fn cut<S: Served>(core: &mut S, links: &mut Links, key: (usize, ConnectionId), now: StdInstant) {
    if let Some(link) = links.remove(&key) {
        link.cut();
        core.gone(key.0, key.1, now);
    }
}

async fn run_core<S: Served>(
    mut core: S,
    inputs: mpsc::Sender<Input<S>>,
    mut rx: mpsc::Receiver<Input<S>>,
) {
    let mut links = Links::new(core.config());
    let idle = Instant::now() + Duration::from_secs(3600);
    loop {
        let wake = core.next_timeout().map_or(idle, Instant::from_std);
        let wake = links.next_deadline().map_or(wake, |at| at.min(wake));
        let input = tokio::select! {
            input = rx.recv() => match input {
                Some(input) => Some(input),
                None => return,
            },
            () = tokio::time::sleep_until(wake) => None,
        };
        let now = Instant::now().into_std();
        match input {
            None => {
                for key in links.due(Instant::from_std(now)) {
                    if links.links.contains_key(&key) && core.handshaking(key.0, key.1) {
                        cut(&mut core, &mut links, key, now);
                    }
                }
                core.timeout(now);
            }
            Some(Input::Accepted(listener, stream, peer)) => {
                // ZooKeeper closes a connection over `maxClientCnxns` at once.
                if !links.admits(peer.ip()) {
                    drop(stream);
                    continue;
                }
                let conn = core.accept(listener, &peer.ip().to_string(), now);
                core.peer(listener, conn, peer);
                let (read, write) = stream.into_split();
                let (out, out_rx) = mpsc::unbounded_channel();
                let queued = Arc::new(AtomicUsize::new(0));
                let writer = tokio::spawn(write_loop(write, out_rx, queued.clone()));
                let reader = tokio::spawn(read_loop(read, listener, conn, inputs.clone()));
                let link = Link {
                    out,
                    queued,
                    reader,
                    writer,
                    ip: peer.ip(),
                };
                links.insert((listener, conn), link);
            }
            Some(Input::Bytes(listener, conn, bytes)) => core.input(listener, conn, &bytes, now),
            Some(Input::Gone(listener, conn)) => {
                if let Some(link) = links.remove(&(listener, conn)) {
                    let _ = link.out.send(Output::Close);
                    core.gone(listener, conn, now);
                }
            }
            Some(Input::Call(call)) => call(&mut core, now),
            Some(Input::Stop(back)) => {
                for ((listener, conn), link) in links.links.drain() {
                    let _ = link.out.send(Output::Close);
                    link.reader.abort();
                    core.gone(listener, conn, now);
                }
                let _ = back.send(core);
                return;
            }
        }
        while let Some((listener, t)) = core.transmit() {
            let key = (listener, t.connection);
            let Some(link) = links.links.get(&key) else {
                continue;
            };
            if !t.data.is_empty() {
                let len = t.data.len();
                // A client that does not read what it asked for is closed, not queued for.
                if link.queued.load(Ordering::Acquire) + len > links.max_output {
                    cut(&mut core, &mut links, key, now);
                    continue;
                }
                link.queued.fetch_add(len, Ordering::AcqRel);
                let _ = link.out.send(Output::Data(t.data));
            }
            if t.close {
                let _ = link.out.send(Output::Close);
                if let Some(link) = links.remove(&key) {
                    link.reader.abort();
                }
            }
        }
    }
}

/// Feeds the core what a connection sends, waiting while the core's queue is full.
async fn read_loop<S>(
    mut read: OwnedReadHalf,
    listener: usize,
    conn: ConnectionId,
    to_core: mpsc::Sender<Input<S>>,
) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match read.read(&mut buf).await {
            Ok(0) | Err(_) => {
                let _ = to_core.send(Input::Gone(listener, conn)).await;
                return;
            }
            Ok(n) => {
                let bytes = Bytes::copy_from_slice(&buf[..n]);
                let input = Input::Bytes(listener, conn, bytes);
                if to_core.send(input).await.is_err() {
                    return;
                }
            }
        }
    }
}

async fn write_loop(
    mut write: OwnedWriteHalf,
    mut rx: mpsc::UnboundedReceiver<Output>,
    queued: Arc<AtomicUsize>,
) {
    while let Some(out) = rx.recv().await {
        match out {
            Output::Data(bytes) => {
                if write.write_all(&bytes).await.is_err() {
                    return;
                }
                queued.fetch_sub(bytes.len(), Ordering::AcqRel);
            }
            Output::Close => {
                let _ = write.shutdown().await;
                return;
            }
        }
    }
}
